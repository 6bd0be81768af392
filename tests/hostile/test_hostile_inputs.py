"""Issue 10, class 4: input files.

--args, --merge, --config, --scenario and --kubeconfig are read only from regular files, size-capped
before reading, decoded as strict UTF-8 and parsed without anchors, aliases or deep
nesting: a FIFO or /dev/zero never hangs kplugin, a YAML bomb or '[' * 100000 never
explodes it, a 50 MB file is refused at once, and a non-UTF-8 file is exit 2 naming the
file and the byte offset (doctor, whose job is to diagnose broken files, reports a
broken --config as an error finding instead). Every case runs under a deadline.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import hostile
from support.hostile import NEXT_K8S, World

from kplugin.core import safefs
from kplugin.core.errors import OperationError
from kplugin.kube import controlplane

pytestmark = pytest.mark.hostile

SECONDS = 20  # no case may take longer: a hang guard with room for a loaded machine, not a speed measure


@dataclass(frozen=True)
class Input:
    make: Callable[[World, int], Path]  # (world, the target's size limit) -> the input file
    needle: str
    # the file itself is unusable (exit 2 everywhere); else its content is bad (for
    # doctor --config an error finding)
    file_level: bool = False


def write(content: str | bytes) -> Callable[[World, int], Path]:
    def make(world: World, _limit: int) -> Path:
        path = world.work / "input.yaml"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        return path

    return make


def fifo(world: World, _limit: int) -> Path:
    path = world.work / "input.yaml"
    os.mkfifo(path)
    return path


def directory(world: World, _limit: int) -> Path:
    path = world.work / "input.yaml"
    path.mkdir()
    return path


def loop(world: World, _limit: int) -> Path:
    path = world.work / "input.yaml"
    path.symlink_to(path.name)
    return path


def sparse(size: int | None) -> Callable[[World, int], Path]:
    """A file of ``size`` bytes (the limit + 1 when None), made without writing them."""

    def make(world: World, limit: int) -> Path:
        path = world.work / "input.yaml"
        with open(path, "wb") as handle:
            handle.truncate(size if size is not None else limit + 1)
        return path

    return make


KIND = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
INPUTS = {
    "fifo": Input(fifo, "is a FIFO", file_level=True),
    "dev-zero": Input(lambda _w, _l: Path("/dev/zero"), "/dev/zero is a device", file_level=True),
    "dev-null": Input(lambda _w, _l: Path("/dev/null"), "/dev/null is a device", file_level=True),
    "directory": Input(directory, "is a directory", file_level=True),
    "missing": Input(lambda w, _l: w.work / "missing.yaml", "no such file", file_level=True),
    "symlink-loop": Input(loop, "Too many levels of symbolic links", file_level=True),
    "through-a-file": Input(lambda w, _l: w.outside / "victim.txt" / "x.yaml", "not a directory", file_level=True),
    "50-megabytes": Input(sparse(50 << 20), "52428800 bytes", file_level=True),
    "limit-plus-one": Input(sparse(None), "bytes; kplugin reads at most", file_level=True),
    "billion-laughs": Input(write(hostile.BILLION_LAUGHS), "anchors and aliases"),
    "merge-key": Input(write(KIND + "base: &b {a: 1}\nprofiles:\n- <<: *b\n"), "anchors and aliases"),
    "deep-flow": Input(write(hostile.DEEP_FLOW), "nested more than 64 levels"),
    "deep-block": Input(write(hostile.DEEP_BLOCK), "nested more than 64 levels"),
    "latin-1": Input(write((KIND + "# caf\xe9\n").encode("latin-1")), f"byte 0xe9 at offset {len(KIND) + 5}"),
    "utf-16": Input(write((KIND + "profiles: []\n").encode("utf-16")), "is not UTF-8 text"),
    "nul-byte": Input(write(KIND.encode() + b"x: \x00\n"), "not valid YAML"),
    "python-tag": Input(write(KIND + "x: !!python/object/apply:os.system [true]\n"), "not valid YAML"),
    "huge-int": Input(write(KIND + "x: " + "9" * 5000 + "\n"), "not valid YAML"),
    "tab-indent": Input(write(KIND + "profiles:\n\t- a\n"), "not valid YAML"),
}
TARGETS: dict[str, Callable[[World, Path], tuple[str, ...]]] = {
    "args": lambda w, f: ("render-config", str(w.project), "--args", str(f)),
    "merge": lambda w, f: ("render-config", str(w.project), "--merge", str(f)),
    "config": lambda w, f: ("doctor", str(w.project), "--json", "--config", str(f)),
    "scenario": lambda w, f: ("e2e", str(w.project), "--scenario", str(f)),
    "kubeconfig": lambda w, f: ("snapshot", "--kubeconfig", str(f)),
    "e2e-kubeconfig": lambda w, f: ("e2e", str(w.project), "--kubeconfig", str(f)),
}
LIMITS = {"args": safefs.SMALL_FILE, "merge": safefs.SMALL_FILE, "config": safefs.SMALL_FILE,
          "scenario": safefs.LARGE_FILE, "kubeconfig": safefs.SMALL_FILE,
          "e2e-kubeconfig": safefs.SMALL_FILE}  # fmt: skip


@pytest.fixture
def run(kplugin: hostile.KplugIn, monkeypatch: pytest.MonkeyPatch) -> hostile.KplugIn:
    """In-process kplugin under a deadline; e2e stops where it would need etcd (a
    scenario that passes every check never starts a control plane here)."""

    def no_etcd() -> str:
        raise OperationError("etcd not found (hostile-input tests stop e2e here)")

    monkeypatch.setattr(controlplane, "etcd_binary", no_etcd)
    return hostile.timed(kplugin, SECONDS * 4)


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_hostile_input_file(run: hostile.KplugIn, tmp_path: Path, name: str, target: str) -> None:
    world = hostile.make_world(tmp_path)
    case = INPUTS[name]
    path = case.make(world, LIMITS[target])
    before = world.snapshot()
    started = time.monotonic()
    result = run(*TARGETS[target](world, path))
    assert time.monotonic() - started < SECONDS, f"took {time.monotonic() - started:.1f}s"
    if target == "config" and not case.file_level:
        hostile.no_crash(result)
        assert result.code == 1, result.stderr
        errors = [f for f in json.loads(result.stdout)["findings"] if f["severity"] == "error"]
        assert any(case.needle in f["what"] and f["file"] == str(path) for f in errors), errors
    else:
        line = hostile.refused(result, 2, case.needle)
        assert str(path) in line
    assert world.snapshot() == before


# --- project files that are not UTF-8 ------------------------------------------------------


def latin_1(world: World, relative: str) -> int:
    """Append a latin-1 line to a project file; returns the offset of its bad byte."""
    path = world.project / relative
    size = path.stat().st_size
    with path.open("ab") as handle:
        handle.write(b"// caf\xe9\n")
    return size + 6


@pytest.mark.parametrize(
    ("relative", "args"),
    [
        ("go.mod", ("add", "plugin", "Xx", "-p", "{project}", "--no-tidy")),
        ("go.mod", ("upgrade", "{project}", "--k8s", NEXT_K8S, "--no-tidy")),
        ("cmd/scheduler/plugins.go", ("add", "plugin", "Xx", "-p", "{project}", "--no-tidy")),
        ("deploy/rbac.yaml", ("e2e", "{project}")),
        ("kplugin.yaml", ("render-config", "{project}")),
    ],
    ids=["go.mod-add", "go.mod-upgrade", "plugins.go-add", "rbac-e2e", "kplugin.yaml"],
)
def test_project_file_not_utf8(run: hostile.KplugIn, tmp_path: Path, relative: str, args: tuple[str, ...]) -> None:
    world = hostile.make_world(tmp_path)
    offset = latin_1(world, relative)
    before = world.snapshot()
    result = run(*(a.format(project=world.project) for a in args))
    hostile.refused(result, 2, str(world.project / relative), f"byte 0xe9 at offset {offset}")
    assert world.snapshot() == before


@pytest.mark.parametrize("relative", ["pkg/p/plugin.go", "go.mod", "deploy/rbac.yaml", "deploy/scheduler-config.yaml"])
def test_doctor_reports_a_file_not_utf8(run: hostile.KplugIn, tmp_path: Path, relative: str) -> None:
    world = hostile.make_world(tmp_path)
    offset = latin_1(world, relative)
    before = world.snapshot()
    result = run("doctor", str(world.project), "--json")
    hostile.no_crash(result)
    assert result.code == 1, result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert any(
        f["severity"] == "error" and f["file"] == relative and f"offset {offset}" in f["what"] for f in findings
    ), findings
    assert world.snapshot() == before


def test_quadratic_scenario_is_linear(run: hostile.KplugIn, tmp_path: Path) -> None:
    """100,000 nodes with one name twice: found in seconds (the duplicate search was
    quadratic: 12 s for 30,000 nodes, so over two minutes here, and half an hour for the
    200,000 nodes of an 8 MB scenario; linear, the whole run takes about 5 s)."""
    world = hostile.make_world(tmp_path)
    nodes = "".join(f"- name: n{i}\n" for i in range(100_000))
    scenario = world.work / "scenario.yaml"
    scenario.write_text(f"nodes:\n{nodes}- name: n7\npods:\n- name: a\n")
    started = time.monotonic()
    hostile.refused(run("e2e", str(world.project), "--scenario", str(scenario)), 2, "node 'n7' is named twice")
    assert time.monotonic() - started < 3 * SECONDS
