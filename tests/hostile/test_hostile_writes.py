"""Issue 10, class 2: every update is all-or-nothing.

new --force, add plugin and upgrade check every destination before the first write
(a directory where a file goes, a symlinked subdirectory, a read-only file, a FIFO) and
roll back what they already moved when the commit fails half-way (a read-only mount,
a full disk: private mounts, root only). Two racing runs: one wins, the other fails
cleanly. SIGTERM, SIGHUP and SIGINT leave no staging directory; SIGINT in the first
0.1 s prints no traceback; the new project gets the umask's mode.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest
from support import Kplugin, Run, hostile, sigint_default
from support.hostile import K8S, NEXT_K8S, World

from kplugin.core import safefs
from kplugin.core.interrupts import Terminated

pytestmark = pytest.mark.hostile

# {work} and {project} are the world's
COMMANDS = {
    "new-force": ("new", "p", "--k8s", K8S, "--no-tidy", "--force", "-o", "{work}"),
    "add-plugin": ("add", "plugin", "Xx", "-p", "{project}", "--no-tidy"),
    "add-extension-point": ("add", "extension-point", "P", "reserve", "-p", "{project}", "--no-tidy"),
    "upgrade": ("upgrade", "{project}", "--k8s", NEXT_K8S, "--no-tidy"),
}


def command(name: str, world: World) -> list[str]:
    return [a.format(work=world.work, project=world.project) for a in COMMANDS[name]]


# per command: a file it writes, and a directory it writes into
WRITES = {
    "new-force": ("Dockerfile", "internal"),
    "add-plugin": ("deploy/configmap.yaml", "deploy"),
    "add-extension-point": ("deploy/configmap.yaml", "deploy"),
    "upgrade": ("Dockerfile", "internal"),
}
PROGRESS = ("upgrading ", "go mod tidy ")  # status lines printed as the work starts


def dir_at_file(world: World, file: str, _directory: str) -> str:
    (world.project / file).unlink()
    (world.project / file).mkdir()
    return file


def file_at_dir(world: World, _file: str, directory: str) -> str:
    shutil.rmtree(world.project / directory)
    (world.project / directory).write_text("not a directory\n")
    return directory


def symlinked_subdir(world: World, _file: str, directory: str) -> str:
    """The directory moved outside the project and a symlink to it left in its place."""
    moved = world.outside / "moved"
    shutil.move(world.project / directory, moved)
    (world.project / directory).symlink_to(moved)
    return directory


def symlink_at_file(world: World, file: str, _directory: str) -> str:
    (world.project / file).unlink()
    (world.project / file).symlink_to(world.outside / "victim.txt")
    return file


def read_only_file(world: World, file: str, _directory: str) -> str:
    (world.project / file).chmod(0o444)
    return file


def fifo_at_file(world: World, file: str, _directory: str) -> str:
    (world.project / file).unlink()
    os.mkfifo(world.project / file)
    return file


SETUPS = {f.__name__.replace("_", "-"): f for f in (
    dir_at_file, file_at_dir, symlinked_subdir, symlink_at_file, read_only_file, fifo_at_file
)}  # fmt: skip


@pytest.mark.parametrize("setup", sorted(SETUPS))
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_destinations_checked_before_the_first_write(
    run: hostile.KplugIn, tmp_path: Path, name: str, setup: str
) -> None:
    world = hostile.make_world(tmp_path)
    culprit = SETUPS[setup](world, *WRITES[name])
    before = world.snapshot()
    hostile.refused(run(*command(name, world)), 2, Path(culprit).name, progress=PROGRESS)
    assert world.snapshot() == before
    assert hostile.staging_left(world.work) == []


@pytest.mark.parametrize(
    ("dest", "needle"),
    [
        ("symlink", "is a symlink"),
        ("file", "choose a directory"),
        ("inside-a-file", "is inside a file"),
        ("non-empty", "pass --force"),
    ],
)
def test_new_refuses_its_destination(run: hostile.KplugIn, tmp_path: Path, dest: str, needle: str) -> None:
    world = hostile.make_world(tmp_path, project=False)
    target = world.work / "p"
    if dest == "symlink":
        target.symlink_to(world.outside)
    elif dest in {"file", "inside-a-file"}:
        (world.work / "f").write_text("a file\n")
        target = world.work / "f" if dest == "file" else world.work / "f" / "p"
    else:
        target.mkdir()
        (target / "notes.txt").write_text("mine\n")
    before = world.snapshot()
    result = run("new", target.name, "--k8s", K8S, "--no-tidy", "-o", str(target.parent))
    hostile.refused(result, 2, needle)
    assert world.snapshot() == before


def test_very_deep_tree_in_the_project(run: hostile.KplugIn, tmp_path: Path) -> None:
    """A directory 1,100 levels deep (deeper than Python's recursion limit) is copied
    into the staging directory and removed with it, like any other."""
    world = hostile.make_world(tmp_path)
    deep = world.project / "deep"
    os.makedirs(deep)
    fd = os.open(deep, os.O_RDONLY)
    try:
        for _ in range(1100):
            os.mkdir("a", dir_fd=fd)
            inner = os.open("a", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    try:
        before = world.snapshot()
        for name in ("add-plugin", "upgrade"):
            result = run(*command(name, world))
            hostile.no_crash(result)
            assert hostile.staging_left(world.work) == [], name
        changes = hostile.changed(before, world.snapshot())
        assert changes and all(c.startswith("work/p/") and not c.startswith("work/p/deep") for c in changes)
    finally:
        safefs.remove_tree(deep)  # pytest's own clean-up recurses


# --- a commit that fails half-way (private mounts) --------------------------------------


@hostile.needs_unshare
@pytest.mark.parametrize(
    "name",
    [
        "add-plugin",
        "add-extension-point",
        "new-force",
        "upgrade",  # re-pins go.mod with go mod edit: Go is one of the suite's requirements
    ],
)
def test_failed_commit_is_rolled_back(tmp_path: Path, name: str) -> None:
    """pkg/ is a read-only mount: each command fails on its first file there, after it
    moved every file that sorts before pkg/, and puts all of them back. (new --force
    leaves files whose bytes do not change alone, so it is asked for another plugin shape.)"""
    args = COMMANDS[name] + (("--extension-points", "filter") if name == "new-force" else ())
    outcome = hostile.in_namespace(tmp_path, args, read_only=["work/p/pkg"])
    run = Run(outcome["code"], outcome["stdout"], outcome["stderr"])
    hostile.refused(run, 1, "work/p/pkg/", progress=PROGRESS)  # read-only, or a rename across the mount
    assert outcome["changed"] == [] and outcome["left"] == []


@hostile.needs_unshare
@pytest.mark.parametrize(
    "name", ["new", "new-force", "add-plugin", "add-extension-point", "upgrade", "render-config-o"]
)
def test_full_disk_changes_nothing(tmp_path: Path, name: str) -> None:
    args = {
        "new": ("new", "q", "--k8s", K8S, "--no-tidy", "-o", "{work}"),
        **COMMANDS,
        "render-config-o": ("render-config", "{project}", "-o", "{work}/out.yaml"),
    }[name]
    outcome = hostile.in_namespace(tmp_path, args, tmpfs="2m", fill=True)
    run = Run(outcome["code"], outcome["stdout"], outcome["stderr"])
    line = hostile.refused(run, 1, "No space left on device", progress=PROGRESS)
    assert ".kplugin-" not in line  # the user's paths, not kplugin's staging directory
    assert outcome["changed"] == [] and outcome["left"] == []


def test_failed_new_removes_the_directories_it_made(tmp_path: Path) -> None:
    """-o names directories that do not exist yet: a failure (go mod tidy, here) removes them."""
    world = hostile.make_world(tmp_path, project=False)
    bin_dir = tmp_path / "bin"
    hostile.fake_tool(bin_dir, "go", "echo 'go: no network' >&2\nexit 1\n")
    before = world.snapshot()
    result = hostile.cli(
        "new", "p", "--k8s", K8S, "-o", str(world.work / "a" / "b"), cwd=world.work,
        extra_env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
    )  # fmt: skip
    hostile.refused(result, 1, "go mod tidy failed", "no network", progress=PROGRESS)
    assert world.snapshot() == before


# --- racing runs --------------------------------------------------------------------------


def slow_go(bin_dir: Path, seconds: float) -> dict[str, str]:
    """PATH with a fake go whose every command (go mod tidy) takes ``seconds``."""
    hostile.fake_tool(bin_dir, "go", f"exec sleep {seconds}\n")
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def spawn(*args: str, cwd: Path, extra_env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        hostile.command(*args),
        cwd=cwd,
        env=hostile.env(**extra_env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 60) -> Run:
    out, err = proc.communicate(timeout=timeout)
    return Run(proc.returncode, out, err)


def test_two_racing_new_runs_one_wins(tmp_path: Path) -> None:
    """Both stage at once (go mod tidy takes 1 s); the first rename wins, the other fails
    at its commit without touching the winner's tree."""
    world = hostile.make_world(tmp_path, project=False)
    extra = slow_go(tmp_path / "bin", 1)
    procs = {
        plugin: spawn("new", "p", "--k8s", K8S, "--plugin", plugin, "-o", str(world.work), cwd=world.work,
                      extra_env=extra)
        for plugin in ("Alpha", "Beta")
    }  # fmt: skip
    runs = {plugin: finish(proc) for plugin, proc in procs.items()}
    winners = [plugin for plugin, run in runs.items() if run.code == 0]
    assert len(winners) == 1, {p: (r.code, r.stderr) for p, r in runs.items()}
    (loser,) = set(runs) - set(winners)
    hostile.refused(runs[loser], 1, "created by someone else", "nothing was written", progress=PROGRESS)
    expected = hostile.snapshot(hostile.template("p", plugin=winners[0]))
    assert hostile.snapshot(world.project) == expected
    assert hostile.staging_left(world.work) == []


def test_two_racing_add_plugin_runs_one_wins(tmp_path: Path) -> None:
    """The first takes the project's lock; the second fails at once, changing nothing."""
    world = hostile.make_world(tmp_path)
    extra = slow_go(tmp_path / "bin", 6)  # long enough for the second to plan and reach the lock, under load too
    first = spawn("add", "plugin", "Alpha", "-p", str(world.project), cwd=world.work, extra_env=extra)
    assert hostile.wait_for(lambda: hostile.staging_left(world.work) != [])
    second = finish(spawn("add", "plugin", "Beta", "-p", str(world.project), cwd=world.work, extra_env=extra))
    hostile.refused(second, 1, "another kplugin is updating the project")
    hostile.succeeded(finish(first))
    assert (world.project / "pkg/alpha/plugin.go").is_file() and not (world.project / "pkg/beta").exists()
    assert hostile.staging_left(world.work) == []


# --- signals --------------------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
@pytest.mark.parametrize("name", ["new", "add-plugin", "upgrade"])
def test_signal_while_staging_cleans_up(tmp_path: Path, name: str, signum: signal.Signals) -> None:
    """The signal arrives while go runs in the staging directory (go mod tidy; for
    upgrade, go mod edit re-pinning go.mod first)."""
    world = hostile.make_world(tmp_path, project=name != "new")
    extra = slow_go(tmp_path / "bin", 30)
    args = {
        "new": ("new", "p", "--k8s", K8S, "-o", str(world.work)),
        "add-plugin": ("add", "plugin", "Xx", "-p", str(world.project)),
        "upgrade": ("upgrade", str(world.project), "--k8s", NEXT_K8S),
    }[name]
    before = world.snapshot()
    proc = spawn(*args, cwd=world.work, extra_env=extra)
    assert hostile.wait_for(lambda: hostile.staging_left(world.work) != []), finish(proc).stderr
    time.sleep(0.2)  # go has started
    proc.send_signal(signum)
    run = finish(proc, timeout=20)
    hostile.no_crash(run)
    assert run.code == 128 + signum, run.stderr
    expected = "kplugin: interrupted" if signum == signal.SIGINT else f"kplugin: terminated by signal {int(signum)}"
    assert [line for line in run.stderr.splitlines() if not line.startswith(PROGRESS)] == [expected]
    assert hostile.staging_left(world.work) == []
    assert world.snapshot() == before


@pytest.mark.parametrize(
    ("interrupt", "expected"),
    [(KeyboardInterrupt(), ("kplugin: interrupted", 130)),
     (Terminated(signal.SIGTERM), ("kplugin: terminated by signal 15", 143))],
    ids=["SIGINT", "SIGTERM"],
)  # fmt: skip
def test_an_interrupt_the_interpreter_wraps_is_still_an_interrupt(
    kplugin: Kplugin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interrupt: KeyboardInterrupt,
    expected: tuple[str, int],
) -> None:  # fmt: skip
    """Python 3.11 wraps an exception raised in a class's __set_name__ in a RuntimeError.
    A signal that lands while a module defines a dataclass (a lazy import of a command)
    arrives that way: it is reported as the interrupt it is, not as an internal error
    (fresh-clone CI of stop 18 printed 'internal error: RuntimeError: Error calling
    __set_name__ on 'Field' instance')."""
    from kplugin.generate import scaffold

    class Landing:  # where the signal lands: a class being defined
        def __set_name__(self, owner: type, name: str) -> None:
            raise interrupt

    def defines_a_class(*args: object, **kwargs: object) -> None:
        try:
            type("Defined", (), {"field": Landing()})
        except KeyboardInterrupt as err:  # Python 3.12 on: not wrapped; wrap it as 3.11 does
            raise RuntimeError("Error calling __set_name__ on 'Landing' instance 'field' in 'Defined'") from err

    monkeypatch.setattr(scaffold, "new_project", defines_a_class)
    run = kplugin("new", "p", "--k8s", K8S, "--no-tidy", "-o", str(tmp_path))
    assert (run.stderr.strip(), run.code) == expected
    run = kplugin("--debug", "new", "p", "--k8s", K8S, "--no-tidy", "-o", str(tmp_path))
    assert run.code == expected[1]
    assert "RuntimeError: Error calling __set_name__" in run.stderr, "--debug shows the traceback"
    assert run.stderr.endswith(f"\n{expected[0]}\n"), run.stderr


def test_only_an_interrupt_in_the_chain_python_prints_counts() -> None:
    """wrapped_interrupt follows __cause__, and __context__ unless 'from None' hid it; it
    ends on a cycle."""
    from kplugin.core.interrupts import wrapped_interrupt

    interrupt = KeyboardInterrupt()
    try:
        raise RuntimeError("wrapped") from interrupt
    except RuntimeError as err:
        assert wrapped_interrupt(err) is interrupt
    try:
        try:
            raise interrupt
        except KeyboardInterrupt:
            raise ValueError("while handling it") from None
    except ValueError as err:
        assert err.__context__ is interrupt and wrapped_interrupt(err) is None
    try:
        try:
            raise interrupt
        except KeyboardInterrupt:
            raise OSError("cleanup failed after Ctrl-C")  # noqa: B904 - the implicit context is the case
    except OSError as err:
        assert wrapped_interrupt(err) is interrupt
    first, second = ValueError("a"), ValueError("b")
    first.__context__, second.__context__ = second, first
    assert wrapped_interrupt(first) is None
    assert wrapped_interrupt(ValueError("plain")) is None


def test_an_interrupt_wrapped_while_the_cli_imports(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """launch.main, which imports the CLI, reports a wrapped interrupt from that import too."""
    import sys
    import types

    from kplugin import launch

    class Importing(types.ModuleType):
        def __getattr__(self, name: str) -> object:
            raise RuntimeError("Error calling __set_name__") from KeyboardInterrupt()

    monkeypatch.setattr(signal, "signal", lambda *args: None)  # launch.main installs SIGTERM/SIGHUP handlers
    monkeypatch.setitem(sys.modules, "kplugin.cli", Importing("kplugin.cli"))
    with pytest.raises(SystemExit) as exit_:
        launch.main()
    assert exit_.value.code == 130
    assert capsys.readouterr().err == "kplugin: interrupted\n"


def test_sigint_in_the_first_moments_prints_no_traceback(tmp_path: Path) -> None:
    """Ctrl-C at any moment of the first 0.1 s: no traceback through kplugin's code, and
    nothing half-written. The interpreter runs without the site module (-S), so that the
    machine's .pth files (code outside kplugin) are not what the signal interrupts. A
    traceback with no frame in kplugin is the interpreter's or runpy's, from before any of
    kplugin runs (no program can catch those), and is not counted."""
    world = hostile.make_world(tmp_path, project=False)
    package = str(hostile.REPO / "kplugin")
    outcomes = []
    for step in range(11):
        proc = subprocess.Popen(
            hostile.command("new", "p", "--k8s", K8S, "--no-tidy", "-o", str(world.work), isolated=True),
            cwd=world.work,
            env=hostile.env_isolated(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=sigint_default,
            text=True,
        )
        time.sleep(step * 0.01)
        proc.send_signal(signal.SIGINT)
        run = finish(proc, timeout=20)
        if "Traceback" not in run.stderr or f'File "{package}/' in run.stderr:  # a frame in kplugin
            hostile.no_crash(run)
            assert run.code in {0, 130, -signal.SIGINT}, run.stderr
            assert run.stderr.strip() in {"", "kplugin: interrupted"} or run.code == 0, run.stderr
        assert hostile.staging_left(world.work) == []
        if world.project.exists():
            assert hostile.snapshot(world.project) == hostile.snapshot(hostile.template()), step
            shutil.rmtree(world.project)
        outcomes.append(run.code)
    assert 130 in outcomes, outcomes  # the signal did land while kplugin ran


# --- modes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077, 0o002])
def test_new_project_gets_the_umask_mode(run: hostile.KplugIn, tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        hostile.succeeded(run("new", "p", "--k8s", K8S, "--no-tidy", "-o", str(tmp_path)))
    finally:
        os.umask(previous)
    project = tmp_path / "p"
    assert stat.S_IMODE(project.stat().st_mode) == 0o777 & ~umask
    for path in project.rglob("*"):
        expected = (0o777 if path.is_dir() else 0o666) & ~umask
        assert stat.S_IMODE(path.stat().st_mode) == expected, path
