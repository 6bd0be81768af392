"""scripts/house_rules.py, the size and repetition guard of ``make lint`` (issue 43,
item 6): each rule fails on a tree made to break it, and passes on this checkout."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType

from support import REPO


def rules() -> ModuleType:
    spec = importlib.util.spec_from_file_location("house_rules", REPO / "scripts" / "house_rules.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    """A git repository with ``files`` committed."""
    root = tmp_path / "repo"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "init", "-q")
    git(root, "-c", "user.email=t@example.com", "-c", "user.name=t", "add", ".")
    git(root, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "base")
    return root


BLOCK = "".join(f"    total += value * {i} + offset\n" for i in range(7))


def test_sizes(tmp_path: Path) -> None:
    house = rules()
    long_function = "def long():\n" + "    x = 1\n" * 85
    command = "@app.command()\ndef cmd():\n" + "    x = 1\n" * 65
    root = repo(tmp_path, {
        "kplugin/big.py": "x = 1\n" * 501,
        "kplugin/fns.py": long_function + "\n\n" + command,
        "kplugin/fine.py": "def short():\n    return 1\n",
    })  # fmt: skip
    found = house.sizes(root)
    assert found == [
        "kplugin/big.py: 501 lines, over 500: split it by its jobs",
        "kplugin/fns.py:1: function long is 86 lines, over 80",
        "kplugin/fns.py:90: command function cmd is 66 lines, over 60",
    ], found


def test_a_block_the_change_adds_twice_is_found(tmp_path: Path) -> None:
    house = rules()
    root = repo(tmp_path, {"kplugin/a.py": f"def a(value, offset):\n    total = 0\n{BLOCK}    return total\n"})
    assert house.duplicates(root, "HEAD") == []
    # the same block in a new file, and again in a new function of the old one (comments
    # and white space do not hide it)
    (root / "kplugin/b.py").write_text(f"def b(value, offset):\n    total = 0  # mine\n{BLOCK}\n    return total\n")
    found = house.duplicates(root, "HEAD")
    assert found and all(line.startswith("kplugin/b.py:") for line in found), found
    assert "the same at kplugin/a.py:" in found[0]
    git(root, "add", ".")
    git(root, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "copy")
    assert house.duplicates(root, "HEAD~1") == found, "a committed change is measured from its parent"
    assert house.duplicates(root, "HEAD") == [], "nothing added since HEAD"


def test_this_checkout_keeps_the_rules() -> None:
    house = rules()
    assert house.sizes(REPO) == []
