"""Post-processing of generated Go source.

Templates import every package a file may need; which ones it does need depends on the
extension points chosen and on the Kubernetes minor (``framework`` vs ``fwk``). Go
rejects unused imports, so instead of an ``{% if %}`` around each import, rendered Go
files go through ``prune_imports``: an import whose package name is not used in the code
is dropped, and the import block is left gofmt-clean.

It also reads Go source: ``methods`` finds the methods a plugin's type declares (for
``kplugin add extension-point`` and ``kplugin doctor``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

# Comments and string/rune literals: a package name inside them is not a use.
_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?\*/|`[^`]*`|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
_IMPORT_BLOCK = re.compile(r"^import \(\n(?P<body>.*?)^\)\n", re.M | re.S)
_IMPORT_LINE = re.compile(r"^\t(?:(?P<alias>[\w.]+) )?\"(?P<path>[^\"]+)\"(?P<comment>\s*//.*)?$")
_MAJOR_SUFFIX = re.compile(r"v([2-9]|[1-9][0-9]+)")  # module major versions start at v2


def package_name(path: str) -> str:
    """The name a Go package is used by when imported without an alias: the last path
    element, or the one before a major-version suffix (k8s.io/klog/v2 -> klog)."""
    parts = path.split("/")
    if len(parts) > 1 and _MAJOR_SUFFIX.fullmatch(parts[-1]):
        return parts[-2].replace("-", "")
    return parts[-1].replace("-", "").removeprefix("go-")


def shape_of(text: str) -> str:
    """Go source with comments and string/rune literals blanked to spaces (offsets and
    lines kept): only code is left to match."""
    return _NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m[0]), text)


_IMPORT_ONE = re.compile(r'^import\s+(?:(?P<alias>[\w.]+)\s+)?"(?P<path>[^"]+)"', re.M)
_IMPORT_GROUP = re.compile(r"^import\s*\((?P<body>.*?)^\)", re.M | re.S)
_IMPORT_SPEC = re.compile(r'^\s*(?:(?P<alias>[\w.]+)\s+)?"(?P<path>[^"]+)"', re.M)


def imports(code: str) -> dict[str, str]:
    """The imports of a file's code (comments blanked): the name each is used by -> its
    path (blank and dot imports left out)."""
    pairs = [(m["alias"], m["path"]) for m in _IMPORT_ONE.finditer(code)]
    for block in _IMPORT_GROUP.finditer(code):
        pairs += [(m["alias"], m["path"]) for m in _IMPORT_SPEC.finditer(block["body"])]
    return {alias or package_name(path): path for alias, path in pairs if alias not in {"_", "."}}


def used_names(source: str) -> set[str]:
    """Identifiers used as ``name.`` qualifiers in code (not comments or strings)."""
    code = _NOT_CODE.sub(" ", source)
    return set(re.findall(r"(?<![\w.])([A-Za-z_]\w*)\.", code))


def tidy(source: str) -> str:
    """What gofmt would also do to a rendered file: unused imports dropped (gofmt keeps
    them, the compiler rejects them) and exactly one newline at the end."""
    return prune_imports(source).rstrip("\n") + "\n"


def prune_imports(source: str) -> str:
    match = _IMPORT_BLOCK.search(source)
    if match is None:
        return source
    rest = source[: match.start()] + source[match.end() :]
    used = used_names(rest)
    kept: list[str] = []
    for line in match["body"].splitlines():
        parsed = _IMPORT_LINE.match(line)
        if parsed is not None:
            alias = parsed["alias"]
            if alias not in {"_", "."} and (alias or package_name(parsed["path"])) not in used:
                continue
        kept.append(line)
    # gofmt: no blank line at the ends of the block, never two in a row
    lines: list[str] = []
    for line in kept:
        if not line.strip() and (not lines or not lines[-1].strip()):
            continue
        lines.append(line)
    while lines and not lines[-1].strip():
        lines.pop()
    block = "import (\n" + "".join(f"{line}\n" for line in lines) + ")\n" if lines else ""
    pruned = source[: match.start()] + block + source[match.end() :]
    if not lines:
        pruned = re.sub(r"\n{3,}", "\n\n", pruned)
    return pruned


class Method(NamedTuple):
    """A method declaration in Go source."""

    name: str
    line: int  # 1-based, of its ``func``
    end: int  # offset just past the ``(`` that opens its parameters


def methods(source: str, type_name: str) -> Iterator[Method]:
    """The methods declared on Go type ``type_name`` in one file's text, in source order:
    each ``func (r T) Name(``, ``func (r *T) Name(`` or ``func (*T) Name(`` that starts a
    line (a receiver with type parameters is not recognised)."""
    receiver = re.compile(rf"^func\s*\(\s*(?:\w+\s+)?\*?\s*{re.escape(type_name)}\s*\)\s*(\w+)\s*\(", re.M)
    for match in receiver.finditer(source):
        yield Method(match[1], source.count("\n", 0, match.start()) + 1, match.end())


def close(code: str, i: int, opening: str = "(", closing: str = ")") -> int:
    """The offset just past the bracket that closes the one open before ``i``."""
    depth = 1
    while i < len(code) and depth:
        depth += {opening: 1, closing: -1}.get(code[i], 0)
        i += 1
    return i


def body(source: str, method: Method) -> tuple[int, str]:
    """The offset and text of a method's body, inside its braces, with comments and string
    literals blanked to spaces (same length: offsets into the source hold)."""
    code = _NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m[0]), source)
    i = close(code, method.end, "(", ")")  # past the parameters
    while i < len(code):  # past the results, to the brace that opens the body
        if code[i] == "(":
            i = close(code, i + 1, "(", ")")
        elif code[i] == "{" and re.search(r"\b(?:interface|struct)\s*$", code[:i]):
            i = close(code, i + 1, "{", "}")
        elif code[i] == "{":
            break
        else:
            i += 1
    start = i + 1
    return start, code[start : max(start, close(code, start, "{", "}") - 1)]


# folders ``go build ./...`` leaves out, besides hidden ones and nested modules
_NOT_BUILT = {"vendor", "testdata", "node_modules"}


def module_files(root: Path) -> list[PurePosixPath]:
    """Every Go file of the module at ``root`` (tests included), sorted: what ``go build
    ./...`` and ``go vet ./...`` read, nested modules, vendor/ and hidden folders left out."""
    found = []
    for top, dirs, files in os.walk(root):
        here = Path(top)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in _NOT_BUILT and not d.startswith((".", "_")) and not (here / d / "go.mod").exists()
        )
        found += [PurePosixPath((here / f).relative_to(root).as_posix()) for f in sorted(files) if f.endswith(".go")]
    return found


def line_of(text: str, offset: int) -> int:
    """The 1-based line of an offset into ``text``."""
    return text.count("\n", 0, offset) + 1


def _event_literals(text: str, plugin: str) -> Iterator[tuple[int, str]]:
    """The offset and text of each {Event: ...} literal of a plugin's EventsToRegister
    (read from its source), the offset its ``Event`` key's."""
    start = next((m.end for m in methods(text, plugin) if m.name == "EventsToRegister"), None)
    if start is None:
        return
    end = re.compile(r"^}", re.M).search(text, start)
    body_end = end.start() if end else len(text)
    for event in re.finditer(r"\{\s*Event\s*:", text[start:body_end]):
        at = start + event.start()
        depth, i = 0, at
        while i < body_end:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        literal = text[at:i]
        key = literal.index("Event")
        yield at + key, literal[key:]


def events_without_hints(text: str, plugin: str) -> list[int]:
    """The lines of the events a plugin's EventsToRegister registers without a
    QueueingHintFn (read from its source: each {Event: ...} literal of the function)."""
    return [line_of(text, at) for at, literal in _event_literals(text, plugin) if "QueueingHintFn" not in
            literal.replace("PreQueueingHintFn", "")]  # fmt: skip


_PRE_HINT = re.compile(r"\bPreQueueingHintFn\s*:\s*(?P<fn>func\b|[\w.]+)")


def pre_hints(text: str, plugin: str) -> list[tuple[int, str]]:
    """The line and the value (``pl.name``, ``name`` or ``func``: a literal) of each
    PreQueueingHintFn a plugin's EventsToRegister names."""
    return [
        (line_of(text, at + m.start()), m["fn"])
        for at, literal in _event_literals(text, plugin)
        if (m := _PRE_HINT.search(literal)) is not None
    ]


# comments, and the literals a comment marker inside of is no comment
_COMMENT = re.compile(r"(?P<literal>\"(?:\\.|[^\"\\\n])*\"|`[^`]*`|'(?:\\.|[^'\\\n])*')|//[^\n]*|/\*.*?\*/", re.S)


def blank_comments(text: str) -> str:
    """Go source with its comments blanked to spaces (same length and lines: offsets and
    line numbers hold), its string literals kept."""
    return _COMMENT.sub(lambda m: m[0] if m["literal"] else re.sub(r"[^\n]", " ", m[0]), text)


# the custom resources a plugin's code names: fw.CustomResource(plural, version, group),
# each a string literal or a constant (v1alpha1.GroupName, a GroupVersion's field), an
# EventResource or GVK of "plural.version.group", a GroupVersionResource literal
_ARG = r'(?:"[^"\n]*"|[A-Za-z_][\w.]*)'
_CUSTOM_RESOURCE = re.compile(
    rf"\bCustomResource\(\s*(?P<plural>{_ARG})\s*,\s*(?P<version>{_ARG})\s*,\s*(?P<group>{_ARG})\s*\)"
)
_EVENT_RESOURCE = re.compile(
    r'\b(?:EventResource|GVK)\(\s*"(?P<plural>[a-z0-9-]+)\.(?P<version>v[0-9a-z]+)\.(?P<group>[a-z0-9.-]+)"\s*\)'
)
_GVR = re.compile(r"\bGroupVersionResource\{(?P<fields>[^}]*)\}")
_GVR_FIELD = re.compile(rf"\b(?P<key>Group|Version|Resource)\s*:\s*(?P<value>{_ARG})")
# a string constant or variable of the project's Go code: NAME = "value" (const or var, one
# or in a block, typed string or not), and NAME = schema.Group...{Field: value, ...}
_STRING_DECL = re.compile(
    r'^\s*(?:(?:const|var)\s+)?(?P<name>[A-Za-z_]\w*)\s*(?:string\s*)?=\s*"(?P<value>[^"\n]*)"', re.M
)
_STRUCT_DECL = re.compile(r"^\s*(?:var\s+)?(?P<name>[A-Za-z_]\w*)\s*=\s*schema\.Group\w*\{(?P<fields>[^}\n]*)\}", re.M)


class GoConstants:
    """The string constants (and GroupVersion-like variables) of a project's Go code, by
    name, with the directory each is declared in: what resolves v1alpha1.GroupName or
    SchemeGroupVersion.Version where a plugin names its custom resource with them."""

    def __init__(self, sources: Iterable[tuple[Path, str]] = ()) -> None:
        self.strings: dict[str, dict[str, str]] = {}  # name -> {directory's name: value}
        self.structs: dict[str, dict[str, dict[str, str]]] = {}  # name -> {directory: {field: value}}
        for path, text in sources:
            code = blank_comments(text)
            folder = path.parent.name
            for m in _STRING_DECL.finditer(code):
                self.strings.setdefault(m["name"], {})[folder] = m["value"]
            for m in _STRUCT_DECL.finditer(code):
                fields = {f["key"]: f["value"] for f in _GVR_FIELD.finditer(m["fields"])}
                self.structs.setdefault(m["name"], {})[folder] = fields

    def value(self, expression: str, folder: str = "") -> str | None:
        """A literal's text, or the value of a constant the expression names (NAME,
        pkg.NAME, VAR.Field, pkg.VAR.Field); None where the code does not tell."""
        if expression.startswith('"'):
            return expression[1:-1]
        parts = expression.split(".")
        for qualifier, name, field in _readings(parts):
            if field is None and (found := _pick(self.strings.get(name, {}), qualifier or folder)) is not None:
                return str(found)
            if field is not None and (fields := _pick(self.structs.get(name, {}), qualifier or folder)) is not None:
                inner = fields.get(field)
                return None if inner is None or inner == expression else self.value(inner, qualifier or folder)
        return None


def _readings(parts: list[str]) -> list[tuple[str | None, str, str | None]]:
    """The ways to read a dotted name: (package, name, field)."""
    if len(parts) == 1:
        return [(None, parts[0], None)]
    if len(parts) == 2:
        return [(parts[0], parts[1], None), (None, parts[0], parts[1])]
    if len(parts) == 3:
        return [(parts[0], parts[1], parts[2])]
    return []


def _pick(found: dict[str, Any], folder: str | None) -> Any:
    """The value declared in ``folder`` (a package's directory), else the only one."""
    if folder and folder in found:
        return found[folder]
    values = list(found.values())
    return values[0] if len(values) == 1 else None


def custom_resources(text: str, constants: GoConstants | None = None, folder: str = "") -> list[tuple[int, str, str]]:
    """(line, group, plural) of each custom resource the Go source names (comments left
    out), its arguments read through the project's ``constants`` where they are names."""
    known = constants or GoConstants()
    code = blank_comments(text)
    found = []
    for m in _CUSTOM_RESOURCE.finditer(code):
        group, plural = known.value(m["group"], folder), known.value(m["plural"], folder)
        if group and plural:
            found.append((line_of(code, m.start()), group, plural))
    found += [(line_of(code, m.start()), m["group"], m["plural"]) for m in _EVENT_RESOURCE.finditer(code)]
    for match in _GVR.finditer(code):
        fields = {f["key"]: known.value(f["value"], folder) for f in _GVR_FIELD.finditer(match["fields"])}
        group, resource = fields.get("Group"), fields.get("Resource")
        if group and resource:  # the core group's kinds are kube-scheduler's own
            found.append((line_of(code, match.start()), group, resource))
    return sorted(set(found))
