"""kplugin bench on an adopted repository, before anything runs: its profile is its own
file's, the baseline the same profile with its plugins left out (QueueSort and Bind get
kube-scheduler's defaults back where the repository's replaced them), the plugin
workload reads the file's args."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from support import REPO, Run

from kplugin.bench import run
from kplugin.bench.plan import own_profiles
from kplugin.config.own import own_config
from kplugin.model import project as projects

FIXTURES = REPO / "tests/fixtures/adopt"


def test_the_baseline_is_the_repository_s_profile_without_its_plugins(
    kplugin: Callable[..., Run], tmp_path: Path
) -> None:
    repository = Path(shutil.copytree(FIXTURES / "forkshape", tmp_path / "forkshape"))
    file = repository / "manifests/capacity/scheduler-config.yaml"
    score = (
        "      score:\n        enabled:\n          - name: Capacity\n        disabled:\n"
        "          - name: NodeResourcesBalancedAllocation\n"
    )
    file.write_text(file.read_text().replace("      permit:\n", score + "      permit:\n"))
    assert kplugin("adopt", str(repository)).code == 0
    project = projects.load(repository, adopted=True)
    config, _ = own_config(project, project.target)
    baseline, mine = own_profiles(config, ("Capacity", "Gang"), project.name)
    assert (baseline.kind, baseline.scheduler_name, mine.scheduler_name) == (
        "baseline",
        "forkshape-scheduler-baseline",
        "forkshape-scheduler",
    )
    kept = mine.config.document()["profiles"][0]
    assert kept["plugins"]["queueSort"] == {"enabled": [{"name": "Gang"}], "disabled": [{"name": "PrioritySort"}]}
    assert {e["name"] for e in kept["pluginConfig"]} == {"Capacity"}
    left = baseline.config.document()["profiles"][0]
    assert left["schedulerName"] == "forkshape-scheduler-baseline"
    assert left["plugins"] == {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}}, (
        "PrioritySort comes back (its disabling went with Gang); a Score plugin the repository disables stays off"
    )
    assert "pluginConfig" not in left
    assert config.args == {"Capacity": kept["pluginConfig"][0]["args"]}


def test_prepare_takes_the_repository_s_configuration(kplugin: Callable[..., Run], tmp_path: Path) -> None:
    repository = Path(shutil.copytree(FIXTURES / "crdshape", tmp_path / "crdshape"))
    assert kplugin("adopt", str(repository)).code == 0
    inputs = run.prepare(projects.load(repository, adopted=True), "basic", nodes=5, pods=10)
    assert [p.scheduler_name for p in inputs.profiles] == ["fleet-scheduler-baseline", "fleet-scheduler"]
    assert inputs.plugins == ("NodeReservation",)
    baseline = inputs.profiles[0].config.document()["profiles"][0]
    assert "plugins" not in baseline, "NodeReservation was its only plugin"


def test_a_multipoint_profile_s_baseline_gets_queuesort_back_and_default_scheduler_is_renamed(
    kplugin: Callable[..., Run], tmp_path: Path
) -> None:
    """scheduler-plugins' configs: the plugin enabled at multiPoint, PrioritySort disabled,
    the profile named default-scheduler (which on a cluster would be the cluster's own)."""
    repository = Path(shutil.copytree(FIXTURES / "crdshape", tmp_path / "crdshape"))
    (repository / "deploy/scheduler/config.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled: [{name: NodeReservation}]\n"
        "    queueSort:\n      disabled: [{name: PrioritySort}]\n    score:\n      disabled: [{name: ImageLocality}]\n"
    )
    assert kplugin("adopt", str(repository)).code == 0
    project = projects.load(repository, adopted=True)
    config, _ = own_config(project, project.target)
    baseline, mine = own_profiles(config, ("NodeReservation",), project.name)
    assert (mine.scheduler_name, baseline.scheduler_name) == ("crdshape", "crdshape-baseline")
    assert mine.config.document()["profiles"][0]["schedulerName"] == "crdshape"
    left = baseline.config.document()["profiles"][0]["plugins"]
    assert left == {"score": {"disabled": [{"name": "ImageLocality"}]}}
