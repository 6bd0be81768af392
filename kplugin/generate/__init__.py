"""Rendering projects from the templates and keeping them in line: new, add, upgrade, and the plugins' Args."""
