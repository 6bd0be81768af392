"""kplugin snapshot and the what-if replay (e2e --compare default) for real: a cluster
state built on a real local control plane, snapshotted through a real kubeconfig and
replayed with the project's profile and the default one; a committed kubectl List
replayed the same way (with a preemption); ordered steps with the scheduler's attempts
and requeues; and a replay on an existing cluster (--kubeconfig), cleaned up afterwards
also on Ctrl-C; an anonymized snapshot replayed as the plain one (RuntimeClass, PVC
selector, topology, DRA). etcd is Debian's; kube-apiserver is built from the project's pin (kept
in the session's cache, shared with test_integration_e2e)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import REPO, Kplugin, refcluster, sigint_default

from kplugin.core import yamlio
from kplugin.kube import controlplane, kinds
from kplugin.kube.apiclient import Client
from kplugin.maintainer import kwok
from kplugin.model.versions import newest_release, resolve
from kplugin.scenario import format as scenario
from kplugin.snapshot.anonymizer import Anonymizer

pytestmark = pytest.mark.integration

OLDEST = "1.28.3"  # shared with the other integration tests, so the Go caches are too
NEWEST = newest_release().key
DATA = REPO / "tests" / "data"
ARGS = (REPO / "examples" / "e2e-args.yaml").read_text()


def new(kplugin: Kplugin, tmp_path: Path, version: str = OLDEST) -> Path:
    run = kplugin("new", "gpu", "--k8s", version, "-o", str(tmp_path / "p"))
    assert run.code == 0, run.stderr
    (tmp_path / "args.yaml").write_text(ARGS)
    return tmp_path / "p" / "gpu"


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where e2e makes its working directories (checked empty afterwards)."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


class Cluster:
    """A real local control plane playing the user's cluster, with an admin kubeconfig."""

    def __init__(self, plane: controlplane.ControlPlane, kubeconfig: Path) -> None:
        self.plane = plane
        self.kubeconfig = kubeconfig
        self.client: Client = plane.client()

    def create(self, path: str, body: dict[str, Any]) -> None:
        self.client.create(path, body)


@pytest.fixture
def cluster(kplugin: Kplugin, tmp_path: Path) -> Iterator[tuple[Cluster, Path]]:
    from kplugin.model.project import load

    project = new(kplugin, tmp_path)
    apiserver = controlplane.apiserver_binary(load(project), lambda _: None)
    work = tmp_path / "cluster"
    work.mkdir()
    # its fake nodes run by a real kwok controller, as a user's kwok cluster's are
    with controlplane.ControlPlane(work, apiserver, lambda _: None) as plane, kwok.controller(plane, work):
        kubeconfig = plane.kubeconfig()
        made = Cluster(plane, kubeconfig)
        try:
            yield made, project
        finally:
            made.client.close()


def node(name: str, labels: dict[str, str], capacity: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "spec": spec,
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def pod(namespace: str, name: str, requests: dict[str, str], **spec: Any) -> dict[str, Any]:
    labels = spec.pop("labels", {})
    resources: dict[str, Any] = {"requests": requests}
    fixed = {k: v for k, v in requests.items() if k not in ("cpu", "memory")}
    if fixed:
        resources["limits"] = fixed
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "schedulerName": "someone-else",  # nothing schedules them in the source cluster
            "containers": [{"name": "app", "image": "example.com/app:1", "resources": resources}],
            **spec,
        },
    }


GPU = "example.com/gpu"
TOLERATE = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]


def build_state(c: Cluster) -> None:
    """Two namespaces, a PriorityClass, four nodes (labels, a taint, a cordon), two bound
    pods and five pending ones with tolerations, affinities and a selector, built so the
    sample plugin (GPU nodes only, most GPUs left) and the default scheduler (most CPU
    and memory left) disagree."""
    for name, labels in (("ml", {"team": "ml"}), ("web", {"team": "web"})):
        c.create("/api/v1/namespaces", {"metadata": {"name": name, "labels": labels}})
    c.create(
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {"metadata": {"name": "high"}, "value": 1000, "description": "training first"},
    )
    accel = {"example.com/accelerator": "true"}
    nodes = [
        node("gpu-a", {**accel, "zone": "a"}, {"cpu": "8", "memory": "32Gi", "pods": "110", GPU: "4"}),
        node(
            "gpu-b",
            {**accel, "zone": "b"},
            {"cpu": "8", "memory": "32Gi", "pods": "110", GPU: "2"},
            taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
        ),
        node("cpu-1", {"pool": "cpu", "zone": "a"}, {"cpu": "16", "memory": "32Gi", "pods": "110"}),
        node("cpu-2", {"pool": "cpu", "zone": "b"}, {"cpu": "16", "memory": "32Gi", "pods": "110"}, unschedulable=True),
    ]
    for body in nodes:
        c.create("/api/v1/nodes", body)
    mem = {"memory": "1Gi"}
    pods = [
        pod("ml", "trainer-0", {"cpu": "2", **mem, GPU: "1"}, nodeName="gpu-a", labels={"app": "trainer"}),
        pod("web", "web-0", {"cpu": "1", **mem}, nodeName="cpu-1", labels={"app": "web"}),
        pod(
            "ml",
            "train-1",
            {"cpu": "1", **mem, GPU: "1"},
            labels={"app": "train"},
            tolerations=TOLERATE,
            priorityClassName="high",
        ),
        pod(
            "ml",
            "train-2",
            {"cpu": "1", **mem, GPU: "1"},
            labels={"app": "train"},
            tolerations=TOLERATE,
            affinity={
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": "train"}}, "topologyKey": "kubernetes.io/hostname"}
                    ]
                }
            },
        ),
        pod(
            "ml",
            "train-3",
            {"cpu": "1", **mem, GPU: "1"},
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                        ]
                    }
                }
            },
        ),
        pod("web", "web-1", {"cpu": "1", **mem}, labels={"app": "web"}),
        pod("web", "web-2", {"cpu": "1", **mem}, labels={"app": "web"}, nodeSelector={"pool": "cpu"}),
    ]
    for body in pods:
        c.create(f"/api/v1/namespaces/{body['metadata']['namespace']}/pods", body)


def test_snapshot_then_what_if_round_trip(
    kplugin: Kplugin, cluster: tuple[Cluster, Path], tmp_path: Path, scratch: Path
) -> None:
    c, project = cluster
    build_state(c)
    assert len(c.client.get("/api/v1/pods")["items"]) == 7
    out = tmp_path / "snap.json"
    run = kplugin("snapshot", "--kubeconfig", str(c.kubeconfig), "-o", str(out))
    assert run.code == 0, run.stderr
    # (a kube-apiserver built from the module says v0.0.0-master; a release says its version)
    assert "snapshot of Kubernetes v" in run.stderr and "4 nodes, 7 pods" in run.stderr, run.stderr
    text = out.read_text()
    for dropped in ('"uid"', '"resourceVersion"', '"managedFields"', '"status"', '"creationTimestamp"', "app:1"):
        assert dropped not in text, dropped
    again = tmp_path / "again.json"
    assert kplugin("snapshot", "--kubeconfig", str(c.kubeconfig), "-o", str(again)).code == 0
    assert again.read_bytes() == out.read_bytes(), "the same cluster gives the same bytes"
    document = json.loads(text)
    assert [n["name"] for n in document["nodes"]] == ["cpu-1", "cpu-2", "gpu-a", "gpu-b"]
    assert document["priorityClasses"] == [{"name": "high", "value": 1000}]
    assert {"name": "ml", "labels": {"team": "ml"}} in document["namespaces"]
    loaded = scenario.load_scenario(out)
    bound = {p.key: p.node_name for p in loaded.pods if p.node_name}
    assert bound == {"ml/trainer-0": "gpu-a", "web/web-0": "cpu-1"}
    # anonymized: other names, references still matching
    hidden = tmp_path / "hidden.json"
    run = kplugin(
        "snapshot", "--kubeconfig", str(c.kubeconfig), "--anonymize", "--keep-label", "example.com/accelerator",
        "-o", str(hidden),
    )  # fmt: skip
    assert run.code == 0, run.stderr
    masked = scenario.load_scenario(hidden)
    names = {n.name for n in masked.nodes}
    assert (
        not names & {"gpu-a", "gpu-b", "cpu-1", "cpu-2"}
        and {n.labels["kubernetes.io/hostname"] for n in masked.nodes} == names
    )
    assert {p.node_name for p in masked.pods if p.node_name} <= names
    assert sum(n.labels.get("example.com/accelerator") == "true" for n in masked.nodes) == 2
    assert "gpu-a" not in hidden.read_text() and "trainer" not in hidden.read_text()

    run = kplugin(
        "e2e", str(project), "--scenario", str(out), "--args", str(tmp_path / "args.yaml"), "--compare", "default",
        "--json",
    )  # fmt: skip
    assert run.code == 0, run.stderr
    diff = json.loads(run.stdout)
    assert diff["summary"] == {
        "compared": 5,
        "same": 1,
        "moved": 3,
        "becameSchedulable": 0,
        "becameUnschedulable": 1,
        "preempted": {"plugin": 0, "default": 0},
    }
    moved = {m["pod"]: (m["plugin"]["node"], m["default"]["node"]) for m in diff["moved"]}
    assert moved == {
        "ml/train-1": ("gpu-a", "gpu-b"),
        "ml/train-2": ("gpu-b", "gpu-a"),
        "web/web-1": ("gpu-a", "cpu-1"),
    }
    train_1 = next(m for m in diff["moved"] if m["pod"] == "ml/train-1")
    plugin_scores = {s["node"]: s["plugins"] for s in train_1["plugin"]["scores"]}
    default_scores = {s["node"]: s["plugins"] for s in train_1["default"]["scores"]}
    assert plugin_scores["gpu-a"]["Gpu"] == 100 and plugin_scores["gpu-b"]["Gpu"] == 50  # GPUs left: 2 and 1
    assert "Gpu" not in default_scores["gpu-b"] and set(default_scores) == {"gpu-a", "gpu-b"}
    assert not train_1["default"]["tied"]
    (unschedulable,) = diff["becameUnschedulable"]
    assert unschedulable["pod"] == "web/web-2" and unschedulable["default"]["node"] == "cpu-1"
    assert "node cpu-1 does not have label example.com/accelerator" in unschedulable["plugin"]["reason"]
    use = {(u["node"], u["resource"]): (u["plugin"], u["default"]) for u in diff["nodeUse"]}
    assert use == {
        ("cpu-1", "cpu"): ("1", "3"),
        ("cpu-1", "memory"): ("1Gi", "3Gi"),
        ("cpu-1", "pods"): ("1", "3"),
        ("gpu-a", "cpu"): ("5", "4"),
        ("gpu-a", "memory"): ("4Gi", "3Gi"),
        ("gpu-a", "pods"): ("4", "3"),
    }
    assert diff["totals"]["cpu"] == {"plugin": "7", "default": "8"}
    for profile in ("plugin", "default"):
        created = diff["profiles"][profile]["created"]
        assert created["objects"] == 2 + 1 + 4 + 7 and created["perSecond"] > 0
    assert diff["profiles"]["plugin"]["schedulerName"] == "gpu"
    assert diff["profiles"]["default"]["schedulerName"] == "default-scheduler"
    assert list(scratch.iterdir()) == [], "the working directories are removed"


LIST = DATA / "kubectl-list.yaml"
LIST_SUMMARY = {
    "compared": 3,
    "same": 2,
    "moved": 1,
    "becameSchedulable": 0,
    "becameUnschedulable": 0,
    "preempted": {"plugin": 1, "default": 1},
}


def check_list_diff(diff: dict[str, Any]) -> None:
    """The committed List replayed: urgent preempts batch-1 in both profiles; web moves."""
    assert diff["summary"] == LIST_SUMMARY, diff["summary"]
    (web,) = diff["moved"]
    assert (web["pod"], web["plugin"]["node"], web["default"]["node"]) == ("web", "gpu-1", "cpu-1")
    for profile in ("plugin", "default"):
        assert diff["profiles"][profile]["preempted"] == [{"pod": "batch-1", "by": "urgent", "node": "gpu-1"}]


def test_a_kubectl_list_replayed_with_a_preemption(kplugin: Kplugin, tmp_path: Path, scratch: Path) -> None:
    """tests/data/kubectl-list.yaml as kubectl prints it (status, uids, a finished pod, the
    API server's own priority class): replayed with both profiles, the difference and the
    victim of each profile's preemption are named."""
    project = new(kplugin, tmp_path)
    args = ["--scenario", str(LIST), "--args", str(tmp_path / "args.yaml"), "--compare", "default"]
    run = kplugin("e2e", str(project), *args, "--json")
    assert run.code == 0, run.stderr
    diff = json.loads(run.stdout)
    check_list_diff(diff)
    # the human report says the same, summary first
    text = diff_text(kplugin, project, args)
    assert text.splitlines()[0] == (
        "what-if on Kubernetes 1.28.3: 3 pod(s) compared: 2 placed alike, 1 moved, 0 became schedulable, "
        "0 became unschedulable; preempted: plugin 1, default 1"
    )
    assert "  batch-1                        by urgent on gpu-1" in text
    # the same List on the newest minor, through the retargeted copy build --k8s uses
    run = kplugin("e2e", str(project), *args, "--json", "--k8s", NEWEST)
    assert run.code == 0, run.stderr
    newest = json.loads(run.stdout)
    assert newest["kubernetes"].startswith(NEWEST)
    check_list_diff(newest)
    assert (project / "bin" / resolve(NEWEST).version.tag / "kube-scheduler").is_file(), "the pinned project's bin/"
    assert list(scratch.iterdir()) == []


def test_reschedule_replays_bound_pods_as_pending(kplugin: Kplugin, tmp_path: Path, scratch: Path) -> None:
    """The same List with --reschedule app=batch: batch-0 and batch-1, bound in the
    cluster, are scheduled again, in queue order after urgent (priority 1000000 before
    10). urgent now takes gpu-1's free GPU without preempting anyone, and one of the two
    batch pods cannot be placed in either profile (batch-1 wants 2 GPUs: gpu-1 has one
    left, gpu-2's taint it does not tolerate; nothing of lower priority can make room);
    web still moves. The diff shows differences and totals, not each pod that is placed
    alike: the totals prove the count placed, the summary that both batch pods were
    compared."""
    project = new(kplugin, tmp_path)
    args = ["--scenario", str(LIST), "--args", str(tmp_path / "args.yaml"), "--compare", "default"]
    run = kplugin("e2e", str(project), *args, "--reschedule", "app=batch", "--json")
    assert run.code == 0, run.stderr
    diff = json.loads(run.stdout)
    assert diff["summary"] == {
        "compared": 5,  # urgent, web and gpu-job as before, and the two batch pods
        "same": 4,
        "moved": 1,
        "becameSchedulable": 0,
        "becameUnschedulable": 0,
        "preempted": {"plugin": 0, "default": 0},
    }
    (web,) = diff["moved"]
    assert (web["pod"], web["plugin"]["node"], web["default"]["node"]) == ("web", "gpu-1", "cpu-1")
    # kube-proxy, urgent, web, gpu-job and one batch pod: the other is placed by neither profile
    assert diff["totals"]["pods"] == {"plugin": "5", "default": "5"}
    assert diff["totals"]["cpu"] == {"plugin": "3", "default": "3"}
    assert not [u for u in diff["nodeUse"] if u["node"] == "gpu-2"], "gpu-2 is used alike by both"
    assert list(scratch.iterdir()) == []


def diff_text(kplugin: Kplugin, project: Path, args: list[str]) -> str:
    run = kplugin("e2e", str(project), *args)
    assert run.code == 0, run.stderr
    return run.stdout


STEPS = (REPO / "examples" / "steps-scenario.yaml").read_text()


@pytest.mark.parametrize("version", [OLDEST, NEWEST])
def test_steps_attempts_and_requeues(kplugin: Kplugin, tmp_path: Path, scratch: Path, version: str) -> None:
    """Ordered steps after the first placements: a label makes a waiting pod schedulable,
    a cordon and a node deletion leave a later pod waiting until the uncordon. Each pod's
    attempts and the cluster events that requeued it come from the scheduler's log."""
    project = new(kplugin, tmp_path, version)
    scenario_file = tmp_path / "steps.yaml"
    scenario_file.write_text(STEPS)
    run = kplugin(
        "e2e", str(project), "--scenario", str(scenario_file), "--args", str(tmp_path / "args.yaml"), "--json"
    )
    assert run.code == 0, run.stderr
    pods = {p["pod"]: p for p in json.loads(run.stdout)["pods"]}
    assert {k: p["node"] for k, p in pods.items()} == {"waits-for-b": "n1", "late-1": "n2", "late-2": "n1"}
    for name in ("waits-for-b", "late-2"):
        assert pods[name]["attempts"] >= 2, pods[name]
        events = [r["event"] for r in pods[name]["requeues"]]
        assert any("Node" in event for event in events), pods[name]
    assert pods["late-1"]["attempts"] == 1 and pods["late-1"]["requeues"] == []
    # the human table shows them too
    run = kplugin("e2e", str(project), "--scenario", str(scenario_file), "--args", str(tmp_path / "args.yaml"))
    assert run.code == 0, run.stderr
    assert "waits-for-b              n1                       ok" in run.stdout
    assert "requeued by: " in run.stdout


def nodes_left(c: Cluster) -> list[str]:
    return [n["metadata"]["name"] for n in c.client.get("/api/v1/nodes")["items"]]


def replay_pods_left(c: Cluster) -> list[str]:
    listed = c.client.get("/api/v1/pods?labelSelector=kplugin.dev%2Freplay")["items"]
    return [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in listed]


def test_replay_on_an_existing_cluster(kplugin: Kplugin, cluster: tuple[Cluster, Path], tmp_path: Path) -> None:
    """--kubeconfig: a separately started control plane plays the user's cluster. Nodes
    it has already are refused; a bad token is one line; the what-if runs there (labelled,
    in namespaces of its own) and leaves nothing behind, also when interrupted."""
    c, project = cluster
    args = ["--scenario", str(LIST), "--args", str(tmp_path / "args.yaml"), "--kubeconfig", str(c.kubeconfig)]
    c.create("/api/v1/nodes", node("real-1", {}, {"cpu": "4", "memory": "8Gi", "pods": "110"}))
    run = kplugin("e2e", str(project), *args)
    assert run.code == 1, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert "has 1 node(s) kplugin did not create (e.g. real-1)" in line and "kwok" in line
    assert not (project / "bin").exists(), "refused before anything was built"
    c.client.delete("/api/v1/nodes/real-1")

    bad = tmp_path / "bad-kubeconfig"
    document = yamlio.parse(c.kubeconfig.read_text(), "kubeconfig")
    document["users"][0]["user"]["token"] = "not-the-token"
    bad.write_text(yamlio.dump(document))
    for command in (["snapshot", "--kubeconfig", str(bad)], ["e2e", str(project), *args[:-1], str(bad)]):
        run = kplugin(*command)
        assert run.code == 1, run.stderr
        (line,) = [x for x in run.stderr.splitlines() if x.startswith("kplugin: error:")]
        assert "refused the credentials (401 Unauthorized)" in line and "Traceback" not in run.stderr

    run = kplugin("e2e", str(project), *args, "--compare", "default", "--json")
    assert run.code == 0, run.stderr
    diff = json.loads(run.stdout)
    check_list_diff(diff)
    assert diff["profiles"]["plugin"]["schedulerName"].startswith("gpu-")  # a name of the run's own
    assert nodes_left(c) == [] and replay_pods_left(c) == []
    namespaces = c.client.get("/api/v1/namespaces")["items"]
    for ns in namespaces:  # deleted (Terminating: this control plane has no namespace controller)
        assert not ns["metadata"]["name"].startswith("kp-") or ns["status"]["phase"] == "Terminating", ns

    # Ctrl-C while the replay waits in a step: everything it created goes
    waiting = tmp_path / "waiting.yaml"
    waiting.write_text(STEPS.replace("- wait: 1\n", "- wait: 600\n", 1))
    env = {**os.environ, "PYTHONPATH": str(REPO), "CI": "true"}
    command = [sys.executable, "-m", "kplugin", "e2e", str(project), "--scenario", str(waiting),
               "--args", str(tmp_path / "args.yaml"), "--kubeconfig", str(c.kubeconfig)]  # fmt: skip
    with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default) as process:
        assert process.stderr is not None
        seen = []
        for line in process.stderr:
            seen.append(line)
            if "steps[1] wait 600s" in line:
                break
        assert nodes_left(c) == ["n1", "n2"], seen
        # kwok runs the replay's nodes and the pods bound to them, as on a user's kwok cluster
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            nodes = c.client.get("/api/v1/nodes")["items"]
            bound = [p for p in c.client.get("/api/v1/pods")["items"] if p["spec"].get("nodeName")]
            if all(kwok.ready(n) for n in nodes) and all(p["status"].get("phase") == "Running" for p in bound):
                break
            time.sleep(0.2)
        assert all(kwok.ready(n) for n in nodes) and bound, (nodes, bound)
        assert all(p["status"].get("phase") == "Running" for p in bound), bound
        process.send_signal(signal.SIGINT)
        rest = process.stderr.read()
        code = process.wait(timeout=120)
    assert code == 130, [*seen, rest]
    assert rest.strip().splitlines()[-1] == "kplugin: interrupted", rest
    assert nodes_left(c) == [] and replay_pods_left(c) == []


# --- an anonymized snapshot replays as the plain one does -----------------------------------

SALT = "integration-key"


def placements(diff: dict[str, Any], rename: Any) -> dict[str, Any]:
    """What a --compare default diff says, with pod and node names passed through ``rename``."""

    def pod_name(key: str) -> str:
        return "/".join(rename(part) for part in key.split("/"))

    changes = {
        kind: sorted(
            (pod_name(c["pod"]), rename(c["plugin"].get("node") or ""), rename(c["default"].get("node") or ""))
            for c in diff[kind]
        )
        for kind in ("moved", "becameSchedulable", "becameUnschedulable")
    }
    use = sorted((rename(u["node"]), u["resource"], u["plugin"], u["default"]) for u in diff["nodeUse"])
    return {"summary": diff["summary"], "totals": diff["totals"], "use": use, **changes}


POD_GROUP_RULES = """\
- apiGroups: [scheduling.k8s.io]
  resources: [podgroups]
  verbs: [get, list, watch]
- apiGroups: [scheduling.k8s.io]
  resources: [podgroups/status]
  verbs: [patch, update]
"""


def test_an_anonymized_snapshot_replays_as_the_plain_one(kplugin: Kplugin, tmp_path: Path, scratch: Path) -> None:
    """tests/support/refcluster on a real control plane of the newest minor (DRA is served
    from 1.34): a RuntimeClass whose node selector and toleration the pod carries (the API
    server refuses the pod if they disagree), a claim with a label selector bound to a local
    PV on n-a, a StorageClass with allowed topologies and a CSIStorageCapacity (the claim of
    a gated pod's ephemeral volume), a DeviceClass whose CEL compares an attribute value,
    n-a's ResourceSlice and a claim on it; and, with the pod-group API turned on as a user's
    cluster would (GenericWorkload, scheduling.k8s.io/v1beta1), a Workload, its PodGroup
    and the gang's pods. The plain and the anonymized snapshot, replayed with --compare
    default, give the same diff and every pod the same node, names mapped through the same
    keyed hash."""
    from kplugin.model import manifests
    from kplugin.model.project import load

    project = new(kplugin, tmp_path, NEWEST)
    # the gang's PodGroups: the scheduler reads them with the gate on, which the sample's
    # own RBAC (no pod-group points) does not allow until the project's rules say so (what
    # e2e's refusal says to do)
    (project / "config/rbac/rules.yaml").write_text(POD_GROUP_RULES)
    run = kplugin("refresh", str(project))
    assert run.code == 0, run.stderr
    loaded = load(project)
    apiserver = controlplane.apiserver_binary(loaded, lambda _: None)
    work = tmp_path / "cluster"
    work.mkdir()
    gated = manifests.apiserver_gate_args((manifests.GENERIC_WORKLOAD,), loaded.target.facts)
    with controlplane.ControlPlane(work, apiserver, lambda _: None, gated) as plane:
        c = Cluster(plane, plane.kubeconfig())
        try:
            for obj in refcluster.objects(dra=True) + refcluster.pod_groups():
                info = kinds.ALL.get(obj["kind"]) or kinds.gated(obj["apiVersion"], obj["kind"])
                assert info is not None
                c.create(info.path(obj["metadata"].get("namespace")), obj)
            plain, hidden = tmp_path / "plain.json", tmp_path / "hidden.json"
            run = kplugin("snapshot", "--kubeconfig", str(c.kubeconfig), "-o", str(plain))
            assert run.code == 0, run.stderr
            run = kplugin(
                "snapshot", "--kubeconfig", str(c.kubeconfig), "-o", str(hidden), "--anonymize", "--salt", SALT,
                "--keep-label", "example.com/accelerator",
            )  # fmt: skip
            assert run.code == 0, run.stderr
        finally:
            c.client.close()
    text = hidden.read_text()
    for secret in (*refcluster.SECRETS, "n-a", "sandboxed", "gold-data", "train-gpu", "trainer", "workers"):
        assert secret not in text, secret
    read = {o["kind"]: o for o in json.loads(plain.read_text())["objects"] if o["kind"] in ("Workload", "PodGroup")}
    assert read["PodGroup"]["spec"]["workloadRef"] == {"workloadName": "trainer", "templateName": "workers"}
    assert read["Workload"]["apiVersion"] == read["PodGroup"]["apiVersion"] == "scheduling.k8s.io/v1beta1"
    a = Anonymizer(SALT, ("example.com/accelerator",))
    args = ["--args", str(tmp_path / "args.yaml"), "--compare", "default", "--json"]
    diffs = []
    for snapshot_file in (plain, hidden):
        run = kplugin("e2e", str(project), "--scenario", str(snapshot_file), *args)
        assert run.code == 0, run.stderr
        diffs.append(json.loads(run.stdout))
    assert placements(diffs[1], lambda name: name) == placements(diffs[0], a.namespace)
    assert diffs[0]["summary"]["compared"] >= 3, diffs[0]["summary"]
    # every pod's node, one profile: the RuntimeClass's, the volume's and the claim's pods on n-a
    nodes = []
    for snapshot_file in (plain, hidden):
        run = kplugin("e2e", str(project), "--scenario", str(snapshot_file), "--args", str(tmp_path / "args.yaml"),
                      "--json")  # fmt: skip
        assert run.code == 0, run.stderr
        nodes.append({p["pod"]: p["node"] for p in json.loads(run.stdout)["pods"]})
    for pod in ("shop/sandboxed", "shop/uses-gold", "shop/train"):
        assert nodes[0][pod] == "n-a", nodes[0]
    assert nodes[0]["shop/worker-0"] and nodes[0]["shop/worker-1"], "the gang is placed, both pods"
    assert nodes[1] == {"/".join(map(a.namespace, k.split("/"))): a.word(v) if v else v for k, v in nodes[0].items()}
    assert list(scratch.iterdir()) == []
