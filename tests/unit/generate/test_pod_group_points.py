"""A pod group's extension points (issue 23): PlacementGenerate and PlacementScore, from
1.36. Refused with one line naming the first minor that has them wherever a plugin gets
points (new, add plugin, add extension-point, upgrade), enabled in the configuration
(PlacementScore with a weight, which the framework insists on), and spelled as each
minor has them: ScorePlacement's state, the in-tree PodGroupInfo, the cycle-state setter.
The generated tests run in Go at 1.37 (layer and native,
tests/integration/test_integration_compat.py) and at the 1.38 pre-release
(test_integration_prerelease.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from support import REPO, Kplugin, tree

from kplugin.scenario.format import DEFAULT_SCENARIO

POINTS = "placementgenerate,placementscore"


def new(kplugin: Kplugin, parent: Path, name: str, version: str, *args: str) -> Path:
    run = kplugin("new", name, "--k8s", version, "--no-tidy", "-o", str(parent), *args)
    assert run.code == 0, run.stderr
    return parent / name


@pytest.mark.parametrize(
    "command",
    [
        ["new", "early", "--k8s", "1.35", "--extension-points", f"filter,{POINTS}"],
        ["add", "plugin", "Racks", "--extension-points", "placementscore"],
        ["add", "extension-point", "Old", "placementgenerate"],
    ],
)
def test_refused_before_1_36_in_one_line(kplugin: Kplugin, tmp_path: Path, command: list[str]) -> None:
    project = new(kplugin, tmp_path, "old", "1.35")
    before = tree(project)
    where = ["-o", str(tmp_path)] if command[0] == "new" else ["-p", str(project), "--no-tidy"]
    run = kplugin(*command, *where)
    assert run.code == 2 and run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert "Kubernetes 1.35.8 has no placement" in line and "is in Kubernetes 1.36 and later" in line
    assert tree(project) == before and not (tmp_path / "early").exists()


def test_upgrade_below_1_36_is_refused_and_changes_nothing(kplugin: Kplugin, tmp_path: Path) -> None:
    project = new(kplugin, tmp_path, "racks", "1.37", "--extension-points", POINTS)
    before = tree(project)
    run = kplugin("upgrade", str(project), "--k8s", "1.35", "--no-tidy")
    assert run.code == 2
    (line,) = run.stderr.splitlines()
    assert line.endswith(
        "(placementgenerate is in Kubernetes 1.36 and later; placementscore is in Kubernetes 1.36 and later)"
    )
    assert tree(project) == before
    run = kplugin("upgrade", str(project), "--k8s", "1.36", "--no-tidy")  # a minor that has them
    assert run.code == 0, run.stderr


def test_the_configuration_enables_them_placement_score_with_a_weight(kplugin: Kplugin, tmp_path: Path) -> None:
    project = new(kplugin, tmp_path, "racks", "1.37", "--extension-points", POINTS, "--plugin", "Racks")
    config = YAML(typ="safe").load((project / "deploy/scheduler-config.yaml").read_text())
    plugins = config["profiles"][0]["plugins"]
    # 1.36 and 1.37 take one generator: the default's (with TopologyAwareWorkloadScheduling) is replaced
    assert plugins["placementGenerate"] == {
        "enabled": [{"name": "Racks"}],
        "disabled": [{"name": "TopologyPlacementGenerator"}],
    }
    assert plugins["placementScore"] == {"enabled": [{"name": "Racks", "weight": 1}]}
    run = kplugin("render-config", str(project), "--weight", "Racks=3")
    assert run.code == 0, run.stderr
    assert YAML(typ="safe").load(run.stdout)["profiles"][0]["plugins"]["placementScore"] == {
        "enabled": [{"name": "Racks", "weight": 3}]
    }
    only_generate = new(kplugin, tmp_path, "gen", "1.37", "--extension-points", "placementgenerate")
    run = kplugin("render-config", str(only_generate), "--weight", "Gen=3")
    assert run.code == 2 and "has no Score or PlacementScore extension point" in run.stderr


def test_each_minor_spells_its_own_pod_group_api(kplugin: Kplugin, tmp_path: Path) -> None:
    layer = {
        v: new(kplugin, tmp_path, f"l{v[-1]}", v, "--extension-points", POINTS)
        for v in ("1.36", "1.37", "1.38.0-beta.0")
    }
    fw = {v: (p / "internal/fw/zz_generated.fw.go").read_text() for v, p in layer.items()}
    schedtest = {v: (p / "internal/schedtest/zz_generated.schedtest.go").read_text() for v, p in layer.items()}
    # ScorePlacement's state: the group's in 1.36, each placement's from 1.37
    assert "PlacementState = fwk.PodGroupCycleState" in fw["1.36"]
    assert (
        "PlacementState = fwk.PlacementCycleState" in fw["1.37"]
        and "PlacementState = fwk.PlacementCycleState" in fw["1.38.0-beta.0"]
    )
    # the pods of a group: renamed in 1.38
    assert "return podGroup.GetUnscheduledPods()" in fw["1.37"]
    assert "return podGroup.GetAllUnscheduledPods()" in fw["1.38.0-beta.0"]
    # how a test makes a PodGroupInfo and links a placement's state to its group's
    assert "&framework.PodGroupInfo{Namespace: namespace, Name: name, UnscheduledPods: pods}" in schedtest["1.36"]
    assert (
        "Type: fwk.PodGroupKeyType, PodGroup: pg" in schedtest["1.37"]
        and "SetPodGroupSchedulingCycle(state)" in schedtest["1.37"]
    )
    assert (
        "fwk.NewGenericPodGroup(pg)" in schedtest["1.38.0-beta.0"]
        and "SetPodGroupCycleState(state)" in schedtest["1.38.0-beta.0"]
    )
    assert "RunPlacementScorePlugins(ctx, state, podGroup, placements)\n" in schedtest["1.36"]
    assert "RunPlacementScorePlugins(ctx, state, podGroup, placements, states)" in schedtest["1.37"]
    # a minor without a pod-group cycle has none of it
    old = (new(kplugin, tmp_path, "before", "1.35") / "internal/fw/zz_generated.fw.go").read_text()
    assert "PodGroupInfo" not in old and "PodGroupPods" not in old
    # native code is written as each minor has it
    native = {
        v: new(kplugin, tmp_path, f"n{v[-1]}", v, "--api", "native", "--extension-points", POINTS)
        for v in ("1.36", "1.37")
    }
    plugin = {v: (p / f"pkg/n{v[-1]}/plugin.go").read_text() for v, p in native.items()}
    assert "ScorePlacement(_ context.Context, _ fwk.PodGroupCycleState, _ fwk.PodGroupInfo" in plugin["1.36"]
    assert "ScorePlacement(_ context.Context, _ fwk.PlacementCycleState, _ fwk.PodGroupInfo" in plugin["1.37"]
    assert "func podGroupPods(podGroup fwk.PodGroupInfo) []*v1.Pod" in plugin["1.37"]


def test_add_extension_point_writes_a_stub_and_its_test(kplugin: Kplugin, tmp_path: Path) -> None:
    project = new(kplugin, tmp_path, "later", "1.37")
    run = kplugin("add", "extension-point", "Later", POINTS, "-p", str(project), "--no-tidy")
    assert run.code == 0, run.stderr
    stub = (project / "pkg/later/placementscore.go").read_text()
    signature = "ScorePlacement(_ context.Context, _ fw.PlacementState, _ fw.PodGroupInfo, _ *fw.PodGroupAssignments)"
    assert f"func (pl *Later) {signature}" in stub
    test = (project / "pkg/later/placementgenerate_test.go").read_text()
    assert "h.GeneratePlacements(ctx, schedtest.PodGroup(" in test
    assert '"PlacementGenerate", "PlacementScore"' in test


def test_the_deployment_turns_the_gate_on_and_may_read_pod_groups(kplugin: Kplugin, tmp_path: Path) -> None:
    """The scheduler calls a pod group's points only with GenericWorkload on (off by
    default in 1.36 to 1.38); with it, it watches PodGroups and writes their status."""
    yaml = YAML(typ="safe")
    project = new(kplugin, tmp_path, "racks", "1.37", "--extension-points", f"filter,{POINTS}")
    deployment = yaml.load((project / "deploy/deployment.yaml").read_text())
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true" in container["args"]
    chart = (project / "charts/racks/templates/deployment.yaml").read_text()
    assert "- --feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true\n" in chart
    role = next(d for d in yaml.load_all((project / "deploy/rbac.yaml").read_text()) if d["kind"] == "ClusterRole")
    assert {"apiGroups": ["scheduling.k8s.io"], "resources": ["podgroups"], "verbs": ["get", "list", "watch"]} in role[
        "rules"
    ]
    assert {
        "apiGroups": ["scheduling.k8s.io"],
        "resources": ["podgroups/status"],
        "verbs": ["patch", "update"],
    } in role["rules"]

    # doctor asks for the same rules: none missing as generated, one when it is taken out
    def rbac_rules() -> list[str]:
        run = kplugin("doctor", str(project), "--json")
        return [f["what"] for f in json.loads(run.stdout)["findings"] if f["rule"] == "rbac-rules"]

    assert rbac_rules() == []
    rbac = project / "deploy/rbac.yaml"
    rbac.write_text(rbac.read_text().replace("  - podgroups/status\n", "  - podgroups/scale\n"))
    (finding,) = rbac_rules()
    assert "patch scheduling.k8s.io/podgroups/status" in finding
    # a plugin without such points: no gate; from 1.36 the rules all the same (issue 44,
    # item 9): a second scheduler in a cluster with GenericWorkload on runs the in-tree
    # gang plugin too, whose informer of PodGroups would never sync without them; before
    # 1.36 there are no PodGroups
    for version, granted in (("1.36", True), ("1.37", True), ("1.35", False), ("1.28.3", False)):
        plain = new(kplugin, tmp_path / version, "plain", version)
        assert "feature-gates" not in (plain / "deploy/deployment.yaml").read_text()
        for where in ("deploy/rbac.yaml", "charts/plain/values.yaml"):
            text = (plain / where).read_text()
            assert ("- podgroups\n" in text and "- podgroups/status\n" in text) == granted, (version, where)
        run = kplugin("doctor", str(plain), "--json")
        assert not [f for f in json.loads(run.stdout)["findings"] if f["rule"].startswith("rbac")], version


def test_doctor_finds_the_gate_off_and_a_zero_placement_weight(kplugin: Kplugin, tmp_path: Path) -> None:
    project = new(kplugin, tmp_path, "racks", "1.37", "--extension-points", POINTS, "--plugin", "Racks")

    def findings(rule: str) -> list[dict[str, object]]:
        run = kplugin("doctor", str(project), "--json")
        return [f for f in json.loads(run.stdout)["findings"] if f["rule"] == rule]

    assert findings("gate-off") == []
    deployment = project / "deploy/deployment.yaml"
    deployment.write_text(
        deployment.read_text().replace(
            "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
            "--feature-gates=GenericWorkload=true,Other=true",
        )
    )
    (finding,) = findings("gate-off")
    assert finding["file"] == "deploy/deployment.yaml" and finding["line"] == 34
    assert (
        "without TopologyAwareWorkloadScheduling, so it never calls Racks at placementgenerate, placementscore"
        in str(finding["what"])
    )
    assert "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true" in str(finding["fix"])
    # the chart's Deployment is read too; a plugin without such points needs no gate
    chart = project / "charts/racks/templates/deployment.yaml"
    chart.write_text(
        chart.read_text().replace(
            "        - --feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true\n", ""
        )
    )
    assert sorted(str(f["file"]) for f in findings("gate-off")) == [
        "charts/racks/templates/deployment.yaml",
        "deploy/deployment.yaml",
    ]
    config = project / "deploy/scheduler-config.yaml"
    config.write_text(config.read_text().replace("weight: 1", "weight: 0"))
    (zero,) = findings("weight-zero")
    assert "Racks: weight 0" in str(zero["what"])


def test_gang_scheduling_comes_with_generic_workload_where_it_has_a_gate_of_its_own(
    kplugin: Kplugin, tmp_path: Path
) -> None:
    """1.36 keeps gang scheduling behind its own gate, GangScheduling (alpha, off; 1.37
    removed it and GenericWorkload adds the plugin): at 1.36 the Deployment, e2e's
    control plane and scheduler get it wherever GenericWorkload is on, and a pod group of
    the scenario alone brings it too; at 1.37 it is never named (its binaries refuse an
    unknown gate)."""
    from kplugin.e2e import gates, run
    from kplugin.model.project import load
    from kplugin.scenario.format import load_scenario

    both = "GangScheduling=true,GenericWorkload=true,TopologyAwareWorkloadScheduling=true"
    for version, named in (("1.36", both), ("1.37", "GenericWorkload=true,TopologyAwareWorkloadScheduling=true")):
        project = load(new(kplugin, tmp_path / version, "racks", version, "--extension-points", POINTS))
        deployment = (project.root / "deploy/deployment.yaml").read_text()
        assert f"- --feature-gates={named}\n" in deployment, deployment
        assert project.gate_flags.scheduler == (f"--feature-gates={named}",)
    (tmp_path / "grouped.yaml").write_text(
        "nodes: [{name: n1}]\n"
        "objects:\n"
        "- {apiVersion: scheduling.k8s.io/v1alpha2, kind: PodGroup, metadata: {name: g},\n"
        "   spec: {schedulingPolicy: {gang: {minCount: 1}}}}\n"
        "pods: [{name: p, schedulingGroup: {podGroupName: g}}]\n"
    )
    grouped = load_scenario(tmp_path / "grouped.yaml")
    plain = load(new(kplugin, tmp_path / "plain", "plain", "1.36"))
    inputs = run.Inputs(project=plain, scenario=grouped, config=None, rbac=None, notices=())  # type: ignore[arg-type]
    flags = gates.gate_flags(inputs)
    assert flags.scheduler == ("--feature-gates=GangScheduling=true,GenericWorkload=true",)
    assert flags.apiserver == (*flags.scheduler, "--runtime-config=scheduling.k8s.io/v1alpha2=true")


def test_doctor_at_1_36_finds_gang_scheduling_off(kplugin: Kplugin, tmp_path: Path) -> None:
    """A 1.36 Deployment with the points' gates but not GangScheduling (one generated
    before kplugin added it): the plugin is called, a gang is not held; the fix names all
    three gates."""
    project = new(kplugin, tmp_path, "racks", "1.36", "--extension-points", POINTS, "--plugin", "Racks")

    def findings() -> list[dict[str, object]]:
        run = kplugin("doctor", str(project), "--json")
        return [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "gate-off"]

    assert findings() == []
    deployment = project / "deploy/deployment.yaml"
    deployment.write_text(deployment.read_text().replace("--feature-gates=GangScheduling=true,", "--feature-gates="))
    (finding,) = findings()
    assert finding["file"] == "deploy/deployment.yaml", finding
    assert str(finding["what"]).endswith(
        "the scheduler runs without GangScheduling, so at 1.36 a PodGroup's gang policy holds nothing "
        "(before 1.37 gang scheduling has a gate of its own)"
    ), finding
    gates = "GangScheduling=true,GenericWorkload=true,TopologyAwareWorkloadScheduling=true"
    assert f"--feature-gates={gates}" in str(finding["fix"]), finding


def test_e2e_starts_the_control_plane_with_the_gates_in_one_line(kplugin: Kplugin, tmp_path: Path) -> None:
    from kplugin.e2e import gates, run
    from kplugin.model import manifests, versions
    from kplugin.model.project import load

    assert manifests.apiserver_gate_args(("GenericWorkload",), versions.resolve("1.36").facts) == [
        "--feature-gates=GenericWorkload=true",
        "--runtime-config=scheduling.k8s.io/v1alpha2=true",
    ]
    assert manifests.apiserver_gate_args(("GenericWorkload",), versions.resolve("1.37").facts)[1:] == [
        "--runtime-config=scheduling.k8s.io/v1beta1=true"
    ]
    assert manifests.apiserver_gate_args((), versions.resolve("1.37").facts) == []
    project = load(new(kplugin, tmp_path, "racks", "1.37", "--extension-points", f"filter,{POINTS}"))
    inputs = run.Inputs(project=project, scenario=DEFAULT_SCENARIO, config=None, rbac=None, notices=())  # type: ignore[arg-type]
    local = run.local_clusters(tmp_path / "apiserver", inputs, print)(tmp_path / "work", "plugin")
    flag = "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true"
    assert local.plane.extra_args == (flag, "--runtime-config=scheduling.k8s.io/v1beta1=true")  # type: ignore[attr-defined]
    assert local.scheduler_args == (flag,)  # type: ignore[attr-defined]
    line = gates.gates_line(inputs)
    assert line is not None and "kube-apiserver runs with" in line and f"kube-scheduler with {flag}" in line
    # a project without such points starts them as before, and says nothing
    plain = load(new(kplugin, tmp_path, "plain", "1.37"))
    inputs = run.Inputs(project=plain, scenario=DEFAULT_SCENARIO, config=None, rbac=None, notices=())  # type: ignore[arg-type]
    local = run.local_clusters(tmp_path / "apiserver", inputs, print)(tmp_path / "work", "plugin")
    assert local.plane.extra_args == () and local.scheduler_args == ()  # type: ignore[attr-defined]
    assert gates.gates_line(inputs) is None


def test_a_kplugin_yaml_listing_a_point_its_version_lacks_is_refused_everywhere(
    kplugin: Kplugin, tmp_path: Path
) -> None:
    """A tampered kplugin.yaml (a 1.35 project at placementgenerate): every command that
    reads it stops with the same line, instead of rendering a configuration 1.35 refuses."""
    project = new(kplugin, tmp_path, "tampered", "1.35")
    manifest = project / "kplugin.yaml"
    manifest.write_text(manifest.read_text().replace("  - score\n", "  - score\n  - placementgenerate\n", 1))
    before = tree(project)
    for command in (["render-config", str(project)], ["doctor", str(project)], ["refresh", str(project)]):
        run = kplugin(*command)
        assert run.code == 2, (command, run.stdout)
        (line,) = run.stderr.splitlines()
        assert line.endswith(
            "kplugin.yaml: plugins[0].extensionPoints: Kubernetes 1.35.8 has no placementgenerate extension point "
            "(placementgenerate is in Kubernetes 1.36 and later)"
        ), line
    assert tree(project) == before


@pytest.mark.parametrize(("version", "shape"), [("1.35", ("--extension-points", "score")), ("1.28.3", ())])
def test_doctor_finds_a_method_of_a_point_the_version_lacks(
    kplugin: Kplugin, tmp_path: Path, version: str, shape: tuple[str, ...]
) -> None:
    """Found in the code: kplugin.yaml cannot list such a point (it is refused on load)."""
    project = new(kplugin, tmp_path, "early", version, *shape)
    package = project / "pkg/early"
    plugin = next(p for p in sorted(package.glob("*.go")) if "type Early struct" in p.read_text())
    plugin.write_text(plugin.read_text() + "\nfunc (pl *Early) GeneratePlacements() {}\n")
    run = kplugin("doctor", str(project), "--json")
    found = [f for f in json.loads(run.stdout)["findings"] if f["rule"].startswith("point-")]
    (finding,) = found
    assert finding["rule"] == "point-not-in-version" and finding["severity"] == "warning"
    assert finding["file"] == f"pkg/early/{plugin.name}"
    assert finding["line"] == len(plugin.read_text().splitlines())
    pinned = YAML(typ="safe").load((project / "kplugin.yaml").read_text())["kubernetes"]
    assert f"Early implements GeneratePlacements, but Kubernetes {pinned} has no placementgenerate" in str(
        finding["what"]
    )
    assert "1.36 and later" in str(finding["fix"])


PODS_ONLY = {
    "layer": "\tpa, pb := fw.QueuedPod(a), fw.QueuedPod(b)\n\treturn pa.Name < pb.Name\n",
    "native": "\tpa := a.(fwk.QueuedPodInfo).GetPodInfo().GetPod()\n"
    "\tpb := b.(fwk.QueuedPodInfo).GetPodInfo().GetPod()\n\treturn pa.Name < pb.Name\n",
}
CHECKED = (
    "\tpa, pb := fw.QueuedPod(a), fw.QueuedPod(b)\n\tif pa == nil || pb == nil {\n\t\treturn false\n\t}\n"
    "\treturn pa.Name < pb.Name\n"
)


@pytest.mark.parametrize("api", ["layer", "native"])
def test_doctor_finds_a_queue_sort_that_assumes_pods(kplugin: Kplugin, tmp_path: Path, api: str) -> None:
    """From 1.37 the queue's entries may be pod groups: a Less that reads each entry's pod
    unchecked is found; the generated one, a checked one and the same code at 1.36 are not."""

    def findings(project: Path) -> list[dict[str, object]]:
        run = kplugin("doctor", str(project), "--json")
        return [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "queuesort-pods-only"]

    def less(project: Path, code: str) -> Path:
        plugin = project / "pkg/sorter/plugin.go"
        text = plugin.read_text()
        start = text.index("{\n", text.index(") Less(a, b ")) + 2
        plugin.write_text(text[:start] + code + text[text.index("\n}\n", start) + 1 :])
        return plugin

    project = new(kplugin, tmp_path, "sorter", "1.37", "--extension-points", "queuesort", "--api", api)
    assert findings(project) == []
    plugin = less(project, PODS_ONLY[api])
    (finding,) = findings(project)
    assert finding["severity"] == "warning" and finding["file"] == "pkg/sorter/plugin.go"
    assert plugin.read_text().splitlines()[int(str(finding["line"])) - 1] == PODS_ONLY[api].splitlines()[0]
    assert "Sorter's Less reads the pod of every queue entry, and Kubernetes 1.37.2 queues pod groups" in str(
        finding["what"]
    )
    if api == "layer":
        less(project, CHECKED)
        assert findings(project) == []
    older = new(kplugin, tmp_path / "older", "sorter", "1.36", "--extension-points", "queuesort", "--api", api)
    less(older, PODS_ONLY[api])
    assert findings(older) == []


GANG = REPO / "examples" / "rack-gang-scenario.yaml"
WORKLOAD = """\
- apiVersion: scheduling.k8s.io/v1beta1
  kind: Workload
  metadata: {name: batch}  # sorted ahead of the gang's PodGroup
  spec: {podGroupTemplates: [{name: workers, schedulingPolicy: {gang: {minCount: 2}}}]}
"""
# `kubectl get workloads,podgroups,pods -o yaml` of a gang: a kubectl List
GANG_LIST = f"""\
apiVersion: v1
kind: List
items:
{WORKLOAD}- apiVersion: scheduling.k8s.io/v1beta1
  kind: PodGroup
  metadata: {{name: batch-workers, namespace: default}}
  spec:
    workloadRef: {{workloadName: batch, templateName: workers}}
    schedulingPolicy: {{gang: {{minCount: 2}}}}
- apiVersion: v1
  kind: Node
  metadata: {{name: n-1}}
  status: {{capacity: {{cpu: "4", pods: "110"}}}}
""" + "".join(
    f"""\
- apiVersion: v1
  kind: Pod
  metadata: {{name: worker-{i}, namespace: default}}
  spec:
    schedulingGroup: {{podGroupName: batch-workers}}
    containers: [{{name: app, image: app, resources: {{requests: {{cpu: "1"}}}}}}]
"""
    for i in range(2)
)


@pytest.mark.parametrize(
    ("version", "change", "said"),
    [
        ("1.35", None, "Kubernetes {pinned} has no PodGroup API (scheduling.k8s.io, from 1.36); replay it on a later "
                       "minor (--k8s)"),
        ("1.36", None, "objects[0] (PodGroup gang).apiVersion: Kubernetes {pinned} serves PodGroups as "
                       "scheduling.k8s.io/v1alpha2, not scheduling.k8s.io/v1beta1: write it as "
                       "scheduling.k8s.io/v1alpha2"),
        ("1.35", "pods only", "pod g-1: schedulingGroup is from Kubernetes 1.36 (pod groups), and this is {pinned}; "
                              "replay it on a later minor (--k8s)"),
        ("1.35", "workload", "Kubernetes {pinned} has no Workload API (scheduling.k8s.io, from 1.36); replay it on a "
                             "later minor (--k8s)"),
        ("1.36", "workload", "objects[0] (Workload batch).apiVersion: Kubernetes {pinned} serves Workloads as "
                             "scheduling.k8s.io/v1alpha2, not scheduling.k8s.io/v1beta1: write it as "
                             "scheduling.k8s.io/v1alpha2"),
    ],
)  # fmt: skip
def test_a_scenario_with_pod_groups_its_minor_lacks_is_refused_in_one_line(
    kplugin: Kplugin, tmp_path: Path, version: str, change: str | None, said: str
) -> None:
    project = new(kplugin, tmp_path, "plain", version)
    scenario = tmp_path / "gang.yaml"
    text = GANG.read_text()
    if change == "pods only":
        text = text[: text.index("objects:")] + text[text.index("pods:") :]
    if change == "workload":
        text = text.replace("objects:\n", "objects:\n" + WORKLOAD, 1)
    scenario.write_text(text)
    run = kplugin("e2e", str(project), "--scenario", str(scenario))
    assert run.code == 2
    (line,) = run.stderr.strip().splitlines()
    pinned = YAML(typ="safe").load((project / "kplugin.yaml").read_text())["kubernetes"]
    assert line.endswith(said.format(pinned=pinned)), line
    assert str(scenario) in line


def test_a_scenario_with_pod_groups_turns_the_gate_on_for_any_plugin(kplugin: Kplugin, tmp_path: Path) -> None:
    """A Filter/Score project replaying a gang: the scenario's PodGroups need
    GenericWorkload and the API version that serves them, whatever the plugins' points."""
    from kplugin.e2e import gates, run
    from kplugin.model.project import load

    project = load(new(kplugin, tmp_path, "plain", "1.37"))
    scenario = run.read_scenario(GANG, project.target, project.root)
    inputs = run.Inputs(project=project, scenario=scenario, config=None, rbac=None, notices=())  # type: ignore[arg-type]
    flags = gates.gate_flags(inputs)
    assert flags.scheduler == ("--feature-gates=GenericWorkload=true",)
    assert flags.apiserver == (
        "--feature-gates=GenericWorkload=true",
        "--runtime-config=scheduling.k8s.io/v1beta1=true",
    )
    line = gates.gates_line(inputs)
    assert line is not None and line.endswith("the scenario's pod groups need them"), line
    # the plugins' points and the scenario's pod groups: one flag with both gates, both reasons
    racks = load(new(kplugin, tmp_path, "racks", "1.37", "--extension-points", f"filter,{POINTS}"))
    inputs = run.Inputs(project=racks, scenario=scenario, config=None, rbac=None, notices=())  # type: ignore[arg-type]
    assert gates.gate_flags(inputs).scheduler == (
        "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
    )
    line = gates.gates_line(inputs)
    assert line is not None and line.endswith("the plugins' points and the scenario's pod groups need them"), line


def test_a_kubectl_list_of_a_workload_its_pod_group_and_pods(kplugin: Kplugin, tmp_path: Path) -> None:
    """A kubectl List carries the workload-aware scheduling API's objects: read as objects
    of their kinds at 1.37 (gates and API turned on for them), refused in one line at 1.36
    (which serves them as v1alpha2)."""
    from kplugin.e2e import gates, run
    from kplugin.model.project import load
    from kplugin.scenario.format import is_workload_api

    listed = tmp_path / "gang-list.yaml"
    listed.write_text(GANG_LIST)
    project = load(new(kplugin, tmp_path, "plain", "1.37"))
    scenario = run.read_scenario(listed, project.target, project.root)
    assert [(o.info.kind, o.name) for o in scenario.objects if is_workload_api(o)] == [
        ("Workload", "batch"),
        ("PodGroup", "batch-workers"),
    ]
    assert [p.spec["schedulingGroup"] for p in scenario.pods] == [{"podGroupName": "batch-workers"}] * 2
    inputs = run.Inputs(project=project, scenario=scenario, config=None, rbac=None, notices=())  # type: ignore[arg-type]
    assert gates.gate_flags(inputs).apiserver == (
        "--feature-gates=GenericWorkload=true",
        "--runtime-config=scheduling.k8s.io/v1beta1=true",
    )
    older = new(kplugin, tmp_path / "older", "older", "1.36")
    done = kplugin("e2e", str(older), "--scenario", str(listed))
    assert done.code == 2
    (line,) = done.stderr.strip().splitlines()
    pinned = YAML(typ="safe").load((older / "kplugin.yaml").read_text())["kubernetes"]
    assert line.endswith(f"items[0] (Workload default/batch).apiVersion: Kubernetes {pinned} serves Workloads as "
                         "scheduling.k8s.io/v1alpha2, not scheduling.k8s.io/v1beta1: write it as "
                         "scheduling.k8s.io/v1alpha2"), line  # fmt: skip


@pytest.mark.parametrize(
    ("version", "point", "first"),
    [("1.36", "podgrouppostfilter", "1.37"), ("1.37", "placementfeasible", "1.38")],
)
def test_later_points_are_refused_before_their_minor_in_one_line(
    kplugin: Kplugin, tmp_path: Path, version: str, point: str, first: str
) -> None:
    """PodGroupPostFilter came with 1.37, PlacementFeasible with 1.38 (read in each minor's
    k8s.io/kube-scheduler/framework/interface.go and config/v1/types.go)."""
    run = kplugin("new", "early", "--k8s", version, "--extension-points", point, "--no-tidy", "-o", str(tmp_path))
    assert run.code == 2 and not (tmp_path / "early").exists()
    (line,) = run.stderr.splitlines()
    assert line.endswith(f"has no {point} extension point ({point} is in Kubernetes {first} and later)"), line
    project = new(kplugin, tmp_path, "later", version)
    before = tree(project)
    run = kplugin("add", "extension-point", "Later", point, "-p", str(project), "--no-tidy")
    assert (
        run.code == 2
        and f"is in Kubernetes {first} and later" in run.stderr
        and run.stderr.startswith("kplugin: error: POINTS: ")
    )
    assert tree(project) == before


def test_a_pod_group_post_filter_runs_before_the_default_preemption(kplugin: Kplugin, tmp_path: Path) -> None:
    """At PodGroupPostFilter DefaultPreemption (a multiPoint default, so ahead of a plugin
    enabled at the point alone) ends the chain with UnschedulableAndUnresolvable when it
    finds no victims: the configuration disables it there and enables it again after ours."""
    project = new(
        kplugin, tmp_path, "late", "1.37", "--extension-points", "filter,podgrouppostfilter", "--plugin", "Late"
    )
    config = YAML(typ="safe").load((project / "deploy/scheduler-config.yaml").read_text())
    plugins = config["profiles"][0]["plugins"]
    assert plugins["podGroupPostFilter"] == {
        "enabled": [{"name": "Late"}, {"name": "DefaultPreemption"}],
        "disabled": [{"name": "DefaultPreemption"}],
    }
    assert "placementGenerate" not in plugins
    # one gate: the pod group's cycle; no placement points, so no TopologyAwareWorkloadScheduling
    deployment = YAML(typ="safe").load((project / "deploy/deployment.yaml").read_text())
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert "--feature-gates=GenericWorkload=true" in container["args"]
    # in multiPoint form the same order holds; a user who turned DefaultPreemption off keeps it off
    run = kplugin("render-config", str(project), "--multipoint")
    assert run.code == 0, run.stderr
    multi = YAML(typ="safe").load(run.stdout)["profiles"][0]["plugins"]
    assert multi["podGroupPostFilter"]["enabled"] == [{"name": "Late"}, {"name": "DefaultPreemption"}]
    run = kplugin("render-config", str(project), "--disable-default", "DefaultPreemption")
    assert run.code == 0, run.stderr
    off = YAML(typ="safe").load(run.stdout)["profiles"][0]["plugins"]
    assert off["podGroupPostFilter"] == {"enabled": [{"name": "Late"}]}
    assert off["multiPoint"]["disabled"] == [{"name": "DefaultPreemption"}]


def test_the_later_points_are_spelled_only_where_the_minor_has_them(kplugin: Kplugin, tmp_path: Path) -> None:
    every = {
        v: new(kplugin, tmp_path, f"e{v.split('.')[1]}", v, "--extension-points", points)
        for v, points in (
            ("1.37", f"{POINTS},podgrouppostfilter"),
            ("1.38.0-beta.0", f"{POINTS},placementfeasible,podgrouppostfilter"),
        )
    }
    fw = {v: (p / "internal/fw/zz_generated.fw.go").read_text() for v, p in every.items()}
    assert "PodGroupPostFilterPlugin = fwk.PodGroupPostFilterPlugin" in fw["1.37"]
    assert "PlacementProgress" not in fw["1.37"]
    assert "PlacementFeasiblePlugin = fwk.PlacementFeasiblePlugin" in fw["1.38.0-beta.0"]
    schedtest = {v: (p / "internal/schedtest/zz_generated.schedtest.go").read_text() for v, p in every.items()}
    assert 'if e == "PodGroupPostFilter" {\n\t\t\t\tset = &profile.Plugins.PodGroupPostFilter' in schedtest["1.37"]
    assert "func (h *Harness) PlacementFeasible(" in schedtest["1.38.0-beta.0"]
    assert "func (h *Harness) PlacementFeasible(" not in schedtest["1.37"]
    # 1.36 has neither: its fw and harness name none of their types
    older = new(kplugin, tmp_path, "o6", "1.36", "--extension-points", POINTS)
    for path in ("internal/fw/zz_generated.fw.go", "internal/schedtest/zz_generated.schedtest.go"):
        text = (older / path).read_text()
        assert "PodGroupPostFilter" not in text and "PlacementFeasible" not in text, path
    test = (every["1.38.0-beta.0"] / "pkg/e38/plugin_test.go").read_text()
    assert "func TestPlacementFeasible(t *testing.T)" in test and "func TestPodGroupPostFilter(t *testing.T)" in test


def test_a_gate_the_target_does_not_know_is_an_error(kplugin: Kplugin, tmp_path: Path) -> None:
    """Issue 44, item 8: a 1.36 Deployment turns GangScheduling on, which 1.37 removed;
    upgrade --keep-edited to 1.37 keeps an edited deploy/deployment.yaml as it is, gate and
    all, and its kube-scheduler would exit at start: doctor says so at the flag's line,
    for the kept file only (the chart's is rewritten without the gate)."""
    project = new(kplugin, tmp_path, "racks", "1.36", "--extension-points", POINTS, "--plugin", "Racks")
    deployment = project / "deploy/deployment.yaml"
    deployment.write_text(deployment.read_text().replace("replicas: 1", "replicas: 2"))  # the user's edit
    run = kplugin("upgrade", str(project), "--k8s", "1.37", "--keep-edited", "--no-tidy")
    assert run.code == 0, run.stderr
    assert "GangScheduling=true" in deployment.read_text()
    assert "GangScheduling" not in (project / "charts/racks/templates/deployment.yaml").read_text()
    run = kplugin("doctor", str(project), "--json")
    found = [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "gate-unknown"]
    line = next(i for i, t in enumerate(deployment.read_text().splitlines(), 1) if "--feature-gates=" in t)
    assert [(f["file"], f["line"], f["severity"]) for f in found] == [("deploy/deployment.yaml", line, "error")]
    assert found[0]["what"] == (
        "--feature-gates turns on GangScheduling, which Kubernetes 1.37 does not know (it has it in 1.35 to 1.36)"
    )
    assert "remove GangScheduling" in found[0]["fix"] and run.code == 1
    # the gates of the version are known: none at 1.36, nor for a project made at 1.37
    run = kplugin("doctor", str(project), "--json", "--k8s", "1.36")
    assert not [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "gate-unknown"]
