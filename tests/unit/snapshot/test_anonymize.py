"""kplugin snapshot --anonymize against the stand-in API server: a cluster generated from
kplugin.snapshot.anonymize's TABLE (a unique marker in every string field the table names,
and in fields it does not) leaves no marker behind but those the table keeps on purpose;
every reference of tests/support/refcluster still matches after hashing, with and
without --anonymize-drivers; the header's namespaces are hashed too. The replay of an
anonymized snapshot is in test_integration_snapshot."""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import REPO, Kplugin, refcluster
from support.fakeapi import JsonHandler, serving

from kplugin.core import yamlio
from kplugin.kube import kinds
from kplugin.scenario import entries
from kplugin.scenario import format as scenario
from kplugin.snapshot import anonymize
from kplugin.snapshot.anonymize import Act, Position, Rule
from kplugin.snapshot.anonymizer import Anonymizer

SALT = "test-key"
SERVED = [
    "policy/v1",
    "scheduling.k8s.io/v1",
    "scheduling.k8s.io/v1beta1",  # Workloads and PodGroups (kinds.GATED)
    "storage.k8s.io/v1",
    "node.k8s.io/v1",
    "resource.k8s.io/v1",
]
NAMESPACED = re.compile(r"^(?P<root>/apis?/.*?)/namespaces/(?P<ns>[^/]+)/(?P<plural>[^/]+)$")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[dict[str, list[dict[str, Any]]], Path]]:
    """The stand-in API server: fill the returned lists (by API path) before snapshotting."""
    lists: dict[str, list[dict[str, Any]]] = {}

    class Handler(JsonHandler):
        def do_GET(self) -> None:
            path = urllib.parse.urlsplit(self.path).path
            if path == "/version":
                return self.answer(200, {"gitVersion": "v1.37.2"})
            if path == "/apis":
                return self.answer(200, {"groups": [{"versions": [{"groupVersion": v}]} for v in SERVED]})
            if path == "/api/v1/namespaces/kube-system":
                return self.answer(200, {"metadata": {"name": "kube-system", "uid": "uid-123"}})
            match = NAMESPACED.match(path)
            if match and match["plural"] != "namespaces":
                everywhere = lists.get(f"{match['root']}/{match['plural']}", [])
                items = [o for o in everywhere if o["metadata"].get("namespace") == match["ns"]]
            else:
                items = lists.get(path, [])
            return self.answer(200, {"metadata": {"continue": ""}, "items": items})

    with serving(Handler) as url:
        config = tmp_path / "kubeconfig"
        config.write_text(
            yamlio.dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "c", "cluster": {"server": url}}],
                    "users": [{"name": "u", "user": {"token": "t"}}],
                    "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
                    "current-context": "ctx",
                }
            )
        )
        yield lists, config


def kind_of(obj: dict[str, Any]) -> kinds.KindInfo:
    info = kinds.ALL.get(obj["kind"]) or kinds.gated(obj["apiVersion"], obj["kind"])
    assert info is not None, obj["kind"]
    return info


def serve(lists: dict[str, list[dict[str, Any]]], objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        lists.setdefault(kind_of(obj).path(), []).append(obj)


def snap(kplugin: Kplugin, config: Path, out: Path, *options: str) -> dict[str, Any]:
    run = kplugin("snapshot", "--kubeconfig", str(config), "-o", str(out), "--force", *options)
    assert run.code == 0, run.stderr
    document: dict[str, Any] = json.loads(out.read_text())
    return document


# --- every field of the table, with a marker --------------------------------------------------


class Markers:
    """Builds a value for a rule with a unique marker in each string, remembering which
    markers the table keeps on purpose (``kept``) and which it keeps unless drivers are
    hashed too (``drivers``)."""

    def __init__(self) -> None:
        self.count = 0
        self.kept: set[str] = set()
        self.drivers: set[str] = set()
        self.gone: set[str] = set()

    def new(self, where: set[str]) -> str:
        self.count += 1
        marker = f"mk{self.count:05d}x"
        where.add(marker)
        return marker

    def build(self, rule: Rule) -> Any:
        if isinstance(rule, dict):
            built = {key: self.build(sub) for key, sub in rule.items()}
            built["notInTheTable"] = self.new(self.gone)  # proves that unknown fields go
            return built
        if isinstance(rule, list):
            return [self.build(rule[0])]
        if isinstance(rule, Position):
            return self.new(self.gone)
        return self.act(rule)

    def act(self, act: Act) -> Any:
        if act is Act.KEEP:
            return self.new(self.kept)
        if act is Act.LABELS:
            return {self.new(self.kept): self.new(self.gone)}
        if act is Act.VALUES:
            return [self.new(self.gone)]
        if act is Act.RESOURCES:
            return {f"{self.new(self.drivers)}.example/{self.new(self.drivers)}": self.new(self.kept)}
        if act is Act.ATTRIBUTES:
            name = f"{self.new(self.drivers)}.example/{self.new(self.kept)}"
            return {name: {"string": self.new(self.gone), "strings": [self.new(self.gone)], "int": 1}}
        if act in (Act.DRIVER, Act.RESOURCE_NAME):
            return f"{self.new(self.drivers)}.example/{self.new(self.drivers)}"
        if act is Act.ATTRIBUTE_NAME:
            return f"{self.new(self.drivers)}.example/{self.new(self.kept)}"
        if act is Act.CEL:
            return f'device.attributes["{self.new(self.drivers)}"].x == "{self.new(self.gone)}"'
        return self.new(self.gone)  # hashed, or dropped


def as_object(kind: str, built: dict[str, Any]) -> dict[str, Any]:
    """A scenario entry's fields put back where the API has them (entries.origin)."""
    info = kinds.ALL.get(kind) or next(k for k in kinds.GATED if k.kind == kind)  # the newest version
    if "metadata" in built:  # the table has it as an object already
        return {**built, "apiVersion": info.api_version, "kind": kind}
    obj: dict[str, Any] = {"apiVersion": info.api_version, "kind": kind, "metadata": {}}
    for key, value in built.items():
        where = entries.origin(key).split(".")
        parent = obj
        for part in where[:-1]:
            parent = parent.setdefault(part, {})
        parent[where[-1]] = value
    return obj


def test_the_table_covers_every_kind_the_snapshot_reads() -> None:
    assert set(anonymize.TABLE) == set(kinds.CORE) | {k.kind for k in (*kinds.KINDS, *kinds.GATED)}
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### `kplugin snapshot`") : readme.index("### `kplugin bench`")]
    assert [kind for kind in anonymize.TABLE if kind not in section] == [], "the README's table names every kind"


@pytest.mark.parametrize("drivers", [False, True], ids=["default", "anonymize-drivers"])
def test_no_marker_survives_but_what_the_table_keeps(
    kplugin: Kplugin, cluster: tuple[dict[str, list[dict[str, Any]]], Path], tmp_path: Path, drivers: bool
) -> None:
    lists, config = cluster
    markers = Markers()
    objects = [as_object(kind, markers.build(rule)) for kind, rule in sorted(anonymize.TABLE.items())]
    node = next(o for o in objects if o["kind"] == "Node")
    pod = next(o for o in objects if o["kind"] == "Pod")
    pod["spec"]["nodeName"] = node["metadata"]["name"]  # a pod bound to a node the snapshot has
    pod["spec"]["volumes"].append({"name": markers.new(markers.gone), "ephemeral": {"volumeClaimTemplate": {}}})
    serve(lists, objects)
    out = tmp_path / "masked.json"
    options = ("--anonymize", "--salt", SALT, *(("--anonymize-drivers",) if drivers else ()))
    document = snap(kplugin, config, out, *options)
    text = out.read_text()
    assert sorted(len(document[s]) for s in ("nodes", "pods", "namespaces", "priorityClasses")) == [1, 1, 1, 1]
    assert len(document["objects"]) == len(kinds.KINDS) + 2, "one object of each other kind, Workload, PodGroup"
    left = {m for m in markers.gone if m in text}
    assert not left, f"markers the table does not keep survived: {sorted(left)}"
    kept = {m for m in markers.kept if m in text}
    assert len(kept) > 0.8 * len(markers.kept), "what the table keeps is there (apiVersion and kind are the real ones)"
    found_drivers = {m for m in markers.drivers if m in text}
    if drivers:
        assert not found_drivers, sorted(found_drivers)
    else:
        assert found_drivers == markers.drivers, "driver and extended resource names are kept by default"
    assert markers.count > 300, "every field of every kind"


# --- every reference still matches -----------------------------------------------------------


def by_kind(document: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for obj in document["objects"]:
        found.setdefault(obj["kind"], []).append(obj)
    return found


@pytest.mark.parametrize("drivers", [False, True], ids=["default", "anonymize-drivers"])
def test_references_still_match(
    kplugin: Kplugin, cluster: tuple[dict[str, list[dict[str, Any]]], Path], tmp_path: Path, drivers: bool
) -> None:
    lists, config = cluster
    serve(lists, refcluster.objects(dra=True, allocated=True) + refcluster.pod_groups())
    out = tmp_path / "masked.json"
    options = ("--anonymize", "--salt", SALT, *(("--anonymize-drivers",) if drivers else ()))
    document = snap(kplugin, config, out, "--namespace", "shop", *options)
    text = out.read_text()
    for secret in (*refcluster.SECRETS, "n-a", "pv-gold", "gold-data", "sandboxed", "runsc", "train-gpu", '"one"',
                   "trainer", "workers"):  # fmt: skip
        assert secret not in text, secret
    a = Anonymizer(SALT, (), drivers)
    assert document["source"]["namespaces"] == a.word("shop"), "the header's namespaces are hashed too"
    assert document["source"].get("anonymizedDrivers", False) is drivers
    objects = by_kind(document)
    nodes = {n["name"]: n for n in document["nodes"]}
    node_a = nodes[a.word("n-a")]
    pods = {p["name"]: p for p in document["pods"]}
    # RuntimeClass: its node selector and tolerations match the node's labels and taint
    (runtime,) = objects["RuntimeClass"]
    assert runtime["scheduling"]["nodeSelector"] == {"zone": node_a["labels"]["zone"]}
    assert runtime["scheduling"]["tolerations"][0]["value"] == node_a["taints"][0]["value"]
    sandboxed = pods[a.word("sandboxed")]
    assert sandboxed["runtimeClassName"] == runtime["metadata"]["name"]
    assert sandboxed["nodeSelector"] == runtime["scheduling"]["nodeSelector"]
    # PV and PVC: names, the claim's selector, the binding both ways, the class
    volumes = {v["metadata"]["name"]: v for v in objects["PersistentVolume"]}
    claims = {c["metadata"]["name"]: c for c in objects["PersistentVolumeClaim"]}
    gold = claims[a.word("gold-data")]
    pv = volumes[gold["spec"]["volumeName"]]
    assert gold["spec"]["selector"]["matchLabels"] == pv["metadata"]["labels"]
    assert pv["spec"]["claimRef"] == {"namespace": gold["metadata"]["namespace"], "name": gold["metadata"]["name"]}
    assert pv["spec"]["storageClassName"] == gold["spec"]["storageClassName"]
    assert pv["spec"]["local"]["path"].startswith("/")
    term = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
    assert term["values"] == [node_a["name"]]
    nfs = volumes[a.word("pv-nfs")]["spec"]
    assert set(nfs) == {"capacity", "accessModes", "storageClassName", "nfs"} and nfs["nfs"]["path"].startswith("/")
    uses_gold = pods[a.word("uses-gold")]
    assert uses_gold["volumes"][0]["persistentVolumeClaim"]["claimName"] == gold["metadata"]["name"]
    assert uses_gold["priorityClassName"] == document["priorityClasses"][0]["name"]
    # the ephemeral volume's claim: <hashed pod>-<hashed volume>, as the API server names it
    job = pods[a.word("scratch-job")]
    ephemeral = f"{job['name']}-{job['volumes'][0]['name']}"
    assert job["volumes"][0]["persistentVolumeClaim"]["claimName"] == ephemeral and ephemeral in claims
    assert "dataSource" not in claims[ephemeral]["spec"]
    assert job["schedulingGates"] == [{"name": a.word("example.com/quota")}]
    # topology: the StorageClass's and the capacity's match node b's label
    classes = {c["metadata"]["name"]: c for c in objects["StorageClass"]}
    zonal = classes[a.word("zonal")]
    node_b = nodes[a.word("n-b")]
    assert zonal["allowedTopologies"][0]["matchLabelExpressions"][0]["values"] == [
        node_b["labels"][refcluster.TOPOLOGY]
    ]
    assert "parameters" not in zonal and "mountOptions" not in zonal
    (capacity,) = objects["CSIStorageCapacity"]
    assert capacity["nodeTopology"]["matchLabels"] == {refcluster.TOPOLOGY: node_b["labels"][refcluster.TOPOLOGY]}
    assert capacity["storageClassName"] == zonal["metadata"]["name"]
    (csinode,) = objects["CSINode"]
    assert csinode["metadata"]["name"] == node_b["name"]
    (csidriver,) = objects["CSIDriver"]
    assert zonal["provisioner"] == csidriver["metadata"]["name"] == csinode["spec"]["drivers"][0]["name"]
    assert classes[a.word("local")]["provisioner"] == "kubernetes.io/no-provisioner", "Kubernetes' own stays"
    # DRA: class, pool, device, request names, the CEL literal and the attribute, the node
    (device_class,) = objects["DeviceClass"]
    (slice_,) = objects["ResourceSlice"]
    (claim,) = objects["ResourceClaim"]
    train = pods[a.word("train")]
    assert train["resourceClaims"][0]["resourceClaimName"] == claim["metadata"]["name"]
    assert train["containers"][0]["resources"]["claims"][0]["name"] == train["resourceClaims"][0]["name"]
    request = claim["spec"]["devices"]["requests"][0]
    assert train["containers"][0]["resources"]["claims"][0]["request"] == request["name"]
    assert claim["spec"]["devices"]["constraints"][0]["requests"] == [request["name"]]
    assert request["exactly"]["deviceClassName"] == device_class["metadata"]["name"]
    assert "config" not in claim["spec"]["devices"] and "config" not in device_class["spec"]
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    device = slice_["spec"]["devices"][0]
    assert (result["request"], result["pool"], result["device"]) == (
        request["name"],
        slice_["spec"]["pool"]["name"],
        device["name"],
    )
    assert result["driver"] == slice_["spec"]["driver"]
    selector = claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]
    assert selector["values"] == [node_a["name"]] == [slice_["spec"]["nodeName"]]
    model = device["attributes"]["model"]["string"]
    expression = device_class["spec"]["selectors"][0]["cel"]["expression"]
    driver = slice_["spec"]["driver"]
    assert expression == f'device.driver == "{driver}" && device.attributes["{driver}"].model == "{model}"'
    assert (driver == refcluster.DRIVER) is not drivers
    assert claim["spec"]["devices"]["constraints"][0]["matchAttribute"] == f"{driver}/model"
    # the pod-group API: the pods' group, the group's Workload and template, the class
    (workload,) = objects["Workload"]
    (group,) = objects["PodGroup"]
    assert group["apiVersion"] == workload["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert group["metadata"]["name"] == a.word("trainer-workers")
    for worker in (pods[a.word("worker-0")], pods[a.word("worker-1")]):
        assert worker["schedulingGroup"] == {"podGroupName": group["metadata"]["name"]}
    (template,) = workload["spec"]["podGroupTemplates"]
    assert group["spec"]["workloadRef"] == {
        "workloadName": workload["metadata"]["name"],
        "templateName": template["name"],
    }
    assert group["spec"]["schedulingPolicy"] == template["schedulingPolicy"] == {"gang": {"minCount": 2}}
    assert group["spec"]["priorityClassName"] == template["priorityClassName"] == document["priorityClasses"][0]["name"]
    assert workload["metadata"]["labels"] == {"app": a.value("app", "trainer")}
    # extended resources: kept, or hashed into another extended resource name
    gpu = next(k for k in node_a["capacity"] if "/" in k)
    assert gpu == (f"{a.word('example.com')}/{a.word('gpu')}" if drivers else refcluster.GPU)
    scenario.load_scenario(out)  # still a scenario e2e reads


def test_cel_literals() -> None:
    a = Anonymizer(SALT, (), drivers=True)
    expression = (
        "device.capacity['d.example'].memory.compareTo(quantity(\"1Gi\")) >= 0 && "
        '"d.example" == device.driver && device.attributes["d.example"].v.isGreaterThan(semver("1.0.0")) && '
        'device.attributes["d.example"].model in ["a", "b\\"c"]'
    )
    d, m1, m2 = a.word("d.example"), a.word("a"), a.word('b\\"c')
    assert a.cel(expression) == (
        f"device.capacity['{d}'].memory.compareTo(quantity(\"1Gi\")) >= 0 && "
        f'"{d}" == device.driver && device.attributes["{d}"].v.isGreaterThan(semver("1.0.0")) && '
        f'device.attributes["{d}"].model in ["{m1}", "{m2}"]'
    )
    assert Anonymizer(SALT).cel('device.driver == "d.example"') == 'device.driver == "d.example"'
    assert a.resource_name("example.com/gpu") == f"{a.word('example.com')}/{a.word('gpu')}"
    assert a.resource_name("hugepages-2Mi") == "hugepages-2Mi" and a.driver("kubernetes.io/x") == "kubernetes.io/x"
