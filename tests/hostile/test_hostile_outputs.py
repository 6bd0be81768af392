"""Issue 10, class 3: output files and stdout.

-o and --merge on a symlink update the link's target and keep the link; on a device,
FIFO, socket or directory they are refused (exit 2) and the node stays as it was, with
--force too. --merge with -o writes only OUT; --merge keeps CRLF. A failing stdout (a
full disk, a closed pipe, a closed descriptor) ends with one line and exit 1, or
quietly on a closed pipe, never with Python's "Exception ignored" or exit 120.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
from pathlib import Path

import pytest
from support import Run, hostile
from support.hostile import K8S, World

pytestmark = pytest.mark.hostile


def rendered(world: World) -> bytes:
    return (world.project / "deploy/scheduler-config.yaml").read_bytes()


# --- -o and --merge through symlinks --------------------------------------------------------


@pytest.mark.parametrize("option", ["-o", "--merge"])
def test_symlink_updates_its_target_and_stays(run: hostile.KplugIn, world: World, option: str) -> None:
    target = world.outside / "config.yaml"
    target.write_bytes(rendered(world).replace(b"resourceName: cpu", b"resourceName: memory"))
    link = world.work / "link.yaml"
    link.symlink_to(target)
    before = world.snapshot()
    hostile.succeeded(run("render-config", str(world.project), option, str(link), "--force"))
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == rendered(world)
    assert hostile.changed(before, world.snapshot()) == {"outside/config.yaml"}
    assert hostile.staging_left(world.outside) == [] and hostile.staging_left(world.work) == []


def test_symlink_to_a_missing_file_creates_the_target(run: hostile.KplugIn, world: World) -> None:
    link = world.work / "link.yaml"
    link.symlink_to(world.outside / "new.yaml")
    hostile.succeeded(run("render-config", str(world.project), "-o", str(link)))
    assert link.is_symlink() and (world.outside / "new.yaml").read_bytes() == rendered(world)


def test_existing_output_needs_force(run: hostile.KplugIn, world: World) -> None:
    out = world.work / "out.yaml"
    out.write_text("mine\n")
    before = world.snapshot()
    hostile.refused(run("render-config", str(world.project), "-o", str(out)), 2, "pass --force")
    assert world.snapshot() == before


# --- special files are never replaced ----------------------------------------------------------


def make_node(world: World, kind: str) -> Path:
    node = world.work / kind
    if kind == "fifo":
        os.mkfifo(node)
    elif kind == "directory":
        node.mkdir()
        (node / "keep.txt").write_text("keep\n")
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(node))
    elif kind == "char-device":
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a private /dev/null
    elif kind == "link-to-device":
        node.symlink_to("/dev/null")
    return node


NODES = ["fifo", "directory", "socket", "link-to-device", "char-device"]


def node_param(kind: str) -> object:
    return pytest.param(kind, marks=hostile.root_only) if kind == "char-device" else kind


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
@pytest.mark.parametrize("option", ["-o", "--merge"])
@pytest.mark.parametrize("kind", [node_param(k) for k in NODES])
def test_special_output_is_refused(run: hostile.KplugIn, world: World, kind: str, option: str, force: bool) -> None:
    node = make_node(world, kind)
    before = world.snapshot()
    args = ["render-config", str(world.project), option, str(node), *(["--force"] if force else [])]
    hostile.refused(run(*args), 2, str(node))
    assert world.snapshot() == before  # the same node: type, mode, inode and device number


@pytest.mark.parametrize("option", ["-o", "--merge"])
@pytest.mark.parametrize("kind", ["symlink-loop", "through-a-file", "missing-directory"])
def test_output_path_that_cannot_be(run: hostile.KplugIn, world: World, kind: str, option: str) -> None:
    path = {
        "symlink-loop": world.work / "loop.yaml",
        "through-a-file": world.outside / "victim.txt" / "out.yaml",
        "missing-directory": world.work / "missing" / "out.yaml",
    }[kind]
    if kind == "symlink-loop":
        path.symlink_to(path.name)
    before = world.snapshot()
    shown = {"-o": "--output", "--merge": "--merge"}[option]
    hostile.refused(run("render-config", str(world.project), option, str(path), "--force"), 2, f"{shown} {path}")
    assert world.snapshot() == before


def test_dev_null_is_never_replaced(run: hostile.KplugIn, world: World) -> None:
    before = os.lstat("/dev/null")
    hostile.refused(run("render-config", str(world.project), "-o", "/dev/null", "--force"), 2, "device")
    after = os.lstat("/dev/null")
    assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode, before.st_rdev)


# --- --merge -------------------------------------------------------------------------------------


def test_merge_with_output_writes_only_output(run: hostile.KplugIn, world: World) -> None:
    config = world.work / "cluster.yaml"
    config.write_bytes(rendered(world).replace(b"schedulerName: p", b"schedulerName: other"))
    out = world.work / "merged.yaml"
    before = world.snapshot()
    hostile.succeeded(run("render-config", str(world.project), "--merge", str(config), "-o", str(out)))
    assert hostile.changed(before, world.snapshot()) == {"work/merged.yaml"}
    assert b"schedulerName: other" in out.read_bytes() and b"schedulerName: p\n" in out.read_bytes()


@pytest.mark.parametrize("output", [False, True], ids=["in-place", "to-output"])
def test_merge_keeps_crlf(run: hostile.KplugIn, world: World, output: bool) -> None:
    config = world.work / "cluster.yaml"
    config.write_bytes(
        b"# the cluster's config\r\n"
        + rendered(world).replace(b"schedulerName: p", b"schedulerName: other").replace(b"\n", b"\r\n")
    )
    out = world.work / "merged.yaml" if output else config
    args = ["--merge", str(config), *(["-o", str(out)] if output else [])]
    hostile.succeeded(run("render-config", str(world.project), *args))
    merged = out.read_bytes()
    assert merged.count(b"\r\n") == merged.count(b"\n") > 10, merged
    assert merged.startswith(b"# the cluster's config\r\n")


def test_merge_keeps_the_file_mode(run: hostile.KplugIn, world: World) -> None:
    config = world.work / "cluster.yaml"
    config.write_bytes(rendered(world))
    config.chmod(0o640)
    hostile.succeeded(run("render-config", str(world.project), "--merge", str(config), "--weight", "P=3"))
    assert stat.S_IMODE(config.stat().st_mode) == 0o640 and b"weight: 3" in config.read_bytes()


@hostile.needs_unshare
def test_output_on_a_read_only_file_system(tmp_path: Path) -> None:
    outcome = hostile.in_namespace(
        tmp_path, ["render-config", "{project}", "-o", "{root}/outside/out.yaml"], read_only=["outside"]
    )
    hostile.refused(Run(outcome["code"], outcome["stdout"], outcome["stderr"]), 1, "outside/out.yaml", "Read-only")
    assert outcome["changed"] == []


# --- stdout -----------------------------------------------------------------------------------------

STDOUT_COMMANDS = {
    "render-config": lambda w: ("render-config", str(w.project)),
    "versions": lambda _w: ("versions",),
    "versions-all-json": lambda _w: ("versions", "--all", "--json"),
    "doctor": lambda w: ("doctor", str(w.project)),
    "doctor-json": lambda w: ("doctor", str(w.project), "--json"),
    "upgrade-json": lambda w: ("upgrade", str(w.project), "--k8s", "1.37", "--dry-run", "--json", "--no-tidy"),
    "version": lambda _w: ("--version",),
    "help": lambda _w: ("render-config", "--help"),
}


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("name", sorted(STDOUT_COMMANDS))
def test_stdout_on_a_full_disk(world: World, name: str, buffered: bool) -> None:
    """One line and exit 1, whether Python buffers stdout (a plain environment: what is
    left in the buffer must not fail again at exit) or not (PYTHONUNBUFFERED)."""
    before = world.snapshot()
    with open("/dev/full", "w") as full:
        result = hostile.cli(
            *STDOUT_COMMANDS[name](world),
            cwd=world.work,
            stdout=full,
            extra_env={} if buffered else {"PYTHONUNBUFFERED": "1"},
            unset=("PYTHONUNBUFFERED",) if buffered else (),
        )
    hostile.refused(result, 1, "No space left on device", progress=("upgrading ",))
    assert world.snapshot() == before


@pytest.mark.parametrize("name", sorted(STDOUT_COMMANDS))
def test_stdout_to_a_closed_pipe_is_quiet(world: World, name: str) -> None:
    """The reader went away before kplugin wrote (as `kplugin ... | head -0` does)."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        proc = subprocess.run(
            hostile.command(*STDOUT_COMMANDS[name](world)),
            cwd=world.work,
            env=hostile.env(),
            stdin=subprocess.DEVNULL,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=30,
            check=False,
        )
    finally:
        os.close(writer)
    result = Run(proc.returncode, "", proc.stderr)
    hostile.no_crash(result)
    assert result.code == 1, result.stderr
    assert [line for line in result.stderr.splitlines() if not line.startswith("upgrading ")] == []


@pytest.mark.parametrize("name", sorted(STDOUT_COMMANDS))
def test_closed_stdout(world: World, name: str) -> None:
    before = world.snapshot()
    result = hostile.cli(*STDOUT_COMMANDS[name](world), cwd=world.work, stdout=None, shell_prefix="exec >&-;")
    hostile.refused(result, 1, "stdout is closed", progress=("upgrading ",))
    assert world.snapshot() == before


def test_closed_stdout_is_no_file(tmp_path: Path) -> None:
    """A command that writes no data still works with fd 1 closed, and no file it
    creates becomes its stdout (its notes go to stderr, the files are as always)."""
    world = hostile.make_world(tmp_path, project=False)
    result = hostile.cli(
        "new", "p", "--k8s", K8S, "--no-tidy", "-o", str(world.work), stdout=None, shell_prefix="exec >&-;"
    )
    hostile.succeeded(result)
    assert hostile.snapshot(world.project) == hostile.snapshot(hostile.template())
