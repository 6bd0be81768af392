"""e2e scenarios: the cluster state a run starts from (nodes, pods, namespaces, priority
classes and the other objects the scheduler reads), ordered steps that change it, and
what is expected; read from YAML or JSON and checked value by value (every problem names
the file and the key) before anything starts.

A scenario is YAML (or JSON, which is also how ``kplugin snapshot`` writes one)::

    nodes:
    - name: gpu-1
      labels: {example.com/gpu: "true"}
      capacity: {cpu: "8", memory: 32Gi, pods: "110"}   # these are the defaults
      taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
      unschedulable: false                               # true: cordoned
    pods:
    - name: train-1
      namespace: ml                                      # default: default
      requests: {cpu: "2"}                               # or containers: [...]
      labels: {app: train}
      priorityClassName: high                            # or priority: 1000
      tolerations: [...]                                 # affinity, topologySpreadConstraints,
      nodeName: gpu-1                                    # bound already (not scheduled)
    priorityClasses: [{name: high, value: 1000}]
    namespaces: [{name: ml, labels: {team: ml}}]
    objects: [...]                                       # PodDisruptionBudgets, volumes, DRA, ...
    steps:                                               # after the first placements, in order
    - labelNode: {node: gpu-1, labels: {zone: b}}
    - wait: 2
    expect:                # optional: pod -> node, a list of nodes (any of them), pending, preempted, deleted
      train-1: gpu-1

``kubectl get nodes,pods,priorityclasses -A -o yaml`` (a List, YAML or JSON) is a
scenario too. JSON files are read as a stream (the entries of the big lists one at a
time), up to 1 GB; YAML up to 4 MB, since ruamel builds about 0.3 MB/s of it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kplugin.core import digest, names, safefs, yamlio
from kplugin.core.errors import UsageError
from kplugin.e2e import entries, schema
from kplugin.kube import jsonstream, kinds

PENDING = "pending"
PREEMPTED = "preempted"
DELETED = "deleted"  # by a step
NAMESPACE = "default"  # pods without a namespace
OVERCOMMITABLE = frozenset({"cpu", "memory", "ephemeral-storage"})
DEFAULT_CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110"}
PAUSE_IMAGE = "registry.k8s.io/pause:3.9"
JSON_FILE = 1 << 30  # a snapshot of 50,000 pods is about 100 MB
EXISTING_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
LIST_KINDS = frozenset({"List", *(f"{kind}List" for kind in kinds.ALL)})


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
        return self.name if self.namespace == NAMESPACE else f"{self.namespace}/{self.name}"

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


@dataclass(frozen=True)
class Step:
    """One change after the first placements (see STEP_ACTIONS)."""

    action: str
    node: str = ""
    labels: dict[str, str | None] = field(default_factory=dict)  # None: remove the label
    taints: tuple[dict[str, Any], ...] = ()
    untaint: tuple[str, ...] = ()
    capacity: dict[str, str] | None = None
    allocatable: dict[str, str] | None = None
    new_node: Node | None = None
    pods: tuple[Pod, ...] = ()
    pod_keys: tuple[tuple[str, str], ...] = ()  # (namespace, name)
    seconds: float = 0.0

    def describe(self) -> str:
        if self.action == "wait":
            return f"wait {self.seconds:g}s"
        if self.action == "createPods":
            return f"createPods {', '.join(p.key for p in self.pods)}"
        if self.action == "deletePods":
            return f"deletePods {', '.join(n if ns == NAMESPACE else f'{ns}/{n}' for ns, n in self.pod_keys)}"
        if self.action == "createNode" and self.new_node is not None:
            return f"createNode {self.new_node.name}"
        return f"{self.action} {self.node}"


STEP_ACTIONS = (
    "createNode",
    "deleteNode",
    "labelNode",
    "unlabelNode",
    "cordonNode",
    "uncordonNode",
    "taintNode",
    "untaintNode",
    "updateNode",
    "createPods",
    "deletePods",
    "wait",
)


@dataclass(frozen=True)
class Scenario:
    nodes: tuple[Node, ...]
    pods: tuple[Pod, ...]
    expect: dict[str, tuple[str, ...]] = field(default_factory=dict)  # pod key -> nodes, or (pending,)
    namespaces: tuple[Namespace, ...] = ()
    priority_classes: tuple[PriorityClass, ...] = ()
    objects: tuple[KubeObject, ...] = ()
    steps: tuple[Step, ...] = ()
    source: dict[str, Any] = field(default_factory=dict)  # a snapshot's origin (kubernetes, anonymized)

    def all_pods(self) -> Iterator[Pod]:
        yield from self.pods
        for step in self.steps:
            yield from step.pods

    def namespace_names(self) -> list[str]:
        """Every namespace the scenario uses, declared or not, sorted."""
        found = {ns.name for ns in self.namespaces}
        found.update(p.namespace for p in self.all_pods())
        found.update(o.namespace for o in self.objects if o.namespace)
        return sorted(found)

    def rescheduled(self, selector: Callable[[dict[str, str]], bool]) -> tuple[Scenario, int]:
        """This scenario with the bound pods ``selector`` matches made pending again."""
        count = 0
        pods = []
        for pod in self.pods:
            if pod.node_name and selector(pod.labels):
                pod = replace(pod, node_name=None)
                count += 1
            pods.append(pod)
        return replace(self, pods=tuple(pods)), count


DEFAULT_SCENARIO = Scenario(
    nodes=tuple(Node(f"node-{i}") for i in (1, 2, 3)),
    pods=tuple(Pod(f"pod-{i}", requests={"cpu": "1"}) for i in (1, 2, 3)),
)


# --- reading ---------------------------------------------------------------------------

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
TOP_KEYS = {"nodes", "pods", "namespaces", "priorityClasses", "objects", "steps", "expect", "source"}
STREAMED = {"nodes", "pods", "namespaces", "priorityClasses", "objects", "items"}


class _Reader:
    """Reads one scenario; every problem names the file and the key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.nodes: list[Node] = []
        self.pods: list[Pod] = []
        self.namespaces: list[Namespace] = []
        self.classes: list[PriorityClass] = []
        self.objects: list[KubeObject] = []
        self.steps: list[Step] = []
        self.expect: Any = None
        self.source: dict[str, Any] = {}
        self.where_of: dict[str, str] = {}  # pod or node key -> where it is in the file

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
        info = kinds.BY_KIND.get(kind) if isinstance(kind, str) else None
        if info is None or not isinstance(kind, str):
            accepted = ", ".join(sorted(kinds.BY_KIND))
            raise self.fail(f"{where}.kind", f"{schema.shown(kind)} is not a kind kplugin replays ({accepted})")
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
        meta: dict[str, Any] = {"name": name}
        if namespace:
            meta["namespace"] = namespace
        labels = self.check(schema.LABELS, metadata.get("labels"), f"{label}.metadata.labels")
        annotations = self.check(ANNOTATIONS, metadata.get("annotations"), f"{label}.metadata.annotations")
        if labels:
            meta["labels"] = labels
        if annotations:
            meta["annotations"] = annotations
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

    def step(self, raw: Any, where: str) -> Step:
        entry = self.mapping(raw, where, set(STEP_ACTIONS))
        if len(entry) != 1:
            raise self.fail(where, f"a step is one of {', '.join(STEP_ACTIONS)}, e.g. {{deleteNode: node-1}}")
        ((action, value),) = entry.items()
        at = f"{where}.{action}"

        def keyed(allowed: set[str]) -> dict[str, Any]:
            given = self.mapping(value, at, allowed)
            if given.get("node") is None:
                raise self.fail(f"{at}.node", "is missing")
            return given

        if action == "wait":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3600:
                raise self.fail(at, f"{schema.shown(value)} must be a number of seconds from 0 to 3600")
            return Step("wait", seconds=float(value))
        if action == "createNode":
            created = self.node(value, _under(at), at)
            return Step(action, node=created.name, new_node=created)
        if action in ("deleteNode", "cordonNode", "uncordonNode"):
            return Step(action, node=self.name(value, at))
        if action == "labelNode":
            given = keyed({"node", "labels"})
            labels = self.check(schema.LABELS, given.get("labels"), f"{at}.labels")
            return Step(action, node=self.name(given["node"], f"{at}.node"), labels=dict(labels))
        if action in ("unlabelNode", "untaintNode"):
            given = keyed({"node", "keys"})
            keys = self.check(schema.List(schema.LABEL_KEY), given.get("keys"), f"{at}.keys")
            node = self.name(given["node"], f"{at}.node")
            if action == "unlabelNode":
                return Step(action, node=node, labels=dict.fromkeys(keys))
            return Step(action, node=node, untaint=tuple(keys))
        if action == "taintNode":
            given = keyed({"node", "taints"})
            taints = self.check(schema.List(schema.TAINT), given.get("taints"), f"{at}.taints")
            return Step(action, node=self.name(given["node"], f"{at}.node"), taints=tuple(taints))
        if action == "updateNode":
            given = keyed({"node", "capacity", "allocatable"})
            capacity = allocatable = None
            if given.get("capacity") is not None:
                capacity = self.check(schema.QUANTITIES, given["capacity"], f"{at}.capacity")
            if given.get("allocatable") is not None:
                allocatable = self.check(schema.QUANTITIES, given["allocatable"], f"{at}.allocatable")
            if capacity is None and allocatable is None:
                raise self.fail(at, "give capacity, allocatable or both")
            return Step(action, node=self.name(given["node"], f"{at}.node"), capacity=capacity, allocatable=allocatable)
        if action == "createPods":
            pods = [self.pod(item, _under(f"{at}[{i}]"), f"{at}[{i}]") for i, item in enumerate(self.items(value, at))]
            if not pods:
                raise self.fail(at, "give at least one pod")
            return Step(action, pods=tuple(pods))
        # deletePods
        keys = []
        for i, item in enumerate(self.items(value, at)):
            if not isinstance(item, str):
                raise self.fail(f"{at}[{i}]", f"{schema.shown(item)} must be a pod name (or namespace/name)")
            namespace, _, name = item.rpartition("/")
            keys.append((self.namespace(namespace or None, f"{at}[{i}]"), self.name(name, f"{at}[{i}]")))
        if not keys:
            raise self.fail(at, "give at least one pod")
        return Step(action, pod_keys=tuple(keys))

    # --- sections --------------------------------------------------------------------

    def section(self, key: str, value: Any) -> None:
        if key == "nodes":
            for i, item in enumerate(self.items(value, key)):
                self.nodes.append(self.node(item, _under(f"nodes[{i}]"), f"nodes[{i}]"))
        elif key == "pods":
            for i, item in enumerate(self.items(value, key)):
                self.pods.append(self.pod(item, _under(f"pods[{i}]"), f"pods[{i}]"))
        elif key == "namespaces":
            for i, item in enumerate(self.items(value, key)):
                self.namespaces.append(self.namespace_entry(item, _under(f"namespaces[{i}]"), f"namespaces[{i}]"))
        elif key == "priorityClasses":
            for i, item in enumerate(self.items(value, key)):
                self.classes.append(self.priority_class(item, _under(f"priorityClasses[{i}]"), f"priorityClasses[{i}]"))
        elif key == "objects":
            for i, item in enumerate(self.items(value, key)):
                self.objects.append(self.kube_object(item, f"objects[{i}]"))
        elif key == "steps":
            for i, item in enumerate(self.items(value, key)):
                self.steps.append(self.step(item, f"steps[{i}]"))
        elif key == "expect":
            self.expect = self.mapping(value, "expect")
        elif key == "source":
            self.source = {k: v for k, v in self.mapping(value, "source").items() if isinstance(v, (str, bool, int))}

    def list_items(self, value: Any) -> None:
        """The items of a Kubernetes List, each turned into a scenario entry."""
        for i, item in enumerate(self.items(value, "items")):
            where = f"items[{i}]"
            obj = self.mapping(item, where)
            kind = obj.get("kind")
            if not isinstance(kind, str) or kind not in kinds.ALL:
                if kind is None:
                    raise self.fail(where, f"has no kind (kplugin reads {kinds.ACCEPTED})")
                raise self.fail(
                    f"{where}.kind", f"{schema.shown(kind)} is not a kind kplugin reads (it reads {kinds.ACCEPTED})"
                )
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            assert isinstance(meta, dict)
            shown_name = f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
            label = f"{where} ({kind} {shown_name})"

            def at(key: str, label: str = label) -> str:
                return f"{label}: {entries.origin(key)}"

            info = kinds.ALL[kind]
            if obj.get("apiVersion") != info.api_version and kind in kinds.CORE:
                raise self.fail(
                    f"{label}: apiVersion", f"{schema.shown(obj.get('apiVersion'))} is not {info.api_version}"
                )
            section, entry = entries.entry_of(obj)
            if entry is None:
                continue
            if section == "nodes":
                self.nodes.append(self.node(entry, at, label))
            elif section == "pods":
                self.pods.append(self.pod(entry, at, label))
            elif section == "namespaces":
                self.namespaces.append(self.namespace_entry(entry, at, label))
            elif section == "priorityClasses":
                self.classes.append(self.priority_class(entry, at, label))
            else:
                self.objects.append(self.kube_object(entry, where))

    # --- the whole ---------------------------------------------------------------------

    def finish(self) -> Scenario:
        if not self.nodes and not any(s.new_node for s in self.steps):
            raise self.fail("nodes, pods", "a scenario needs at least one node and one pod")
        if not self.pods and not any(s.pods for s in self.steps):
            raise self.fail("nodes, pods", "a scenario needs at least one node and one pod")
        _unique(self, "node", [n.name for n in self.nodes])
        _unique(self, "pod", [p.key for p in self.pods])
        _unique(self, "namespace", [n.name for n in self.namespaces])
        _unique(self, "priority class", [c.name for c in self.classes])
        _unique(
            self,
            "object",
            [f"{o.info.kind} {o.namespace + '/' if o.namespace else ''}{o.name}" for o in self.objects],
        )
        nodes = {n.name for n in self.nodes}
        classes = {c.name for c in self.classes} | entries.BUILTIN_PRIORITY_CLASSES
        runtime_classes = {o.name for o in self.objects if o.info.kind == "RuntimeClass"}
        if sum(c.global_default for c in self.classes) > 1:
            raise self.fail("priorityClasses", "more than one has globalDefault: true")
        for i, pod in enumerate(self.pods):
            where = f"pods[{i}] ({pod.key})"
            if pod.node_name is not None and pod.node_name not in nodes:
                raise self.fail(f"{where}.nodeName", f"{pod.node_name!r} is not a node of this scenario")
            self.references(pod, where, classes, runtime_classes)
        pods = {p.key for p in self.pods}
        for i, step in enumerate(self.steps):
            where = f"steps[{i}].{step.action}"
            if step.new_node is not None:
                if step.new_node.name in nodes:
                    raise self.fail(f"{where}.name", f"node {step.new_node.name!r} exists at this step")
                nodes.add(step.new_node.name)
            elif step.node and step.node not in nodes:
                raise self.fail(
                    f"{where}.node" if step.action not in ("deleteNode", "cordonNode", "uncordonNode") else where,
                    f"{step.node!r} is not a node of this scenario at this step",
                )
            if step.action == "deleteNode":
                nodes.discard(step.node)
            for pod in step.pods:
                if pod.key in pods:
                    raise self.fail(where, f"pod {pod.key!r} exists at this step")
                if pod.node_name is not None and pod.node_name not in nodes:
                    raise self.fail(f"{where} ({pod.key}).nodeName", f"{pod.node_name!r} is not a node at this step")
                self.references(pod, f"{where} ({pod.key})", classes, runtime_classes)
                pods.add(pod.key)
            for namespace, name in step.pod_keys:
                key = name if namespace == NAMESPACE else f"{namespace}/{name}"
                if key not in pods:
                    raise self.fail(where, f"{key!r} is not a pod of this scenario at this step")
                pods.discard(key)
        known_nodes = {n.name for n in self.nodes} | {s.new_node.name for s in self.steps if s.new_node}
        known_pods = {p.key for p in self.pods} | {p.key for s in self.steps for p in s.pods}
        expect: dict[str, tuple[str, ...]] = {}
        for pod_key, wanted in (self.expect or {}).items():
            if not isinstance(pod_key, str) or pod_key not in known_pods:
                raise self.fail("expect", f"{schema.shown(pod_key)} is not a pod of this scenario")
            at = f"expect.{pod_key}"
            choices = wanted if isinstance(wanted, list) and wanted else [wanted]
            for j, node in enumerate(choices):
                shown_at = f"{at}[{j}]" if isinstance(wanted, list) else at
                if not isinstance(node, str):
                    raise self.fail(
                        shown_at, f"{schema.shown(node)} must be a node name, a list of them, or {PENDING!r}"
                    )
                if node in (PENDING, PREEMPTED, DELETED):
                    if len(choices) > 1:
                        raise self.fail(shown_at, f"{node!r} cannot be one of several choices")
                elif node not in known_nodes:
                    raise self.fail(
                        shown_at,
                        f"{schema.shown(node)} is neither a node of this scenario nor {PENDING!r}, {PREEMPTED!r} "
                        f"or {DELETED!r}",
                    )
            expect[pod_key] = tuple(choices)
        return Scenario(
            nodes=tuple(self.nodes),
            pods=tuple(self.pods),
            expect=expect,
            namespaces=tuple(self.namespaces),
            priority_classes=tuple(self.classes),
            objects=tuple(sorted(self.objects, key=lambda o: (o.info.rank, o.namespace or "", o.name))),
            steps=tuple(self.steps),
            source=self.source,
        )

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


def _under(prefix: str) -> Callable[[str], str]:
    """Where a key of the entry at ``prefix`` is: PREFIX.KEY."""

    def at(key: str) -> str:
        return f"{prefix}.{key}"

    return at


def _priority_class_name(value: int) -> str:
    return f"kplugin-priority-{value}" if value >= 0 else f"kplugin-priority-minus-{-value}"


def _unique(reader: _Reader, kind: str, given: list[str]) -> None:
    twice = sorted(name for name, count in Counter(given).items() if count > 1)  # linear: 10^5 nodes happen
    if twice:
        raise reader.fail(f"{kind}s", f"{kind} {twice[0]!r} is named twice")


def _read_document(reader: _Reader, pairs: Iterable[tuple[str, Any]]) -> None:
    """The top-level keys of a scenario, or of a Kubernetes List."""
    is_list = False
    for key, value in pairs:
        if key == "kind" and isinstance(value, str) and value in LIST_KINDS:
            is_list = True
            continue
        if key == "items" or (is_list and key in ("apiVersion", "metadata")):
            if key == "items":
                reader.list_items(value)
            continue
        if key in ("apiVersion", "kind", "metadata") and not is_list:
            if key == "kind":
                raise reader.fail("kind", f"{schema.shown(value)} is not a List (kubectl get ... -o yaml gives one)")
            continue
        if key not in TOP_KEYS:
            raise reader.fail("the document", f"unknown key {key!r} (known: {', '.join(sorted(TOP_KEYS))})")
        reader.section(key, value)


def load_scenario(path: Path) -> Scenario:
    """Read and check a scenario file (see the module docstring)."""
    reader = _Reader(path)
    with safefs.open_input(path, "--scenario", JSON_FILE) as stream:
        head = stream.read(64)
        size = stream.size()
        if jsonstream.looks_like_json(head):
            try:
                _read_document(
                    reader, jsonstream.Reader(_Rewound(head, stream), f"--scenario {path}").document(STREAMED)
                )
                return reader.finish()
            except UsageError as err:
                # not JSON after all (YAML's flow style starts with '{' too): a small file is
                # read as YAML, whose message wins if that fails as well
                if "is not valid JSON" not in str(err) or size > safefs.LARGE_FILE:
                    raise
                reader = _Reader(path)
    if size > safefs.LARGE_FILE:
        raise UsageError(
            f"--scenario {path} is {size} bytes; kplugin reads at most {safefs.LARGE_FILE} bytes of YAML here "
            "(ruamel is slow): for bigger scenarios use JSON (kubectl get -o json; kplugin snapshot writes it), "
            f"read up to {JSON_FILE >> 30} GB"
        )
    raw = yamlio.load_file(path, "--scenario", limit=safefs.LARGE_FILE)
    _read_document(reader, reader.mapping(raw, "the document").items())
    return reader.finish()


class _Rewound:
    """A stream whose first bytes were read already."""

    def __init__(self, head: bytes, rest: safefs.Capped) -> None:
        self.head = head
        self.rest = rest

    def read(self, size: int = -1, /) -> bytes:
        if self.head:
            data, self.head = self.head, b""
            return data
        return self.rest.read(size)


def check_served(scenario: Scenario, minor: int, path: Path | None) -> None:
    """Every object's kind must be served by Kubernetes 1.<minor> by default."""
    for obj in scenario.objects:
        problem = kinds.served_problem(obj.info, obj.body["apiVersion"], minor)
        if problem:
            raise UsageError(f"{path}: {obj.origin}.apiVersion: {problem}; replay it on a later minor (--k8s)")
