"""kplugin bench's pod groups without a cluster: scheduler_perf's createPodGroups op and
the Go templates of its gang workloads (.Index, params, DivideInt), the built-in gang
workload, the version each minor serves PodGroups at, the gates, each run's own groups
and the groups/s figure. The runs in a real scheduler are in test_integration_bench."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from kplugin.bench import gotemplate, results, workload
from kplugin.bench.cluster import BenchCluster
from kplugin.bench.ops import CreatePodGroups, CreatePods, describe
from kplugin.bench.plan import BASELINE, PROJECT
from kplugin.core.errors import UsageError
from kplugin.model.versions import resolve as resolve_target

GANG = """\
- name: Gangs
  featureGates: {GenericWorkload: true}
  workloadTemplate:
  - opcode: createNodes
    count: 4
  - opcode: createPodGroups
    countParam: $groups
    namespace: gangs
    templatePath: group.yaml
    templateParams: {size: $size, spare: "$spare|1"}
  - opcode: createPods
    countParam: $groups
    countMultiplierParam: $size
    namespace: gangs
    podTemplatePath: pod.yaml
    collectMetrics: true
    templateParams: {size: $size}
  workloads:
  - name: Small
    params: {groups: 3, size: 4}
"""
GROUP = """\
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: g-{{.Index}}
  labels: {slot: "{{ AddInt .Index .spare 10 }}", spare: '{{.spare}}'}
spec:
  schedulingPolicy:
    gang:
      minCount: {{.size}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p-{{.Index}}
spec:
  schedulingGroup:
    podGroupName: g-{{DivideInt .Index .size}}
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
"""


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "perf.yaml").write_text(GANG)
    (tmp_path / "group.yaml").write_text(GROUP)
    (tmp_path / "pod.yaml").write_text(POD)
    return tmp_path


def test_pod_groups_and_their_pods_from_go_templates(files: Path) -> None:
    loaded = workload.load(files / "perf.yaml")
    groups, pods = loaded.ops[1], loaded.ops[2]
    assert isinstance(groups, CreatePodGroups) and isinstance(pods, CreatePods)
    # countMultiplierParam: 3 groups of 4 pods; the params resolved ($spare from its default)
    assert (groups.count, pods.count, loaded.measured_pods) == (3, 12, 12)
    assert groups.params == (("size", 4), ("spare", 1)) and pods.params == (("size", 4),)
    assert groups.group(2) == {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        # a whole unquoted action is a number, a quoted one or one inside text is text
        "metadata": {"name": "g-2", "labels": {"slot": "13", "spare": "1"}},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}},
    }
    assert [pods.pod_group(i) for i in range(12)] == ["g-0"] * 4 + ["g-1"] * 4 + ["g-2"] * 4
    assert pods.pod(5)["metadata"]["name"] == "p-5"
    assert pods.pod(0) is not pods.pod(0), "each pod is a copy"
    assert loaded.gates == ("GenericWorkload",)
    assert dict(describe(loaded))["podGroups"] == 3


def test_the_built_in_gang_workload() -> None:
    gang = workload.built_in("gang")
    assert gang.title == "GangScheduling/500Nodes_200Gangs_600Pods"
    groups, pods = gang.pod_groups[0], gang.measured[0]
    assert (groups.count, pods.count, groups.namespace, pods.namespace) == (200, 600, "gang-ns-0", "gang-ns-0")
    assert groups.group(199)["metadata"]["name"] == "gang-199"
    assert groups.group(0)["spec"]["schedulingPolicy"]["gang"]["minCount"] == 3
    assert (pods.pod_group(0), pods.pod_group(2), pods.pod_group(3), pods.pod_group(599)) == (
        "gang-0",
        "gang-0",
        "gang-1",
        "gang-199",
    )
    # its pods are not rescaled apart from their groups
    with pytest.raises(UsageError, match="creates pod groups, whose sizes its params set"):
        gang.scaled(None, 100)
    assert gang.scaled(50, None).nodes == 50


def test_go_semantics_of_the_integer_functions() -> None:
    def value(text: str, **env: int) -> int:
        _, (action,) = gotemplate.expand("{{" + text + "}}", frozenset(env), lambda p: UsageError(p))
        return action.value(env)

    assert value("DivideInt .Index .size", Index=7, size=3) == 2
    assert value("DivideInt .a .b", a=-7, b=2) == -3  # towards zero, as Go's int(float64)
    assert value("Mod .a 3", a=-7) == -1  # the dividend's sign, as Go's %
    assert value("AddInt .a .b 4", a=1, b=2) == 7
    assert value("MultiplyInt .a 2 3", a=2) == 12
    assert value("SubtractInt .a 1", a=5) == 4
    assert value(".Index", Index=9) == 9


@pytest.mark.parametrize(
    ("where", "old", "new", "message"),
    [
        ("pod.yaml", "{{.Index}}", "{{range .Items}}", "template action {{range .Items}} is not supported"),
        ("pod.yaml", "{{.Index}}", "{{- .Index}}", "is not supported by kplugin bench"),
        ("pod.yaml", "DivideInt .Index .size", "DivideInt .Index .nope", ".nope is neither .Index nor one of"),
        ("pod.yaml", "DivideInt .Index .size", "DivideInt .Index", "DivideInt takes 2 arguments"),
        ("pod.yaml", "DivideInt .Index .size", "JSON .Index", "template action {{JSON .Index}} is not supported"),
        ("perf.yaml", "params: {groups: 3, size: 4}", "params: {groups: 3, size: 0}", "divides by zero"),
        ("perf.yaml", "{GenericWorkload: true}", "{GenericWorkload: true, DRA: true}", "featureGates.DRA: kplugin"),
        ("perf.yaml", "{GenericWorkload: true}", "{GenericWorkload: false}", "only the gates the workload's"),
        ("perf.yaml", "namespace: gangs\n    templatePath", "templatePath", "needs namespace"),
        ("perf.yaml", "templateParams: {size: $size}", "templateParams: {Index: 1}", "'Index' is not a name"),
        ("perf.yaml", "countMultiplierParam: $size", "countMultiplierParam: $gone", "$gone is not a param"),
        ("group.yaml", "kind: PodGroup", "kind: Pod", "template group.yaml is a Pod; expected PodGroup"),
        ("group.yaml", "labels: {slot:", 'labels: {"x{{.Index}}":', "a template action in a key"),
        ("perf.yaml", "params: {groups: 3, size: 4}", "params: {groups: 300000, size: 4}", "is not from 0 to 500000"),
        ("group.yaml", "scheduling.k8s.io/v1beta1", "v1", "apiVersion 'v1'; expected scheduling.k8s.io/VERSION"),
    ],
)
def test_bad_gang_workloads_are_one_line(files: Path, where: str, old: str, new: str, message: str) -> None:
    path = files / where
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    with pytest.raises(UsageError) as failure:
        workload.load(files / "perf.yaml")
    assert message in str(failure.value), failure.value
    assert "\n" not in str(failure.value)


def test_a_go_template_only_where_templateParams_are_given(files: Path) -> None:
    (files / "perf.yaml").write_text(GANG.replace("    templateParams: {size: $size}\n", ""))
    with pytest.raises(UsageError, match="expands only for the createPods and createPodGroups ops that give"):
        workload.load(files / "perf.yaml")


def test_feature_gates_of_a_workload_without_pod_groups_are_refused(files: Path) -> None:
    plain = "- name: Plain\n  featureGates: {GenericWorkload: true}\n  workloadTemplate:\n"
    plain += "  - {opcode: createNodes, count: 1}\n  - {opcode: createPods, count: 1, podTemplatePath: p.yaml, "
    plain += "collectMetrics: true}\n  workloads:\n  - name: One\n"
    (files / "p.yaml").write_text("apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: c, image: i}]\n")
    (files / "plain.yaml").write_text(plain)
    with pytest.raises(UsageError, match=r"Plain\.featureGates\.GenericWorkload: kplugin bench turns on only"):
        workload.load(files / "plain.yaml")


def test_a_gang_workload_written_for_1_36_may_name_gang_scheduling(files: Path) -> None:
    """A gang case written for 1.36 turns GangScheduling on beside GenericWorkload (gang
    scheduling's own gate there): bench turns both on at 1.36 itself, so the file may name
    both; a workload without pod groups may name neither."""
    path = files / "perf.yaml"
    both = "{GenericWorkload: true, GangScheduling: true}"
    path.write_text(path.read_text().replace("{GenericWorkload: true}", both, 1))
    assert workload.load(path).gates == ("GenericWorkload",)
    path.write_text(path.read_text().replace(both, "{GangScheduling: true, Other: true}", 1))
    with pytest.raises(UsageError, match=r"featureGates\.Other: .*GenericWorkload, and GangScheduling where the minor"):
        workload.load(path)


def test_each_minor_serves_pod_groups_at_its_own_version(files: Path) -> None:
    loaded = workload.load(files / "perf.yaml")
    workload.check_served(loaded, resolve_target("1.37"))
    with pytest.raises(UsageError, match=r"pod groups are from Kubernetes 1\.36 .*, and this is 1\.35\."):
        workload.check_served(loaded, resolve_target("1.35"))
    with pytest.raises(
        UsageError, match=r"serves PodGroups as scheduling\.k8s\.io/v1alpha2, not scheduling\.k8s\.io/v1beta1: write"
    ):
        workload.check_served(loaded, resolve_target("1.36"))
    with pytest.raises(UsageError, match=r"benchmark it on a later minor \(.+\), or give a copy written as"):
        workload.check_served(workload.built_in("gang"), resolve_target("1.36"))


def test_each_run_has_its_own_pod_groups() -> None:
    cluster = BenchCluster(None, Path("kubeconfig"), "abc123", existing=True)  # type: ignore[arg-type]
    gang = workload.built_in("gang")
    group = cluster.pod_group(gang.pod_groups[0].group(4), "ns", 3)
    assert group["metadata"]["name"] == "gang-4-run3"
    assert group["metadata"]["labels"] == {"kplugin/bench": "abc123", "kplugin/bench-run": "3"}
    pod = cluster.pod(gang.measured[0].pod(13), "p", "ns", "gpu", 3, 3)
    assert pod["spec"]["schedulingGroup"] == {"podGroupName": "gang-4-run3"}


def test_groups_per_second_in_the_figures() -> None:
    from test_bench import outcome  # the figures of a basic workload

    plain = outcome()
    assert math.isnan(results.figures(plain, PROJECT).groups_per_second)
    assert not any(i["labels"]["Metric"] == "PodGroupThroughput" for i in results.data_items(plain))
    assert not any(r[0].startswith("pod groups") for r in results.rows(plain))
    gangs = replace(plain, runs=tuple(replace(r, measured_groups=250) for r in plain.runs))  # 4 s each
    assert results.figures(gangs, BASELINE).groups_per_second == pytest.approx(62.5)
    items = {
        i["labels"]["Profile"]: i for i in results.data_items(gangs) if i["labels"]["Metric"] == "PodGroupThroughput"
    }
    assert items["project"]["unit"] == "groups/s" and items["ratio"]["data"]["Average"] == pytest.approx(1.0)
    assert ("pod groups scheduled whole/s", "62.5", "62.5", "1.00") in results.rows(gangs)
    assert results.as_json(gangs)["kplugin"]["runs"][0]["measuredPodGroups"] == 250
