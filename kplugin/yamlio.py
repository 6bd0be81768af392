"""YAML out of kplugin: always through ruamel.yaml, never by string concatenation.

Output is block style, keys in the order the data gives them, sequences not indented
under their key (as kubectl writes them). Kubernetes reads YAML with YAML 1.1 rules, so
strings that YAML 1.1 would read as booleans (yes, no, on, off, y, n) or numbers are
quoted, whatever YAML 1.2 thinks of them. Multi-line strings are written as literal
blocks. The C emitter of ruamel.yaml.clib is used when present (5x faster).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

_STR_TAG = "tag:yaml.org,2002:str"
_YAML11_AMBIGUOUS = re.compile(
    r"(?i:y|n|yes|no|on|off|true|false|null|~)"
    r"|[-+]?(0b[01_]+|0[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?|[0-9][0-9_]*(:[0-5]?[0-9])+)"
    r"|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)"
)


def _represent_str(representer: Any, value: str) -> Any:
    if "\n" in value:
        return representer.represent_scalar(_STR_TAG, value, style="|")
    if _YAML11_AMBIGUOUS.fullmatch(value):
        return representer.represent_scalar(_STR_TAG, value, style="'")
    return representer.represent_str(value)


@cache
def _yaml() -> Any:
    from ruamel.yaml import YAML

    try:
        yaml = YAML(typ="safe", pure=False)
    except Exception:  # no ruamel.yaml.clib: the pure-Python emitter writes the same
        yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.allow_unicode = True
    yaml.representer.sort_base_mapping_type_on_output = False
    yaml.representer.add_representer(str, _represent_str)
    yaml.representer.ignore_aliases = lambda _data: True  # plain documents, never &anchors
    return yaml


def dump(document: Any) -> str:
    stream = io.StringIO()
    _yaml().dump(document, stream)
    return stream.getvalue()


def dump_all(documents: Iterable[Any]) -> str:
    stream = io.StringIO()
    _yaml().dump_all(list(documents), stream)
    return stream.getvalue()


def describe_error(err: Exception) -> str:
    """' at line N: problem' for a ruamel YAMLError, as error messages show it."""
    mark = getattr(err, "problem_mark", None)
    where = f" at line {mark.line + 1}" if mark is not None else ""
    problem = getattr(err, "problem", None) or (str(err).splitlines() or ["unreadable"])[0]
    return f"{where}: {problem}"


def load_file(path: Path, what: str, *, every_document: bool = False) -> Any:
    """Safe-load one YAML (or JSON) file, or the list of its documents; a missing or
    malformed file is a UsageError that names ``what`` and the file."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from kplugin.errors import UsageError

    if not path.is_file():
        raise UsageError(f"{what} {path}: no such file")
    try:
        if every_document:
            return [doc for doc in YAML(typ="safe").load_all(path) if doc is not None]
        return YAML(typ="safe").load(path)
    except YAMLError as err:
        raise UsageError(f"{what} {path} is not valid YAML{describe_error(err)}") from None
