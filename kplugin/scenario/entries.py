"""Kubernetes objects (from the API, or a ``kubectl get -o yaml|json`` List) turned into
scenario entries: what the scheduler's plugins read, and nothing else. Status,
managedFields, uids, resourceVersions, owners, images, commands and environments are
dropped; a node keeps its capacity and allocatable (from its status), a pod its
containers' resources and host ports, its placement constraints and its node;
PodDisruptionBudgets and ResourceClaims keep the status fields preemption and DRA read.

The same functions serve ``kplugin snapshot`` and the reading of Lists, so a snapshot
and a List of the same cluster give the same scenario.
"""

from __future__ import annotations

import copy
from enum import StrEnum
from typing import Any

from kplugin.kube import kinds


class Section(StrEnum):
    """A scenario's sections of entries, in the order a snapshot writes them; each but
    ``objects`` (objects of any other kind) holds one kind."""

    NAMESPACES = "namespaces"
    PRIORITY_CLASSES = "priorityClasses"
    NODES = "nodes"
    PODS = "pods"
    OBJECTS = "objects"

    @property
    def kind(self) -> str | None:
        """The kind of its entries (None: objects, of their own kinds)."""
        return _KIND_OF.get(self)

    @classmethod
    def of_kind(cls, kind: str) -> Section:
        """The section an object of ``kind`` goes to."""
        return next((s for s, k in _KIND_OF.items() if k == kind), cls.OBJECTS)


_KIND_OF = {
    Section.NAMESPACES: "Namespace",
    Section.PRIORITY_CLASSES: "PriorityClass",
    Section.NODES: "Node",
    Section.PODS: "Pod",
}

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server
BUILTIN_PRIORITY_CLASS_VALUES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
BUILTIN_PRIORITY_CLASSES = frozenset(BUILTIN_PRIORITY_CLASS_VALUES)
FINISHED_PHASES = frozenset({"Succeeded", "Failed"})  # their pods use no resources

# pod spec fields a scenario's pod entry carries under the same name
POD_SPEC_FIELDS = (
    "nodeSelector",
    "nodeName",
    "priorityClassName",
    "tolerations",
    "affinity",
    "topologySpreadConstraints",
    "overhead",
    "runtimeClassName",
    "schedulingGates",
    "schedulingGroup",
    "resourceClaims",
    "hostNetwork",
)
# where each key of a pod or node entry comes from in a Kubernetes object
ORIGIN = {
    "name": "metadata.name",
    "namespace": "metadata.namespace",
    "labels": "metadata.labels",
    "annotations": "metadata.annotations",
    "capacity": "status.capacity",
    "allocatable": "status.allocatable",
    "value": "value",
    "globalDefault": "globalDefault",
    "preemptionPolicy": "preemptionPolicy",
}
# spec fields the API server sets itself on create and refuses when they disagree with
# what it computes: a PodGroup's priority and preemption policy come from its priority
# class (the Priority admission plugin), as a pod's do
SERVER_SET_SPEC = {"PodGroup": ("priority", "preemptionPolicy")}
# top-level fields kept of the other kinds (besides metadata and the kind's status fields)
KEPT_FIELDS = {
    "StorageClass": (
        "provisioner",
        "parameters",
        "reclaimPolicy",
        "volumeBindingMode",
        "allowedTopologies",
        "mountOptions",
        "allowVolumeExpansion",
    ),
    "CSIStorageCapacity": ("storageClassName", "capacity", "maximumVolumeSize", "nodeTopology"),
    "RuntimeClass": ("handler", "overhead", "scheduling"),
}


def origin(key: str) -> str:
    return ORIGIN.get(key, f"spec.{key}")


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _annotations(meta: dict[str, Any]) -> dict[str, Any]:
    found = _mapping(meta.get("annotations"))
    return {k: v for k, v in found.items() if k != LAST_APPLIED}


def _named(meta: dict[str, Any], namespaced: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": meta.get("name")}
    if namespaced:
        entry["namespace"] = meta.get("namespace", "default")
    return entry


def _labels_and_annotations(entry: dict[str, Any], meta: dict[str, Any]) -> None:
    if meta.get("labels"):
        entry["labels"] = meta["labels"]
    annotations = _annotations(meta)
    if annotations:
        entry["annotations"] = annotations


def node_entry(obj: dict[str, Any]) -> dict[str, Any]:
    meta, spec, status = _meta(obj), _mapping(obj.get("spec")), _mapping(obj.get("status"))
    entry = _named(meta, False)
    _labels_and_annotations(entry, meta)
    capacity = status.get("capacity")
    if capacity:
        entry["capacity"] = capacity
    allocatable = status.get("allocatable")
    if allocatable and allocatable != capacity:
        entry["allocatable"] = allocatable
    taints = spec.get("taints")
    if isinstance(taints, list) and taints:
        entry["taints"] = [
            {k: v for k, v in t.items() if k != "timeAdded"} if isinstance(t, dict) else t for t in taints
        ]
    if spec.get("unschedulable"):
        entry["unschedulable"] = spec["unschedulable"]
    return entry


def _container(raw: Any, init: bool) -> Any:
    if not isinstance(raw, dict):
        return raw
    out: dict[str, Any] = {"name": raw.get("name")}
    resources = _mapping(raw.get("resources"))
    kept = {k: resources[k] for k in ("requests", "limits", "claims") if resources.get(k)}
    if kept:
        out["resources"] = kept
    ports = raw.get("ports")
    if isinstance(ports, list):
        host = [
            {k: p[k] for k in ("containerPort", "hostPort", "hostIP", "protocol") if k in p}
            for p in ports
            if isinstance(p, dict) and p.get("hostPort")
        ]
        if host:
            out["ports"] = host
    if init and raw.get("restartPolicy") == "Always":
        out["restartPolicy"] = "Always"
    return out


def pod_entry(obj: dict[str, Any]) -> dict[str, Any] | None:
    """A pod's entry, or None for a pod that finished (it holds no resources)."""
    meta, spec, status = _meta(obj), _mapping(obj.get("spec")), _mapping(obj.get("status"))
    if status.get("phase") in FINISHED_PHASES:
        return None
    entry = _named(meta, True)
    _labels_and_annotations(entry, meta)
    for key in POD_SPEC_FIELDS:
        value = spec.get(key)
        if value not in (None, "", [], {}, False):
            entry[key] = value
    for key, init in (("containers", False), ("initContainers", True)):
        containers = spec.get(key)
        if isinstance(containers, list) and containers:
            entry[key] = [_container(c, init) for c in containers]
    volumes = []
    for volume in spec.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        if isinstance(volume.get("persistentVolumeClaim"), dict):
            claim = volume["persistentVolumeClaim"]
            volumes.append({"name": volume.get("name"), "persistentVolumeClaim": {"claimName": claim.get("claimName")}})
        elif isinstance(volume.get("ephemeral"), dict):
            # the ephemeral volume controller's claim, <pod>-<volume>, is in the snapshot
            volumes.append(
                {
                    "name": volume.get("name"),
                    "persistentVolumeClaim": {"claimName": f"{meta.get('name')}-{volume.get('name')}"},
                }
            )
    if volumes:
        entry["volumes"] = volumes
    return entry


def namespace_entry(obj: dict[str, Any]) -> dict[str, Any]:
    meta = _meta(obj)
    entry: dict[str, Any] = {"name": meta.get("name")}
    labels = {k: v for k, v in _mapping(meta.get("labels")).items() if k != NAMESPACE_NAME_LABEL}
    if labels:
        entry["labels"] = labels
    return entry


def priority_class_entry(obj: dict[str, Any]) -> dict[str, Any] | None:
    """A PriorityClass's entry, or None for the API server's own (system-*)."""
    meta = _meta(obj)
    if meta.get("name") in BUILTIN_PRIORITY_CLASSES:
        return None
    entry: dict[str, Any] = {"name": meta.get("name"), "value": obj.get("value")}
    if obj.get("globalDefault"):
        entry["globalDefault"] = obj["globalDefault"]
    if obj.get("preemptionPolicy") not in (None, "PreemptLowerPriority"):
        entry["preemptionPolicy"] = obj["preemptionPolicy"]
    return entry


def object_entry(obj: dict[str, Any]) -> dict[str, Any]:
    """Another kind's object: its metadata's name, namespace, labels and annotations,
    its spec (or the kind's own top-level fields) and the status fields the kind keeps."""
    kind = str(obj.get("kind"))
    info = kinds.known(obj.get("apiVersion"), kind)
    meta = _meta(obj)
    if info is None:  # a custom kind: every field but the server's own metadata
        named = _named(meta, "namespace" in meta)
        custom: dict[str, Any] = {"apiVersion": obj.get("apiVersion"), "kind": kind, "metadata": named}
        _labels_and_annotations(custom["metadata"], meta)
        custom.update({k: copy.deepcopy(v) for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")})
        return custom
    metadata: dict[str, Any] = _named(meta, info.namespaced)
    _labels_and_annotations(metadata, meta)
    entry: dict[str, Any] = {"apiVersion": obj.get("apiVersion"), "kind": kind, "metadata": metadata}
    for key in KEPT_FIELDS.get(kind, ("spec",)):
        if key in obj:
            entry[key] = copy.deepcopy(obj[key])
    spec = entry.get("spec")
    if isinstance(spec, dict):
        for key in SERVER_SET_SPEC.get(kind, ()):
            spec.pop(key, None)
    if kind == "PersistentVolume" and isinstance(spec, dict) and isinstance(spec.get("claimRef"), dict):
        ref = spec["claimRef"]
        spec["claimRef"] = {k: ref[k] for k in ("namespace", "name") if k in ref}
    status = _mapping(obj.get("status"))
    kept = {k: copy.deepcopy(status[k]) for k in info.status if k in status}
    if kept:
        entry["status"] = kept
    return entry


def entry_of(obj: dict[str, Any]) -> tuple[Section, dict[str, Any] | None]:
    """(section, entry) for a Kubernetes object of a kind kplugin knows: the section of
    the scenario it goes to; the entry is None for what a scenario leaves out."""
    section = Section.of_kind(str(obj.get("kind")))
    match section:
        case Section.NODES:
            return section, node_entry(obj)
        case Section.PODS:
            return section, pod_entry(obj)
        case Section.NAMESPACES:
            return section, namespace_entry(obj)
        case Section.PRIORITY_CLASSES:
            return section, priority_class_entry(obj)
        case Section.OBJECTS:
            return section, object_entry(obj)
