"""Reading a scenario's entries (nodes, pods, namespaces, priority classes, objects):
each checked value by value, every problem naming the file and the key."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from kplugin.core import digest, names
from kplugin.core.errors import UsageError
from kplugin.kube import kinds
from kplugin.scenario import entries, schema
from kplugin.scenario.state import DEFAULT_CAPACITY, NAMESPACE, KubeObject, Namespace, Node, Pod, PriorityClass

ANNOTATIONS = schema.Map("an annotation key (e.g. example.com/hold)", schema.AnnotationValue())
POD_FIELDS: dict[str, schema.Kind] = {
    "tolerations": schema.List(schema.TOLERATION),
    "affinity": schema.AFFINITY,
    "topologySpreadConstraints": schema.List(schema.TOPOLOGY_SPREAD),
    "containers": schema.List(schema.CONTAINER, most=1000),
    "initContainers": schema.List(schema.INIT_CONTAINER, most=1000),
    "overhead": schema.QUANTITIES,
    "runtimeClassName": schema.DNS_SUBDOMAIN,
    "schedulingGates": schema.List(schema.SCHEDULING_GATE),
    "schedulingGroup": schema.SCHEDULING_GROUP,
    "volumes": schema.List(schema.VOLUME, most=1000),
    "resourceClaims": schema.List(schema.POD_RESOURCE_CLAIM),
    "hostNetwork": schema.Bool(),
}
POD_KEYS = {
    "name",
    "namespace",
    "labels",
    "annotations",
    "requests",
    "limits",
    "nodeSelector",
    "nodeName",
    "priorityClassName",
    "priority",
    *POD_FIELDS,
}
NODE_KEYS = {"name", "labels", "annotations", "capacity", "allocatable", "taints", "unschedulable"}


class Reader:
    """Reads the entries of one scenario file; every problem names the file and the key.
    (Priority classes and RuntimeClasses some pods imply are added as they are read.)"""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.nodes: list[Node] = []
        self.pods: list[Pod] = []
        self.namespaces: list[Namespace] = []
        self.classes: list[PriorityClass] = []
        self.objects: list[KubeObject] = []

    def fail(self, where: str, problem: str) -> UsageError:
        return UsageError(f"{self.path}: {where}: {problem}")

    def mapping(self, value: Any, where: str, allowed: set[str] | None = None) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(where, f"must be a mapping, not {type(value).__name__}")
        if allowed is not None:
            unknown = sorted(str(k) for k in value if k not in allowed)
            if unknown:
                raise self.fail(where, f"unknown key {unknown[0]!r} (known: {', '.join(sorted(allowed))})")
        return value

    def name(self, value: Any, where: str) -> str:
        if names.dns1123_subdomain_problem(value):
            raise self.fail(
                where, f"{schema.shown(value)} is not a DNS-1123 name (lowercase letters, digits, '-' and '.')"
            )
        return str(value)

    def namespace(self, value: Any, where: str) -> str:
        if value is None:
            return NAMESPACE
        problem = names.dns1123_label_problem(value)
        if problem:
            raise self.fail(where, f"{schema.shown(value)} {problem}")
        return str(value)

    def check(self, kind: schema.Kind, value: Any, where: str) -> Any:
        return kind.check(value, where, self.fail)

    def items(self, value: Any, where: str) -> Iterable[Any]:
        if value is None:
            return []
        if isinstance(value, Iterator):
            return value
        if not isinstance(value, list):
            raise self.fail(where, "must be a list")
        return value

    # --- entries ---------------------------------------------------------------------

    def node(self, raw: Any, at: Callable[[str], str], where: str) -> Node:
        entry = self.mapping(raw, where, NODE_KEYS)
        capacity = {**DEFAULT_CAPACITY, **self.check(schema.QUANTITIES, entry.get("capacity"), at("capacity"))}
        allocatable = None
        if entry.get("allocatable") is not None:
            allocatable = self.check(schema.QUANTITIES, entry["allocatable"], at("allocatable"))
        unschedulable = entry.get("unschedulable", False)
        if not isinstance(unschedulable, bool):
            raise self.fail(at("unschedulable"), f"{schema.shown(unschedulable)} must be true or false")
        return Node(
            name=self.name(entry.get("name"), at("name")),
            labels=self.check(schema.LABELS, entry.get("labels"), at("labels")),
            capacity=dict(sorted(capacity.items())),
            allocatable=allocatable,
            annotations=self.check(ANNOTATIONS, entry.get("annotations"), at("annotations")),
            taints=tuple(self.check(schema.List(schema.TAINT), entry.get("taints"), at("taints"))),
            unschedulable=unschedulable,
        )

    def pod(self, raw: Any, at: Callable[[str], str], where: str) -> Pod:
        entry = self.mapping(raw, where, POD_KEYS)
        spec = {key: self.check(kind, entry[key], at(key)) for key, kind in POD_FIELDS.items() if key in entry}
        spec = {k: v for k, v in spec.items() if v not in ([], {}, None)}
        requests = self.check(schema.QUANTITIES, entry.get("requests"), at("requests"))
        limits = self.check(schema.QUANTITIES, entry.get("limits"), at("limits"))
        if "containers" in spec and (requests or limits):
            raise self.fail(at("requests"), "give requests and limits in containers[].resources when containers is set")
        node_name = entry.get("nodeName")
        if node_name is not None:
            node_name = self.name(node_name, at("nodeName"))
        priority_class = entry.get("priorityClassName")
        if priority_class is not None:
            priority_class = self.name(priority_class, at("priorityClassName"))
        priority = entry.get("priority")
        if priority is not None:
            self.check(schema.Int(-(2**31), 1_000_000_000), priority, at("priority"))
            if priority_class is not None:
                raise self.fail(at("priority"), "give priorityClassName or priority, not both")
            priority_class = _priority_class_name(priority)
            if priority_class not in {c.name for c in self.classes}:
                self.classes.append(PriorityClass(priority_class, priority))
        if spec.get("overhead") and "runtimeClassName" not in spec:
            spec["runtimeClassName"] = self.implicit_runtime_class(spec["overhead"])
        pod = Pod(
            name=self.name(entry.get("name"), at("name")),
            namespace=self.namespace(entry.get("namespace"), at("namespace")),
            labels=self.check(schema.LABELS, entry.get("labels"), at("labels")),
            annotations=self.check(ANNOTATIONS, entry.get("annotations"), at("annotations")),
            requests=requests,
            limits=limits,
            node_selector=self.check(schema.LABELS, entry.get("nodeSelector"), at("nodeSelector")),
            node_name=node_name,
            priority_class=priority_class,
            spec=spec,
        )
        return pod

    def implicit_runtime_class(self, overhead: dict[str, str]) -> str:
        """A RuntimeClass for a pod's overhead (the API server takes an overhead only
        from a pod's RuntimeClass)."""
        key = digest.sha256_hex(json.dumps(overhead, sort_keys=True).encode())[:10]
        name = f"kplugin-overhead-{key}"
        if not any(o.info.kind == "RuntimeClass" and o.name == name for o in self.objects):
            info = kinds.BY_KIND["RuntimeClass"]
            body = {
                "apiVersion": info.api_version,
                "kind": info.kind,
                "metadata": {"name": name},
                "handler": "runc",
                "overhead": {"podFixed": dict(overhead)},
            }
            self.objects.append(KubeObject(info, name, None, body, origin="(for a pod's overhead)"))
        return name

    def namespace_entry(self, raw: Any, at: Callable[[str], str], where: str) -> Namespace:
        entry = self.mapping(raw, where, {"name", "labels"})
        labels = self.check(schema.LABELS, entry.get("labels"), at("labels"))
        return Namespace(self.namespace(entry.get("name"), at("name")), labels)

    def priority_class(self, raw: Any, at: Callable[[str], str], where: str) -> PriorityClass:
        entry = self.mapping(raw, where, {"name", "value", "globalDefault", "preemptionPolicy"})
        name = self.name(entry.get("name"), at("name"))
        if name.startswith("system-"):
            raise self.fail(at("name"), f"{name!r}: names starting with 'system-' are the API server's own")
        value = self.check(schema.Int(-(2**31), 1_000_000_000), entry.get("value"), at("value"))
        default = entry.get("globalDefault", False)
        if not isinstance(default, bool):
            raise self.fail(at("globalDefault"), f"{schema.shown(default)} must be true or false")
        policy = entry.get("preemptionPolicy")
        if policy is not None:
            self.check(schema.OneOf(("PreemptLowerPriority", "Never")), policy, at("preemptionPolicy"))
        return PriorityClass(name, value, default, policy)

    def kube_object(self, raw: Any, where: str) -> KubeObject:
        entry = self.mapping(raw, where)
        kind = entry.get("kind")
        if not isinstance(kind, str) or not kinds.KIND_NAME.fullmatch(kind):
            raise self.fail(f"{where}.kind", f"{schema.shown(kind)} is not a kind's name (e.g. PodGroup)")
        if kind in kinds.CORE:
            raise self.fail(f"{where}.kind", f"a {kind} goes under {entries.Section.of_kind(kind)}, not objects")
        info = kinds.BY_KIND.get(kind)
        if info is None:
            return self.custom_object(entry, kind, where)
        label = f"{where} ({kind})"
        api_version = entry.get("apiVersion")
        if api_version != info.api_version:
            raise self.fail(
                f"{label}.apiVersion",
                f"{schema.shown(api_version)}: kplugin replays {kind} as {info.api_version} "
                f"(served from Kubernetes 1.{info.since})",
            )
        allowed = {"apiVersion", "kind", "metadata", *entries.KEPT_FIELDS.get(kind, ("spec",))}
        if info.status:
            allowed.add("status")
        self.mapping(entry, label, allowed)
        metadata = self.mapping(
            entry.get("metadata"), f"{label}.metadata", {"name", "namespace", "labels", "annotations"}
        )
        name = self.name(metadata.get("name"), f"{label}.metadata.name")
        namespace = None
        if info.namespaced:
            namespace = self.namespace(metadata.get("namespace"), f"{label}.metadata.namespace")
        elif metadata.get("namespace") is not None:
            raise self.fail(f"{label}.metadata.namespace", f"{kind} is not namespaced")
        label = f"{where} ({kind} {namespace + '/' if namespace else ''}{name})"
        meta = self.object_meta(metadata, label, name, namespace)
        body: dict[str, Any] = {"apiVersion": info.api_version, "kind": kind, "metadata": meta}
        for key in allowed - {"apiVersion", "kind", "metadata", "status"}:
            if key in entry:
                value = entry[key]
                if isinstance(value, (dict, list)):
                    schema.Opaque().check({key: value}, f"{label}.{key}", self.fail)
                body[key] = value
        status = None
        if "status" in entry:
            given = self.mapping(entry["status"], f"{label}.status", set(info.status))
            schema.Opaque().check(given, f"{label}.status", self.fail)
            status = dict(given) or None
        return KubeObject(info, name, namespace, body, status, origin=label)

    def object_meta(self, metadata: dict[str, Any], label: str, name: str, namespace: str | None) -> dict[str, Any]:
        """An object's metadata as the API takes it: its name, namespace, checked labels
        and annotations."""
        meta: dict[str, Any] = {"name": name}
        if namespace:
            meta["namespace"] = namespace
        labels = self.check(schema.LABELS, metadata.get("labels"), f"{label}.metadata.labels")
        annotations = self.check(ANNOTATIONS, metadata.get("annotations"), f"{label}.metadata.annotations")
        if labels:
            meta["labels"] = labels
        if annotations:
            meta["annotations"] = annotations
        return meta

    def custom_object(self, entry: dict[str, Any], kind: str, where: str) -> KubeObject:
        """An object of a kind kplugin has no row for: every top-level field kept as
        given (its plural and scope come from its CRD or from discovery)."""
        api_version = entry.get("apiVersion")
        if not kinds.is_api_version(api_version):
            raise self.fail(
                f"{where} ({kind}).apiVersion",
                f"{schema.shown(api_version)} is not an API group and version (e.g. scheduling.example.com/v1alpha1)",
            )
        label = f"{where} ({kind})"
        metadata = self.mapping(
            entry.get("metadata"), f"{label}.metadata", {"name", "namespace", "labels", "annotations"}
        )
        name = self.name(metadata.get("name"), f"{label}.metadata.name")
        namespace = None
        if metadata.get("namespace") is not None:
            namespace = self.namespace(metadata["namespace"], f"{label}.metadata.namespace")
        label = f"{where} ({kind} {namespace + '/' if namespace else ''}{name})"
        meta = self.object_meta(metadata, label, name, None)  # the namespace is set where the replay creates it
        body: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": meta}
        rest = {k: v for k, v in entry.items() if k not in ("apiVersion", "kind", "metadata", "status")}
        schema.Opaque().check(rest, label, self.fail)
        body.update(rest)
        status = None
        if entry.get("status") is not None:
            status = dict(schema.Opaque().check(entry["status"], f"{label}.status", self.fail)) or None
        return KubeObject(kinds.custom(str(api_version), kind), name, namespace, body, status, origin=label)

    def references(self, pod: Pod, where: str, classes: set[str], runtime_classes: set[str]) -> None:
        if pod.node_name is not None and pod.spec.get("schedulingGates"):
            raise self.fail(f"{where}.schedulingGates", "a bound pod (nodeName) cannot have scheduling gates")
        if pod.priority_class is not None and pod.priority_class not in classes:
            raise self.fail(
                f"{where}.priorityClassName",
                f"{pod.priority_class!r} is not a PriorityClass of this scenario (add it under priorityClasses)",
            )
        runtime = pod.spec.get("runtimeClassName")
        if runtime is not None and runtime not in runtime_classes:
            raise self.fail(
                f"{where}.runtimeClassName",
                f"{runtime!r} is not a RuntimeClass of this scenario (add it under objects)",
            )


def under(prefix: str) -> Callable[[str], str]:
    """Where a key of the entry at ``prefix`` is: PREFIX.KEY."""

    def at(key: str) -> str:
        return f"{prefix}.{key}"

    return at


def _priority_class_name(value: int) -> str:
    return f"kplugin-priority-{value}" if value >= 0 else f"kplugin-priority-minus-{-value}"
