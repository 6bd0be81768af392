"""Run by cookiecutter after it renders kplugin's project template: kplugin's own rules
for rendered files (the conditions of cookiecutter.json's _files.when; Go files lose the
imports they do not use), the same function kplugin applies when it renders."""

import json
from pathlib import Path

from kplugin.generate.templating import finish_tree

finish_tree(Path.cwd(), json.loads(r"""[[ cookiecutter | jsonify ]]"""))
