"""Run by cookiecutter after it renders kplugin's project template: kplugin's own two
rules for rendered files (a file that renders to whitespace is not generated; Go files
lose the imports they do not use), the same function kplugin applies when it renders."""

from pathlib import Path

from kplugin.generate.templating import finish_tree

finish_tree(Path.cwd())
