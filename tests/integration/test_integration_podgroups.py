"""A pod group's extension points in the real scheduler (issue 23): examples/rack-gang at
1.37 replayed on a control plane that kplugin e2e starts with the gates its points need
(GenericWorkload, TopologyAwareWorkloadScheduling) and the API version that serves
PodGroups. The plugin's GeneratePlacements keeps the gang in one rack; the default
profile spreads it over both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import REPO, Kplugin, example_at

pytestmark = pytest.mark.integration

SCENARIO = REPO / "examples" / "rack-gang-scenario.yaml"
GANG = ("g-1", "g-2", "g-3", "g-4")


def test_a_placement_plugin_keeps_the_gang_in_one_rack(kplugin: Kplugin, tmp_path: Path) -> None:
    project = example_at(kplugin, "rack-gang", tmp_path, "1.37.2", "1.37.2")
    run = kplugin("e2e", str(project), "--scenario", str(SCENARIO), "--json")
    assert run.code == 0, run.stderr[-3000:]
    said = [line for line in run.stderr.splitlines() if "kube-apiserver runs with" in line]
    gates = "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true"
    assert len(said) == 1 and f"kube-scheduler with {gates}" in said[0], run.stderr
    assert "--runtime-config=scheduling.k8s.io/v1beta1=true" in said[0]
    result = json.loads(run.stdout)
    assert result["ok"], result
    placed = {p["pod"]: p["node"] for p in result["pods"]}
    assert {placed[pod] for pod in GANG} <= {"a-1", "a-2"}, placed

    run = kplugin("e2e", str(project), "--scenario", str(SCENARIO), "--compare", "default", "--json")
    assert run.code == 0, run.stderr[-3000:]
    compared = json.loads(run.stdout)
    moved = {m["pod"]: m for m in compared["moved"]}
    # the default profile has one placement of every node: its spread puts a pod on b-1
    assert any(m["default"]["node"] == "b-1" for m in moved.values()), compared["summary"]
    assert all(m["plugin"]["node"] in ("a-1", "a-2") for m in moved.values()), compared["moved"]
