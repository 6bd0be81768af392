"""Issue 10, class 6: doctor's and render-config's paths, and what errors name.

--binary that is missing, a directory, a device, a FIFO or a link to a device is exit 2
(never silently skipped); a truncated or corrupt ELF is a doctor finding (never a
struct.error); --validate --binary x runs ./x, not x from PATH; errors name the user's
paths, never kplugin's temporary files; stdout that cannot encode (PYTHONIOENCODING=ascii)
still gets the tables and findings.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from support import Run, hostile
from support.hostile import World

pytestmark = pytest.mark.hostile


# --- --binary that is no binary ------------------------------------------------------------------


def bad_binary(world: World, kind: str) -> Path:
    path = world.work / "kube-scheduler"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(path))
    elif kind == "link-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dangling-link":
        path.symlink_to(world.work / "nowhere")
    elif kind == "char-device":
        os.mknod(path, 0o755 | stat.S_IFCHR, os.makedev(1, 5))  # a private /dev/zero
    elif kind == "not-executable":
        path.write_bytes(b"\x7fELF" + b"\0" * 100)
        path.chmod(0o644)
    elif kind == "dev-null":
        return Path("/dev/null")
    return path


BINARIES = {
    "missing": "no such file",
    "dangling-link": "no such file",
    "directory": "is not a regular file",
    "fifo": "is not a regular file",
    "socket": "is not a regular file",
    "link-to-dev-zero": "is not a regular file",
    "dev-null": "is not a regular file",
    "char-device": "is not a regular file",
    "not-executable": "is not executable",
}
USES = {
    "doctor": lambda w, b: ("doctor", str(w.project), "--binary", str(b)),
    "validate": lambda w, b: ("render-config", str(w.project), "--validate", "--binary", str(b)),
}


@pytest.mark.parametrize("use", sorted(USES))
@pytest.mark.parametrize(
    "kind", [pytest.param(k, marks=hostile.root_only) if k == "char-device" else k for k in sorted(BINARIES)]
)
def test_binary_that_is_no_file(run: hostile.KplugIn, world: World, kind: str, use: str) -> None:
    binary = bad_binary(world, kind)
    before = world.snapshot()
    hostile.refused(run(*USES[use](world, binary)), 2, f"--binary {binary}", BINARIES[kind])
    assert world.snapshot() == before


@pytest.mark.parametrize("kind", ["a-file", "dev-null", "fifo"])
def test_build_output_that_is_no_directory(run: hostile.KplugIn, world: World, kind: str) -> None:
    """Refused before anything is built (it was a mkdir error after the build started)."""
    output = {"a-file": world.outside / "victim.txt", "dev-null": Path("/dev/null"), "fifo": world.work / "fifo"}[kind]
    if kind == "fifo":
        os.mkfifo(output)
    before = world.snapshot()
    result = run("build", str(world.project), "--builder", "local", "--output", str(output))
    hostile.refused(result, 2, f"--output {output} is not a directory")
    assert world.snapshot() == before


PROJECT_COMMANDS = {
    "render-config": ("render-config", "{path}"),
    "doctor": ("doctor", "{path}"),
    "add-plugin": ("add", "plugin", "Xx", "-p", "{path}", "--no-tidy"),
    "upgrade": ("upgrade", "{path}", "--k8s", "1.29", "--no-tidy"),
    "e2e": ("e2e", "{path}"),
    "build": ("build", "{path}", "--builder", "local"),
}


@pytest.mark.parametrize("name", sorted(PROJECT_COMMANDS))
@pytest.mark.parametrize("kind", ["symlink-loop", "a-file", "missing", "fifo", "through-a-file"])
def test_project_path_that_is_no_project(run: hostile.KplugIn, world: World, kind: str, name: str) -> None:
    path = {
        "symlink-loop": world.work / "loop",
        "a-file": world.outside / "victim.txt",
        "missing": world.work / "missing",
        "fifo": world.work / "fifo",
        "through-a-file": world.outside / "victim.txt" / "p",
    }[kind]
    if kind == "symlink-loop":
        path.symlink_to(path.name)
    elif kind == "fifo":
        os.mkfifo(path)
    before = world.snapshot()
    hostile.refused(run(*(a.format(path=path) for a in PROJECT_COMMANDS[name])), 2, str(path))
    assert world.snapshot() == before


# --- corrupt ELF files: findings ------------------------------------------------------------------


def elf_header(phoff: int = 64, phnum: int = 1, bits: int = 2, endian: int = 1) -> bytearray:
    header = bytearray(64)
    header[:4] = b"\x7fELF"
    header[4], header[5] = bits, endian
    order = "little" if endian == 1 else "big"
    header[18:20] = (0x3E).to_bytes(2, order)
    header[32:40] = phoff.to_bytes(8, order)
    header[54:56] = (56).to_bytes(2, order)
    header[56:58] = phnum.to_bytes(2, order)
    return header


def real_elf_prefix(size: int) -> bytes:
    return Path(shutil.which("ls") or "/bin/ls").read_bytes()[:size]


ELVES: dict[str, tuple[Callable[[], bytes], str]] = {
    "empty": (lambda: b"", "is not an ELF executable"),
    "magic-only": (lambda: b"\x7fELF", "truncated"),
    "seven-bytes": (lambda: b"\x7fELF\x02\x01\x01", "truncated"),
    "63-bytes": (lambda: bytes(elf_header())[:63], "truncated"),
    "header-only": (lambda: bytes(elf_header()), "truncated or corrupt"),
    "program-headers-beyond-the-end": (lambda: bytes(elf_header(phoff=10**12)), "truncated or corrupt"),
    "65535-program-headers": (lambda: bytes(elf_header(phnum=65535)) + b"\0" * 56, "truncated or corrupt"),
    "32-bit": (lambda: bytes(elf_header(bits=1)), "not a 64-bit ELF"),
    "big-endian-garbage": (lambda: bytes(elf_header(endian=2, phoff=2**63)), "truncated or corrupt"),
    "half-of-ls": (lambda: real_elf_prefix(200), "truncated or corrupt"),
    "script": (lambda: b"#!/bin/sh\necho hi\n", "is not an ELF executable"),
    "buildinfo-unterminated": (
        lambda: bytes(elf_header()) + b"\0" * 56 + b"\xff Go buildinf:" + b"\x08\x02" + b"\0" * 16 + b"\xff" * 20,
        "truncated or corrupt",
    ),
}


@pytest.mark.parametrize("where", ["option", "bin"])
@pytest.mark.parametrize("case", sorted(ELVES))
def test_corrupt_elf_is_a_finding(run: hostile.KplugIn, world: World, case: str, where: str) -> None:
    content, needle = ELVES[case]
    binary = world.project / "bin/kube-scheduler" if where == "bin" else world.work / "kube-scheduler"
    binary.parent.mkdir(exist_ok=True)
    binary.write_bytes(content())
    binary.chmod(0o755)
    before = world.snapshot()
    args = ["doctor", str(world.project), "--json", *(["--binary", str(binary)] if where == "option" else [])]
    result = run(*args)
    hostile.no_crash(result)
    assert result.code == 1, result.stderr
    findings = [f for f in json.loads(result.stdout)["findings"] if f["check"] == "binary"]
    assert len(findings) == 1 and findings[0]["severity"] == "error", findings
    assert needle in findings[0]["what"] and "unpack" not in findings[0]["what"], findings
    assert world.snapshot() == before


# --- --validate runs the binary it was given --------------------------------------------------------

FAKE_SCHEDULER = """\
echo "$0" >> "{log}"
config="$2"
written="$4"
if [ -n "{accept}" ]; then cp "$config" "$written"; exit 0; fi
echo "E0101 00:00:00.000000 1 run.go:74] \\"command failed\\" err=\\"decoding $config: strict decoding error: \
unknown field \\\\\\"evil\\\\\\"\\"" >&2
exit 1
"""


def schedulers(world: World, accept: bool = False) -> Path:
    """./x (the one meant) in work/, and another x on PATH that must never run."""
    log = world.work / "ran.log"
    script = FAKE_SCHEDULER.format(log=log, accept="yes" if accept else "")
    hostile.fake_tool(world.work, "x", script)
    hostile.fake_tool(world.root / "path-bin", "x", script)
    return log


@pytest.mark.parametrize("spelling", ["x", "./x", "{work}/x"])
@pytest.mark.parametrize("output", ["stdout", "-o"])
def test_validate_runs_the_given_binary(
    run: hostile.KplugIn, world: World, monkeypatch: pytest.MonkeyPatch, spelling: str, output: str
) -> None:
    log = schedulers(world)
    monkeypatch.chdir(world.work)
    monkeypatch.setenv("PATH", f"{world.root / 'path-bin'}{os.pathsep}{os.environ['PATH']}")
    out = world.outside / "config.yaml"
    binary = spelling.format(work=world.work)
    before = world.snapshot()
    args = ["render-config", str(world.project), "--validate", "--binary", binary]
    result = run(*args, *(["-o", str(out)] if output == "-o" else []))
    line = hostile.refused(result, 1, "rejects the configuration", "unknown field")
    assert (str(out) if output == "-o" else "the rendered configuration") in line
    assert "kplugin-validate" not in line and "/tmp/" not in line.replace(str(world.root), "")
    assert log.read_text().splitlines() == [str(world.work / "x")]
    assert hostile.changed(before, world.snapshot()) == {"work/ran.log"}


def test_validate_accepted(run: hostile.KplugIn, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    schedulers(world, accept=True)
    monkeypatch.chdir(world.work)
    out = world.work / "config.yaml"
    result = run("render-config", str(world.project), "--validate", "--binary", "x", "-o", str(out))
    hostile.succeeded(result)
    assert f"validated: {world.work / 'x'} accepts the configuration" in result.stderr
    assert out.read_bytes() == (world.project / "deploy/scheduler-config.yaml").read_bytes()


@pytest.mark.parametrize(
    "args",
    [
        ("add", "plugin", "Xx", "-p", "{project}"),
        ("upgrade", "{project}", "--k8s", "1.28.14"),
        ("new", "p", "--k8s", "1.28.15", "-o", "{work}"),
    ],
    ids=["add-plugin", "upgrade", "new"],
)
def test_go_errors_name_the_project_not_the_stage(tmp_path: Path, args: tuple[str, ...]) -> None:
    """go fails in kplugin's staging copy and names files there: the message names the
    project's files instead."""
    world = hostile.make_world(tmp_path, project=args[0] != "new")
    bin_dir = tmp_path / "bin"
    hostile.fake_tool(bin_dir, "go", 'echo "go: $PWD/go.mod:3: unknown directive: evil" >&2\nexit 1\n')
    before = world.snapshot()
    result = hostile.cli(
        *(a.format(project=world.project, work=world.work) for a in args),
        cwd=world.work,
        extra_env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
    )
    progress = ("upgrading ", "go mod tidy ")
    line = hostile.refused(result, 1, f"{world.project}/go.mod:3: unknown directive", progress=progress)
    assert ".kplugin-" not in result.stderr, line
    assert world.snapshot() == before
    assert hostile.staging_left(world.work) == []


FAKE_GO = """\
case "$1 $2 $3" in
  "mod edit -json") echo '{"Go": "1.20", "Require": [], "Replace": []}' ;;
  "mod edit "*|"mod tidy "*) : ;;
  "env GOVERSION ") echo go1.26.0 ;;
  "build "*) echo "$PWD/pkg/p/plugin.go:3:1: syntax error: evil" >&2; exit 1 ;;
  *) echo "unexpected: go $*" >&2; exit 3 ;;
esac
"""


@pytest.mark.parametrize("k8s", [None, "1.28.14"], ids=["pinned", "retargeted-copy"])
def test_build_errors_name_the_project(tmp_path: Path, k8s: str | None) -> None:
    """The compiler's errors (the lines under the error) name the project's files, also
    when kplugin builds from a retargeted copy of it (--k8s another version)."""
    world = hostile.make_world(tmp_path)
    (world.project / "go.sum").write_text("")
    bin_dir = tmp_path / "bin"
    hostile.fake_tool(bin_dir, "go", FAKE_GO)
    before = world.snapshot()
    args = ["build", str(world.project), "--builder", "local", *(["--k8s", k8s] if k8s else [])]
    result = hostile.cli(*args, cwd=world.work, extra_env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    hostile.no_crash(result)
    assert result.code == 1, result.stderr
    assert "kplugin: error: go build failed" in result.stderr
    assert f"  {world.project}/pkg/p/plugin.go:3:1: syntax error: evil" in result.stderr.splitlines()
    assert ".kplugin-" not in result.stderr, result.stderr
    assert hostile.changed(before, world.snapshot()) <= {"work/p/bin", f"work/p/bin/v{k8s}"}  # empty output dirs
    assert hostile.staging_left(world.work) == []


# --- stdout that cannot encode ----------------------------------------------------------------------


def ascii_run(*args: str, cwd: Path) -> Run:
    return hostile.cli(*args, cwd=cwd, extra_env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C"})


def test_versions_table_in_ascii(world: World) -> None:
    result = ascii_run("versions", cwd=world.work)
    hostile.succeeded(result)
    lines = result.stdout.splitlines()
    assert result.stdout.isascii() and any(line.startswith("1.28 ") for line in lines) and "1.37" in result.stdout


def test_doctor_findings_in_ascii(world: World) -> None:
    """rbac's finding holds an ellipsis ('…'): it is escaped, not fatal."""
    rules = "rules:\n- apiGroups: ['']\n  resources: [configmaps]\n  verbs: [get]\n"
    (world.project / "deploy/rbac.yaml").write_text("kind: ClusterRole\n" + rules)
    result = ascii_run("doctor", str(world.project), cwd=world.work)
    hostile.no_crash(result)
    assert result.code == 1 and result.stdout.isascii()
    assert "deploy/rbac.yaml: error: [rbac-rules] the ClusterRole misses" in result.stdout, result.stdout
    assert "\\u2026" in result.stdout
    assert "doctor: " in result.stderr


@pytest.mark.parametrize(
    "args",
    [("new", "caf\u00e9", "--no-tidy"), ("render-config", "{project}", "--scheduler-name", "\u00e9\u00e9")],
    ids=["new", "render-config"],
)
def test_errors_with_non_ascii_values_in_ascii(world: World, args: tuple[str, ...]) -> None:
    result = ascii_run(*(a.format(project=world.project) for a in args), cwd=world.work)
    line = hostile.refused(result, 2, "\\xe9")
    assert line.isascii()
