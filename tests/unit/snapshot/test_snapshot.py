"""kplugin snapshot without a cluster: a small HTTP server plays the API server (pages,
discovery, a kind it forbids), and the scenario written is checked byte for byte; the
anonymizer keeps every reference matching; kubeconfigs (tokens, token files, exec
plugins, what is refused); unreachable and unauthorized clusters are one line, exit 1;
files are 0600 whatever the umask; the header names the kinds not read, and e2e says so.
The table of --anonymize is tested in test_anonymize.
The run against a real control plane is in test_integration_snapshot."""

from __future__ import annotations

import json
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from support import REPO, Kplugin
from support.fakeapi import JsonHandler, serving

from kplugin.core import yamlio
from kplugin.core.errors import OperationError, UsageError
from kplugin.kube import kubeconfig
from kplugin.scenario import entries
from kplugin.scenario import format as scenario
from kplugin.scenario.entries import Section
from kplugin.snapshot import anonymizer


def node(name: str, labels: dict[str, str] | None = None, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "resourceVersion": "12",
            "labels": {"kubernetes.io/hostname": name, **(labels or {})},
            "managedFields": [{"manager": "kubelet"}],
        },
        "spec": {
            "taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule", "timeAdded": "2026-01-01T00:00:00Z"}]
        },
        "status": {
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "conditions": [{"type": "Ready"}],
            **status,
        },
    }


def pod(namespace: str, name: str, node_name: str | None = None, phase: str = "Running", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{name}",
            "labels": {"app": name.split("-")[0]},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "data"},
            "ownerReferences": [{"kind": "ReplicaSet", "name": "x", "uid": "u"}],
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "example.com/secret-app:1",
                    "env": [{"name": "PASSWORD", "value": "hunter2"}],
                    "resources": {"requests": {"cpu": "100m"}},
                    "ports": [{"containerPort": 80}, {"containerPort": 9100, "hostPort": 9100}],
                }
            ],
            **({"nodeName": node_name} if node_name else {}),
            "priority": 0,
            "schedulerName": "default-scheduler",
            **spec,
        },
        "status": {"phase": phase, "podIP": "10.0.0.1"},
    }


NODES = [node("worker-b"), node("worker-a", {"zone": "eu-1a"})]
PODS = [
    pod("shop", "web-1", "worker-a", nodeSelector={"zone": "eu-1a"}),
    pod("shop", "web-2", affinity={
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker-b"]}]}]}},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname",
             "namespaces": ["shop", "default"]}]},
    }, tolerations=[{"key": "gpu", "operator": "Equal", "value": "yes", "effect": "NoSchedule"}]),
    pod("shop", "gone-1", "worker-z"),  # bound to a node deleted since
    pod("batch", "done-1", "worker-a", phase="Succeeded"),
    pod("kube-system", "dns-1", "worker-b"),
]  # fmt: skip
NAMESPACES = [
    {"metadata": {"name": n, "uid": f"uid-{n}", "labels": {"kubernetes.io/metadata.name": n, "tier": "prod"}}}
    for n in ("shop", "batch", "kube-system", "default")
]
PRIORITY_CLASSES = [
    {"metadata": {"name": "system-node-critical"}, "value": 2000001000},
    {"metadata": {"name": "gold", "uid": "u"}, "value": 1000, "preemptionPolicy": "PreemptLowerPriority"},
]
PDBS = [
    {
        "metadata": {"name": "web", "namespace": "shop", "uid": "u", "generation": 3},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1,
                   "observedGeneration": 3, "conditions": [{"type": "DisruptionAllowed"}]},
    }
]  # fmt: skip
LISTS = {
    "/api/v1/nodes": NODES,
    "/api/v1/pods": PODS,
    "/api/v1/namespaces": NAMESPACES,
    "/apis/scheduling.k8s.io/v1/priorityclasses": PRIORITY_CLASSES,
    "/apis/policy/v1/poddisruptionbudgets": PDBS,
    "/apis/quota.example.com/v1alpha1/quotas": [
        {
            "apiVersion": "quota.example.com/v1alpha1",
            "kind": "Quota",
            "metadata": {"name": "cpu", "namespace": "shop", "uid": "u-9", "resourceVersion": "12"},
            "spec": {"hard": {"cpu": "4"}},
        }
    ],
}
TEAM_QUOTA = REPO / "examples" / "team-quota"
QUOTA_CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/quotas.quota.example.com"
SERVED = [
    "policy/v1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1",
    "node.k8s.io/v1",
    "resource.k8s.io/v1beta1",
    "quota.example.com/v1alpha1",
]


class Fake:
    def __init__(self) -> None:
        self.pages: list[str] = []
        self.token = "secret-token"


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[Fake, Path]]:
    fake = Fake()

    class Handler(JsonHandler):
        def do_GET(self) -> None:
            if self.headers.get("Authorization") != f"Bearer {fake.token}":
                return self.answer(401, {"kind": "Status", "message": "Unauthorized", "reason": "Unauthorized"})
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query)
            if url.path == "/version":
                return self.answer(200, {"gitVersion": "v1.30.2"})
            if url.path == "/apis":
                groups = [{"versions": [{"groupVersion": v}]} for v in SERVED]
                return self.answer(200, {"groups": groups})
            if url.path == QUOTA_CRD:
                crd = YAML(typ="safe").load((TEAM_QUOTA / "config/crd/quotas.yaml").read_text())
                crd["metadata"].update({"uid": "u-1", "managedFields": [{}]})
                return self.answer(200, {**crd, "status": {"conditions": [{"type": "Established"}]}})
            if url.path == "/api/v1/namespaces/kube-system":
                return self.answer(200, {"metadata": {"name": "kube-system", "uid": "cluster-key-123"}})
            if url.path == "/apis/storage.k8s.io/v1/csinodes":
                return self.answer(403, {"message": 'csinodes.storage.k8s.io is forbidden: User "x" cannot list'})
            items = LISTS.get(url.path, [])
            limit = int(query.get("limit", ["500"])[0])
            start = int(query.get("continue", ["0"])[0])
            fake.pages.append(f"{url.path}@{start}")
            page = items[start : start + limit]
            more = str(start + limit) if start + limit < len(items) else ""
            return self.answer(200, {"metadata": {"continue": more}, "items": json.loads(json.dumps(page))})

    with serving(Handler) as url:
        yield fake, write_kubeconfig(tmp_path, url, {"token": fake.token})


def write_kubeconfig(tmp_path: Path, server: str, user: dict[str, Any], name: str = "kubeconfig") -> Path:
    path = tmp_path / name
    path.write_text(
        yamlio.dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": user}],
                "contexts": [
                    {"name": "ctx", "context": {"cluster": "c", "user": "u"}},
                    {"name": "other", "context": {}},
                ],
                "current-context": "ctx",
            }
        )
    )
    return path


def test_snapshot_writes_what_the_scheduler_reads(
    kplugin: Kplugin, api: tuple[Fake, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kplugin.kube import apiclient

    fake, config = api
    out = tmp_path / "snap.json"
    monkeypatch.setattr(apiclient, "LIST_PAGE", 2)  # pages of two
    run = kplugin("snapshot", "--kubeconfig", str(config), "-o", str(out))
    assert run.code == 0, run.stderr
    assert "/api/v1/pods@4" in fake.pages, "listed page by page"
    lines = run.stderr.splitlines()
    dra = [line for line in lines if line.startswith("note: DRA objects left out: the cluster serves resource.k8s.io/")]
    assert len(dra) == 1, "one note for the three DRA kinds"
    assert "note: csinodes left out: " in run.stderr
    assert "note: 1 pod(s) bound to nodes that no longer exist left out" in run.stderr
    assert lines[-1].startswith(
        "snapshot of Kubernetes v1.30.2: 4 namespaces, 1 priorityClasses, 2 nodes, 3 pods, 1 objects"
    )
    text = out.read_text()
    assert text.splitlines()[0] == (
        '{"source":{"anonymized":false,"kubernetes":"v1.30.2","unread":"csinodes (forbidden), '
        'deviceclasses (not served), resourceclaims (not served), resourceslices (not served)"},'
    )
    for secret in ("hunter2", "secret-app", "uid-", "managedFields", "last-applied", "10.0.0.1", "ownerReferences"):
        assert secret not in text, secret
    document = json.loads(text)
    assert [n["name"] for n in document["nodes"]] == ["worker-a", "worker-b"], "sorted"
    assert [(p["namespace"], p["name"]) for p in document["pods"]] == [
        ("kube-system", "dns-1"),
        ("shop", "web-1"),
        ("shop", "web-2"),
    ]
    web1 = document["pods"][1]
    assert web1 == {
        "name": "web-1",
        "namespace": "shop",
        "labels": {"app": "web"},
        "annotations": {"team": "data"},
        "nodeName": "worker-a",
        "nodeSelector": {"zone": "eu-1a"},
        "containers": [
            {
                "name": "app",
                "resources": {"requests": {"cpu": "100m"}},
                "ports": [{"containerPort": 9100, "hostPort": 9100}],
            }
        ],
    }
    assert document["nodes"][0]["taints"] == [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]
    assert {"name": "shop", "labels": {"tier": "prod"}} in document["namespaces"]
    assert document["priorityClasses"] == [{"name": "gold", "value": 1000}]
    (pdb,) = document["objects"]
    assert pdb["status"] == {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}
    assert pdb["metadata"] == {"name": "web", "namespace": "shop"}
    loaded = scenario.load_scenario(out)  # a scenario e2e reads
    assert [p.key for p in loaded.pods] == ["kube-system/dns-1", "shop/web-1", "shop/web-2"]
    assert loaded.objects[0].status == pdb["status"]
    again = tmp_path / "again.json"
    assert kplugin("snapshot", "--kubeconfig", str(config), "-o", str(again)).code == 0
    assert again.read_bytes() == out.read_bytes()
    # stdout and --namespace
    run = kplugin("snapshot", "--kubeconfig", str(config), "--namespace", "shop")
    assert run.code == 0, run.stderr
    source = json.loads(run.stdout)["source"]
    assert {k: v for k, v in source.items() if k != "unread"} == {
        "anonymized": False,
        "kubernetes": "v1.30.2",
        "namespaces": "shop",
    }


def pod_group_api(version: str) -> dict[str, list[dict[str, Any]]]:
    """A Workload and a PodGroup at ``version`` of scheduling.k8s.io, the group with the
    status the scheduler writes, and one pod of the group (served by the fake)."""
    group = f"scheduling.k8s.io/{version}"
    ref = (
        {"workloadRef": {"workloadName": "train", "templateName": "workers"}}
        if version == "v1beta1"
        else {"podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}}}
    )
    gang = {"gang": {"minCount": 2}}
    meta = {"namespace": "shop", "uid": "u-7", "resourceVersion": "3", "managedFields": [{}]}
    return {
        f"/apis/{group}/workloads": [
            {
                "apiVersion": group,
                "kind": "Workload",
                "metadata": {"name": "train", **meta},
                "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": gang}]},
            }
        ],
        f"/apis/{group}/podgroups": [
            {
                "apiVersion": group,
                "kind": "PodGroup",
                "metadata": {"name": "train-workers", **meta},
                "spec": {**ref, "schedulingPolicy": gang, "priorityClassName": "gold", "priority": 1000},
                "status": {"conditions": [{"type": "PodGroupScheduled", "status": "False"}]},
            }
        ],
        "/api/v1/pods": [pod("shop", "worker-0", schedulingGroup={"podGroupName": "train-workers"})],
    }


@pytest.mark.parametrize(
    ("served", "read"),
    [
        (("v1alpha2",), "v1alpha2"),  # 1.36
        (("v1beta1", "v1alpha3"), "v1beta1"),  # 1.37: the newest kplugin knows
        ((), None),  # the API is not turned on: nothing unread, nothing said
    ],
)
def test_workloads_and_pod_groups_at_the_version_the_cluster_serves(
    kplugin: Kplugin,
    api: tuple[Fake, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    served: tuple[str, ...],
    read: str | None,
) -> None:
    _, config = api
    lists: dict[str, list[dict[str, Any]]] = {}
    for version in ("v1alpha2", "v1beta1"):
        lists.update(pod_group_api(version) if version in served else {})
    monkeypatch.setattr(sys.modules[__name__], "SERVED", [*SERVED, *(f"scheduling.k8s.io/{v}" for v in served)])
    monkeypatch.setattr(sys.modules[__name__], "LISTS", {**LISTS, **lists})
    out = tmp_path / "snap.json"
    run = kplugin("snapshot", "--kubeconfig", str(config), "-o", str(out))
    assert run.code == 0, run.stderr
    document = json.loads(out.read_text())
    found = {o["kind"]: o for o in document["objects"] if o["kind"] in ("Workload", "PodGroup")}
    assert "podgroups" not in document["source"]["unread"] and "workloads" not in document["source"]["unread"]
    notes = [line for line in run.stderr.splitlines() if line.startswith("note:")]
    assert not [n for n in notes if n.startswith(("note: podgroups", "note: workloads"))], notes
    if read is None:
        assert found == {}
        return
    group = f"scheduling.k8s.io/{read}"
    assert found["Workload"] == {
        "apiVersion": group,
        "kind": "Workload",
        "metadata": {"name": "train", "namespace": "shop"},
        "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]},
    }
    spec = pod_group_api(read)[f"/apis/{group}/podgroups"][0]["spec"]
    del spec["priority"]  # the API server computes it from the class, and refuses one that differs
    assert found["PodGroup"] == {  # the scheduler's status dropped, the spec kept
        "apiVersion": group,
        "kind": "PodGroup",
        "metadata": {"name": "train-workers", "namespace": "shop"},
        "spec": spec,
    }
    kinds_in_order = [o["kind"] for o in document["objects"]]
    assert kinds_in_order.index("Workload") < kinds_in_order.index("PodGroup"), "what a PodGroup names comes first"
    (worker,) = [p for p in document["pods"] if p["name"] == "worker-0"]
    assert worker["schedulingGroup"] == {"podGroupName": "train-workers"}
    # anonymized: the group's name, the pod's reference and the Workload's all hashed alike
    masked = tmp_path / "masked.json"
    run = kplugin("snapshot", "--kubeconfig", str(config), "--anonymize", "--salt", "k", "-o", str(masked))
    assert run.code == 0, run.stderr
    text = masked.read_text()
    assert "train" not in text and "workers" not in text
    a = anonymizer.Anonymizer("k")
    hidden = {o["kind"]: o for o in json.loads(text)["objects"]}
    assert hidden["PodGroup"]["metadata"]["name"] == a.word("train-workers")
    assert hidden["Workload"]["spec"]["podGroupTemplates"][0]["name"] == a.word("workers")
    loaded = scenario.load_scenario(out)  # e2e reads it: the two as objects of their kinds
    assert sorted(o.info.kind for o in loaded.objects if scenario.is_workload_api(o)) == ["PodGroup", "Workload"]


def test_anonymized_snapshot_keeps_references(kplugin: Kplugin, api: tuple[Fake, Path], tmp_path: Path) -> None:
    _, config = api
    out = tmp_path / "masked.json"
    run = kplugin("snapshot", "--kubeconfig", str(config), "--anonymize", "--keep-label", "zone", "-o", str(out))
    assert run.code == 0, run.stderr
    text = out.read_text()
    for hidden in ("worker-a", "worker-b", "web-1", '"shop"', '"data"', '"prod"', '"yes"'):
        assert hidden not in text, hidden
    document = json.loads(text)
    nodes = {n["name"]: n for n in document["nodes"]}
    for name, entry in nodes.items():
        assert entry["labels"]["kubernetes.io/hostname"] == name, "the hostname label is the node's name again"
    pods = {p["name"]: p for p in document["pods"]}
    assert "kube-system" in {p["namespace"] for p in pods.values()}, "Kubernetes' own namespaces keep their names"
    web1 = next(p for p in pods.values() if "nodeSelector" in p)
    assert web1["nodeSelector"] == {"zone": "eu-1a"}, "--keep-label keeps the values of that key"
    assert web1["nodeName"] in nodes and nodes[web1["nodeName"]]["labels"]["zone"] == "eu-1a"
    web2 = next(p for p in pods.values() if "affinity" in p)
    term = web2["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term["matchFields"][0]["values"][0] in nodes, "matchFields metadata.name: a node's new name"
    anti = web2["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["labelSelector"]["matchLabels"]["app"] == web1["labels"]["app"], "selectors still select"
    assert anti["namespaces"] == [web2["namespace"], "default"]
    assert web2["tolerations"][0]["value"] == next(iter(nodes.values()))["taints"][0]["value"], (
        "tolerations still match"
    )
    assert [c["name"] for c in web2["containers"]] == ["c0"]
    assert document["source"]["anonymized"] is True
    scenario.load_scenario(out)
    # the key is the cluster's kube-system uid by default; another --salt gives other names
    again = tmp_path / "again.json"
    assert (
        kplugin("snapshot", "--kubeconfig", str(config), "--anonymize", "--keep-label", "zone", "-o", str(again)).code
        == 0
    )
    assert again.read_bytes() == out.read_bytes()
    salted = tmp_path / "salted.json"
    assert kplugin("snapshot", "--kubeconfig", str(config), "--anonymize", "--salt", "s3", "-o", str(salted)).code == 0
    assert {n["name"] for n in json.loads(salted.read_text())["nodes"]}.isdisjoint(nodes)


def test_anonymizer_is_one_keyed_hash() -> None:
    a = anonymizer.Anonymizer("k", ("team",))
    assert a.word("node-1") == a.word("node-1") != anonymizer.Anonymizer("j", ()).word("node-1")
    assert a.labels({"team": "ml", "app": "web", "empty": ""}) == {"team": "ml", "app": a.word("web"), "empty": ""}
    assert a.value(entries.NAMESPACE_NAME_LABEL, "kube-system") == "kube-system"
    assert a.value(entries.NAMESPACE_NAME_LABEL, "shop") == a.word("shop") == a.namespace("shop")
    assert len(a.word("x" * 300)) == 16
    quota = {"apiVersion": "quota.example.com/v1alpha1", "kind": "Quota", "metadata": {"name": "team-a"}}
    with pytest.raises(OperationError, match="no anonymization rules for Quota objects"):
        a.entry(Section.OBJECTS, quota)  # a kind without rules is never passed on as it is


def test_unreachable_and_unauthorized_clusters_are_one_line(
    kplugin: Kplugin, api: tuple[Fake, Path], tmp_path: Path
) -> None:
    import socket

    fake, config = api
    fake.token = "rotated"
    run = kplugin("snapshot", "--kubeconfig", str(config))
    assert run.code == 1, run.stderr
    (line,) = [x for x in run.stderr.splitlines() if not x.startswith("snapshot of ")]
    assert line.startswith("kplugin: error: the API server at http://127.0.0.1:")
    assert f"(context ctx of {config}) refused the credentials (401 Unauthorized): Unauthorized" in line
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    closed = write_kubeconfig(tmp_path, f"https://127.0.0.1:{port}", {"token": "t"}, "closed")
    assert kplugin("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path)).code == 0
    project = tmp_path / "gpu"
    for command in (["snapshot", "--kubeconfig", str(closed)], ["e2e", str(project), "--kubeconfig", str(closed)]):
        run = kplugin(*command)
        assert run.code == 1, run.stderr
        errors = [x for x in run.stderr.splitlines() if x.startswith("kplugin:")]
        assert errors == [
            f"kplugin: error: cannot reach the API server at https://127.0.0.1:{port} (context ctx of {closed}): "
            "Connection refused"
        ]
        assert "Traceback" not in run.stderr
    assert not (project / "bin").exists(), "e2e stops before it builds anything"


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        (["--namespace", "Shop"], "--namespace 'Shop' is not a DNS-1123 label"),
        (["--keep-label", "bad key"], "--keep-label 'bad key' is not a qualified name"),
        (["--salt", "x"], "--salt and --keep-label go with --anonymize"),
        (["--anonymize", "--salt", ""], "--salt '' is empty"),
        (["--context", "nope"], "no context named 'nope'"),
        (["--context", "other"], "no cluster named None"),
        (["--kubeconfig", "/nonexistent/k"], "--kubeconfig /nonexistent/k: no such file"),
    ],
)
def test_bad_snapshot_options(kplugin: Kplugin, api: tuple[Fake, Path], options: list[str], needle: str) -> None:
    _, config = api
    args = options if "--kubeconfig" in options else ["--kubeconfig", str(config), *options]
    run = kplugin("snapshot", *args)
    assert run.code == 2, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert needle in line, line


def test_an_existing_output_needs_force(kplugin: Kplugin, api: tuple[Fake, Path], tmp_path: Path) -> None:
    _, config = api
    out = tmp_path / "o.json"
    out.write_text("keep me")
    run = kplugin("snapshot", "--kubeconfig", str(config), "-o", str(out))
    assert run.code == 2 and "exists; pass --force" in run.stderr
    assert out.read_text() == "keep me"
    assert kplugin("snapshot", "--kubeconfig", str(config), "-o", str(out), "--force").code == 0


def test_a_failed_snapshot_writes_nothing(kplugin: Kplugin, api: tuple[Fake, Path], tmp_path: Path) -> None:
    fake, config = api
    fake.token = "wrong"
    out = tmp_path / "o.json"
    assert kplugin("snapshot", "--kubeconfig", str(config), "-o", str(out)).code == 1
    assert list(tmp_path.glob("*o.json*")) == []


# --- kubeconfigs -------------------------------------------------------------------------------


def test_kubeconfig_credentials(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("from-a-file\n")
    path = write_kubeconfig(tmp_path, "https://example.com:6443", {"tokenFile": "token"})
    config = kubeconfig.load(path)
    assert kubeconfig.endpoint(config).token == "from-a-file"
    narrowed = config.narrowed()
    assert narrowed["current-context"] == "ctx" and len(narrowed["contexts"]) == 1
    assert narrowed["users"][0]["user"]["tokenFile"] == str(token_file), "made absolute for the scheduler"
    plugin = tmp_path / "get-token"
    plugin.write_text(
        '#!/bin/sh\necho "$KUBERNETES_EXEC_INFO" >' + str(tmp_path / "info") + "\n"
        'echo \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
        '"status":{"token":"exec-token"}}\'\n'
    )
    plugin.chmod(0o755)
    path = write_kubeconfig(tmp_path, "https://example.com", {"exec": {"command": str(plugin), "args": ["--x"]}})
    assert kubeconfig.endpoint(kubeconfig.load(path)).token == "exec-token"
    assert json.loads((tmp_path / "info").read_text())["kind"] == "ExecCredential"


@pytest.mark.parametrize(
    ("user", "server", "needle"),
    [
        ({"auth-provider": {"name": "gcp"}}, "https://x", "authenticates with auth-provider, which kplugin does not"),
        ({"username": "u", "password": "p"}, "https://x", "authenticates with username"),
        ({"token": "t"}, "ftp://x", "has no https:// server"),
        ({"client-certificate-data": "!!!"}, "https://x", "client-certificate-data is not base64"),
    ],
)
def test_kubeconfigs_refused(tmp_path: Path, user: dict[str, Any], server: str, needle: str) -> None:
    path = write_kubeconfig(tmp_path, server, user)
    with pytest.raises(UsageError, match=needle):
        kubeconfig.endpoint(kubeconfig.load(path))


# --- the file's mode, what the snapshot could not read -------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o000])
@pytest.mark.parametrize("anonymize", [False, True], ids=["plain", "anonymized"])
def test_snapshot_files_are_owner_only(
    kplugin: Kplugin, api: tuple[Fake, Path], tmp_path: Path, umask: int, anonymize: bool
) -> None:
    import os
    import stat

    _, config = api
    out = tmp_path / "snap.json"
    previous = os.umask(umask)
    try:
        options = ["--anonymize"] if anonymize else []
        assert kplugin("snapshot", "--kubeconfig", str(config), "-o", str(out), *options).code == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o600, "a new snapshot: its owner's only"
        out.chmod(0o640)
        assert kplugin("snapshot", "--kubeconfig", str(config), "-o", str(out), "--force", *options).code == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o640, "--force keeps the existing file's mode"
    finally:
        os.umask(previous)


def test_the_header_says_what_the_snapshot_could_not_read_and_e2e_says_so(
    kplugin: Kplugin, api: tuple[Fake, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, config = api
    out = tmp_path / "snap.json"
    assert kplugin("snapshot", "--kubeconfig", str(config), "-o", str(out)).code == 0
    unread = json.loads(out.read_text())["source"]["unread"]
    assert unread == (
        "csinodes (forbidden), deviceclasses (not served), resourceclaims (not served), resourceslices (not served)"
    )
    assert scenario.load_scenario(out).source["unread"] == unread
    assert kplugin("new", "gpu", "--k8s", "1.28.3", "--no-tidy", "-o", str(tmp_path)).code == 0
    monkeypatch.setenv("PATH", str(tmp_path))  # no etcd: e2e stops after reading its inputs
    monkeypatch.delenv("KPLUGIN_ETCD", raising=False)
    run = kplugin("e2e", str(tmp_path / "gpu"), "--scenario", str(out))
    assert run.code == 1, run.stderr
    notes = [line for line in run.stderr.splitlines() if "could not read" in line]
    assert notes == [f"note: {out}: the snapshot could not read {unread}: the replay has none of those objects"]


def test_anonymize_drivers_goes_with_anonymize(kplugin: Kplugin, api: tuple[Fake, Path], tmp_path: Path) -> None:
    _, config = api
    out = tmp_path / "o.json"
    run = kplugin("snapshot", "--kubeconfig", str(config), "--anonymize-drivers", "-o", str(out))
    assert run.code == 2
    assert run.stderr.strip().splitlines() == [
        "kplugin: error: --anonymize-drivers goes with --anonymize; add --anonymize"
    ]
    assert not out.exists()


def test_a_snapshot_to_a_full_stdout_is_one_error(api: tuple[Fake, Path]) -> None:
    """The scenario on stdout, and stdout is a full disk: one line, exit 1 (issue 27)."""
    from support import hostile

    _, config = api
    with open("/dev/full", "w") as full:
        result = hostile.cli("snapshot", "--kubeconfig", str(config), stdout=full)
    hostile.refused(result, 1, "writing to stdout: No space left on device", progress=("snapshot of ", "  "))


def test_a_projects_own_kinds_join_the_snapshot(kplugin: Kplugin, api: tuple[Fake, Path], tmp_path: Path) -> None:
    """--project adds the CRDs of the project's config/crd/ as the cluster has them and
    every object of their kinds, kept whole; e2e reads the snapshot back. --anonymize
    cannot promise anything about fields kplugin does not know: refused."""
    _, config = api
    out = tmp_path / "snap.json"
    run = kplugin("snapshot", "--kubeconfig", str(config), "--project", str(TEAM_QUOTA), "-o", str(out))
    assert run.code == 0, run.stderr
    document = json.loads(out.read_text())
    crd, pdb, quota = document["objects"]
    assert pdb["kind"] == "PodDisruptionBudget", "CRDs first, the built-in kinds, then the custom ones"
    assert (crd["kind"], crd["metadata"], "status" in crd) == (
        "CustomResourceDefinition",
        {"name": "quotas.quota.example.com"},
        False,
    )
    assert quota == {
        "apiVersion": "quota.example.com/v1alpha1",
        "kind": "Quota",
        "metadata": {"name": "cpu", "namespace": "shop"},
        "spec": {"hard": {"cpu": "4"}},
    }
    loaded = scenario.load_scenario(out)
    (read,) = [o for o in loaded.objects if o.info.kind == "Quota"]
    assert (read.info.plural, read.namespace) == ("quotas", "shop"), "its plural from the snapshot's CRD"
    run = kplugin("snapshot", "--kubeconfig", str(config), "--project", str(TEAM_QUOTA), "--anonymize")
    assert run.code == 2 and "--anonymize cannot anonymize a project's own kinds" in run.stderr, run.stderr
    gpu = tmp_path / "gpu"
    assert kplugin("new", "gpu", "--no-tidy", "-o", str(tmp_path)).code == 0
    run = kplugin("snapshot", "--kubeconfig", str(config), "--project", str(gpu))
    assert run.code == 2 and run.stderr.strip().endswith("holds no CustomResourceDefinition"), run.stderr


def test_an_adopted_repository_s_recorded_crds_join_the_snapshot(
    kplugin: Kplugin, api: tuple[Fake, Path], tmp_path: Path
) -> None:
    """An adopted repository keeps its CRDs where it likes (kplugin.yaml's adopted.crds):
    --project reads those files, not config/crd/."""
    import shutil

    _, config = api
    repository = Path(shutil.copytree(REPO / "tests/fixtures/adopt/forkshape", tmp_path / "forkshape"))
    assert kplugin("adopt", str(repository)).code == 0
    crd = repository / "manifests/crds/example.com_quotas.yaml"
    crd.write_text((TEAM_QUOTA / "config/crd/quotas.yaml").read_text())
    out = tmp_path / "snap.json"
    run = kplugin("snapshot", "--kubeconfig", str(config), "--project", str(repository), "-o", str(out))
    assert run.code == 0, run.stderr
    kinds = [o["kind"] for o in json.loads(out.read_text())["objects"]]
    assert kinds[0] == "CustomResourceDefinition" and "Quota" in kinds
    crd.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: not-a-crd}\n")
    run = kplugin("snapshot", "--kubeconfig", str(config), "--project", str(repository))
    assert run.code == 2 and "its recorded CRD files hold no CustomResourceDefinition" in run.stderr, run.stderr
