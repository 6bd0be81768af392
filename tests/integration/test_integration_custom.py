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

from kplugin.model.versions import newest_release

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
    """Without the Quota rule the scheduler's informers are forbidden to list quotas;
    without the CRD the API server does not serve them. Either way no pod is attempted,
    and e2e stops with exit 1 naming the cause, instead of blaming a plugin."""
    project = team_quota(kplugin, tmp_path, OLDEST)
    scenario = without_steps(tmp_path)
    rules = project / "config" / "rbac" / "rules.yaml"
    kept = rules.read_text()
    rules.write_text("[]\n")
    run = kplugin("refresh", str(project))
    assert run.code == 0, run.stderr
    run = kplugin("e2e", str(project), "--scenario", str(scenario), "--timeout", "60")
    assert run.code == 1, run.stdout
    line = run.stderr.strip().splitlines()[-1]
    assert "quotas" in line and "config/rbac/rules.yaml" in line, line
    assert "PreEnqueue" not in run.stdout + run.stderr

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
