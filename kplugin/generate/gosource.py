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

import re
from collections.abc import Iterator
from typing import NamedTuple

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
    each ``func (r T) Name(`` or ``func (r *T) Name(`` that starts a line (a receiver
    without a name, or with type parameters, is not recognised)."""
    receiver = re.compile(rf"^func \(\w+ \*?{re.escape(type_name)}\) (\w+)\(", re.M)
    for match in receiver.finditer(source):
        yield Method(match[1], source.count("\n", 0, match.start()) + 1, match.end())


def _close(code: str, i: int, opening: str, closing: str) -> int:
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
    i = _close(code, method.end, "(", ")")  # past the parameters
    while i < len(code):  # past the results, to the brace that opens the body
        if code[i] == "(":
            i = _close(code, i + 1, "(", ")")
        elif code[i] == "{" and re.search(r"\b(?:interface|struct)\s*$", code[:i]):
            i = _close(code, i + 1, "{", "}")
        elif code[i] == "{":
            break
        else:
            i += 1
    start = i + 1
    return start, code[start : max(start, _close(code, start, "{", "}") - 1)]
