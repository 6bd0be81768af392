"""PreQueueingHints in e2e and bench (issue 42): the gate SchedulerPreQueueingHints is
turned on for the scheduler where the target minor has it off (1.37) and a plugin's code
names a PreQueueingHintFn; --feature-gates sets gates last; the queue's "narrowed" lines
are read from the scheduler's log and reported. The real scheduler's behaviour is
tests/integration/test_integration_custom.py's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import REPO, Kplugin

from kplugin.cli.flags import render
from kplugin.core.errors import UsageError
from kplugin.e2e import logs, run
from kplugin.e2e.scenario import DEFAULT_SCENARIO
from kplugin.generate import plugincode
from kplugin.model import manifests
from kplugin.model.project import Project, load
from kplugin.model.versions import resolve

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


@pytest.mark.parametrize(("version", "gated"), [("1.37", True), ("1.38.0-beta.0", False), ("1.36", False)])
def test_the_gate_is_on_where_the_minor_has_it_off_and_a_plugin_names_one(
    kplugin: Kplugin, tmp_path: Path, version: str, gated: bool
) -> None:
    sample = new(kplugin, tmp_path / "sample", version)
    assert plugincode.names_pre_hints(sample, sample.plugins[0])
    assert plugincode.code_gates(sample) == ((GATE,) if gated else ())
    assert plugincode.code_gates(team_quota(tmp_path, version)) == ((GATE,) if gated else ())
    flags = run.gate_flags(inputs(sample))
    assert flags.scheduler == ((f"--feature-gates={GATE}=true",) if gated else ())
    assert flags.apiserver == ()  # the API server has nothing to do with the queue
    line = run.gates_line(inputs(sample))
    if gated:
        assert line == f"kube-scheduler runs with --feature-gates={GATE}=true: the plugins' PreQueueingHints need them"
    else:
        assert line is None


def test_a_plugin_without_prequeueinghints_runs_without_the_gate(kplugin: Kplugin, tmp_path: Path) -> None:
    """The sample without EventsToRegister (no enqueueextensions) names none: 1.37 as before."""
    plain = new(kplugin, tmp_path, "1.37", "filter,score")
    assert not plugincode.names_pre_hints(plain, plain.plugins[0])
    assert run.gate_flags(inputs(plain)).scheduler == ()


def test_feature_gates_are_set_last(kplugin: Kplugin, tmp_path: Path) -> None:
    """--feature-gates wins over kplugin's own gates (here: PreQueueingHints off at 1.37,
    to replay without them), for the scheduler only, and the line says so."""
    sample = new(kplugin, tmp_path, "1.37")
    off = ((GATE, False),)
    assert run.gate_flags(inputs(sample, off)).scheduler == (f"--feature-gates={GATE}=false",)
    line = run.gates_line(inputs(sample, off))
    assert line is not None
    assert render(line) == (
        f"kube-scheduler runs with --feature-gates={GATE}=false: the plugins' PreQueueingHints need them; "
        "--feature-gates as given"
    )
    flags = manifests.GateFlags.of(("GenericWorkload",), resolve("1.37").facts, (GATE,), {"Other": True})
    assert flags.scheduler == (f"--feature-gates=GenericWorkload=true,Other=true,{GATE}=true",)
    assert flags.apiserver[0] == "--feature-gates=GenericWorkload=true"


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
