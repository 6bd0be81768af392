"""PreQueueingHints in e2e and bench (issue 42): kplugin leaves the gate
SchedulerPreQueueingHints as each minor has it (on from 1.38; at 1.37 alpha and off, and
its queue skips the plugins that registered an event without a PreQueueingHint, so a
plugin's hint would starve the in-tree plugins' pods: e2e says so when --feature-gates
turns it on); --feature-gates sets gates last; the queue's "narrowed" lines are read from
the scheduler's log and reported. The real scheduler's behaviour is
tests/integration/test_integration_custom.py's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import REPO, Kplugin

from kplugin.cli.flags import render
from kplugin.core.errors import UsageError
from kplugin.e2e import gates, logs, run
from kplugin.generate import plugincode
from kplugin.model import manifests
from kplugin.model.project import Project, load
from kplugin.model.versions import resolve
from kplugin.scenario.format import DEFAULT_SCENARIO

GATE = "SchedulerPreQueueingHints"


def new(kplugin: Kplugin, parent: Path, version: str, points: str = "filter,score,enqueueextensions") -> Project:
    run_ = kplugin("new", "gpu", "--k8s", version, "--no-tidy", "-o", str(parent), "--extension-points", points)
    assert run_.code == 0, run_.stderr
    return load(parent / "gpu")


def inputs(project: Project, gates: tuple[tuple[str, bool], ...] = ()) -> run.Inputs:
    return run.Inputs(project=project, scenario=DEFAULT_SCENARIO, config=None, rbac=None, feature_gates=gates)  # type: ignore[arg-type]


def team_quota(tmp_path: Path, version: str) -> Project:
    """examples/team-quota (its own PreQueueingHints) as if pinned to ``version``."""
    shutil.copytree(REPO / "examples" / "team-quota", tmp_path / "team-quota")
    project = load(tmp_path / "team-quota")
    return project._replace(target=resolve(version))


@pytest.mark.parametrize("version", ["1.37", "1.38.0-beta.0", "1.36"])
def test_the_gate_is_left_as_the_minor_has_it(kplugin: Kplugin, tmp_path: Path, version: str) -> None:
    """The sample and examples/team-quota name PreQueueingHints; neither e2e nor bench turns
    the gate on (1.37's alpha skips the in-tree plugins' pods for their events); only a
    --feature-gates that does at 1.37 gets the line that says what it costs."""
    sample = new(kplugin, tmp_path / "sample", version)
    assert plugincode.names_pre_hints(sample, sample.plugins[0])
    quota = team_quota(tmp_path, version)
    assert any(plugincode.names_pre_hints(quota, plugin) for plugin in quota.plugins)
    for project in (sample, quota):
        flags = gates.gate_flags(inputs(project))
        assert (flags.scheduler, flags.apiserver) == ((), ())
        assert gates.gates_line(inputs(project)) is None and gates.alpha_pre_hints_line(inputs(project)) is None
    on = gates.alpha_pre_hints_line(inputs(sample, ((GATE, True),)))
    if version == "1.37":
        assert on is not None and on.startswith(f"{GATE} is alpha in 1.37: where a PreQueueingHint names pods")
        assert "skips the plugins that registered the same event without one" in on
    else:
        assert on is None
    assert gates.alpha_pre_hints_line(inputs(sample, ((GATE, False),))) is None


def test_a_plugin_without_prequeueinghints_names_none(kplugin: Kplugin, tmp_path: Path) -> None:
    """The sample without EventsToRegister (no enqueueextensions) names none."""
    plain = new(kplugin, tmp_path, "1.37", "filter,score")
    assert not plugincode.names_pre_hints(plain, plain.plugins[0])
    assert gates.gate_flags(inputs(plain)).scheduler == ()


def test_feature_gates_are_set_last(kplugin: Kplugin, tmp_path: Path) -> None:
    """--feature-gates wins over kplugin's own gates, for the scheduler only, and the line
    says so."""
    sample = new(kplugin, tmp_path, "1.37")
    on = ((GATE, True),)
    assert gates.gate_flags(inputs(sample, on)).scheduler == (f"--feature-gates={GATE}=true",)
    line = gates.gates_line(inputs(sample, on))
    assert line is not None
    assert render(line) == f"kube-scheduler runs with --feature-gates={GATE}=true; --feature-gates as given"
    flags = manifests.GateFlags.of(("GenericWorkload",), resolve("1.37").facts, {"Other": True, GATE: True})
    assert flags.scheduler == (f"--feature-gates=GenericWorkload=true,Other=true,{GATE}=true",)
    assert flags.apiserver[0] == "--feature-gates=GenericWorkload=true"
    flags = manifests.GateFlags.of(("GenericWorkload",), resolve("1.37").facts, {"GenericWorkload": False})
    assert flags.scheduler == ("--feature-gates=GenericWorkload=false",)


@pytest.mark.parametrize(
    ("given", "settings"),
    [
        (["A=true,B=false"], (("A", True), ("B", False))),
        (["A=true", "A=False"], (("A", False),)),
        (["SchedulerPreQueueingHints=TRUE"], ((GATE, True),)),
        (None, ()),
    ],
)
def test_feature_gate_settings(given: list[str] | None, settings: tuple[tuple[str, bool], ...]) -> None:
    assert manifests.gate_settings(given) == settings


@pytest.mark.parametrize("bad", ["A", "A=yes", "a=true", "A=true,", "=true", "A B=true"])
def test_a_bad_feature_gate_is_refused_in_one_line(kplugin: Kplugin, tmp_path: Path, bad: str) -> None:
    with pytest.raises(UsageError) as refused:
        manifests.gate_settings([bad])
    assert render(refused.value.message).startswith("--feature-gates '"), refused.value.message
    assert "': give NAME=true or NAME=false" in refused.value.message
    sample = new(kplugin, tmp_path, "1.37")
    result = kplugin("e2e", str(sample.root), "--feature-gates", bad)
    assert result.code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("kplugin: error: --feature-gates") and "NAME=true" in line, line


NARROWED = (
    'I1207 10:00:00.500000  1 scheduling_queue.go:1743] "PreQueueingHint narrowed pod set" candidates=0 total=0\n'
    'I1207 10:00:01.000000  1 scheduling_queue.go:1743] "PreQueueingHint narrowed pod set" candidates=1 total=2\n'
    'I1207 10:00:01.000100  1 active_queue.go:200] "Entity moved to an internal scheduling queue" '
    'entity="team-a/a-2" event="quotas.v1alpha1.quota.example.com/Update" queue="Backoff"\n'
    'I1207 10:00:03.500000  1 scheduling_queue.go:1743] "PreQueueingHint narrowed pod set" candidates=0 total=1\n'
)


def test_the_queues_narrowed_lines_are_read_and_reported() -> None:
    """Each event the PreQueueingHints narrowed while pods waited (one while none waited,
    as the scenario's own objects are created, narrows nothing and is left out)."""
    facts = logs.read_log(NARROWED.splitlines())
    assert [(n.candidates, n.total) for n in facts.narrowed] == [(1, 2), (0, 1)]
    assert facts.narrowed[1].at is not None and facts.narrowed[0].at is not None
    assert round(facts.narrowed[1].at - facts.narrowed[0].at, 3) == 2.5
    assert [r.event for r in facts.requeues["team-a/a-2"]] == ["quotas.v1alpha1.quota.example.com/Update"]
    assert run.narrowed_line(tuple(facts.narrowed)) == (
        "e2e: PreQueueingHints narrowed 2 event(s): the queue asked the QueueingHints about 1 of the 3 "
        "unschedulable pod(s) it held then"
    )
    assert run.narrowed_line(()) is None
    assert logs.Narrowing(1, 2, 0.5).as_json() == {"candidates": 1, "total": 2, "at": 0.5}
    assert logs.Narrowing(1, 2).as_json() == {"candidates": 1, "total": 2}
