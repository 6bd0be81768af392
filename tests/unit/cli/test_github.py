"""On GitHub Actions (GITHUB_ACTIONS=true) doctor's findings and kplugin's errors that
name a file and line are also workflow commands (issue 27): escaped as the runner reads
them, at paths relative to the workspace, on stderr; elsewhere nothing changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO, Kplugin

from kplugin.cli import github

GOLDEN = REPO / "tests" / "unit" / "golden"


def golden(name: str, text: str) -> None:
    """``text`` is the golden file ``name``, byte for byte (KPLUGIN_REGOLD=1 rewrites it)."""
    path = GOLDEN / name
    if os.environ.get("KPLUGIN_REGOLD") == "1":
        path.write_bytes(text.encode())
    assert text.encode() == path.read_bytes(), f"{name} differs; if the change is meant, KPLUGIN_REGOLD=1 rewrites it"


@pytest.fixture
def outside(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not on GitHub Actions, whatever runs the suite."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)


# --- the workflow commands -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "on"), [("true", True), ("True", False), ("1", False), ("false", False), (None, False)]
)
def test_active_only_where_github_says_so(value: str | None, on: bool) -> None:
    assert github.active({} if value is None else {"GITHUB_ACTIONS": value}) is on


def test_a_message_escapes_percent_and_line_breaks_only() -> None:
    assert github.escape_data("100% a\r\nb: c, d%0A") == "100%25 a%0D%0Ab: c, d%250A"


def test_a_property_also_escapes_colon_and_comma() -> None:
    assert github.escape_property("100% a\r\nb: c, d") == "100%25 a%0D%0Ab%3A c%2C d"


def test_annotation_levels_and_properties(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    assert github.annotation("warning", "plain") == "::warning::plain"
    assert github.annotation("notice", "a\nb", title="t") == "::notice title=t::a%0Ab"
    assert (
        github.annotation("error", "undefined: y", tmp_path / "pkg/x.go", 12, 3, "rule: a, b")
        == "::error file=pkg/x.go,line=12,col=3,title=rule%3A a%2C b::undefined: y"
    )
    assert github.annotation("error", "m", "/elsewhere/a,b.yaml", 2) == "::error file=/elsewhere/a%2Cb.yaml,line=2::m"
    with pytest.raises(ValueError, match="'info'"):
        github.annotation("info", "doctor's severity is no level")


def test_paths_are_relative_to_the_workspace_when_under_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace, other = tmp_path / "ws", tmp_path / "other"
    (workspace / "sub").mkdir(parents=True)
    other.mkdir()
    monkeypatch.setenv("GITHUB_WORKSPACE", str(workspace))
    assert github.workspace_path(workspace / "sub" / "a.yaml") == "sub/a.yaml"
    assert github.workspace_path(other / "a.yaml") == str(other / "a.yaml")
    assert github.workspace_path(tmp_path / "ws-sibling" / "a.yaml") == str(tmp_path / "ws-sibling" / "a.yaml")
    monkeypatch.chdir(workspace)
    assert github.workspace_path("sub/../sub/a.yaml") == "sub/a.yaml"
    (tmp_path / "link").symlink_to(workspace)
    monkeypatch.chdir(other)  # a relative path outside the workspace: whole, from the current directory
    assert github.workspace_path("a.yaml") == str(other / "a.yaml")
    monkeypatch.chdir(workspace)
    assert github.workspace_path(tmp_path / "link" / "sub" / "a.yaml") == "sub/a.yaml"
    # without GITHUB_WORKSPACE: the current directory
    monkeypatch.delenv("GITHUB_WORKSPACE")
    monkeypatch.chdir(other)
    assert github.workspace_path(other / "b" / "c.go") == "b/c.go"
    assert github.workspace_path("b/c.go") == "b/c.go"
    assert github.workspace_path(workspace / "c.go", workspace=workspace) == "c.go"


def test_groups() -> None:
    assert github.group("go build ./cmd/scheduler") == "::group::go build ./cmd/scheduler"
    assert github.group("a\nb 100%") == "::group::a%0Ab 100%25"
    assert github.endgroup() == "::endgroup::"


def test_emit_writes_to_stderr_on_github_actions_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, outside: None
) -> None:
    github.emit("warning", "careful", title="t")
    assert capsys.readouterr() == ("", "")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    github.emit("warning", "careful", title="t")
    assert capsys.readouterr() == ("", "::warning title=t::careful\n")


# --- which file and line a message names ---------------------------------------------------

FILES = {"./pkg/x/x.go", "pkg/x/x.go", "/tmp/w/bad.yaml", "bad.yaml", "s.json"}


def is_file(path: str) -> bool:
    return path in FILES


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("./pkg/x/x.go:12:3: undefined: y", ("./pkg/x/x.go", 12, 3, "undefined: y")),
        ("pkg/x/x.go:7: missing return", ("pkg/x/x.go", 7, None, "missing return")),
        (
            "Reserve is implemented at pkg/x/x.go:5, not listed",
            ("pkg/x/x.go", 5, None, "Reserve is implemented at pkg/x/x.go:5, not listed"),
        ),
        (
            "--args /tmp/w/bad.yaml is not valid YAML at line 3: no ','",
            ("/tmp/w/bad.yaml", 3, None, "--args /tmp/w/bad.yaml is not valid YAML at line 3: no ','"),
        ),
        (
            "project file 'bad.yaml' at line 2: YAML anchors and aliases are not accepted",
            ("bad.yaml", 2, None, "project file 'bad.yaml' at line 2: YAML anchors and aliases are not accepted"),
        ),
        (
            "--scenario s.json is not valid JSON at line 2 column 5: expected ':'",
            ("s.json", 2, 5, "--scenario s.json is not valid JSON at line 2 column 5: expected ':'"),
        ),
    ],
)
def test_locate_a_file_and_line(text: str, where: tuple[str, int, int | None, str]) -> None:
    assert github.locate(text, is_file) == github.Location(*where)


@pytest.mark.parametrize(
    "text",
    [
        "./pkg/y/y.go:12:3: undefined: y",  # no such file
        "I1205 07:01:50.1 1234 server.go:123] serving",  # a log line of a file kplugin does not have
        "etcd did not answer on 127.0.0.1:2379",
        "pkg/x/x.go:0: no line 0",
        "bad.yaml: not a mapping",  # a file without a line
        "the ConfigMap's config is not valid YAML at line 2: x",  # a line of no file
        "pkg/x/x.go:12abc",
    ],
)
def test_locate_nothing(text: str) -> None:
    assert github.locate(text, is_file) is None


def test_error_annotations_for_the_message_and_each_located_detail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative path is the current directory's; the annotation names it from the
    workspace (here the same directory); a path outside the workspace stays whole."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    annotations = github.error_annotations(
        "go build ./cmd/scheduler failed: the plugin does not compile",
        ["./pkg/x/x.go:12:3: undefined: y", "note: module example.com", "/tmp/w/bad.yaml:4:1: too many errors"],
        is_file,
    )
    assert annotations == [
        "::error file=pkg/x/x.go,line=12,col=3,title=kplugin::undefined: y",
        "::error file=/tmp/w/bad.yaml,line=4,col=1,title=kplugin::too many errors",
    ]
    assert github.error_annotations("--args bad.yaml is not valid YAML at line 3: x, y", [], is_file) == [
        "::error file=bad.yaml,line=3,title=kplugin::--args bad.yaml is not valid YAML at line 3: x, y"
    ]
    assert github.error_annotations("no file here", ["nor here", "bad.yaml: no line"], is_file) == []


# --- doctor and errors, from the command line ----------------------------------------------


@pytest.fixture
def broken(kplugin: Kplugin, tmp_path: Path) -> Path:
    """A project and a --config beside it with findings of each level: '*' disabled (a
    warning) and a negative weight (an error), each with its line; args not checked (a
    note, at a directory, without a line)."""
    run = kplugin("new", "gpu-aware", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    text = (tmp_path / "gpu-aware/deploy/scheduler-config.yaml").read_text()
    disabled = "    filter:\n      disabled:\n      - name: '*'\n      enabled:\n"
    text = text.replace("weight: 1", "weight: -1", 1).replace("    filter:\n      enabled:\n", disabled, 1)
    (tmp_path / "my-config.yaml").write_text(text)
    return tmp_path


def doctor(workspace: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """python -m kplugin doctor as a workflow step runs it, in the workspace, with paths
    relative to it. PATH holds Python only: the args note then says Go is missing on
    every machine."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    environ.update(env, CI="true", PATH=str(Path(sys.executable).parent), PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "kplugin", "doctor", "gpu-aware", "--config", "my-config.yaml", *args],
        capture_output=True, text=True, env=environ, cwd=workspace, timeout=60,
    )  # fmt: skip


def commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("::")]


def test_doctor_findings_are_annotations_on_github_actions(broken: Path) -> None:
    """Text and --json alike: one annotation per finding on stderr, its severity as the
    level, its rule as the title, its file from the workspace; stdout as elsewhere."""
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(broken)}
    text = doctor(broken, **env)
    assert text.returncode == 1, text.stderr
    golden("github-doctor.txt", "".join(f"{line}\n" for line in commands(text.stderr)))
    assert commands(text.stdout) == []
    assert text.stdout == doctor(broken).stdout, "the text report is the same as elsewhere"
    as_json = doctor(broken, "--json", **env)
    assert commands(as_json.stderr) == commands(text.stderr)
    findings = json.loads(as_json.stdout)["findings"]  # stdout is the JSON alone
    assert len(findings) == len(commands(text.stderr))
    assert [f["severity"] for f in findings] == ["warning", "info", "error"]


@pytest.mark.parametrize("args", [(), ("--json",)])
@pytest.mark.parametrize("actions", [None, "false"])
def test_doctor_writes_no_command_elsewhere(broken: Path, args: tuple[str, ...], actions: str | None) -> None:
    env = {"GITHUB_WORKSPACE": str(broken)} | ({"GITHUB_ACTIONS": actions} if actions else {})
    run = doctor(broken, *args, **env)
    assert run.returncode == 1, run.stderr
    assert "weight-invalid" in run.stdout
    assert commands(run.stdout) == commands(run.stderr) == []


def test_an_error_naming_a_file_and_line_is_one_annotation(
    kplugin: Kplugin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outside: None
) -> None:
    run = kplugin("new", "gpu-aware", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 0, run.stderr
    (tmp_path / "bad.yaml").write_text("GpuAware:\n  a: [1,\n  b: 2\n")
    monkeypatch.chdir(tmp_path)
    said = "kplugin: error: --args bad.yaml is not valid YAML at line 4: did not find expected ',' or ']'\n"
    run = kplugin("render-config", "gpu-aware", "--args", "bad.yaml")
    assert (run.code, run.stderr) == (2, said)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    run = kplugin("render-config", "gpu-aware", "--args", "bad.yaml")
    assert run.code == 2 and run.stdout == ""
    assert run.stderr == said + (
        "::error file=bad.yaml,line=4,title=kplugin::"
        "--args bad.yaml is not valid YAML at line 4: did not find expected ',' or ']'\n"
    )


def test_an_error_without_a_line_is_no_annotation(
    kplugin: Kplugin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    run = kplugin("doctor", str(tmp_path))
    assert run.code == 2 and "not a kplugin project" in run.stderr
    assert "::" not in run.stderr


def test_a_compiler_error_in_the_details_is_an_annotation_at_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outside: None
) -> None:
    """A failed build's details are the compiler's lines (kplugin.core.golang): each at a
    file kplugin can see is an annotation there; the report itself is unchanged."""
    from kplugin.cli import _report
    from kplugin.core.errors import OperationError

    (tmp_path / "pkg/gpuaware").mkdir(parents=True)
    (tmp_path / "pkg/gpuaware/plugin.go").write_text("package gpuaware\n")
    monkeypatch.chdir(tmp_path)
    err = OperationError(
        "go build ./cmd/scheduler failed: the plugin does not compile",
        details=["pkg/gpuaware/plugin.go:12:3: undefined: y", "pkg/gone/gone.go:1:1: not here", "too many errors"],
    )
    said = (
        "kplugin: error: go build ./cmd/scheduler failed: the plugin does not compile\n"
        "  pkg/gpuaware/plugin.go:12:3: undefined: y\n  pkg/gone/gone.go:1:1: not here\n  too many errors\n"
    )
    assert _report(err) == 1
    assert capsys.readouterr() == ("", said)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert _report(err) == 1
    annotation = "::error file=pkg/gpuaware/plugin.go,line=12,col=3,title=kplugin::undefined: y\n"
    assert capsys.readouterr() == ("", said + annotation)
