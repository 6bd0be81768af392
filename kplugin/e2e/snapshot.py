"""``kplugin snapshot``: a real cluster's scheduling state as a scenario.

Everything the scheduler's plugins read is listed through the API, page by page: nodes,
pods in every namespace (bound and pending), namespaces, PriorityClasses, and where the
cluster serves them PodDisruptionBudgets, PersistentVolumes and Claims, StorageClasses,
CSINodes and CSIDrivers, CSIStorageCapacities, RuntimeClasses and the DRA objects
(DeviceClasses, ResourceSlices, ResourceClaims of resource.k8s.io/v1). Each object
becomes a scenario entry (kplugin.e2e.entries: status, managedFields, uids and
resourceVersions dropped), and the scenario is written as JSON with one entry per line,
each section sorted by name: the same cluster gives the same bytes.

``anonymize`` renames nodes, pods and namespaces and replaces label, annotation and
taint values, all through one keyed hash (HMAC-SHA256), so that every reference still
matches: a pod's nodeName and its node, a selector and the labels it selects, the
hostname label and the node's name. Label keys are kept, and the values of the keys in
``keep_labels``; Kubernetes' own namespaces keep their names. The key is ``salt``, by
default the uid of the cluster's kube-system namespace: the same cluster gives the same
names, which nobody without access to the cluster can reverse by guessing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kplugin.core.errors import OperationError
from kplugin.e2e import entries
from kplugin.e2e.scenario import EXISTING_NAMESPACES
from kplugin.kube import kinds
from kplugin.kube.apiclient import ApiError, Client

Counter = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Request:
    namespaces: tuple[str, ...] = ()  # () : every namespace
    anonymize: bool = False
    salt: str | None = None
    keep_labels: tuple[str, ...] = ()


@dataclass
class Result:
    kubernetes: str
    counts: dict[str, int] = field(default_factory=dict)  # section -> entries written
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    bytes: int = 0


class Anonymizer:
    """One keyed hash for every name and value (see the module docstring)."""

    def __init__(self, salt: str, keep_labels: tuple[str, ...]) -> None:
        self.key = salt.encode()
        self.keep = frozenset(keep_labels)
        self._memo: dict[str, str] = {}

    def word(self, value: str) -> str:
        if not value:
            return value
        found = self._memo.get(value)
        if found is None:
            digest = hmac.new(self.key, value.encode(), hashlib.sha256).hexdigest()
            found = self._memo[value] = "a" + digest[:15]
        return found

    def namespace(self, value: str) -> str:
        return value if value in EXISTING_NAMESPACES else self.word(value)

    def value(self, key: str, value: Any) -> Any:
        """A label value (or a selector's value) under ``key``."""
        if not isinstance(value, str) or key in self.keep:
            return value
        if key == entries.NAMESPACE_NAME_LABEL:
            return self.namespace(value)
        return self.word(value)

    def labels(self, labels: Any) -> Any:
        if not isinstance(labels, dict):
            return labels
        return {k: self.value(k, v) for k, v in labels.items()}

    def annotations(self, annotations: Any) -> Any:
        if not isinstance(annotations, dict):
            return annotations
        return {k: self.word(v) if isinstance(v, str) else v for k, v in annotations.items()}

    def requirements(self, requirements: Any) -> Any:
        if not isinstance(requirements, list):
            return requirements
        out = []
        for req in requirements:
            if isinstance(req, dict) and isinstance(req.get("values"), list):
                req = {**req, "values": [self.value(str(req.get("key")), v) for v in req["values"]]}
            out.append(req)
        return out

    def fields(self, requirements: Any) -> Any:
        """matchFields: metadata.name is a node's name."""
        if not isinstance(requirements, list):
            return requirements
        return [
            {**r, "values": [self.word(v) if isinstance(v, str) else v for v in r.get("values") or []]}
            if isinstance(r, dict)
            else r
            for r in requirements
        ]

    def selector(self, selector: Any) -> Any:
        if not isinstance(selector, dict):
            return selector
        out = dict(selector)
        if "matchLabels" in out:
            out["matchLabels"] = self.labels(out["matchLabels"])
        if "matchExpressions" in out:
            out["matchExpressions"] = self.requirements(out["matchExpressions"])
        return out

    def node_terms(self, terms: Any) -> Any:
        if not isinstance(terms, list):
            return terms
        out = []
        for term in terms:
            if isinstance(term, dict):
                term = {
                    **term,
                    **(
                        {"matchExpressions": self.requirements(term["matchExpressions"])}
                        if "matchExpressions" in term
                        else {}
                    ),
                    **({"matchFields": self.fields(term["matchFields"])} if "matchFields" in term else {}),
                }
            out.append(term)
        return out

    def pod_terms(self, terms: Any) -> Any:
        if not isinstance(terms, list):
            return terms
        out = []
        for term in terms:
            if isinstance(term, dict):
                term = dict(term)
                for key in ("labelSelector", "namespaceSelector"):
                    if key in term:
                        term[key] = self.selector(term[key])
                if isinstance(term.get("namespaces"), list):
                    term["namespaces"] = [self.namespace(n) for n in term["namespaces"]]
            out.append(term)
        return out

    def affinity(self, affinity: Any) -> Any:
        if not isinstance(affinity, dict):
            return affinity
        out = dict(affinity)
        node = out.get("nodeAffinity")
        if isinstance(node, dict):
            node = dict(node)
            required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
            if isinstance(required, dict):
                node["requiredDuringSchedulingIgnoredDuringExecution"] = {
                    **required,
                    "nodeSelectorTerms": self.node_terms(required.get("nodeSelectorTerms")),
                }
            preferred = node.get("preferredDuringSchedulingIgnoredDuringExecution")
            if isinstance(preferred, list):
                node["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {**p, "preference": self.node_terms([p.get("preference")])[0]} if isinstance(p, dict) else p
                    for p in preferred
                ]
            out["nodeAffinity"] = node
        for kind in ("podAffinity", "podAntiAffinity"):
            section = out.get(kind)
            if isinstance(section, dict):
                section = dict(section)
                key = "requiredDuringSchedulingIgnoredDuringExecution"
                if key in section:
                    section[key] = self.pod_terms(section[key])
                key = "preferredDuringSchedulingIgnoredDuringExecution"
                if isinstance(section.get(key), list):
                    section[key] = [
                        {**p, "podAffinityTerm": self.pod_terms([p.get("podAffinityTerm")])[0]}
                        if isinstance(p, dict)
                        else p
                        for p in section[key]
                    ]
                out[kind] = section
        return out

    def taints(self, taints: Any) -> Any:
        if not isinstance(taints, list):
            return taints
        return [
            {**t, "value": self.value(str(t.get("key")), t["value"])} if isinstance(t, dict) and "value" in t else t
            for t in taints
        ]

    def entry(self, section: str, entry: dict[str, Any]) -> dict[str, Any]:
        out = dict(entry)
        if section == "objects":
            return self.kube_object(out)
        if section in ("nodes", "pods"):
            out["name"] = self.word(str(out["name"]))
        if section == "namespaces":
            out["name"] = self.namespace(str(out["name"]))
        if "namespace" in out:
            out["namespace"] = self.namespace(str(out["namespace"]))
        for key in ("labels", "nodeSelector"):
            if key in out:
                out[key] = self.labels(out[key])
        if "annotations" in out:
            out["annotations"] = self.annotations(out["annotations"])
        if "taints" in out:
            out["taints"] = self.taints(out["taints"])
        if "tolerations" in out:
            out["tolerations"] = self.taints(out["tolerations"])
        if "nodeName" in out:
            out["nodeName"] = self.word(str(out["nodeName"]))
        if "affinity" in out:
            out["affinity"] = self.affinity(out["affinity"])
        if isinstance(out.get("topologySpreadConstraints"), list):
            out["topologySpreadConstraints"] = [
                {**c, "labelSelector": self.selector(c["labelSelector"])}
                if isinstance(c, dict) and "labelSelector" in c
                else c
                for c in out["topologySpreadConstraints"]
            ]
        for key, prefix in (("containers", "c"), ("initContainers", "init")):
            if isinstance(out.get(key), list):
                out[key] = [{**c, "name": f"{prefix}{i}"} if isinstance(c, dict) else c for i, c in enumerate(out[key])]
        return out

    def kube_object(self, entry: dict[str, Any]) -> dict[str, Any]:
        meta = dict(entry.get("metadata") or {})
        kind = entry.get("kind")
        if "namespace" in meta:
            meta["namespace"] = self.namespace(str(meta["namespace"]))
        if kind in ("CSINode",):  # named after its node
            meta["name"] = self.word(str(meta["name"]))
        if "labels" in meta:
            meta["labels"] = self.labels(meta["labels"])
        if "annotations" in meta:
            meta["annotations"] = self.annotations(meta["annotations"])
        out = {**entry, "metadata": meta}
        spec = out.get("spec")
        if isinstance(spec, dict):
            spec = dict(spec)
            if kind == "PodDisruptionBudget" and "selector" in spec:
                spec["selector"] = self.selector(spec["selector"])
            if kind == "PersistentVolume":
                ref = spec.get("claimRef")
                if isinstance(ref, dict) and "namespace" in ref:
                    spec["claimRef"] = {**ref, "namespace": self.namespace(str(ref["namespace"]))}
                affinity = spec.get("nodeAffinity")
                if isinstance(affinity, dict) and isinstance(affinity.get("required"), dict):
                    required = affinity["required"]
                    spec["nodeAffinity"] = {
                        **affinity,
                        "required": {
                            **required,
                            "nodeSelectorTerms": self.node_terms(required.get("nodeSelectorTerms")),
                        },
                    }
            if kind == "ResourceSlice" and isinstance(spec.get("nodeName"), str):
                spec["nodeName"] = self.word(spec["nodeName"])
            out["spec"] = spec
        return out


# --- reading the cluster -------------------------------------------------------------------


def _served(client: Client) -> set[str]:
    """The group/versions the API server serves ("v1", "policy/v1", ...)."""
    found = {"v1"}
    groups = client.get("/apis")
    for group in groups.get("groups") or []:
        for version in group.get("versions") or []:
            found.add(str(version.get("groupVersion")))
    return found


def _line(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


SECTIONS = ("namespaces", "priorityClasses", "nodes", "pods", "objects")


def take(client: Client, request: Request, write: Callable[[bytes], object], progress: Counter) -> Result:
    """Read the cluster through ``client`` and ``write`` the scenario (see the module
    docstring). Reading everything comes first; nothing is written if it fails."""
    started = time.monotonic()
    version = client.get("/version")
    result = Result(kubernetes=str(version.get("gitVersion", "")))
    served = _served(client)
    salt = request.salt
    if request.anonymize and salt is None:
        try:
            salt = str(client.get("/api/v1/namespaces/kube-system")["metadata"]["uid"])
        except (ApiError, KeyError) as err:
            raise OperationError(
                f"--anonymize: cannot read the kube-system namespace's uid for a key ({err}); give --salt"
            ) from None
    anonymizer = Anonymizer(salt or "", request.keep_labels) if request.anonymize else None
    wanted = set(request.namespaces)
    lines: dict[str, list[tuple[tuple[Any, ...], str]]] = {s: [] for s in SECTIONS}
    bound_nodes: list[tuple[str, str]] = []  # (pod's key, its node), checked at the end

    def paths(info: kinds.KindInfo) -> list[str]:
        if not info.namespaced or not wanted:
            return [info.path()]
        return [info.path(ns) for ns in sorted(wanted)]

    def add(obj: dict[str, Any]) -> None:
        section, entry = entries.entry_of(obj)
        if entry is None:
            return
        if anonymizer is not None:
            entry = anonymizer.entry(section, entry)
        meta = entry.get("metadata") if section == "objects" else entry
        assert isinstance(meta, dict)
        rank = kinds.BY_KIND[str(entry["kind"])].rank if section == "objects" else 0
        key = (rank, str(meta.get("namespace") or ""), str(meta.get("name")))
        lines[section].append((key, _line(entry)))
        if section == "pods" and entry.get("nodeName"):
            bound_nodes.append((f"{entry.get('namespace')}/{entry.get('name')}", str(entry["nodeName"])))

    listed = [kinds.CORE["Namespace"], kinds.CORE["PriorityClass"], kinds.CORE["Node"], kinds.CORE["Pod"], *kinds.KINDS]
    for info in listed:
        what = info.plural
        if info.api_version not in served:
            if info.group == "resource.k8s.io":
                others = sorted(v for v in served if v.startswith("resource.k8s.io/"))
                if others:
                    result.notes.append(
                        f"DRA objects left out: the cluster serves {', '.join(others)}, kplugin reads "
                        "resource.k8s.io/v1 (Kubernetes 1.34 and later)"
                    )
            continue
        count = 0
        for path in paths(info) if info.kind != "Namespace" else [info.path()]:
            try:
                for obj in client.list_pages(path):
                    obj.setdefault("kind", info.kind)
                    obj.setdefault("apiVersion", info.api_version)
                    if info.kind == "Namespace" and wanted and (obj.get("metadata") or {}).get("name") not in wanted:
                        continue
                    add(obj)
                    count += 1
                    if count % 500 == 0:
                        progress(what, count, count)
            except ApiError as err:
                if err.status in (403, 404) and info.kind not in kinds.CORE:
                    result.notes.append(f"{info.plural} left out: {err}")
                    break
                raise
        progress(what, count, count)
    nodes = {json.loads(line)["name"] for _, line in lines["nodes"]}
    orphans = {pod for pod, node in bound_nodes if node not in nodes}
    if orphans:
        result.notes.append(f"{len(orphans)} pod(s) bound to nodes that no longer exist left out")
        lines["pods"] = [(key, line) for key, line in lines["pods"] if f"{key[1]}/{key[2]}" not in orphans]
    source: dict[str, Any] = {"kubernetes": result.kubernetes, "anonymized": request.anonymize}
    if wanted:
        source["namespaces"] = ",".join(sorted(wanted))
    written = 0

    def emit(text: str) -> None:
        nonlocal written
        data = text.encode()
        written += len(data)
        write(data)

    emit('{"source":' + _line(source))
    for section in SECTIONS:
        rows = sorted(lines[section])
        result.counts[section] = len(rows)
        emit(f',\n"{section}":[')
        for i, (_, line) in enumerate(rows):
            emit(("\n" if i == 0 else ",\n") + line)
        emit("\n]" if rows else "]")
        lines[section] = []  # let go of what is written
    emit("}\n")
    result.bytes = written
    result.seconds = round(time.monotonic() - started, 1)
    return result
