"""What a scenario's starting state is made of: nodes, pods, namespaces, priority
classes and the other objects the scheduler reads (kinds.KINDS), each as the API takes
it (``manifest``); the names every part of e2e uses for where a pod ended."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from kplugin.kube import kinds

PENDING = "pending"
PREEMPTED = "preempted"
DELETED = "deleted"  # by a step
NAMESPACE = "default"  # pods without a namespace
OVERCOMMITABLE = frozenset({"cpu", "memory", "ephemeral-storage"})
DEFAULT_CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110"}
PAUSE_IMAGE = "registry.k8s.io/pause:3.9"


def pod_key(namespace: str, name: str) -> str:
    """How a pod is named in expectations and reports: NAME, or NAMESPACE/NAME."""
    return name if namespace == NAMESPACE else f"{namespace}/{name}"


@dataclass(frozen=True)
class Node:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    capacity: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_CAPACITY))
    allocatable: dict[str, str] | None = None  # None: the capacity
    annotations: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, Any], ...] = ()
    unschedulable: bool = False

    def manifest(self, labels: dict[str, str] | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": self.name, "labels": {**self.labels, **(labels or {})}}
        if self.annotations:
            meta["annotations"] = dict(self.annotations)
        spec: dict[str, Any] = {}
        if self.taints:
            spec["taints"] = [dict(t) for t in self.taints]
        if self.unschedulable:
            spec["unschedulable"] = True
        allocatable = self.allocatable if self.allocatable is not None else self.capacity
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": meta,
            "spec": spec,
            "status": {"capacity": dict(self.capacity), "allocatable": dict(allocatable)},
        }


def _with_limits(resources: dict[str, Any]) -> dict[str, Any]:
    """Extended resources and hugepages cannot be overcommitted: the API server wants
    their limits equal to the requests."""
    requests = resources.get("requests") or {}
    fixed = {k: v for k, v in requests.items() if k not in OVERCOMMITABLE}
    if not fixed:
        return resources
    return {**resources, "limits": {**fixed, **(resources.get("limits") or {})}}


@dataclass(frozen=True)
class Pod:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    requests: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    namespace: str = NAMESPACE
    limits: dict[str, str] = field(default_factory=dict)
    node_name: str | None = None  # bound already
    priority_class: str | None = None
    spec: dict[str, Any] = field(default_factory=dict)  # the other pod spec fields, as the API has them

    @property
    def key(self) -> str:
        """How the pod is named in expectations and reports: NAME, or NAMESPACE/NAME."""
        return pod_key(self.namespace, self.name)

    def containers(self) -> list[dict[str, Any]]:
        if "containers" in self.spec:
            return [dict(c) for c in self.spec["containers"]]
        container: dict[str, Any] = {"name": "main"}
        resources: dict[str, Any] = {}
        if self.requests:
            resources["requests"] = dict(self.requests)
        if self.limits:
            resources["limits"] = dict(self.limits)
        if resources:
            container["resources"] = resources
        return [container]

    def manifest(
        self,
        scheduler_name: str,
        *,
        namespace: str | None = None,
        labels: dict[str, str] | None = None,
        bound: bool = True,
    ) -> dict[str, Any]:
        """The Pod to create: ``scheduler_name`` picks the profile; ``bound`` keeps its
        nodeName (False: a bound pod rescheduled). No grace period, so a preempted pod
        goes at once (there is no kubelet to end it)."""
        spec: dict[str, Any] = {
            "schedulerName": scheduler_name,
            "terminationGracePeriodSeconds": 0,
        }
        for key, value in self.spec.items():
            if key not in ("containers", "initContainers"):
                spec[key] = value
        spec["containers"] = [
            {**c, "image": PAUSE_IMAGE, **({"resources": _with_limits(c["resources"])} if "resources" in c else {})}
            for c in self.containers()
        ]
        if "initContainers" in self.spec:
            spec["initContainers"] = [
                {**c, "image": PAUSE_IMAGE, **({"resources": _with_limits(c["resources"])} if "resources" in c else {})}
                for c in self.spec["initContainers"]
            ]
        if self.node_selector:
            spec["nodeSelector"] = dict(self.node_selector)
        if self.priority_class:
            spec["priorityClassName"] = self.priority_class
        if self.node_name and bound:
            spec["nodeName"] = self.node_name
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": self.name,
                "namespace": namespace or self.namespace,
                "labels": {**self.labels, **(labels or {})},
                "annotations": dict(self.annotations),
            },
            "spec": spec,
        }


@dataclass(frozen=True)
class Namespace:
    name: str
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str | None = None

    def manifest(self, labels: dict[str, str] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": self.name, "labels": dict(labels or {})},
            "value": self.value,
            "globalDefault": self.global_default,
        }
        if self.preemption_policy:
            body["preemptionPolicy"] = self.preemption_policy
        return body


@dataclass(frozen=True)
class KubeObject:
    """An object of another kind (kinds.KINDS), as the API takes it; ``status`` is set
    through the status subresource after it is created."""

    info: kinds.KindInfo
    name: str
    namespace: str | None
    body: dict[str, Any]
    status: dict[str, Any] | None = None
    origin: str = field(default="", compare=False)  # where the scenario has it, for messages

    def scoped(self, info: kinds.KindInfo) -> KubeObject | None:
        """The object as a kind of ``info``'s scope (a namespaced one without a namespace
        goes to default, as kubectl's would); None when ``info`` is cluster-scoped and the
        object names a namespace."""
        if info.namespaced:
            return replace(self, info=info, namespace=self.namespace or NAMESPACE)
        return replace(self, info=info) if self.namespace is None else None
