"""The cache of argsinfo builds: pruned by last use, never under another kplugin run's feet."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from support import Kplugin

from kplugin.core import proc
from kplugin.generate import argsinfo
from kplugin.model.project import load as load_project

HOUR = 3600.0


def _builds(home: Path, ages: list[float]) -> list[Path]:
    """Build folders in ``home``, each last used ``age`` seconds ago."""
    now = time.time()
    made = []
    for index, age in enumerate(ages):
        build = home / f"build-{index:02d}"
        build.mkdir(parents=True)
        (build / "argsinfo").write_bytes(b"binary")
        os.utime(build, (now - age, now - age))
        made.append(build)
    return made


def test_builds_used_in_the_last_minutes_are_kept_however_many(tmp_path: Path) -> None:
    """A parallel run may be about to run any of them: none is pruned."""
    builds = _builds(tmp_path, [10.0 * i for i in range(9)])
    argsinfo._prune(tmp_path, keep=6)
    assert all(b.is_dir() for b in builds)


def test_old_builds_beyond_the_ones_used_last_are_pruned(tmp_path: Path) -> None:
    builds = _builds(tmp_path, [60.0, 120.0, 2 * HOUR, 3 * HOUR, 4 * HOUR, 5 * HOUR, 6 * HOUR, 7 * HOUR])
    argsinfo._prune(tmp_path, keep=6)
    # room for the new build beside the five used last; the other three were last used hours ago
    assert [b.is_dir() for b in builds] == [True] * 5 + [False] * 3


def test_a_build_found_in_the_cache_counts_as_used(
    kplugin: Kplugin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pruning goes by last use, not by when a build was made: a build made hours ago and
    used just now outlives builds made after it and not used since."""
    run = kplugin("new", "least", "--k8s", "1.37", "--extension-points", "score", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    root = tmp_path / "least"
    (root / "go.sum").write_text("")
    project = load_project(root)
    home = tmp_path / "cache"
    monkeypatch.setenv("KPLUGIN_CACHE_DIR", str(home))
    monkeypatch.delenv("KPLUGIN_NO_CACHE", raising=False)
    monkeypatch.setattr(proc, "which", lambda _name: "/usr/local/go/bin/go")
    compiled: list[Path] = []

    def compile_(_root: Path, _program: bytes, binary: Path, _progress: object) -> Path:
        binary.parent.mkdir(parents=True, exist_ok=True)
        binary.write_bytes(b"binary")
        compiled.append(binary)
        return binary

    monkeypatch.setattr(argsinfo, "_compile", compile_)
    with argsinfo._binary(project, lambda _: None) as first:
        pass
    made_long_ago = time.time() - 5 * HOUR
    os.utime(first.parent, (made_long_ago, made_long_ago))
    others = _builds(home / "argsinfo", [2 * HOUR, 3 * HOUR, 4 * HOUR, 4.5 * HOUR, 4.6 * HOUR, 4.7 * HOUR])

    with argsinfo._binary(project, lambda _: None) as second:
        assert second == first
    assert compiled == [first]  # found, not built again
    # the lock that finding and pruning share is in argsinfo's folder (the one checked
    # writable), not beside it
    assert [p.name for p in home.iterdir()] == ["argsinfo"]
    assert (home / "argsinfo" / ".builds.lock").is_file()
    argsinfo._prune(home / "argsinfo", keep=6)
    assert first.is_file()
    assert [b.is_dir() for b in others] == [True] * 4 + [False] * 2


def test_a_build_gone_is_not_found_and_a_cache_gone_prunes_nothing(tmp_path: Path) -> None:
    """A build removed by hand between listing and use is built again, not run."""
    assert argsinfo._used(tmp_path / "gone") is False
    argsinfo._prune(tmp_path / "no-cache")  # no error
