"""e2e's JUnit XML report (--junit) without a control plane: one test suite per replay,
one test case per expectation of the scenario, the scheduler's reason in a failure; read
back with a JUnit XML parser (junitparser). The file is checked before the run and
written atomically."""

from __future__ import annotations

from pathlib import Path

import junitparser
import pytest
from support import Kplugin

from kplugin.cli import e2e as cli
from kplugin.core.errors import OperationError
from kplugin.e2e.logs import NodeScore
from kplugin.e2e.report import ScoreView, Suite, junit_xml
from kplugin.e2e.run import Inputs, Outcome
from kplugin.e2e.session import CreationTotals, PodPlacement, ProfileLabel, Session
from kplugin.model import project, schedconfig
from kplugin.scenario.format import Node, Pod, Scenario

REASON = "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient example.com/gpu."


def placements() -> list[PodPlacement]:
    scores = (NodeScore("gpu-small", 190, {"Gpu": 100, "Fit": 90}), NodeScore("gpu-big", 100, {"Gpu": 0, "Fit": 100}))
    return [
        PodPlacement("train-1", "gpu-big", "", ("gpu-big",)),
        PodPlacement("train-4", "gpu-small", "", ("gpu-big",), scores=scores),
        PodPlacement("train-5", None, REASON, ("gpu-big", "gpu-small")),
        PodPlacement("web-1", None, "0/3 nodes are available", ("pending",)),
        PodPlacement("free", "gpu-big", ""),  # no expectation: no test case
    ]


def read(data: bytes, tmp_path: Path) -> junitparser.JUnitXml:
    path = tmp_path / "report.xml"
    path.write_bytes(data)
    return junitparser.JUnitXml.fromfile(str(path))


def test_a_case_per_expectation_with_the_reason_on_failure(tmp_path: Path) -> None:
    data = junit_xml([Suite("e2e gpu: scenario.yaml", placements(), 1.25, {"kubernetes": "1.28.3"})])
    xml = read(data, tmp_path)
    (suite,) = list(xml)
    assert (suite.name, suite.tests, suite.failures, suite.errors, suite.skipped) == (
        "e2e gpu: scenario.yaml",
        4,
        2,
        0,
        0,
    )
    assert suite.time == 1.25 and {p.name: p.value for p in suite.properties()} == {"kubernetes": "1.28.3"}
    cases = {case.name: case for case in suite}
    assert list(cases) == ["train-1: gpu-big", "train-4: gpu-big", "train-5: gpu-big or gpu-small", "web-1: pending"]
    assert cases["train-1: gpu-big"].is_passed and cases["web-1: pending"].is_passed
    (misplaced,) = cases["train-4: gpu-big"].result
    assert isinstance(misplaced, junitparser.Failure)
    assert misplaced.message == "train-4 is gpu-small, expected gpu-big" and misplaced.type == "placement"
    assert misplaced.text.splitlines() == [  # its scores tell why
        "where: gpu-small",
        "expected: gpu-big",
        "node       total  Fit  Gpu",
        "gpu-small    190   90  100",
        "gpu-big      100  100    0",
    ]
    (pending,) = cases["train-5: gpu-big or gpu-small"].result
    assert pending.message == f"train-5 is pending, expected gpu-big or gpu-small ({REASON})"
    assert f"why: {REASON}" in pending.text
    assert data == junit_xml([Suite("e2e gpu: scenario.yaml", placements(), 1.25, {"kubernetes": "1.28.3"})])
    assert b"timestamp" not in data


def test_with_compare_a_suite_per_profile_the_default_profile_not_enforced(tmp_path: Path) -> None:
    suites = [
        Suite("p (plugin profile)", placements(), 1.0),
        Suite("p (default profile)", placements(), 2.0, enforced=False),
    ]
    xml = read(junit_xml(suites), tmp_path)
    plugin, default = list(xml)
    assert (xml.tests, xml.failures, xml.skipped, xml.time) == (8, 2, 2, 3.0)
    assert (plugin.name, plugin.failures, plugin.skipped) == ("p (plugin profile)", 2, 0)
    assert (default.name, default.failures, default.skipped) == ("p (default profile)", 0, 2)
    (skipped,) = next(case for case in default if case.name == "train-4: gpu-big").result
    assert isinstance(skipped, junitparser.Skipped) and skipped.message == (
        "train-4 is gpu-small, expected gpu-big; not checked with this profile (the project's profile is)"
    )


def test_text_xml_cannot_hold_is_replaced(tmp_path: Path) -> None:
    odd = PodPlacement("p", None, "bad \x1b[31mcolour\x00", ("a",))
    (suite,) = list(read(junit_xml([Suite("s\x07", [odd], 0.0)]), tmp_path))
    (failure,) = next(iter(suite)).result
    assert suite.name == "s\ufffd" and failure.message == "p is pending, expected a (bad \ufffd[31mcolour\ufffd)"


def test_the_scores_in_a_failure_follow_the_view(tmp_path: Path) -> None:
    (suite,) = list(read(junit_xml([Suite("s", placements(), 0.0)], ScoreView(top=1, more="--scores all")), tmp_path))
    (failure,) = next(case for case in suite if case.name.startswith("train-4")).result
    assert failure.text.splitlines()[-1] == "(1 more node not shown: --scores all)"


# --- the command: the file checked before the run, written before the exit code ----------


@pytest.mark.parametrize(
    ("option", "where", "needle"),
    [
        ("--junit", "dir", "is a directory; kplugin only writes regular files"),
        ("--junit", "missing/report.xml", "does not exist"),
        ("--junit", "exists.xml", "exists; pass --force to overwrite it"),
        ("--report", "report.png", "the report is HTML; name it FILE.html"),
        ("--report", "dir", "is a directory; kplugin only writes regular files"),
        ("--report", "missing/report.html", "does not exist"),
        ("--report", "exists.xml", "exists; pass --force to overwrite it"),
    ],
)
def test_a_bad_output_path_is_a_usage_error_before_anything_runs(
    kplugin: Kplugin, tmp_path: Path, option: str, where: str, needle: str
) -> None:
    """--junit and --report (e2e's two files) are checked alike, before anything runs."""
    (tmp_path / "dir").mkdir()
    (tmp_path / "exists.xml").write_text("old")
    target = tmp_path / where
    if option == "--report" and where == "dir":
        target = tmp_path / "dir.html"
        target.mkdir()
    if option == "--report" and where == "exists.xml":
        target = tmp_path / "exists.html"
        target.write_text("old")
    run = kplugin("e2e", str(tmp_path / "no-project"), option, str(target))
    assert run.code == 2, run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"kplugin: error: {option} {target}") and needle in line, line
    assert (tmp_path / "exists.xml").read_text() == "old"
    assert not target.is_file() or target.read_text() == "old"


def test_force_lets_junit_replace_a_file(kplugin: Kplugin, tmp_path: Path) -> None:
    (tmp_path / "exists.xml").write_text("old")
    run = kplugin("e2e", str(tmp_path / "no-project"), "--junit", str(tmp_path / "exists.xml"), "--force")
    assert run.code == 2 and "is not a kplugin project" in run.stderr, run.stderr  # the next check


def inputs() -> Inputs:
    meta = project.parse(Path("/x"), {
        "name": "gpu", "module": "example.com/gpu", "kubernetes": "1.28.3", "schedulerName": "gpu", "image": "gpu:1",
        "plugins": [{"name": "Gpu", "extensionPoints": ["filter", "score"]}],
    })  # fmt: skip
    scenario = Scenario(nodes=(Node("gpu-big"),), pods=(Pod("train-1"),))
    return Inputs(meta, scenario, schedconfig.SchedulerConfig(("gpu",), meta.plugins), None)


def test_the_report_is_written_before_a_failed_expectation_ends_the_run(tmp_path: Path) -> None:
    target = tmp_path / "e2e.xml"
    session = Session(ProfileLabel.PLUGIN, "gpu", placements(), CreationTotals(5, 0.5), 2, 0.75, "admin")
    html = cli._html_target(tmp_path / "e2e.html", force=False)
    report = cli._Report(ScoreView(), cli._junit_target(target, force=False), "scenario.yaml", html)
    suite = cli._suite(report, inputs(), session)
    outcome = Outcome("1.28.3", "gpu", session.placements, 3.0)
    with pytest.raises(OperationError, match="2 pod"):
        cli._print_outcome(outcome, True, report, suite, "gpu")
    assert (tmp_path / "e2e.html").read_text().startswith("<!DOCTYPE html>")  # the HTML report too
    (written,) = list(junitparser.JUnitXml.fromfile(str(target)))
    assert (written.name, written.tests, written.failures, written.time) == ("e2e gpu: scenario.yaml", 4, 2, 0.75)
    properties = {p.name: p.value for p in written.properties()}
    assert properties == {
        "kubernetes": "1.28.3",
        "scenario": "scenario.yaml",
        "profile": "plugin",
        "schedulerName": "gpu",
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e2e.html", "e2e.xml"], "no temporary file is left"


def test_compare_writes_a_suite_per_profile(tmp_path: Path) -> None:
    report = cli._Report(ScoreView(), tmp_path / "e2e.xml", "scenario.yaml")
    sessions = [Session(label, label, placements(), CreationTotals(), 2, 1.0, "admin") for label in ProfileLabel]
    cli._write_junit(report, [cli._suite(report, inputs(), s, s.profile) for s in sessions])
    plugin, default = list(junitparser.JUnitXml.fromfile(str(tmp_path / "e2e.xml")))
    assert plugin.name == "e2e gpu: scenario.yaml (plugin profile)" and plugin.failures == 2
    assert default.name == "e2e gpu: scenario.yaml (default profile)" and (default.failures, default.skipped) == (0, 2)
