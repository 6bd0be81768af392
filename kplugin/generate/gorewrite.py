"""The mechanical part of moving an adopted repository's Go code to another minor: each
name of the framework that the other minor spells differently (model.apichanges.renames:
a move between k8s.io/kubernetes/pkg/scheduler/framework and k8s.io/kube-scheduler/framework,
a renamed type, a pointer that became an interface) rewritten where the code uses it,
through whatever name the file imports the package by; an import added where the new
package is not imported yet, and one no longer used dropped. Comments and string
literals are left as they are."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from kplugin.core import golang, proc
from kplugin.core.errors import OperationError, ToolError
from kplugin.generate import gosource
from kplugin.model.apichanges import API_CHANGES, PACKAGES, Rename, crossed, framework_moves
from kplugin.model.versions import Target

_GO_ERROR = re.compile(r"^(?:vet: )?(?P<file>[^\s:]+\.go):(?P<line>\d+):(?P<col>\d+): (?P<message>.+)$")

# the name a file imports a framework package by when kplugin adds the import
_DEFAULT_NAMES = {path: name for name, path in PACKAGES.items()}


def go_files(root: Path) -> list[PurePosixPath]:
    """Every Go file of the module (tests included: they must compile too), sorted."""
    return gosource.module_files(root)


def _add_import(text: str, path: str, name: str) -> str:
    """``text`` importing ``path`` as ``name`` (in its import block, or a new one)."""
    spec = f'\t{name} "{path}"\n' if gosource.package_name(path) != name else f'\t"{path}"\n'
    block = re.search(r"^import \((?P<body>.*?)^\)", text, re.M | re.S)
    if block is not None:  # at the end of its last group; a group of its own after the standard library's
        paths = re.findall(r'"([^"]+)"', block["body"])
        if paths and "." not in paths[-1].split("/")[0]:
            spec = "\n" + spec
        return text[: block.end("body")] + spec + text[block.end("body") :]
    clause = re.search(r"^package \w+[^\n]*\n", text, re.M)
    at = clause.end() if clause else 0
    return text[:at] + f"\nimport (\n{spec})\n" + text[at:]


def _drop_import(text: str, path: str) -> str:
    """``text`` without its import of ``path`` (a line of a block, or a single import)."""
    quoted = re.escape(f'"{path}"')
    text = re.sub(rf"^\t(?:[\w.]+ )?{quoted}[^\n]*\n", "", text, count=1, flags=re.M)
    text = re.sub(rf"^import (?:[\w.]+ )?{quoted}[^\n]*\n", "", text, count=1, flags=re.M)
    return re.sub(r"^import \(\n\)\n", "", text, flags=re.M)


def rewrite(text: str, rules: tuple[Rename, ...]) -> tuple[str, list[str]]:
    """One file's text with the renames applied, and what was rewritten (old -> new, once
    each, in order)."""
    shape = gosource.shape_of(text)
    aliases = gosource.imports(gosource.blank_comments(text))
    by_path = {path: alias for alias, path in aliases.items()}
    edits: list[tuple[int, int, str]] = []
    done: list[str] = []
    needed: dict[str, str] = {}  # import path -> name, imports to add
    for rule in rules:
        alias = by_path.get(rule.old_package)
        if alias is None:
            continue
        pattern = re.compile(rf"(?<![\w.])(?P<pointer>\*?){re.escape(alias)}\.{re.escape(rule.old_name)}\b")
        matches = list(pattern.finditer(shape))
        if not matches:
            continue
        new_alias = by_path.get(rule.new_package) or needed.get(rule.new_package)
        if new_alias is None:
            new_alias = _DEFAULT_NAMES[rule.new_package]
            if new_alias in aliases and aliases[new_alias] != rule.new_package:
                continue  # the name is taken by another package: left to the compile report
            needed[rule.new_package] = new_alias
        for match in matches:
            # a pointer that became an interface loses its star; the other way gains one
            pointer = match["pointer"] if rule.old_pointer == rule.new_pointer else ("*" if rule.new_pointer else "")
            edits.append((match.start(), match.end(), f"{pointer}{new_alias}.{rule.new_name}"))
        old = f"{'*' if rule.old_pointer else ''}{alias}.{rule.old_name}"
        done.append(f"{old} -> {'*' if rule.new_pointer else ''}{new_alias}.{rule.new_name}")
    if not edits:
        return text, []
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    for path, name in sorted(needed.items()):
        text = _add_import(text, path, name)
    for rule in rules:  # an old package the file no longer uses
        alias = by_path.get(rule.old_package)
        if alias is not None and not re.search(rf"(?<![\w.]){re.escape(alias)}\.", gosource.shape_of(text)):
            text = _drop_import(text, rule.old_package)
    return text, done


def apply(
    root: Path, rules: tuple[Rename, ...], paths: tuple[PurePosixPath, ...] | None = None
) -> dict[PurePosixPath, list[str]]:
    """Rewrite the module's Go files under ``root`` in place (only ``paths``, where given);
    what changed, by file."""
    changed: dict[PurePosixPath, list[str]] = {}
    for relative in go_files(root) if paths is None else paths:
        path = root / relative
        if path.is_symlink() or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        new, done = rewrite(text, rules)
        if done and new != text:
            path.write_text(new, encoding="utf-8", errors="surrogateescape")
            changed[relative] = done
    if changed and proc.which("gofmt") is not None:  # an added import sorted into its group
        proc.run(["gofmt", "-w", *(str(root / p) for p in sorted(changed))], what="gofmt")
    return changed


def explain(root: Path, output: str, old: Target, new: Target) -> list[str]:
    """Each compile error of ``output`` as file:line: message, with the minor that changed
    it and what to write instead where kplugin knows, then what changed in the minors a
    move from ``old`` to ``new`` crosses."""
    lines, seen = [], set()
    patterns = [(re.compile(p), since, fix) for p, since, _, fix in (*framework_moves(), *API_CHANGES)]
    for raw in output.splitlines():
        match = _GO_ERROR.match(raw.strip())
        if match is None or raw in seen:
            continue
        seen.add(raw)
        relative = match["file"].removeprefix(str(root) + "/").removeprefix("./")
        try:
            source = (root / relative).read_text(errors="replace").splitlines()[int(match["line"]) - 1]
        except (OSError, IndexError):
            source = ""
        hint = next((f" (Kubernetes {since}: {fix})" for p, since, fix in patterns if p.search(source)), "")
        lines.append(f"{relative}:{match['line']}: {match['message']}{hint}")
    changes = crossed(old.release.key, new.release.key)
    if changes:
        lines.append("what changed between them: " + "; ".join(f"{minor}: {what}" for minor, what in changes))
    return lines


def compile_check(root: Path, name: str, old: Target, new: Target) -> None:
    """``go build ./...`` in the moved module at ``root``; the errors left explained in an
    OperationError (``name`` is what the user calls the project)."""
    env = {"CGO_ENABLED": "0", "GOFLAGS": "-mod=mod", **golang.build_env(root)}
    command = ["go", "build", "-trimpath", "./..."]
    try:
        try:
            proc.run(command, cwd=root, env=env, what="go build ./...")
        except ToolError as err:  # a dependency that needs cgo (kplugin build --cgo): checked with it
            if not golang.cgo_packages(root, "./...", err.output or "", env):
                raise
            proc.run(command, cwd=root, env={**env, "CGO_ENABLED": "1"}, what="go build ./...")
    except ToolError as err:
        details = explain(root, err.output or "", old, new)
        count = sum(1 for d in details if not d.startswith("what changed"))
        raise OperationError(
            f"{name} does not compile at Kubernetes {new.version} after the mechanical rewrites "
            f"({count} error(s) left, below); nothing was changed",
            details=details[:40],
        ) from None
