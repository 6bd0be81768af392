"""The one adapter between kplugin and its cookiecutter template.

``templates/project`` is a true cookiecutter template: ``cookiecutter.json`` (every
variable with a default), one ``[[cookiecutter.project_name]]`` directory, shared parts
in ``templates/`` (where cookiecutter's own loader looks), and a post-generation hook.
Its Jinja delimiters are ``[[ ]]``, ``<% %>`` and ``<# #>`` (``_jinja2_env_vars`` in
cookiecutter.json, which cookiecutter applies itself), so the ``{{ }}`` of Go composite
literals, Helm and GitHub Actions expressions are plain text in every template.
kplugin renders it through cookiecutter's own API (``generate_files``, imported only
here), into a temporary directory it then reads back, inside kplugin's own staging,
validation and atomic commit: nothing is written into the user's tree until the whole
project has rendered.

Who owns each file and when it exists is declared next to the templates, in
cookiecutter.json's ``_files``: ``user`` lists the files written once and never rewritten
(every other file is managed: kplugin.yaml records its sha256), ``when`` the condition
under which a file exists. ``finish_tree`` applies the conditions (here, and by the
template's hook when plain cookiecutter renders it); a file that renders empty is an
error, not a way to leave it out; rendered ``.go`` files lose the imports they do not
use and end in one newline, as gofmt leaves them (``gosource.tidy``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from kplugin.core.errors import OperationError, Setting, UsageError
from kplugin.generate import gosource

Rendered = dict[PurePosixPath, bytes]
PROJECT_TEMPLATE = "project"


def templates_root() -> Path:
    """Templates ship inside the wheel as kplugin/templates; a checkout has them at top."""
    here = Path(__file__).resolve().parents[1]  # the kplugin package
    for candidate in (here / "templates", here.parent / "templates"):
        if candidate.is_dir():
            return candidate
    raise OperationError("kplugin's templates are missing from the installation; reinstall kplugin")


def template_variables(template: Path) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((template / "cookiecutter.json").read_text())
    return config


def finish_tree(root: Path, values: Mapping[str, Any]) -> None:
    """kplugin's rules, applied in place to a tree the template rendered into ``root``
    with the variables ``values`` (by kplugin, and by the template's post-generation hook
    under plain cookiecutter): a file whose ``_files.when`` condition is false is removed,
    an empty file is an error (a file's existence is declared, never inferred from an
    empty render), and Go files lose the imports they do not use."""
    from cookiecutter.utils import create_env_with_context

    env = create_env_with_context({"cookiecutter": dict(values)})  # the template's delimiters
    for template_path, condition in sorted(_declared(values).get("when", {}).items()):
        if not env.compile_expression(condition)(cookiecutter=values):
            target = root / env.from_string(template_path).render(cookiecutter=values)
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                target.unlink()
    for directory, dirs, files in os.walk(root, topdown=False):
        for name in sorted(files):
            path = Path(directory) / name
            content = path.read_bytes()
            if not content.strip():
                relative = path.relative_to(root).as_posix()
                raise OperationError(
                    f"{relative} renders empty; declare when it exists in cookiecutter.json's _files.when"
                )
            if path.suffix == ".go":
                path.write_bytes(gosource.tidy(content.decode()).encode())
        for name in dirs:
            with contextlib.suppress(OSError):  # a directory the files removed above left empty
                (Path(directory) / name).rmdir()


def _declared(values: Mapping[str, Any]) -> dict[str, Any]:
    """cookiecutter.json's ``_files`` (none: nothing declared), checked: ValueError when
    it is not ``{"user": [glob, ...], "when": {path: condition}}`` of strings."""
    files = values.get("_files", {})
    user = files.get("user", []) if isinstance(files, dict) else None
    when = files.get("when", {}) if isinstance(files, dict) else None
    if not (
        isinstance(user, list)
        and all(isinstance(p, str) for p in user)
        and isinstance(when, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in when.items())
    ):
        raise ValueError(
            "cookiecutter.json's _files must be "
            '{"user": ["path", ...], "when": {"path": "condition"}} (paths and Jinja conditions as strings)'
        )
    return {"user": user, "when": when}


def user_patterns(variables: Mapping[str, Any], choices: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """The globs of the files a template declares the user's (``_files.user``): written
    once, never rewritten. A variable in a path is each of its ``choices`` where the
    caller knows them (``point``: the extension points), else ``*``."""
    env = variables.get("_jinja2_env_vars")
    env = env if isinstance(env, dict) else {}
    start, end = re.escape(env.get("variable_start_string", "{{")), re.escape(env.get("variable_end_string", "}}"))
    variable = re.compile(rf"{start}\s*cookiecutter\.(\w+)\s*{end}")
    patterns: set[str] = set()
    for path in _declared(variables).get("user", []):
        names = variable.findall(path)
        for picked in itertools.product(*(choices.get(name, ["*"]) for name in names)):
            pieces = variable.split(path)[::2]  # the text around the variables
            patterns.add("".join(p for pair in itertools.zip_longest(pieces, picked, fillvalue="") for p in pair))
    return tuple(sorted(patterns))


def render_tree(context: Mapping[str, Any], template: Path | None = None) -> Rendered:
    """Render the project template (kplugin's, or ``template``) with ``context`` through
    cookiecutter. Paths are relative to the output: they start with the project's name."""
    from cookiecutter.exceptions import CookiecutterException
    from cookiecutter.generate import generate_files
    from jinja2 import TemplateError

    template = template or templates_root() / PROJECT_TEMPLATE
    defaults = template_variables(template)
    unknown = sorted(set(context) - set(defaults))
    if unknown:
        raise OperationError(f"template {template} has no variables {', '.join(unknown)}")
    values = {**defaults, **context}
    out: Rendered = {}
    with tempfile.TemporaryDirectory(prefix="kplugin-render-") as tmp:
        try:
            generate_files(repo_dir=str(template), context={"cookiecutter": values}, output_dir=tmp, accept_hooks=False)
            (project,) = Path(tmp).iterdir()
            finish_tree(project, values)
        except (CookiecutterException, TemplateError) as err:
            raise OperationError(f"template {template} failed to render: {err}") from err
        for path in sorted(Path(tmp).rglob("*")):
            if path.is_file() and not path.is_symlink():
                out[PurePosixPath(path.relative_to(tmp).as_posix())] = path.read_bytes()
    return out


def fork(path: Path) -> Path:
    """A team's own fork of kplugin's template (``kplugin new --template DIR|ZIP``),
    checked for what kplugin needs: a cookiecutter template whose cookiecutter.json has
    every variable of kplugin's and whose top directory is cookiecutter.project_name
    between its own variable delimiters (kplugin's ``[[ ]]``, or Jinja's default ``{{ }}``).
    A ZIP is unpacked (paths inside it only) into a temporary directory the caller removes."""
    if path.suffix == ".zip" and path.is_file():
        path = _unzip(path)
    if not (path / "cookiecutter.json").is_file():
        raise UsageError(
            f"{Setting.TEMPLATE} {path}: no cookiecutter.json; give a cookiecutter template (a directory or .zip)"
        )
    try:
        theirs = template_variables(path)
    except (ValueError, OSError) as err:
        raise UsageError(f"{Setting.TEMPLATE} {path}: cookiecutter.json is not valid JSON ({err})") from None
    missing = sorted(set(template_variables(templates_root() / PROJECT_TEMPLATE)) - set(theirs))
    if missing:
        raise UsageError(
            f"{Setting.TEMPLATE} {path}: cookiecutter.json lacks {', '.join(missing[:5])}"
            f"{' …' if len(missing) > 5 else ''}; a fork of kplugin's template keeps all its variables"
        )
    try:
        _declared(theirs)
    except ValueError as err:
        raise UsageError(f"{Setting.TEMPLATE} {path}: {err}") from None
    top = project_directory(theirs)
    if not (path / top).is_dir():
        raise UsageError(f"{Setting.TEMPLATE} {path}: its top directory must be {top}")
    return path


def project_directory(variables: Mapping[str, Any]) -> str:
    """The template's top directory name, in the variable delimiters its cookiecutter.json
    sets (``_jinja2_env_vars``; Jinja's defaults when it sets none)."""
    env = variables.get("_jinja2_env_vars")
    env = env if isinstance(env, dict) else {}
    start, end = env.get("variable_start_string", "{{"), env.get("variable_end_string", "}}")
    return f"{start}cookiecutter.project_name{end}"


def _unzip(archive: Path) -> Path:
    import atexit
    import shutil
    import zipfile

    target = Path(tempfile.mkdtemp(prefix="kplugin-template-"))
    atexit.register(shutil.rmtree, target, True)  # kplugin runs once per process: gone when it ends
    try:
        with zipfile.ZipFile(archive) as zipped:
            for member in zipped.infolist():
                name = PurePosixPath(member.filename)
                if name.is_absolute() or ".." in name.parts:
                    raise UsageError(f"{Setting.TEMPLATE} {archive}: {member.filename!r} leads out of the archive")
            zipped.extractall(target)
    except zipfile.BadZipFile as err:
        raise UsageError(f"{Setting.TEMPLATE} {archive} is not a valid ZIP ({err})") from None
    entries = [p for p in target.iterdir()]
    # a ZIP of the template's folder holds one top directory with cookiecutter.json in it
    return entries[0] if len(entries) == 1 and (entries[0] / "cookiecutter.json").is_file() else target
