"""The one adapter between kplugin and its cookiecutter template trees.

A tree is a folder under ``templates/`` holding ``cookiecutter.json`` (every variable
with a default) and one ``{{cookiecutter.<var>}}`` directory. As cookiecutter does, file
and directory names are templates, every file is rendered with Jinja2 except those
matching ``_copy_without_render``, and undefined variables fail loudly. Unlike
cookiecutter's own ``generate_files`` this renders into memory: nothing is written until
the whole tree has rendered, so a template error leaves nothing behind.

Two rules of our own: a file that renders to nothing but whitespace is not generated
(how a tree leaves out a file for some inputs), and rendered ``.go`` files lose the
imports they do not use and end in one newline, as gofmt leaves them (``gosource.tidy``).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

from kplugin.core.errors import OperationError
from kplugin.generate import gosource

Rendered = dict[PurePosixPath, bytes]


def templates_root() -> Path:
    """Templates ship inside the wheel as kplugin/templates; a checkout has them at top."""
    here = Path(__file__).resolve().parents[1]  # the kplugin package
    for candidate in (here / "templates", here.parent / "templates"):
        if candidate.is_dir():
            return candidate
    raise OperationError("kplugin's templates are missing from the installation; reinstall kplugin")


@cache
def _environment(top: Path, options: tuple[tuple[str, Any], ...]) -> Any:
    """Jinja2 as cookiecutter sets it up (strict, trailing newline kept, templates found in
    the tree's top directory and in its sibling ``templates/`` of shared parts), plus the
    tree's ``_jinja2_env_vars``."""
    from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined

    return Environment(
        # the tree's shared parts; the project tree's also serve the plugin and point trees
        loader=FileSystemLoader(
            [str(top), str(top.parent / "templates"), str(top.parent.parent / "project" / "templates")]
        ),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        bytecode_cache=_bytecode_cache(FileSystemBytecodeCache),
        **dict(options),
    )


def _bytecode_cache(cache_type: Any) -> Any:
    """Compiled templates are cached per user (keyed by source checksum), which halves
    the time of a generation; without a writable cache directory, compile every time."""
    from kplugin.core.cache import directory

    base = directory("jinja")
    return cache_type(str(base)) if base is not None else None


def template_variables(tree: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((templates_root() / tree / "cookiecutter.json").read_text())
    return config


def render_tree(tree: str, context: Mapping[str, Any]) -> Rendered:
    """Render template tree ``tree`` with ``context``.

    Paths are relative to the tree, so they start with the rendered top directory.
    """
    from jinja2 import TemplateError

    root = templates_root()
    defaults = template_variables(tree)
    unknown = sorted(set(context) - set(defaults))
    if unknown:
        raise OperationError(f"template {tree!r} has no variables {', '.join(unknown)}")
    values = {**defaults, **context}
    verbatim = [str(p) for p in values.get("_copy_without_render", [])]
    tree_dir = root / tree
    (top,) = [p for p in tree_dir.iterdir() if p.is_dir() and "cookiecutter" in p.name]
    env = _environment(top, tuple(sorted(values.get("_jinja2_env_vars", {}).items())))
    jinja_context = {"cookiecutter": values}
    out: Rendered = {}
    try:
        for source in sorted(p for p in top.rglob("*") if p.is_file()):
            relative = source.relative_to(tree_dir).as_posix()
            target = env.from_string(relative).render(jinja_context)
            inside = source.relative_to(top).as_posix()  # what cookiecutter matches against
            if any(fnmatch.fnmatch(inside, pattern) for pattern in verbatim):
                content = source.read_bytes()
            else:
                template = env.get_template(inside)
                text = template.render(jinja_context)
                if not text.strip():
                    continue
                if target.endswith(".go"):
                    text = gosource.tidy(text)
                content = text.encode()
            out[PurePosixPath(target)] = content
    except TemplateError as err:
        where = getattr(err, "filename", None) or tree
        raise OperationError(f"template {where} failed to render: {err}") from err
    return out
