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
from pathlib import Path, PurePath
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


def kind_of(value: Any) -> str:
    """A loaded value's YAML kind as an error message names it ("a string"), without
    any of its content: for a file that may be anything its reader was pointed at."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else "a boolean"
    kinds = ((dict, "a mapping"), (list, "a list"), (int, "an integer"), (float, "a number"), (str, "a string"))
    return next((name for cls, name in kinds if isinstance(value, cls)), type(value).__name__)


def describe(value: Any) -> str:
    """A loaded value as an error message shows it: its YAML kind and its start
    ("a list [1, 2]"), never a Python class name such as CommentedSeq."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    kind = kind_of(value)
    shown = repr(value) if isinstance(value, str) else str(value)
    return f"{kind} {shown[:40]}{'...' if len(shown) > 40 else ''}"


# Nesting deeper than this is no configuration anyone writes; the C parser slows down
# quadratically with depth and its composer recurses (a '[' * 100000 crashed it).
MAX_DEPTH = 64
_OPENERS = ("MappingStartEvent", "SequenceStartEvent")
_CLOSERS = ("MappingEndEvent", "SequenceEndEvent")


def _events(text: str) -> Any:
    try:
        from _ruamel_yaml import CParser  # ruamel.yaml.clib
    except ImportError:  # pragma: no cover - the pure parser walks the same events
        from ruamel.yaml import YAML

        yield from YAML(typ="safe", pure=True).parse(text)
        return
    parser = CParser(text)
    try:
        while True:
            event = parser.get_event()
            yield event
            if type(event).__name__ == "StreamEndEvent":
                return
    finally:
        parser.dispose()


def _refuse_shapes(text: str, where: str, max_depth: int) -> None:
    """Anchors, aliases (a few bytes can expand to gigabytes) and deep nesting are
    refused before anything is built: walking the parser's events costs a fraction of
    loading, and stops at the first bad one."""
    from kplugin.core.errors import UsageError

    depth = 0
    for event in _events(text):
        kind = type(event).__name__
        mark = getattr(event, "start_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        if kind == "AliasEvent" or getattr(event, "anchor", None):
            raise UsageError(f"{where}{line}: YAML anchors and aliases (&name, *name) are not accepted; write it out")
        if kind in _OPENERS:
            depth += 1
            if depth > max_depth:
                raise UsageError(f"{where}{line}: nested more than {max_depth} levels deep")
        elif kind in _CLOSERS:
            depth -= 1


def syntax(text: str, path: PurePath | None) -> str:
    """What a user's file is, for an error message (it is read as YAML either way, JSON
    being YAML's subset): what its name says (.json, .yaml or .yml), else "JSON" for a
    text that opens with ``{`` or ``[``, as ``kubectl get -o json`` writes, else "YAML"."""
    suffix = path.suffix.lower() if path is not None else ""
    if suffix in (".json", ".yaml", ".yml"):
        return "JSON" if suffix == ".json" else "YAML"
    return "JSON" if text.lstrip()[:1] in ("{", "[") else "YAML"


def parse(
    text: str, where: str, *, path: PurePath | None = None, every_document: bool = False, max_depth: int = MAX_DEPTH
) -> Any:
    """Safe-load YAML (or JSON) that came from a user: plain data only, no anchors or
    aliases, at most ``max_depth`` levels; any problem is a UsageError naming ``where``
    (and JSON, not YAML, for a JSON file: see ``syntax``; ``path`` is the file's, when
    the text is one)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from kplugin.core.errors import UsageError

    try:
        _refuse_shapes(text, where, max_depth)
        yaml = YAML(typ="safe", pure=False)
        if every_document:
            return [doc for doc in yaml.load_all(text) if doc is not None]
        return yaml.load(text)
    except UsageError:
        raise
    except YAMLError as err:
        raise UsageError(f"{where} is not valid {syntax(text, path)}{describe_error(err)}") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as err:  # e.g. an int of 5,000 digits
        raise UsageError(f"{where} is not valid {syntax(text, path)}: {str(err).splitlines()[0][:200]}") from None


def load_file(path: Path, what: str, *, every_document: bool = False, limit: int | None = None) -> Any:
    """Read and safe-load one YAML (or JSON) file from a user, or the list of its
    documents: a regular file of at most ``limit`` bytes, UTF-8, checked as ``parse``
    does. Problems are UsageErrors naming ``what`` and the file."""
    from kplugin.core import safefs

    text = safefs.read_text(path, what, limit or safefs.SMALL_FILE)
    return parse(text, f"{what} {path}", path=path, every_document=every_document)
