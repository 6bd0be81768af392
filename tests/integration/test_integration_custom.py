"""A plugin with an API of its own on a real control plane: examples/team-quota reads
Quotas (quota.example.com/v1alpha1, its config/crd/) through an informer of its own, and
the scheduler watches them too (its EventsToRegister). e2e creates the project's CRD
before anything else and waits until it is Established, creates the scenario's Quotas
through discovery, and runs a step that updates one; the plugin's QueueingHint requeues
the pod the Quota held. Without the Quota rule in config/rbac/rules.yaml, or without
the CRD, the scheduler never gets ready, and e2e stops with the scheduler's own line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import REPO, Kplugin, example_at

from kplugin.model.apifacts import PreQueueingHints
from kplugin.model.versions import newest_release, supported_releases

pytestmark = pytest.mark.integration

OLDEST = "1.28.3"
NEWEST = newest_release().key
SCENARIO = (REPO / "examples" / "team-quota-scenario.yaml").read_text()
RESOURCE = "quotas.v1alpha1.quota.example.com"


def team_quota(kplugin: Kplugin, tmp_path: Path, version: str) -> Path:
    return example_at(kplugin, "team-quota", tmp_path, version)


def without_steps(tmp_path: Path) -> Path:
    """The example's scenario before its step: the Quota of 2 CPUs holds a-3 back."""
    path = tmp_path / "held.yaml"
    head = SCENARIO.split("steps:")[0]
    path.write_text(head + "expect:\n  team-a/a-3: pending\n  team-b/b-1: [node-1, node-2]\n")
    return path


@pytest.mark.parametrize("version", [OLDEST, NEWEST])
def test_a_custom_object_holds_a_pod_until_a_step_raises_it(kplugin: Kplugin, tmp_path: Path, version: str) -> None:
    """The Quota keeps a-3 pending; the step's updateObject raises it, the plugin's hint
    on Quota updates requeues a-3, and it binds. Compared with the default profile, a-3 is
    the pod the plugin's own API keeps from scheduling."""
    project = team_quota(kplugin, tmp_path, version)
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    run = kplugin("e2e", str(project), "--scenario", str(scenario), "--json")
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["ok"] and result["kubernetes"].startswith(version), result
    assert (result["denied"], result["unserved"]) == ([], [])
    assert result["created"]["objects"] >= 2 + 1 + 4, "namespaces, the CRD and the Quota, the pods"
    pods = {p["pod"]: p for p in result["pods"]}
    assert all(p["node"] in ("node-1", "node-2") for p in pods.values()), pods
    held = pods["team-a/a-3"]
    assert held["attempts"] >= 2, held
    assert any("quota" in r["event"].lower() for r in held["requeues"]), held["requeues"]
    assert pods["team-a/a-1"]["attempts"] == 1 and pods["team-b/b-1"]["attempts"] == 1

    run = kplugin("e2e", str(project), "--scenario", str(without_steps(tmp_path)), "--compare", "default", "--json")
    assert run.code == 0, run.stderr
    compared = json.loads(run.stdout)
    became = [c["pod"] for c in compared["becameUnschedulable"]]
    assert became == ["team-a/a-3"], compared["summary"]
    assert compared["becameUnschedulable"][0]["default"]["node"] in ("node-1", "node-2")


def test_the_scheduler_not_ready_stops_e2e_with_its_own_line(kplugin: Kplugin, tmp_path: Path) -> None:
    """Without the Quota rule the scheduler's informers would be forbidden to list
    quotas: e2e refuses before building anything (exit 2, one line naming the file and
    line of the code that reads them, and the rule to add). Without the CRD the API server
    does not serve them: no pod is attempted, and e2e stops with exit 1 naming the cause,
    instead of blaming a plugin."""
    project = team_quota(kplugin, tmp_path, OLDEST)
    scenario = without_steps(tmp_path)
    rules = project / "config" / "rbac" / "rules.yaml"
    kept = rules.read_text()
    rules.write_text("[]\n")
    run = kplugin("refresh", str(project))
    assert run.code == 0, run.stderr
    run = kplugin("e2e", str(project), "--scenario", str(scenario), "--timeout", "60")
    assert run.code == 2, run.stdout
    (line,) = [line for line in run.stderr.splitlines() if line.startswith("kplugin: error:")]
    assert line.startswith("kplugin: error: pkg/teamquota/plugin.go:") and " reads quotas.quota.example.com, " in line
    assert "config/rbac/rules.yaml" in line and "building" not in run.stderr, run.stderr

    rules.write_text(kept)
    (project / "config" / "crd" / "quotas.yaml").unlink()
    run = kplugin("refresh", str(project))
    assert run.code == 0, run.stderr
    no_quota = tmp_path / "no-quota.yaml"
    text = scenario.read_text()
    no_quota.write_text(text[: text.index("objects:")] + text[text.index("pods:") :].split("expect:")[0])
    run = kplugin("e2e", str(project), "--scenario", str(no_quota), "--timeout", "60")
    assert run.code == 1, run.stdout
    line = run.stderr.strip().splitlines()[-1]
    assert "could not find the requested resource" in line or "not served" in line, line
    assert "quotas (quota.example.com/v1alpha1)" in line and "config/crd/" in line, line
    assert "PreEnqueue" not in run.stdout + run.stderr

    # a scenario's Quota without its CRD stops the replay before anything is created
    run = kplugin("e2e", str(project), "--scenario", str(scenario), "--timeout", "60")
    assert run.code == 1, run.stdout
    line = run.stderr.strip().splitlines()[-1]
    assert line.startswith("kplugin: error: objects[0] (Quota team-a/cpu): quota.example.com/v1alpha1 Quota is not"), (
        line
    )
    assert line.endswith(": add its CustomResourceDefinition to config/crd/ or to the scenario's objects"), line


# --- PreQueueingHints in the real scheduler (issue 42) ------------------------------------

# the first minor whose queue calls PreQueueingHints by default (1.38), as --k8s takes it:
# its pre-release until it is released
PRE_HINTS_ON = next(
    (r.key if r.released else str(r.newest))
    for r in supported_releases()
    if r.facts.pre_queueing_hints is PreQueueingHints.BETA_ON
)
PRE_HINTS_FIRST = "1.37"  # ClusterEventWithHint.PreQueueingHintFn; gate alpha, off by default
# two namespaces, each with a Quota of 1 CPU and two pods of 1 CPU: one pod of each binds,
# a-2 and b-2 wait on TeamQuota's PreFilter; the step raises team-a's Quota only
TWO_QUOTAS = """\
nodes:
- {name: node-1, capacity: {cpu: "4"}}
- {name: node-2, capacity: {cpu: "4"}}
objects:
- apiVersion: quota.example.com/v1alpha1
  kind: Quota
  metadata: {name: cpu, namespace: team-a}
  spec: {hard: {cpu: "1"}}
- apiVersion: quota.example.com/v1alpha1
  kind: Quota
  metadata: {name: cpu, namespace: team-b}
  spec: {hard: {cpu: "1"}}
pods:
- {name: a-1, namespace: team-a, requests: {cpu: "1"}}
- {name: b-1, namespace: team-b, requests: {cpu: "1"}}
- {name: a-2, namespace: team-a, requests: {cpu: "1"}}
- {name: b-2, namespace: team-b, requests: {cpu: "1"}}
steps:
- wait: 2
- updateObject:
    apiVersion: quota.example.com/v1alpha1
    kind: Quota
    metadata: {name: cpu, namespace: team-a}
    spec: {hard: {cpu: "2"}}
expect:
  team-a/a-1: [node-1, node-2]
  team-a/a-2: [node-1, node-2]
  team-b/b-1: [node-1, node-2]
  team-b/b-2: pending
"""


@pytest.mark.parametrize(
    ("version", "gates", "narrowed"),
    [
        (PRE_HINTS_ON, (), True),  # beta, on by default
        (PRE_HINTS_FIRST, ("--feature-gates", "SchedulerPreQueueingHints=true"), True),  # alpha, turned on
        (PRE_HINTS_FIRST, (), False),  # alpha, off by default: e2e leaves it so
    ],
    ids=["on-by-default", "alpha-turned-on", "alpha-off"],
)
def test_a_quota_event_asks_the_hint_about_its_namespaces_pod_only(
    kplugin: Kplugin, tmp_path: Path, version: str, gates: tuple[str, ...], narrowed: bool
) -> None:
    """examples/team-quota's PreQueueingHint on Quota events names the pending pods of the
    Quota's namespace. Two pods wait, one per namespace; raising team-a's Quota: the
    queue asks the QueueingHint about a-2 alone and requeues it (the scheduler's own
    "PreQueueingHint narrowed pod set", candidates 1 of 2, which e2e reports), b-2 is not
    asked. With the gate off (1.37's default, which e2e keeps) the same replay asks about
    both and ends the same, without that line; turned on at 1.37 by --feature-gates, the
    run says what 1.37's alpha costs the other plugins."""
    project = team_quota(kplugin, tmp_path, version)
    scenario = tmp_path / "two-quotas.yaml"
    scenario.write_text(TWO_QUOTAS)
    run = kplugin("e2e", str(project), "--scenario", str(scenario), "--json", *gates)
    assert run.code == 0, run.stderr[-3000:]
    result = json.loads(run.stdout)
    assert result["ok"] and result["kubernetes"].startswith(version), result
    pods = {p["pod"]: p for p in result["pods"]}
    assert any(r["event"].startswith(RESOURCE) for r in pods["team-a/a-2"]["requeues"]), pods["team-a/a-2"]
    assert not any(r["event"].startswith(RESOURCE) for r in pods["team-b/b-2"]["requeues"]), pods["team-b/b-2"]
    said = [line.removeprefix("note: ") for line in run.stderr.splitlines() if "SchedulerPreQueueingHints" in line]
    at_the_step = [n for n in result["preQueueingHints"] if n["total"] == 2]
    if narrowed:
        assert (len(at_the_step), at_the_step[0]["candidates"]) == (1, 1), result["preQueueingHints"]
        assert "e2e: PreQueueingHints narrowed" in run.stderr, run.stderr
        if version == PRE_HINTS_FIRST:  # turned on by --feature-gates, and said so
            gates = "kube-scheduler runs with --feature-gates=SchedulerPreQueueingHints=true; --feature-gates as given"
            assert len(said) == 2 and said[0] == gates, run.stderr
            assert said[1].startswith("SchedulerPreQueueingHints is alpha in 1.37: "), run.stderr
        else:
            assert said == [], run.stderr
    else:
        assert result["preQueueingHints"] == [] and "PreQueueingHints narrowed" not in run.stderr, result
        assert said == [], run.stderr
