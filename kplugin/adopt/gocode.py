"""The Go packages of one module, read without compiling: each file's package clause,
imports and code (comments blanked, offsets kept), and the few things adopt asks of them:
a string a constant stands for, a function's body, the methods a type declares.

It reads the code the way gofmt leaves it (declarations at the start of a line); what it
cannot tell it says so (None), and adopt reports that rather than guessing."""

from __future__ import annotations

import re
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from kplugin.generate import gosource

_MAX_FILE = 2 * 1024 * 1024
_MAX_FILES = 20_000
# a file the go tool never builds (a generator run with go run): //go:build ignore
_IGNORED = re.compile(r"^//\s*(?:go:build|\+build)\s+ignore\s*$", re.M)
_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)
# a string literal, or a name (pkg.Name) another declaration stands for
_VALUE = r'(?P<value>"(?:\\.|[^"\\\n])*"|`[^`\n]*`|[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)?)'
_DECLARATION = r"^\s*(?:(?:const|var)\s+)?{name}(?:\s+[\w.]+)?\s*=\s*" + _VALUE + r"\s*$"


class GoFile(NamedTuple):
    path: PurePosixPath  # relative to the module's root
    package: str
    imports: dict[str, str]  # the name each import is used by -> its import path
    code: str  # comments blanked (same offsets and lines), string literals kept
    shape: str  # comments and literals blanked: for matching brackets

    def line(self, offset: int) -> int:
        return gosource.line_of(self.code, offset)


class GoPackage(NamedTuple):
    directory: PurePosixPath  # relative to the module's root ("." at the top)
    import_path: str
    name: str
    files: tuple[GoFile, ...]


def _read(path: Path) -> str | None:
    try:
        st = path.lstat()  # a regular file only: a link, a FIFO (which would block) or a device is not code
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_FILE:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def go_files(root: Path) -> Iterator[tuple[PurePosixPath, str]]:
    """The module's Go files that build (not tests), sorted, with their text: what
    ``go build ./...`` reads, nested modules left out."""
    built = [p for p in gosource.module_files(root) if not p.name.endswith("_test.go") and p.name[0] not in "._"]
    for relative in built[:_MAX_FILES]:
        text = _read(root / relative)
        if text is not None and not _IGNORED.search(text):
            yield relative, text


class Module:
    """The Go packages of the module at ``root`` (import path ``path``), by directory."""

    def __init__(self, root: Path, path: str) -> None:
        self.root = root
        self.path = path
        grouped: dict[PurePosixPath, list[GoFile]] = {}
        for relative, text in go_files(root):
            code = gosource.blank_comments(text)
            clause = _PACKAGE.search(code)
            if clause is None:
                continue
            shape = gosource.shape_of(text)
            grouped.setdefault(relative.parent, []).append(
                GoFile(relative, clause[1], gosource.imports(code), code, shape)
            )
        self.packages: dict[PurePosixPath, GoPackage] = {}
        for directory, files in sorted(grouped.items()):
            names = sorted({f.package for f in files if f.package != "documentation"})
            name = "main" if "main" in names else (names[0] if names else files[0].package)
            kept = tuple(f for f in files if f.package == name)
            suffix = "" if str(directory) == "." else f"/{directory}"
            self.packages[directory] = GoPackage(directory, path + suffix, name, kept)

    def package(self, import_path: str) -> GoPackage | None:
        """The module's package with this import path (None: another module's)."""
        if import_path == self.path:
            return self.packages.get(PurePosixPath("."))
        if not import_path.startswith(self.path + "/"):
            return None
        return self.packages.get(PurePosixPath(import_path[len(self.path) + 1 :]))

    def importers(self, import_path: str) -> list[GoPackage]:
        """The module's packages that import ``import_path``, sorted by directory."""
        return [p for p in self.packages.values() if any(import_path in f.imports.values() for f in p.files)]

    def mains_reaching(self, package: GoPackage) -> list[GoPackage]:
        """The main packages of the module that import ``package``, directly or through
        other packages of the module (sorted by directory)."""
        seen, todo, mains = {package.import_path}, [package], []
        while todo:
            current = todo.pop()
            if current.name == "main":
                mains.append(current)
                continue
            for importer in self.importers(current.import_path):
                if importer.import_path not in seen:
                    seen.add(importer.import_path)
                    todo.append(importer)
        return sorted(mains, key=lambda p: str(p.directory))


def split_arguments(file: GoFile, start: int, end: int) -> list[tuple[int, str]]:
    """The top-level comma-separated arguments between two offsets, each with its
    offset, stripped (a trailing comma gives no empty argument)."""
    parts, depth, begin = [], 0, start
    for i in range(start, end):
        char = file.shape[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append((begin, i))
            begin = i + 1
    parts.append((begin, end))
    found = []
    for a, b in parts:
        text = file.code[a:b]
        if text.strip():
            found.append((a + len(text) - len(text.lstrip()), text.strip()))
    return found


def string_value(module: Module, package: GoPackage, file: GoFile, expression: str, depth: int = 0) -> str | None:
    """The string a Go expression stands for: a literal, or a constant or variable of the
    module declared as one (followed through other packages of the module); None where
    the code does not say (a call, a package outside the module)."""
    expression = expression.strip()
    if expression[:1] in {'"', "`"}:
        return expression[1:-1]
    if depth > 6 or not re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?", expression):
        return None
    qualifier, _, name = expression.rpartition(".")
    where = package
    if qualifier:
        imported = file.imports.get(qualifier)
        found = module.package(imported) if imported else None
        if found is None:
            return None
        where = found
    pattern = re.compile(_DECLARATION.format(name=re.escape(name)), re.M)
    for candidate in where.files:
        match = pattern.search(candidate.code)
        if match is not None:
            return string_value(module, where, candidate, match["value"], depth + 1)
    return None


class Function(NamedTuple):
    file: GoFile
    parameters: str  # as written, between the parentheses
    start: int  # offset of the body's first character, inside its brace
    end: int  # offset of the brace that closes it

    @property
    def body(self) -> str:
        return self.file.code[self.start : self.end]


def function(package: GoPackage, name: str) -> Function | None:
    """The top-level function ``name`` of a package (not a method)."""
    declared = re.compile(rf"^func\s+{re.escape(name)}\s*(?:\[[^\]]*\])?\(", re.M)
    for file in package.files:
        match = declared.search(file.shape)
        if match is None:
            continue
        i = gosource.close(file.shape, match.end())  # past the parameters
        parameters = file.code[match.end() : i - 1]
        while i < len(file.shape) and file.shape[i] != "{":  # past the results
            i = gosource.close(file.shape, i + 1) if file.shape[i] == "(" else i + 1
        end = gosource.close(file.shape, i + 1, "{", "}") - 1
        return Function(file, parameters, i + 1, max(i + 1, end))
    return None


def methods(package: GoPackage, type_name: str) -> set[str]:
    """The methods a package declares on a type (gosource.methods, the one method scanner)."""
    return {m.name for f in package.files for m in gosource.methods(f.shape, type_name)}


def types_with(package: GoPackage, method: str) -> list[str]:
    """The types of a package that declare ``method`` (sorted)."""
    receiver = re.compile(rf"^func\s*\(\s*(?:\w+\s+)?\*?\s*(\w+)\s*\)\s*{re.escape(method)}\s*\(", re.M)
    return sorted({m[1] for f in package.files for m in receiver.finditer(f.shape)})
