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
    objects: [...]                                       # PodDisruptionBudgets, volumes, DRA, ...,
                                                         # CRDs and objects of any kind
    backlog: false         # true: the pending pods exist before the scheduler starts (below)
    steps:                                               # after the first placements, in order
    - labelNode: {node: gpu-1, labels: {zone: b}}
    - updateObject: {apiVersion: quota.example.com/v1alpha1, kind: Quota,
                     metadata: {name: team-a, namespace: ml}, spec: {cpu: "8"}}
    - wait: 2
    expect:                # optional: pod -> node, a list of nodes (any of them), pending, preempted, deleted
      train-1: gpu-1

Pending pods come once the scheduler runs, one at a time in the order its queue takes them,
so a replay comes out the same every time. ``backlog: true`` creates them before it starts,
as a scheduler restarted on a backlog finds them: its queue takes them all in before the
first attempt (a pod group whole, where one at a time its first cycle may start with the
gang's minCount), in the order of its first list, which is not fixed among pods of equal
priority.

An object of a kind kplugin has no row for (kplugin.kube.kinds) is *custom*: every
top-level field is kept as given; its plural and scope come from a CustomResourceDefinition
of the scenario or of the project's config/crd/ (created first, Established before any
object), or else from the API's discovery when the replay creates it.

``kubectl get nodes,pods,priorityclasses -A -o yaml`` (a List, YAML or JSON) is a
scenario too. JSON files are read as a stream (the entries of the big lists one at a
time), up to 1 GB; YAML up to 4 MB, since ruamel builds about 0.3 MB/s of it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kplugin.core import safefs, yamlio
from kplugin.core.errors import Setting, UsageError
from kplugin.kube import jsonstream, kinds
from kplugin.model import crds
from kplugin.model.apifacts import SCHEDULING_GROUP, pod_group_api
from kplugin.model.points import GENERIC_WORKLOAD
from kplugin.model.versions import Target
from kplugin.scenario import entries, schema
from kplugin.scenario.entries import Section
from kplugin.scenario.reader import NODE_KEYS, POD_KEYS, Reader, under
from kplugin.scenario.state import (
    DEFAULT_CAPACITY,
    DELETED,
    NAMESPACE,
    PAUSE_IMAGE,
    PENDING,
    PREEMPTED,
    KubeObject,
    Namespace,
    Node,
    Pod,
    PriorityClass,
    pod_key,
)
from kplugin.scenario.steps import STEP_ACTIONS, Step, StepAction, check_steps, object_key, read_step

__all__ = [  # what the scenario format is made of, kept importable from here
    "DEFAULT_CAPACITY",
    "DEFAULT_SCENARIO",
    "DELETED",
    "EXISTING_NAMESPACES",
    "NAMESPACE",
    "NODE_KEYS",
    "PAUSE_IMAGE",
    "PENDING",
    "POD_KEYS",
    "PREEMPTED",
    "STEP_ACTIONS",
    "TOP_KEYS",
    "KubeObject",
    "Namespace",
    "Node",
    "Pod",
    "PriorityClass",
    "Scenario",
    "Step",
    "StepAction",
    "check_served",
    "load_scenario",
]

JSON_FILE = 1 << 30  # a snapshot of 50,000 pods is about 100 MB
EXISTING_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
WORKLOAD_KINDS = frozenset(k.kind for k in kinds.GATED)  # PodGroup, Workload
LIST_KINDS = frozenset({"List", *(f"{kind}List" for kind in kinds.ALL)})
SECTION_KEYS = frozenset(Section)  # the sections of entries, read alike (kplugin.scenario.entries)
TOP_KEYS = {*SECTION_KEYS, "steps", "expect", "source", "backlog"}
STREAMED = {*Section, "items"}


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
    backlog: bool = False  # the pending pods are created before the scheduler starts

    def all_pods(self) -> Iterator[Pod]:
        yield from self.pods
        for step in self.steps:
            yield from step.pods

    def namespace_names(self) -> list[str]:
        """Every namespace the scenario uses, declared or not, sorted."""
        found = {ns.name for ns in self.namespaces}
        found.update(p.namespace for p in self.all_pods())
        found.update(o.namespace for o in self.objects if o.namespace)
        found.update(s.obj.namespace for s in self.steps if s.obj is not None and s.obj.namespace)
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


class _ScenarioReader(Reader):
    """Reads one scenario: its entries (Reader), steps and expectations."""

    def __init__(self, path: Path, project_crds: tuple[KubeObject, ...] = ()) -> None:
        super().__init__(path)
        self.project_crds = project_crds  # the project's config/crd/: created unless the scenario has them
        self.steps: list[Step] = []
        self.expect: Any = None
        self.source: dict[str, Any] = {}
        self.backlog = False

    # --- sections --------------------------------------------------------------------

    def section(self, key: str, value: Any) -> None:
        if key in SECTION_KEYS:
            self.entries(Section(key), value)
        elif key == "steps":
            for i, item in enumerate(self.items(value, key)):
                self.steps.append(read_step(self, item, f"steps[{i}]"))
        elif key == "expect":
            self.expect = self.mapping(value, "expect")
        elif key == "backlog":
            if not isinstance(value, bool):
                raise self.fail("backlog", f"{schema.shown(value)} must be true or false")
            self.backlog = value
        elif key == "source":
            self.source = {k: v for k, v in self.mapping(value, "source").items() if isinstance(v, (str, bool, int))}

    def entries(self, section: Section, value: Any) -> None:
        for i, item in enumerate(self.items(value, section)):
            where = f"{section}[{i}]"
            match section:
                case Section.NODES:
                    self.nodes.append(self.node(item, under(where), where))
                case Section.PODS:
                    self.pods.append(self.pod(item, under(where), where))
                case Section.NAMESPACES:
                    self.namespaces.append(self.namespace_entry(item, under(where), where))
                case Section.PRIORITY_CLASSES:
                    self.classes.append(self.priority_class(item, under(where), where))
                case Section.OBJECTS:
                    self.objects.append(self.kube_object(item, where))

    def list_items(self, value: Any) -> None:
        """The items of a Kubernetes List, each turned into a scenario entry."""
        for i, item in enumerate(self.items(value, "items")):
            where = f"items[{i}]"
            obj = self.mapping(item, where)
            kind = obj.get("kind")
            if not isinstance(kind, str) or not kinds.KIND_NAME.fullmatch(kind):
                if kind is None:
                    raise self.fail(where, "has no kind")
                raise self.fail(f"{where}.kind", f"{schema.shown(kind)} is not a kind's name (e.g. PodGroup)")
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            assert isinstance(meta, dict)
            shown_name = f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
            label = f"{where} ({kind} {shown_name})"

            def at(key: str, label: str = label) -> str:
                return f"{label}: {entries.origin(key)}"

            info = kinds.CORE.get(kind)
            if info is not None and obj.get("apiVersion") != info.api_version:
                raise self.fail(
                    f"{label}: apiVersion", f"{schema.shown(obj.get('apiVersion'))} is not {info.api_version}"
                )
            section, entry = entries.entry_of(obj)
            if entry is None:
                continue
            match section:
                case Section.NODES:
                    self.nodes.append(self.node(entry, at, label))
                case Section.PODS:
                    self.pods.append(self.pod(entry, at, label))
                case Section.NAMESPACES:
                    self.namespaces.append(self.namespace_entry(entry, at, label))
                case Section.PRIORITY_CLASSES:
                    self.classes.append(self.priority_class(entry, at, label))
                case Section.OBJECTS:
                    self.objects.append(self.kube_object(entry, where))

    # --- the whole ---------------------------------------------------------------------

    def settle(self, obj: KubeObject, served: dict[tuple[str, str], kinds.KindInfo], groups: set[str]) -> KubeObject:
        """A custom object with the plural and scope of the scenario's CRD for its kind
        (a namespaced one without a namespace goes to default, as kubectl's would)."""
        if not obj.info.custom:
            return obj
        info = served.get((obj.info.api_version, obj.info.kind))
        if info is None:
            group = obj.info.group
            if group in groups:
                offered = sorted(f"{k.api_version} {k.kind}" for k in served.values() if k.group == group)
                raise self.fail(
                    f"{obj.origin}.apiVersion",
                    f"{obj.info.api_version} {obj.info.kind} is not served by the CustomResourceDefinitions of "
                    f"{group} here (they serve {', '.join(offered)})",
                )
            return obj  # the API server's discovery says, when the replay creates it
        scoped = obj.scoped(info)
        if scoped is None:
            raise self.fail(f"{obj.origin}.metadata.namespace", f"{info.kind} is cluster-scoped (its CRD says so)")
        return scoped

    def settle_all(self) -> None:
        crds = [o for o in self.objects if o.info is kinds.CRD]
        for crd in self.project_crds:
            if not any(o.name == crd.name for o in crds):
                self.objects.append(crd)
                crds.append(crd)
        crds += [s.obj for s in self.steps if s.obj is not None and s.obj.info is kinds.CRD]
        served = {(k.api_version, k.kind): k for crd in crds for k in kinds.from_crd(crd.body)}
        groups = {k.group for k in served.values()}
        self.objects = [self.settle(o, served, groups) for o in self.objects]
        self.steps = [
            replace(step, obj=self.settle(step.obj, served, groups)) if step.obj is not None else step
            for step in self.steps
        ]

    def finish(self) -> Scenario:
        self.settle_all()
        if not self.nodes and not any(s.new_node for s in self.steps):
            raise self.fail("nodes, pods", "a scenario needs at least one node and one pod")
        if not self.pods and not any(s.pods for s in self.steps):
            raise self.fail("nodes, pods", "a scenario needs at least one node and one pod")
        _unique(self, "node", [n.name for n in self.nodes])
        _unique(self, "pod", [p.key for p in self.pods])
        _unique(self, "namespace", [n.name for n in self.namespaces])
        _unique(self, "priority class", [c.name for c in self.classes])
        _unique(self, "object", [object_key(o) for o in self.objects])
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
        objects = {object_key(o) for o in self.objects}
        check_steps(self, self.steps, nodes, {p.key for p in self.pods}, classes, runtime_classes, objects)
        known_nodes = {n.name for n in self.nodes} | {s.new_node.name for s in self.steps if s.new_node}
        known_pods = {p.key for p in self.pods} | {p.key for s in self.steps for p in s.pods}
        expect: dict[str, tuple[str, ...]] = {}
        for named, wanted in (self.expect or {}).items():
            if not isinstance(named, str) or named not in known_pods:
                raise self.fail("expect", f"{schema.shown(named)} is not a pod of this scenario")
            at = f"expect.{named}"
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
            expect[named] = tuple(choices)
        return Scenario(
            nodes=tuple(self.nodes),
            pods=tuple(self.pods),
            expect=expect,
            namespaces=tuple(self.namespaces),
            priority_classes=tuple(self.classes),
            objects=tuple(sorted(self.objects, key=lambda o: (o.info.rank, o.namespace or "", o.name))),
            steps=tuple(self.steps),
            source=self.source,
            backlog=self.backlog,
        )


def _unique(reader: _ScenarioReader, kind: str, given: list[str]) -> None:
    twice = sorted(name for name, count in Counter(given).items() if count > 1)  # linear: 10^5 nodes happen
    if twice:
        raise reader.fail(f"{kind}s", f"{kind} {twice[0]!r} is named twice")


def _read_document(reader: _ScenarioReader, pairs: Iterable[tuple[str, Any]]) -> None:
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


def load_scenario(path: Path, project_crds: tuple[KubeObject, ...] = ()) -> Scenario:
    """Read and check a scenario file (see the module docstring); ``project_crds`` (the
    project's config/crd/) are created first unless the scenario has CRDs of those names."""
    reader = _ScenarioReader(path, project_crds)
    with safefs.open_input(path, Setting.SCENARIO, JSON_FILE) as stream:
        head = stream.read(64)
        size = stream.size()
        if jsonstream.looks_like_json(head):
            try:
                _read_document(
                    reader, jsonstream.Reader(_Rewound(head, stream), f"{Setting.SCENARIO} {path}").document(STREAMED)
                )
                return reader.finish()
            except UsageError as err:
                # not JSON after all (YAML's flow style starts with '{' too): a small file is
                # read as YAML, whose message wins if that fails as well
                if "is not valid JSON" not in str(err) or size > safefs.LARGE_FILE:
                    raise
                reader = _ScenarioReader(path, project_crds)
    if size > safefs.LARGE_FILE:
        raise UsageError(
            f"{Setting.SCENARIO} {path} is {size} bytes; kplugin reads at most {safefs.LARGE_FILE} bytes of YAML here "
            "(ruamel is slow): for bigger scenarios use JSON (kubectl get -o json; kplugin snapshot writes it), "
            f"read up to {JSON_FILE >> 30} GB"
        )
    raw = yamlio.load_file(path, Setting.SCENARIO, limit=safefs.LARGE_FILE)
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


def project_crds(root: Path, recorded: Sequence[str] | None = None) -> tuple[KubeObject, ...]:
    """The project's CRDs (config/crd/, or the files ``recorded`` of an adopted
    repository), as objects a replay creates first."""
    found = []
    for definition in crds.load(root, recorded):
        reader = Reader(root / definition.file)
        found.append(reader.kube_object(definition.body, f"document {definition.index + 1}"))
    return tuple(found)


def with_objects(scenario: Scenario, extra: tuple[KubeObject, ...]) -> Scenario:
    """``scenario`` with the CRDs of ``extra`` it does not have (by name), first."""
    have = {o.name for o in scenario.objects if o.info is kinds.CRD}
    added = tuple(o for o in extra if o.name not in have)
    return replace(scenario, objects=added + scenario.objects) if added else scenario


def check_served(scenario: Scenario, target: Target, path: Path | None) -> None:
    """Every object's kind must be served by the target's Kubernetes by default, or, for a
    pod group (workload-aware scheduling), at the API version the minor has for it."""
    minor = target.version.minor
    for obj in scenario.objects:
        problem = kinds.served_problem(obj.info, obj.body["apiVersion"], minor)
        if problem:
            raise UsageError(f"{path}: {obj.origin}.apiVersion: {problem}; replay it on a later minor ({Setting.K8S})")
    served = pod_group_api(target.facts)
    for obj in _all_objects(scenario):
        if not is_workload_api(obj):
            continue
        if served is None:
            raise UsageError(
                f"{path}: {obj.origin}: Kubernetes {target.version} has no {obj.info.kind} API (scheduling.k8s.io, "
                f"from 1.36); replay it on a later minor ({Setting.K8S})"
            )
        if obj.body["apiVersion"] != served:
            raise UsageError(
                f"{path}: {obj.origin}.apiVersion: Kubernetes {target.version} serves {obj.info.kind}s as {served}, "
                f"not {obj.body['apiVersion']}: write it as {served}"
            )
    if served is None:
        grouped = next((pod for pod in scenario.all_pods() if "schedulingGroup" in pod.spec), None)
        if grouped is not None:
            raise UsageError(
                f"{path}: pod {grouped.key}: schedulingGroup is from Kubernetes 1.36 (pod groups), and this is "
                f"{target.version}; replay it on a later minor ({Setting.K8S})"
            )


def _all_objects(scenario: Scenario) -> Iterator[KubeObject]:
    yield from scenario.objects
    yield from (step.obj for step in scenario.steps if step.obj is not None)


def is_pod_group(obj: KubeObject) -> bool:
    return obj.info.kind == "PodGroup" and obj.body["apiVersion"].startswith(f"{SCHEDULING_GROUP}/")


def pod_groups(scenario: Scenario) -> dict[str, KubeObject]:
    """The scenario's PodGroups by their key, written as a pod's (NAME in default, NS/NAME)."""
    return {pod_key(obj.namespace or "default", obj.name): obj for obj in scenario.objects if is_pod_group(obj)}


def is_workload_api(obj: KubeObject) -> bool:
    """A PodGroup or a Workload of the workload-aware scheduling API (scheduling.k8s.io,
    served at one version per minor, off unless kube-apiserver turns it on)."""
    return obj.info.kind in WORKLOAD_KINDS and obj.body["apiVersion"].startswith(f"{SCHEDULING_GROUP}/")


def pod_group_gates(scenario: Scenario) -> tuple[str, ...]:
    """The feature gates the scenario's pod groups need (kube-apiserver serves PodGroups,
    the scheduler schedules them as groups, only with GenericWorkload on)."""
    grouped = any(is_workload_api(obj) for obj in _all_objects(scenario)) or any(
        "schedulingGroup" in pod.spec for pod in scenario.all_pods()
    )
    return (GENERIC_WORKLOAD,) if grouped else ()
