"""Output where kplugin mostly runs, CI logs without a terminal (issue 27): nothing is
cut, the width follows COLUMNS, each step's line carries its own time, long steps say
they go on, and on GitHub Actions each step is a group."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import REPO

from kplugin.cli import console

GOLDEN = REPO / "tests" / "unit" / "golden"


def golden(name: str, text: str) -> None:
    """``text`` is the golden file ``name``, byte for byte (KPLUGIN_REGOLD=1 rewrites it)."""
    path = GOLDEN / name
    if os.environ.get("KPLUGIN_REGOLD") == "1":
        path.write_text(text)
    assert text == path.read_text(), f"{name} differs; if the change is meant, KPLUGIN_REGOLD=1 rewrites it"


def piped(*args: str, columns: str | None = "80", **env: str) -> subprocess.CompletedProcess[str]:
    """kplugin as CI runs it: stdout and stderr pipes, no terminal."""
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "GITHUB_ACTIONS")}
    environ.update(env, CI="true", PYTHONIOENCODING="utf-8")
    if columns is not None:
        environ["COLUMNS"] = columns
    return subprocess.run(
        [sys.executable, "-m", "kplugin", *args], capture_output=True, text=True, env=environ, cwd=REPO, timeout=60
    )


def test_versions_at_80_columns_is_whole_and_pinned() -> None:
    run = piped("versions")
    assert run.returncode == 0, run.stderr
    assert "…" not in run.stdout
    assert max(len(line) for line in run.stdout.splitlines()) <= 80
    golden("versions-80.txt", run.stdout)


def test_versions_all_at_80_columns_is_whole_and_pinned() -> None:
    run = piped("versions", "--all")
    assert run.returncode == 0, run.stderr
    assert "…" not in run.stdout
    golden("versions-all-80.txt", run.stdout)


def test_the_width_follows_columns_and_every_value_is_whole() -> None:
    import json

    rows = json.loads(piped("versions", "--json").stdout)
    narrow, wide = piped("versions", columns="60").stdout, piped("versions", columns="200").stdout
    assert max(len(line) for line in narrow.splitlines()) <= 60 < max(len(line) for line in wide.splitlines())
    assert "-----  -------" in wide and "-----  -------" not in narrow, "a table at 200, one block per minor at 60"
    for text in (narrow, wide):
        flat = " ".join(text.split())
        for row in rows:
            assert "; ".join(row["api_changes"]) in flat
            assert row["newest_patch"] in flat and row["go_version"] in flat


GRID = console.Grid(
    "a title",
    (console.Column("name"), console.Column("count", right=True), console.Column("story", detail=True)),
    (("first", "1", "a long story " * 12), ("second-one", "12345", "-")),
    ("a legend under it",),
)


def test_a_grid_that_fits_is_a_table_with_details_under_it() -> None:
    text = console.plain_grid(GRID, 50)
    lines = text.splitlines()
    assert lines[:5] == [
        "a title",
        "name        count",
        "----------  -----",
        "first           1",
        "second-one  12345",
    ]
    assert lines[6].startswith("first story: a long story")
    assert all(len(line) <= 50 for line in lines)
    assert " ".join(text.split()).count("a long story") == 12, "the story whole"
    assert lines[-1] == "a legend under it"


def test_a_grid_too_wide_is_one_block_per_row_and_nothing_is_cut() -> None:
    text = console.plain_grid(GRID, 12)
    assert text.splitlines()[:5] == ["a title", "", "first", "  count: 1", "  story: a"]
    for value in ("first", "second-one", "12345", "a legend under it"):
        assert value in " ".join(text.split())
    assert max(len(word) for word in text.split()) == len("second-one"), "no word is cut"


def recorded(grouped: bool, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    lines: list[str] = []
    monkeypatch.setenv("KPLUGIN_HEARTBEAT", "0.05")
    if grouped:
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
    else:
        monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    steps = console.Steps(line=lines.append)
    steps.step("go build ./cmd/scheduler")
    deadline = time.monotonic() + 30
    while not any("still running" in line for line in lines) and time.monotonic() < deadline:
        time.sleep(0.01)
    steps.step("verifying kube-scheduler")
    steps.step("verifying kube-scheduler")  # the same step again is no new line
    steps.close()
    return lines


def test_each_step_carries_its_own_time_and_a_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = recorded(False, monkeypatch)
    assert lines[0] == "  go build ./cmd/scheduler …"
    assert re.fullmatch(r"  go build \./cmd/scheduler … still running \(\d+s\)", lines[1]), lines
    rest = [line for line in lines if "still running" not in line]
    assert rest[1:] == [
        "  go build ./cmd/scheduler: done in 0s",
        "  verifying kube-scheduler …",
        "  verifying kube-scheduler: done in 0s",
    ]


def test_on_github_actions_each_step_is_a_group(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [line for line in recorded(True, monkeypatch) if "still running" not in line]
    assert lines == [
        "::group::go build ./cmd/scheduler",
        "::endgroup::",
        "  go build ./cmd/scheduler: done in 0s",
        "::group::verifying kube-scheduler",
        "::endgroup::",
        "  verifying kube-scheduler: done in 0s",
    ]


@pytest.mark.parametrize(("seconds", "shown"), [(0.4, "0s"), (59, "59s"), (61, "1m01s"), (3725, "1h02m")])
def test_elapsed(seconds: float, shown: str) -> None:
    assert console.elapsed(seconds) == shown


def test_a_terminal_keeps_each_finished_step_as_a_line_with_its_time() -> None:
    shown: list[str] = []
    lines: list[str] = []
    steps = console.Steps(show=shown.append, line=lines.append)
    steps.step("a")
    steps.step("b")
    steps.close()
    assert shown == ["a", "b"]
    assert lines == ["[green]✓[/] a (0s)", "[green]✓[/] b (0s)"]


def test_the_golden_files_are_all_used() -> None:
    """A golden file nothing compares against is a check that cannot fail."""
    named = r'"(?:[\w./-]*/)?([\w.-]+\.(?:txt|xml))"'
    used = {m for p in (REPO / "tests").rglob("*.py") for m in re.findall(named, p.read_text())}
    assert {p.name for p in GOLDEN.iterdir()} <= used


def test_golden_folder_is_where_the_tests_say() -> None:
    assert Path(GOLDEN).is_dir()


def test_build_summary_at_80_columns_is_pinned(capsys: pytest.CaptureFixture[str]) -> None:
    """build's summary without a terminal (the steps are pinned by test_local_build)."""
    from kplugin.builder.request import BuildResult
    from kplugin.builder.verify import Binary
    from kplugin.cli.build import _print

    binaries = [
        Binary("linux/amd64", "/p/bin/kube-scheduler", 57_300_000, "ab" * 32, "amd64", True, "go1.26.8", "v1.28.3"),
        Binary("linux/arm64", "/p/bin/arm64/kube-scheduler", 55_100_000, "cd" * 32, "arm64", True, "go1.26.8", None),
    ]
    result = BuildResult("local", "--builder local", "v1.28.3", binaries)
    _print(result, False, 65.4)
    golden("build-summary-80.txt", capsys.readouterr().err)


def test_doctor_at_80_columns_is_pinned() -> None:
    """doctor's findings without a terminal: one block per finding, its first line whole
    (grep finds a finding by its text), why and fix wrapped at the width, nothing cut.
    (The project is made in a directory whose name has the same length in every run, so
    a path in a message wraps the same way.)"""
    import shutil
    import tempfile

    tmp_path = Path(tempfile.mkdtemp(prefix="kplugin-golden-"))
    try:
        _doctor_golden(tmp_path)
    finally:
        shutil.rmtree(tmp_path)


def _doctor_golden(tmp_path: Path) -> None:
    project = tmp_path / "gpu"
    made = piped("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert made.returncode == 0, made.stderr
    config = project / "deploy/scheduler-config.yaml"
    config.write_text(config.read_text().replace("weight: 1", "weight: 0"))
    (project / "config/rbac/rules.yaml").write_text("- apiGroups: [x.io]\n  resources: [things]\n  verbs: [list]\n")
    run = piped("doctor", str(project))
    assert run.returncode == 1, run.stderr
    assert "…" not in run.stdout
    why_fix = [line for line in run.stdout.splitlines() if line.startswith("  ")]
    assert all(len(line) <= 80 for line in why_fix), run.stdout
    golden("doctor-80.txt", run.stdout.replace(str(tmp_path), "<tmp>"))


def test_a_reporter_says_nothing_before_its_first_step(capsys: pytest.CaptureFixture[str]) -> None:
    """A job that stops at a bad input before its first step leaves one line, its error:
    the Reporter's title comes with the first step or count, notes whenever they come."""
    from kplugin.cli.progress import Reporter

    with Reporter("e2e: gpu on Kubernetes 1.37.2…") as reporter:
        reporter.note("the scenario has no pods")
    assert capsys.readouterr().err == "note: the scenario has no pods\n"
    with Reporter("e2e: gpu on Kubernetes 1.37.2…") as reporter:
        reporter.count("pods", 2, 2)
    assert capsys.readouterr().err.splitlines() == ["e2e: gpu on Kubernetes 1.37.2…", "  pods: 2/2"]


def test_on_a_terminal_a_finished_bar_becomes_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench counts dozens of phases (each run's creations and schedulings): each bar is
    a line once done, never a pile of bars taller than the terminal; a count repeated at
    its end says nothing again."""
    import io

    from rich.console import Console

    from kplugin.cli.progress import Reporter

    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=100, highlight=False)
    monkeypatch.setattr(console, "_is_tty", lambda: True)
    monkeypatch.setattr(console, "_rich", lambda: terminal)
    with Reporter("bench: gpu…") as reporter:
        for run in ("baseline #1", "project #1"):
            reporter.count(f"{run}: scheduling 10 pods", 4, 10)
            reporter.count(f"{run}: scheduling 10 pods", 10, 10)
            reporter.count(f"{run}: scheduling 10 pods", 10, 10)
            assert reporter._live is not None and [t.description for t in reporter._live.tasks] == ["bench: gpu…"]
    lines = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
    assert lines.count("baseline #1: scheduling 10 pods: 10/10") == 1
    assert lines.count("project #1: scheduling 10 pods: 10/10") == 1
