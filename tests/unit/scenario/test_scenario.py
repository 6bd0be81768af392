"""The extended scenario format without a control plane: what each key becomes in the
objects a replay creates, kubectl Lists (YAML and JSON) as scenarios, JSON read as a
stream, and every kind of bad input refused with exit 2, one line naming the file, the
object and the field, before anything is built."""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import REPO, Kplugin

from kplugin.core import safefs
from kplugin.core.errors import OperationError, UsageError
from kplugin.kube import controlplane, jsonstream
from kplugin.scenario import format as scenario

DATA = REPO / "tests" / "data"
LIST = DATA / "kubectl-list.yaml"

RICH = """\
namespaces:
- {name: ml, labels: {team: ml}}
priorityClasses:
- {name: high, value: 1000, preemptionPolicy: Never}
nodes:
- name: gpu-1
  labels: {zone: a}
  capacity: {cpu: "8", example.com/gpu: "2"}
  allocatable: {cpu: 7500m, example.com/gpu: "2", memory: 30Gi, pods: "100"}
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
- {name: old-1, unschedulable: true, annotations: {note: drained}}
pods:
- name: train
  namespace: ml
  priorityClassName: high
  containers:
  - name: main
    resources: {requests: {cpu: "1", example.com/gpu: "1"}, limits: {memory: 4Gi}}
    ports: [{containerPort: 8080, hostPort: 8080}]
  initContainers:
  - {name: fetch, resources: {requests: {cpu: "2"}}}
  - {name: proxy, restartPolicy: Always, resources: {requests: {cpu: 100m}}}
  tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        podAffinityTerm: {labelSelector: {matchLabels: {app: train}}, topologyKey: kubernetes.io/hostname}
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: train}}}
  schedulingGates: [{name: example.com/quota}]
  schedulingGroup: {podGroupName: gang}
- {name: bound, nodeName: old-1, requests: {cpu: 500m}, limits: {cpu: "1"}}
- {name: urgent, priority: 5000, overhead: {cpu: 250m}}
steps:
- labelNode: {node: gpu-1, labels: {zone: b}}
- unlabelNode: {node: gpu-1, keys: [zone]}
- taintNode: {node: old-1, taints: [{key: k, effect: NoExecute}]}
- untaintNode: {node: old-1, keys: [k]}
- updateNode: {node: gpu-1, capacity: {cpu: "16"}}
- createNode: {name: new-1}
- cordonNode: new-1
- uncordonNode: new-1
- createPods: [{name: late, namespace: ml}]
- deletePods: [bound, ml/late]
- deleteNode: old-1
- wait: 0.5
expect:
  ml/train: [gpu-1, new-1]
  urgent: pending
  bound: deleted
"""


def load(tmp_path: Path, text: str, name: str = "s.yaml") -> scenario.Scenario:
    path = tmp_path / name
    path.write_text(text)
    return scenario.load_scenario(path)


def test_every_key_becomes_what_the_api_takes(tmp_path: Path) -> None:
    loaded = load(tmp_path, RICH.replace("  bound: deleted\n", ""))
    gpu, old = loaded.nodes
    node = gpu.manifest({"x": "y"})
    assert node["spec"]["taints"] == [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    assert node["status"]["allocatable"]["cpu"] == "7500m" and node["status"]["capacity"]["memory"] == "32Gi"
    assert node["metadata"]["labels"] == {"zone": "a", "x": "y"}
    assert old.manifest()["spec"] == {"unschedulable": True}
    train, bound, urgent = loaded.pods
    made = train.manifest("gpu")
    spec = made["spec"]
    assert (made["metadata"]["namespace"], spec["schedulerName"], spec["priorityClassName"]) == ("ml", "gpu", "high")
    assert spec["terminationGracePeriodSeconds"] == 0, "a preempted pod goes at once"
    assert spec["containers"][0]["image"] == scenario.PAUSE_IMAGE
    # an extended resource's limit is its request (the API server wants it so)
    assert spec["containers"][0]["resources"]["limits"] == {"example.com/gpu": "1", "memory": "4Gi"}
    assert [c["name"] for c in spec["initContainers"]] == ["fetch", "proxy"]
    assert spec["initContainers"][1]["restartPolicy"] == "Always"
    assert spec["schedulingGates"] == [{"name": "example.com/quota"}]
    assert spec["schedulingGroup"] == {"podGroupName": "gang"}  # a pod group's member (1.36 on)
    assert spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"] == 50
    assert bound.node_name == "old-1" and bound.manifest("gpu")["spec"]["nodeName"] == "old-1"
    assert "nodeName" not in bound.manifest("gpu", bound=False)["spec"], "rescheduled"
    assert bound.manifest("gpu")["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m"},
        "limits": {"cpu": "1"},
    }
    # priority: N and overhead: shortcuts for a PriorityClass and a RuntimeClass of their own
    assert urgent.priority_class == "kplugin-priority-5000"
    assert scenario.PriorityClass("kplugin-priority-5000", 5000) in loaded.priority_classes
    runtime = urgent.spec["runtimeClassName"]
    (runtime_class,) = [o for o in loaded.objects if o.info.kind == "RuntimeClass"]
    assert runtime_class.name == runtime and runtime_class.body["overhead"] == {"podFixed": {"cpu": "250m"}}
    assert loaded.namespace_names() == ["default", "ml"]
    assert [s.action for s in loaded.steps][:3] == ["labelNode", "unlabelNode", "taintNode"]
    assert loaded.steps[1].labels == {"zone": None}
    assert loaded.steps[-1].seconds == 0.5
    assert loaded.expect == {"ml/train": ("gpu-1", "new-1"), "urgent": ("pending",)}
    assert [p.key for p in loaded.all_pods()] == ["ml/train", "bound", "urgent", "ml/late"]


def test_backlog_is_read_and_off_unless_given(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("nodes: [{name: a}]\npods: [{name: p}]\n")
    assert scenario.load_scenario(path).backlog is False
    path.write_text("backlog: true\nnodes: [{name: a}]\npods: [{name: p}]\n")
    assert scenario.load_scenario(path).backlog is True


def test_reschedule_makes_bound_pods_pending(tmp_path: Path) -> None:
    from kplugin.kube import labelselector

    loaded = load(
        tmp_path, "nodes: [{name: a}]\npods:\n- {name: x, nodeName: a, labels: {app: web}}\n- {name: y, nodeName: a}\n"
    )
    moved, count = loaded.rescheduled(labelselector.parse("app=web"))
    assert count == 1 and [p.node_name for p in moved.pods] == [None, "a"]


def test_a_kubectl_list_is_a_scenario(tmp_path: Path) -> None:
    loaded = scenario.load_scenario(LIST)
    assert [n.name for n in loaded.nodes] == ["gpu-1", "gpu-2", "cpu-1"]
    gpu1 = loaded.nodes[0]
    assert gpu1.capacity["memory"] == "16385548Ki" and gpu1.allocatable is not None
    assert gpu1.allocatable["memory"] == "16283148Ki", "allocatable kept where it differs"
    assert loaded.nodes[1].taints == ({"effect": "NoSchedule", "key": "dedicated", "value": "batch"},)
    keys = [p.key for p in loaded.pods]
    assert keys == ["kube-system/kube-proxy-x7k2p", "batch-0", "batch-1", "urgent", "web", "gpu-job"]
    assert "report-28811520" not in keys, "a finished pod holds nothing"
    assert [c.name for c in loaded.priority_classes] == ["high", "low"], "system-node-critical is the API server's"
    batch = loaded.pods[1]
    assert batch.annotations == {}, "last-applied-configuration dropped"
    assert batch.spec["containers"] == [
        {
            "name": "worker",
            "resources": {
                "requests": {"cpu": "1", "example.com/gpu": "1", "memory": "2Gi"},
                "limits": {"example.com/gpu": "1"},
            },
        }
    ]
    proxy = loaded.pods[0]
    assert proxy.spec["hostNetwork"] is True and proxy.node_selector == {"kubernetes.io/os": "linux"}
    assert "priority" not in json.dumps(proxy.spec), "the class gives the priority again"
    # the same List as JSON (kubectl -o json) is the same scenario
    document = yaml_to_json(LIST)
    as_json = tmp_path / "list.json"
    as_json.write_text(json.dumps(document, indent=1))
    assert scenario.load_scenario(as_json) == loaded


def yaml_to_json(path: Path) -> object:
    from kplugin.core import yamlio

    return yamlio.parse(path.read_text(), "test")


def test_json_is_read_as_a_stream_beyond_the_yaml_limit(tmp_path: Path) -> None:
    pods = [{"name": f"p-{i}", "requests": {"cpu": "10m"}, "labels": {"app": "x" * 40}} for i in range(60_000)]
    document = {"nodes": [{"name": f"n-{i}"} for i in range(100)], "pods": pods}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(document))
    assert path.stat().st_size > safefs.LARGE_FILE
    started = time.process_time()  # this process's CPU: a hang guard, whatever the machine's load
    loaded = scenario.load_scenario(path)
    assert time.process_time() - started < 60
    assert len(loaded.pods) == 60_000 and loaded.pods[-1].name == "p-59999"
    too_big_yaml = tmp_path / "big.yaml"
    too_big_yaml.write_text("nodes:\n" + "- name: n\n" * 500_000)
    with pytest.raises(UsageError, match=r"bytes of YAML here .* use JSON .*read up to 1 GB"):
        scenario.load_scenario(too_big_yaml)


def test_flow_style_yaml_is_not_mistaken_for_json(tmp_path: Path) -> None:
    loaded = load(tmp_path, "{nodes: [{name: a}], pods: [{name: b}]}\n")
    assert [n.name for n in loaded.nodes] == ["a"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (b'{"nodes": [', "line 1 column 12: Expecting value"),
        (b'{"nodes": [], "nodes": []}', "the key 'nodes' appears twice"),
        (b'{"nodes": [{"name": "a", "name": "b"}]}', "the key 'name' appears twice"),
        (b'{"x": NaN}', "NaN is not a JSON number"),
        (b'{"x": ' + b"1" * 5000 + b"}", "an integer of thousands of digits"),
        (b'{"x": ' + b"[" * 100 + b"]" * 100 + b"}", "nested more than 64 levels deep"),
        (b'{"x": 1} {"y": 2}', "text after the end of the document"),
        (b'{"x": "caf\xe9"}', "byte 0xe9 at offset 10"),
        (b'{\n  "nodes": [\n    {"name": "a"},\n    oops\n  ]\n}', "line 4 column 5"),
    ],
)
@pytest.mark.parametrize("chunk", [3, 1 << 20])
def test_json_stream_problems(text: bytes, problem: str, chunk: int) -> None:
    reader = jsonstream.Reader(io.BytesIO(text), "--scenario f.json", chunk=chunk)
    with pytest.raises(UsageError) as refused:
        for _, value in reader.document({"nodes"}):
            if not isinstance(value, (dict, list, str, int)):
                list(value)
    assert problem in str(refused.value) and str(refused.value).startswith("--scenario f.json")


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 22])
def test_json_stream_across_chunk_boundaries(chunk: int) -> None:
    document = {"source": {"k": 123456789}, "nodes": [{"name": f"n{i}", "x": [1.5, True, None]} for i in range(50)]}
    data = b"\xef\xbb\xbf" + json.dumps(document, indent=2).encode()
    reader = jsonstream.Reader(io.BytesIO(data), "f", chunk=chunk)
    seen = {k: (list(v) if k == "nodes" else v) for k, v in reader.document({"nodes"})}
    assert seen == document


# --- bad input: exit 2, one line naming the object and the field, nothing built ------------


@pytest.fixture
def project(kplugin: Kplugin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    run = kplugin("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path))
    assert run.code == 0, run.stderr

    def no_etcd() -> str:  # a scenario that passes every check stops here
        raise OperationError("etcd not found (unit tests stop e2e here)")

    monkeypatch.setattr(controlplane, "etcd_binary", no_etcd)
    return tmp_path / "gpu"


def item(kind: str, name: str, **rest: object) -> str:
    return json.dumps({"apiVersion": "v1", "kind": kind, "metadata": {"name": name, **rest}})


LIST_HEAD = '{"apiVersion": "v1", "kind": "List", "items": ['
NODE = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "4"}}}'
POD = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "web"}, "spec": {}}'
DEVICE_CLASS = json.dumps(
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {"selectors": []}}
)
CRD_FLOW = (
    "- {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition,"
    " metadata: {name: quotas.quota.example.com},"
    " spec: {group: quota.example.com, scope: Namespaced, names: {kind: Quota, plural: quotas},"
    " versions: [{name: v1alpha1, served: true, storage: true, subresources: {status: {}},"
    " schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]}}\n"
)
BAD_INPUTS = {
    "list-unknown-kind": (
        LIST_HEAD + NODE + ', {"apiVersion": "apps/v1", "kind": "deployment", "metadata": {"name": "web"}}]}',
        "items[1].kind: 'deployment' is not a kind's name (e.g. PodGroup)",
    ),
    "list-item-without-kind": (
        LIST_HEAD + '{"apiVersion": "v1", "metadata": {"name": "x"}}]}',
        "items[0]: has no kind",
    ),
    "list-unknown-kind-yaml": (
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod-Group, metadata: {name: x}}\n",
        "items[0].kind: 'Pod-Group' is not a kind's name",
    ),
    "truncated-yaml": ("nodes:\n- name: a\n  labels: {zone: a\npods:\n- name: b\n", "is not valid YAML at line"),
    "truncated-json-list": (LIST_HEAD + NODE + ", " + NODE[:40], "is not valid JSON at line 1"),
    "refused-pod-name": (
        LIST_HEAD + NODE + "," + POD.replace('"p1"', '"Web_1"') + "]}",
        "items[1] (Pod web/Web_1): metadata.name: 'Web_1' is not a DNS-1123 name",
    ),
    "refused-node-name": (
        LIST_HEAD + NODE.replace('"n1"', '"node 1"') + "]}",
        "items[0] (Node node 1): metadata.name: 'node 1' is not a DNS-1123 name",
    ),
    "refused-capacity": (
        LIST_HEAD + NODE.replace('"4"', '"four"') + "]}",
        "items[0] (Node n1): status.capacity.cpu: 'four' is not a quantity",
    ),
    "refused-toleration": (
        LIST_HEAD + NODE + "," + POD.replace('"spec": {}', '"spec": {"tolerations": [{"effect": "Sometimes"}]}') + "]}",
        "items[1] (Pod web/p1): spec.tolerations[0].effect: 'Sometimes' is not one of NoSchedule, PreferNoSchedule",
    ),
    "not-served-by-the-minor": (
        LIST_HEAD + NODE + "," + POD + "," + DEVICE_CLASS + "]}",
        "items[2] (DeviceClass gpu).apiVersion: resource.k8s.io/v1 DeviceClass is not served by Kubernetes 1.28 "
        "(only from 1.34); replay it on a later minor (--k8s)",
    ),
    "step-unknown-node": (
        "nodes: [{name: a}]\npods: [{name: p}]\nsteps:\n- labelNode: {node: b, labels: {x: y}}\n",
        "steps[0].labelNode.node: 'b' is not a node of this scenario at this step",
    ),
    "step-deleted-node": (
        "nodes: [{name: a}]\npods: [{name: p}]\nsteps:\n- deleteNode: a\n- cordonNode: a\n",
        "steps[1].cordonNode: 'a' is not a node of this scenario at this step",
    ),
    "step-unknown-action": ("nodes: [{name: a}]\npods: [{name: p}]\nsteps:\n- reboot: a\n", "unknown key 'reboot'"),
    "step-two-actions": (
        "nodes: [{name: a}]\npods: [{name: p}]\nsteps:\n- {cordonNode: a, deleteNode: a}\n",
        "steps[0]: a step is one of createNode",
    ),
    "step-unknown-pod": (
        "nodes: [{name: a}]\npods: [{name: p}]\nsteps:\n- deletePods: [q]\n",
        "steps[0].deletePods: 'q' is not a pod of this scenario at this step",
    ),
    "step-wait-forever": ("nodes: [{name: a}]\npods: [{name: p}]\nsteps:\n- wait: 9999\n", "steps[0].wait: 9999"),
    "bound-to-unknown-node": (
        "nodes: [{name: a}]\npods: [{name: p, nodeName: b}]\n",
        "pods[0] (p).nodeName: 'b' is not a node of this scenario",
    ),
    "bound-and-gated": (
        "nodes: [{name: a}]\npods: [{name: p, nodeName: a, schedulingGates: [{name: x}]}]\n",
        "pods[0] (p).schedulingGates: a bound pod (nodeName) cannot have scheduling gates",
    ),
    "scheduling-group-bad-name": (
        "nodes: [{name: a}]\npods: [{name: p, schedulingGroup: {podGroupName: Gang_1}}]\n",
        "pods[0].schedulingGroup.podGroupName: 'Gang_1' is not a DNS-1123 subdomain",
    ),
    "scheduling-group-unknown-key": (
        "nodes: [{name: a}]\npods: [{name: p, schedulingGroup: {workloadRef: w}}]\n",
        "unknown key 'workloadRef'",
    ),
    "unknown-priority-class": (
        "nodes: [{name: a}]\npods: [{name: p, priorityClassName: gold}]\n",
        "pods[0] (p).priorityClassName: 'gold' is not a PriorityClass of this scenario",
    ),
    "affinity-unknown-key": (
        "nodes: [{name: a}]\npods: [{name: p, affinity: {nodeAffinty: {}}}]\n",
        "pods[0].affinity: unknown key 'nodeAffinty'",
    ),
    "spread-without-key": (
        "nodes: [{name: a}]\npods: [{name: p, topologySpreadConstraints: [{maxSkew: 1, "
        "whenUnsatisfiable: DoNotSchedule}]}]\n",
        "pods[0].topologySpreadConstraints[0]: topologyKey is missing",
    ),
    "taint-bad-effect": (
        "nodes: [{name: a, taints: [{key: k, effect: NoWay}]}]\npods: [{name: p}]\n",
        "nodes[0].taints[0].effect: 'NoWay' is not one of",
    ),
    "object-unknown-kind": (
        "nodes: [{name: a}]\npods: [{name: p}]\nobjects:\n- {apiVersion: v1, kind: Pod, metadata: {name: s}}\n",
        "objects[0].kind: a Pod goes under pods, not objects",
    ),
    "object-custom-bad-version": (
        "nodes: [{name: a}]\npods: [{name: p}]\nobjects:\n"
        "- {apiVersion: example.com/version1, kind: Quota, metadata: {name: s}}\n",
        "objects[0] (Quota).apiVersion: 'example.com/version1' is not an API group and version",
    ),
    "object-custom-version-not-served": (
        "nodes: [{name: a}]\npods: [{name: p}]\nobjects:\n"
        + CRD_FLOW
        + "- {apiVersion: quota.example.com/v2, kind: Quota, metadata: {name: q, namespace: team-a}}\n",
        "quota.example.com/v2 Quota is not served by the CustomResourceDefinitions of quota.example.com here "
        "(they serve quota.example.com/v1alpha1 Quota)",
    ),
    "object-custom-cluster-scoped-with-namespace": (
        "nodes: [{name: a}]\npods: [{name: p}]\nobjects:\n"
        + CRD_FLOW.replace("Namespaced", "Cluster")
        + "- {apiVersion: quota.example.com/v1alpha1, kind: Quota, metadata: {name: q, namespace: team-a}}\n",
        "(Quota team-a/q).metadata.namespace: Quota is cluster-scoped (its CRD says so)",
    ),
    "step-update-object-missing": (
        "nodes: [{name: a}]\npods: [{name: p}]\nobjects:\n"
        + CRD_FLOW
        + "steps:\n- updateObject: {apiVersion: quota.example.com/v1alpha1, kind: Quota, metadata: {name: q}}\n",
        "steps[0].updateObject: Quota default/q is not an object of this scenario at this step",
    ),
    "step-create-object-twice": (
        "nodes: [{name: a}]\npods: [{name: p}]\nobjects:\n"
        + CRD_FLOW
        + "- {apiVersion: quota.example.com/v1alpha1, kind: Quota, metadata: {name: q}}\n"
        + "steps:\n- createObject: {apiVersion: quota.example.com/v1alpha1, kind: Quota, metadata: {name: q}}\n",
        "steps[0].createObject: Quota default/q exists at this step (updateObject changes it)",
    ),
    "object-wrong-version": (
        "nodes: [{name: a}]\npods: [{name: p}]\nobjects:\n- {apiVersion: policy/v1beta1, kind: PodDisruptionBudget, "
        "metadata: {name: s}}\n",
        "objects[0] (PodDisruptionBudget).apiVersion: 'policy/v1beta1': kplugin replays PodDisruptionBudget as "
        "policy/v1",
    ),
    "object-status-not-kept": (
        "nodes: [{name: a}]\npods: [{name: p}]\nobjects:\n- {apiVersion: v1, kind: PersistentVolumeClaim, "
        "metadata: {name: c}, status: {phase: Bound}}\n",
        "objects[0] (PersistentVolumeClaim): unknown key 'status'",
    ),
    "duplicate-pod-in-namespace": (
        "nodes: [{name: a}]\npods: [{name: p, namespace: x}, {name: p, namespace: x}]\n",
        "pod 'x/p' is named twice",
    ),
    "backlog-not-a-bool": (
        "backlog: later\nnodes: [{name: a}]\npods: [{name: p}]\n",
        "backlog: 'later' must be true or false",
    ),
    "expect-deleted-pod-node": (
        "nodes: [{name: a}]\npods: [{name: p}]\nexpect: {p: [a, b]}\n",
        "expect.p[1]: 'b' is neither a node of this scenario nor 'pending', 'preempted' or 'deleted'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_and_nothing_starts(kplugin: Kplugin, project: Path, tmp_path: Path, case: str) -> None:
    text, needle = BAD_INPUTS[case]
    path = tmp_path / ("input.json" if text.startswith("{") else "input.yaml")
    path.write_text(text)
    run = kplugin("e2e", str(project), "--scenario", str(path))
    assert run.code == 2, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith(f"kplugin: error: {path}: ") or line.startswith(f"kplugin: error: --scenario {path}")
    assert needle in line, line
    assert not (project / "bin").exists(), "nothing is built on bad input"


def test_a_list_of_50_megabytes_of_garbage(kplugin: Kplugin, project: Path, tmp_path: Path) -> None:
    """JSON (a List's head, then garbage): refused at the first bad byte, without reading
    on; anything else of that size: refused by its size before it is read."""
    garbage = bytes(range(256)) * (50 * 4096)
    text = b"]]garbage{{" * (50 * 1024 * 1024 // 11)
    head = (LIST_HEAD + NODE + ",").encode()
    for name, data, needle in (
        ("list.json", head + text, f"is not valid JSON at line 1 column {len(head) + 1}: Expecting value"),
        ("binary.json", head + garbage, f"is not UTF-8 text (byte 0x80 at offset {len(head) + 128})"),
        ("list.yaml", b"items:\n" + garbage, "is 52428807 bytes; kplugin reads at most 4194304 bytes of YAML here"),
    ):
        path = tmp_path / name
        path.write_bytes(data)
        started = time.process_time()  # CPU, not the clock: reading 50 MB on would show, load would not
        run = kplugin("e2e", str(project), "--scenario", str(path))
        assert time.process_time() - started < 10
        assert run.code == 2, run.stderr
        (line,) = run.stderr.strip().splitlines()
        assert str(path) in line and needle in line, line


def test_a_kind_is_served_by_the_minor_of_k8s(kplugin: Kplugin, project: Path, tmp_path: Path) -> None:
    """The same DeviceClass passes the check for --k8s 1.34 (and stops at etcd here)."""
    path = tmp_path / "dra.json"
    path.write_text(LIST_HEAD + NODE + "," + POD + "," + DEVICE_CLASS + "]}")
    run = kplugin("e2e", str(project), "--scenario", str(path), "--k8s", "1.34")
    assert run.code == 1 and "etcd not found" in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        (["--compare", "other"], "--compare 'other': the one profile to compare with is 'default'"),
        (["--reschedule", "app in (a"], "--reschedule 'app in (a': 'app in (a' is not a label selector requirement"),
        (["--reschedule", "Bad Key=x"], "is not a label selector requirement"),
        (["--context", "prod"], "--context picks a context of --kubeconfig; give --kubeconfig too"),
        (["--kubeconfig", "missing.yaml"], "--kubeconfig missing.yaml: no such file"),
        (["--weight", "Gpu=zero"], "--weight 'Gpu=zero': the weight must be a whole number"),
        (["--disable-default", "NodeMagic"], "--disable-default 'NodeMagic': not a default plugin"),
        (["--k8s", "1.99"], "--k8s 1.99: Kubernetes 1.99 is not supported"),
    ],
)
def test_bad_options(kplugin: Kplugin, project: Path, options: list[str], needle: str) -> None:
    run = kplugin("e2e", str(project), *options)
    assert run.code == 2, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert needle in line, line
    assert not (project / "bin").exists()


def test_weights_and_disabled_defaults_reach_the_profile(project: Path) -> None:
    from kplugin import e2e
    from kplugin.e2e.run import default_profile, plugin_profile
    from kplugin.kube import cluster
    from kplugin.model.project import load

    inputs = e2e.prepare(load(project), None, None, True, weights=("Gpu=5",), disable_default=("NodeResourcesFit",))

    class Named:
        def scheduler_name(self, wanted: str) -> str:
            return wanted

    target = Named()
    plugin = plugin_profile(inputs, target)  # type: ignore[arg-type]
    profile = plugin.document["profiles"][0]
    assert profile["plugins"]["score"]["enabled"] == [{"name": "Gpu", "weight": 5}]
    assert profile["plugins"]["multiPoint"]["disabled"] == [{"name": "NodeResourcesFit"}]
    # kplugin's reporting plugin, in both profiles (the project's scheduler has it)
    reporter = [{"name": "KpluginNodeRejections"}]
    assert profile["plugins"]["multiPoint"]["enabled"] == profile["plugins"]["postFilter"]["enabled"] == reporter
    default = default_profile(inputs, target)  # type: ignore[arg-type]
    assert default.document["profiles"] == [
        {"schedulerName": "default-scheduler",
         "plugins": {"multiPoint": {"enabled": reporter}, "postFilter": {"enabled": reporter}}}
    ]  # fmt: skip
    assert default.document["percentageOfNodesToScore"] == 100
    assert cluster.LOCAL_QPS == 5000
    assert inputs.notices == ()
    # a project made before it came: neither profile has it, and the run says so once
    (project / "internal/rejections/zz_generated.rejections.go").unlink()
    older = e2e.prepare(load(project), None, None, True)
    assert "KpluginNodeRejections" not in str(plugin_profile(older, target).document)  # type: ignore[arg-type]
    assert "KpluginNodeRejections" not in str(default_profile(older, target).document)  # type: ignore[arg-type]
    assert [n for n in older.notices if "rejections" in n] == [
        "gpu has no internal/rejections/zz_generated.rejections.go (made by an older kplugin): a pending pod's "
        "rejections are counted, not listed node by node; kplugin upgrade to 1.28.3 (its own) writes it"
    ]


# --- any JSON: a scenario or one UsageError, never anything else -------------------------------


SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=25,
)
KEYS = st.sampled_from(sorted(scenario.TOP_KEYS | {"items", "kind", "apiVersion", "x"}))
ENTRY_KEYS = st.sampled_from(sorted(scenario.POD_KEYS | scenario.NODE_KEYS | {"metadata", "spec", "status", "kind"}))
ENTRIES = st.dictionaries(ENTRY_KEYS, VALUES, max_size=6)
DOCUMENTS = st.dictionaries(KEYS, st.lists(ENTRIES, max_size=3) | VALUES, max_size=5)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=DOCUMENTS, cut=st.integers(min_value=0, max_value=400))
def test_any_json_document(tmp_path: Path, document: dict[str, object], cut: int) -> None:
    text = json.dumps(document)
    for variant in (text, text[: len(text) - cut] if cut < len(text) else text):
        path = tmp_path / "any.json"
        path.write_text(variant)
        try:
            scenario.load_scenario(path)
        except UsageError as err:
            assert str(err).count("\n") == 0


def test_the_readmes_scenario_is_one(tmp_path: Path) -> None:

    readme = (REPO / "README.md").read_text()
    start = readme.index("namespaces: [{name: ml, labels: {team: ml}}]")
    loaded = load(tmp_path, readme[start : readme.index("```", start)])
    assert len(loaded.steps) == 8 and loaded.expect["ml/train-1"] == ("deleted",)
    (quota,) = [o for o in loaded.objects if o.info.kind == "Quota"]
    assert quota.info.custom and (quota.namespace, quota.body["spec"]) == ("ml", {"hard": {"cpu": "4"}})
    assert [s.describe() for s in loaded.steps if s.obj is not None] == ["updateObject Quota ml/cpu"]


@pytest.mark.parametrize(
    ("text", "path", "named"),
    [
        ('{"items": [', "/tmp/list.json", "JSON"),  # the name says so
        ('{"items": [', "/tmp/args.yaml", "YAML"),  # the name says so
        ("items: [", "/tmp/list.JSON", "JSON"),
        ('{"items": [', "/tmp/list", "JSON"),  # a name without a suffix: what it opens with
        ('[{"a": 1}, ', None, "JSON"),  # no file: what it opens with
        ("a: [", None, "YAML"),
    ],
)
def test_a_broken_file_is_named_json_or_yaml(text: str, path: str | None, named: str) -> None:
    from pathlib import PurePath

    from kplugin.core import yamlio

    where = f"--scenario {path}" if path else "standard input"
    with pytest.raises(UsageError, match=rf"^{re.escape(where)} is not valid {named} at line \d"):
        yamlio.parse(text, where, path=PurePath(path) if path else None)
