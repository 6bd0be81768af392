#!/usr/bin/env python3
"""The house rules of kplugin's own code (``make lint`` runs this): sizes a maintainer can
hold in mind, and no block written twice by a change.

    python scripts/house_rules.py [--root DIR] [--base REV]

Fails (exit 1, one line per finding) on:

- a module of the package over MODULE_LINES lines;
- a function over FUNCTION_LINES lines, a CLI command function (``@app.command``) over
  COMMAND_LINES: a command reads as parse, call one library pipeline, print;
- a block of DUPLICATE_LINES or more lines of code that the change adds (every line of
  it added since ``--base``, default HEAD~1, the working tree included) and that stands
  elsewhere in the package too, line for line (blank lines, comments and imports left out).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

MODULE_LINES = 500
FUNCTION_LINES = 80
COMMAND_LINES = 60
DUPLICATE_LINES = 6
PACKAGE = "kplugin"
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def sizes(root: Path) -> list[str]:
    """Modules, functions and command functions over their limits."""
    found = []
    for path in sorted((root / PACKAGE).rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MODULE_LINES:
            found.append(f"{relative}: {text.count(chr(10))} lines, over {MODULE_LINES}: split it by its jobs")
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            command = any(_is_command(d) for d in node.decorator_list)
            limit = COMMAND_LINES if command else FUNCTION_LINES
            if length > limit:
                what = "command function" if command else "function"
                found.append(f"{relative}:{node.lineno}: {what} {node.name} is {length} lines, over {limit}")
    return found


def _is_command(decorator: ast.expr) -> bool:
    """``@app.command(...)`` or ``@something.command``: a CLI command."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "command"


def _code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line with its white space folded) of the lines that are code: not
    blank, not a comment, not part of an import statement."""
    imports = {
        n
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    kept = []
    for number, line in enumerate(text.splitlines(), 1):
        folded = " ".join(line.split())
        if folded and not folded.startswith("#") and number not in imports:
            kept.append((number, folded))
    return kept


def _added(root: Path, base: str) -> dict[str, set[int]]:
    """The lines each file of the package has that ``base`` had not (the working tree's
    changes included), by the file's path relative to ``root``."""
    diff = subprocess.run(
        ["git", "diff", "--unified=0", "--no-color", base, "--", PACKAGE],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    added: dict[str, set[int]] = defaultdict(set)
    current = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else None
        elif current is not None and (hunk := _HUNK.match(line)):
            start, count = int(hunk[1]), int(hunk[2] or "1")
            added[current].update(range(start, start + count))
    untracked = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "--", PACKAGE],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in untracked:
        if name.endswith(".py"):
            added[name].update(range(1, (root / name).read_text(encoding="utf-8").count("\n") + 2))
    return added


def duplicates(root: Path, base: str) -> list[str]:
    """Blocks the change adds that stand elsewhere in the package, line for line."""
    added = _added(root, base)
    windows: dict[str, list[tuple[str, int, int]]] = defaultdict(list)  # digest -> (file, first, last line)
    for path in sorted((root / PACKAGE).rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        lines = _code_lines(path.read_text(encoding="utf-8"))
        for i in range(len(lines) - DUPLICATE_LINES + 1):
            block = lines[i : i + DUPLICATE_LINES]
            digest = hashlib.sha256("\n".join(text for _, text in block).encode()).hexdigest()
            windows[digest].append((relative, block[0][0], block[-1][0]))
    found = {}
    for places in windows.values():
        if len(places) < 2:
            continue
        for place in places:
            name, first, last = place
            body = [n for n, _ in _code_lines((root / name).read_text(encoding="utf-8")) if first <= n <= last]
            if body and all(n in added.get(name, ()) for n in body):
                other = next(p for p in places if p != place)
                key = (name, first)
                found.setdefault(
                    key, f"{name}:{first}-{last}: added, and the same at {other[0]}:{other[1]}-{other[2]}: fold them"
                )
    return [found[k] for k in sorted(found)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--base", default="HEAD~1", help="what the change is measured from (default HEAD~1)")
    args = parser.parse_args(argv)
    findings = sizes(args.root)
    try:
        findings += duplicates(args.root, args.base)
    except subprocess.CalledProcessError as err:  # no such revision (a first commit, a shallow clone)
        print(f"house rules: duplicates not checked: git: {err.stderr.strip() or err}", file=sys.stderr)
    for finding in findings:
        print(finding)
    print(f"house rules: {len(findings)} finding(s)", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
