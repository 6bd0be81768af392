"""Helpers of the hostile-input suites (tests/hostile/, issue 10).

Each case runs kplugin in a *world*: a temporary directory holding the project under
``work/`` and a directory ``outside/`` beside it (with a file a hostile project would
like to reach). A snapshot of the whole world (every file's bytes and mode, every
directory, link and special file) is taken before and after, so a case proves both
that the project is as it was and that nothing outside it was touched.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from support import Run

REPO = Path(__file__).resolve().parents[2]
K8S = "1.28.15"
NEXT_K8S = "1.29"  # upgrade's target in the refusal cases (never reached: they stop first)
IS_ROOT = os.geteuid() == 0
# Outside CI a developer without root may skip these; in CI they always run (CI runs as
# root with util-linux's unshare and mount), so a missing capability fails them there
# instead of passing them by skipping.
IN_CI = os.environ.get("CI") == "true"
root_only = pytest.mark.skipif(
    not IS_ROOT and not IN_CI, reason="needs root (mknod, mount namespaces); runs in CI, which is root"
)
needs_unshare = pytest.mark.skipif(
    not IN_CI and (not IS_ROOT or shutil.which("unshare") is None or shutil.which("mount") is None),
    reason="needs root with unshare and mount (a private mount namespace); runs in CI, which is root",
)
KplugIn = Callable[..., Run]


# --- worlds ---------------------------------------------------------------------------


@cache
def _templates() -> Path:
    home = Path(tempfile.mkdtemp(prefix="kplugin-hostile-templates-"))
    atexit.register(shutil.rmtree, home, True)
    return home


def template(name: str = "p", points: str | None = None, plugin: str | None = None) -> Path:
    """A project generated once per test run (through the library: no Go, no CLI); its
    points are kplugin new's defaults unless given."""
    from kplugin.model.points import default_words

    return _template(name, points or default_words(), plugin)


@cache
def _template(name: str, points: str, plugin: str | None) -> Path:
    from kplugin.generate import scaffold
    from kplugin.model.spec import ProjectSpec
    from kplugin.model.versions import resolve

    spec = ProjectSpec.create(name, resolve(K8S), extension_points=points, plugin=plugin)
    dest = _templates() / f"{name}-{points.replace(',', '_')}-{plugin}" / name
    scaffold.new_project(spec, dest)
    return dest


@dataclass(frozen=True)
class World:
    root: Path  # everything a case may touch; snapshots cover all of it
    project: Path  # root/work/p
    outside: Path  # root/outside: never touched by any case

    @property
    def work(self) -> Path:
        return self.project.parent

    def snapshot(self) -> dict[str, tuple[Any, ...]]:
        return snapshot(self.root)


def make_world(root: Path, name: str = "p", points: str | None = None, *, project: bool = True) -> World:
    work, outside = root / "work", root / "outside"
    work.mkdir(parents=True)
    outside.mkdir()
    (outside / "victim.txt").write_text("a file no kplugin command may touch\n")
    (outside / "internal").mkdir()
    if project:
        shutil.copytree(template(name, points), work / name, symlinks=True)
    return World(root, work / name, outside)


def snapshot(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under ``root`` by relative path: type, mode and content hash (files),
    target (links), device number (devices). Links are never followed; no recursion
    (os.walk recurses up to Python 3.11: a very deep tree is one of the cases)."""
    found: dict[str, tuple[Any, ...]] = {}
    pending = [root]
    while pending:
        directory = pending.pop()
        with os.scandir(directory) as entries:
            paths = [Path(entry.path) for entry in entries]
        for path in paths:
            info = os.lstat(path)
            mode, perms = info.st_mode, stat.S_IMODE(info.st_mode)
            key = path.relative_to(root).as_posix()
            if stat.S_ISREG(mode):
                found[key] = ("file", perms, hashlib.sha256(path.read_bytes()).hexdigest())
            elif stat.S_ISDIR(mode):
                found[key] = ("dir", perms)
                pending.append(path)
            elif stat.S_ISLNK(mode):
                found[key] = ("link", os.readlink(path))
            elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                found[key] = ("device", perms, info.st_rdev, info.st_ino)
            else:
                found[key] = ("special", stat.S_IFMT(mode), perms, info.st_ino)
    return found


def changed(before: dict[str, tuple[Any, ...]], after: dict[str, tuple[Any, ...]]) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def staging_left(directory: Path) -> list[str]:
    """kplugin's temporary directories and files beside a project or an output file."""
    return sorted(p.name for p in directory.iterdir() if ".kplugin-" in p.name or p.name.startswith(".tmp"))


# --- outcomes -------------------------------------------------------------------------


def no_crash(run: Run) -> None:
    for text in (run.stdout, run.stderr):
        assert "Traceback" not in text, run.stderr
    assert "internal error" not in run.stderr, run.stderr
    assert "Exception ignored" not in run.stderr, run.stderr


def refused(run: Run, code: int, *needles: str, progress: Sequence[str] = ()) -> str:
    """Exit ``code`` with exactly one line on stderr, "kplugin: error: ...", holding every
    needle; lines starting with one of ``progress`` (a status line printed before the
    work started) are not counted. Returns the line."""
    no_crash(run)
    assert run.code == code, f"exit {run.code}, expected {code}; stderr: {run.stderr!r}"
    lines = [line for line in run.stderr.splitlines() if not line.startswith(tuple(progress))]
    assert len(lines) == 1, f"expected one line on stderr, got: {run.stderr!r}"
    assert lines[0].startswith("kplugin: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def succeeded(run: Run) -> None:
    no_crash(run)
    assert run.code == 0, run.stderr
    assert "kplugin: error" not in run.stderr, run.stderr


# --- running kplugin --------------------------------------------------------------------


class Hung(BaseException):
    """kplugin ran longer than a case allows (a BaseException: kplugin must not catch it)."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise Hung in this (main) thread when the block runs longer than ``seconds``."""

    def expire(_signum: int, _frame: object) -> None:
        raise Hung(f"still running after {seconds}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def timed(kplugin: KplugIn, seconds: float = 20) -> KplugIn:
    """The in-process ``kplugin`` fixture, failing a case that runs longer than ``seconds``
    (a FIFO read that blocks would otherwise hang the whole suite)."""

    def run(*args: str) -> Run:
        with deadline(seconds):
            return kplugin(*args)

    return run


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "CI": "true", **extra}


def command(*args: str, isolated: bool = False) -> list[str]:
    """``python -m kplugin ARGS`` on this worktree. ``isolated``: without the site module
    (-S), so that no .pth file of the machine runs code at start-up; the packages are then
    found through PYTHONPATH (see ``env_isolated``)."""
    return [sys.executable, *(["-S"] if isolated else []), "-m", "kplugin", *args]


def env_isolated(**extra: str) -> dict[str, str]:
    paths = [str(REPO), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    return env(PYTHONPATH=os.pathsep.join(dict.fromkeys(paths)), **extra)


def cli(
    *args: str,
    cwd: Path | None = None,
    timeout: float = 30,
    extra_env: dict[str, str] | None = None,
    stdout: Any = subprocess.PIPE,
    shell_prefix: str | None = None,
    unset: tuple[str, ...] = (),
) -> Run:
    """kplugin as a real process. ``shell_prefix`` runs it through ``sh -c`` (e.g.
    ``'umask 027;'`` or a redirection such as ``'exec >&-;'``); ``unset``: variables of
    this environment it does not get."""
    cmd = command(*args)
    if shell_prefix is not None:
        cmd = ["sh", "-c", f'{shell_prefix} exec "$@"', "sh", *cmd]
    environment = {k: v for k, v in env(**(extra_env or {})).items() if k not in unset}
    proc = subprocess.run(
        cmd,
        cwd=cwd,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Run(proc.returncode, proc.stdout or "", proc.stderr)


def fake_tool(bin_dir: Path, name: str, script: str) -> Path:
    """An executable shell script ``bin_dir/name`` (a stand-in for go, kube-scheduler...)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    tool = bin_dir / name
    tool.write_text("#!/bin/sh\n" + script)
    tool.chmod(0o755)
    return tool


def wait_for(predicate: Callable[[], bool], timeout: float = 20, step: float = 0.02) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


# --- hostile YAML -----------------------------------------------------------------------

BILLION_LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{x}: &{x} [{', '.join([f'*{p}'] * 9)}]\n" for p, x in zip("abcdefgh", "bcdefghi", strict=True)
)
DEEP_FLOW = "[" * 100_000
DEEP_BLOCK = "".join(" " * i + "a:\n" for i in range(300)) + " " * 300 + "b: 1\n"


def in_namespace(root: Path, args: Sequence[str], **spec: Any) -> dict[str, Any]:
    """Run ``args`` through hostile_mounts.py in a private mount namespace (see there)."""
    import json

    here = Path(__file__).resolve().parent
    request = json.dumps({"root": str(root), "args": list(args), **spec})
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", sys.executable, str(here / "hostile_mounts.py"), request],
        env=env(PYTHONPATH=os.pathsep.join([str(REPO), str(here.parent)])),  # support is a package of tests/
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    outcome: dict[str, Any] = json.loads(proc.stdout)
    return outcome
