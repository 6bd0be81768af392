"""Maintainer tools: not used at run time."""
