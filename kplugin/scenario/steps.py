"""A scenario's steps: ordered changes after the first placements (a node created,
labelled, tainted, cordoned, resized or deleted; pods created or deleted; an object of
any kind created, updated or deleted; a wait), read and checked against the nodes, pods
and objects that exist at each step."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, assert_never

from kplugin.scenario import schema
from kplugin.scenario.reader import Reader, under
from kplugin.scenario.state import KubeObject, Node, Pod, pod_key


class StepAction(enum.StrEnum):
    """What a step does; its value is the step's key in a scenario file."""

    CREATE_NODE = "createNode"
    DELETE_NODE = "deleteNode"
    LABEL_NODE = "labelNode"
    UNLABEL_NODE = "unlabelNode"
    CORDON_NODE = "cordonNode"
    UNCORDON_NODE = "uncordonNode"
    TAINT_NODE = "taintNode"
    UNTAINT_NODE = "untaintNode"
    UPDATE_NODE = "updateNode"
    CREATE_PODS = "createPods"
    DELETE_PODS = "deletePods"
    CREATE_OBJECT = "createObject"
    UPDATE_OBJECT = "updateObject"
    DELETE_OBJECT = "deleteObject"
    WAIT = "wait"


STEP_ACTIONS = tuple(action.value for action in StepAction)
# steps given as just a node's name ({deleteNode: node-1}); the others name it under "node"
NODE_NAMED = frozenset({StepAction.DELETE_NODE, StepAction.CORDON_NODE, StepAction.UNCORDON_NODE})


@dataclass(frozen=True)
class Step:
    """One change after the first placements."""

    action: StepAction
    node: str = ""
    labels: dict[str, str | None] = field(default_factory=dict)  # None: remove the label
    taints: tuple[dict[str, Any], ...] = ()
    untaint: tuple[str, ...] = ()
    capacity: dict[str, str] | None = None
    allocatable: dict[str, str] | None = None
    new_node: Node | None = None
    pods: tuple[Pod, ...] = ()
    pod_keys: tuple[tuple[str, str], ...] = ()  # (namespace, name)
    obj: KubeObject | None = None  # createObject, updateObject (what changes), deleteObject (which)
    seconds: float = 0.0

    def describe(self) -> str:
        match self.action:
            case StepAction.WAIT:
                return f"wait {self.seconds:g}s"
            case StepAction.CREATE_PODS:
                return f"createPods {', '.join(p.key for p in self.pods)}"
            case StepAction.DELETE_PODS:
                return f"deletePods {', '.join(pod_key(ns, n) for ns, n in self.pod_keys)}"
            case StepAction.CREATE_NODE if self.new_node is not None:
                return f"createNode {self.new_node.name}"
            case StepAction.CREATE_OBJECT | StepAction.UPDATE_OBJECT | StepAction.DELETE_OBJECT if self.obj:
                return f"{self.action} {object_key(self.obj)}"
            case _:
                return f"{self.action} {self.node}"


def read_step(reader: Reader, raw: Any, where: str) -> Step:
    """The step at ``where``: a mapping of one action to what it takes."""
    entry = reader.mapping(raw, where, set(STEP_ACTIONS))
    if len(entry) != 1:
        raise reader.fail(where, f"a step is one of {', '.join(STEP_ACTIONS)}, e.g. {{deleteNode: node-1}}")
    ((key, value),) = entry.items()
    action = StepAction(key)
    at = f"{where}.{action}"

    def keyed(allowed: set[str]) -> dict[str, Any]:
        given = reader.mapping(value, at, allowed)
        if given.get("node") is None:
            raise reader.fail(f"{at}.node", "is missing")
        return given

    def node_of(given: dict[str, Any]) -> str:
        return reader.name(given["node"], f"{at}.node")

    match action:
        case StepAction.WAIT:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3600:
                raise reader.fail(at, f"{schema.shown(value)} must be a number of seconds from 0 to 3600")
            return Step(action, seconds=float(value))
        case StepAction.CREATE_NODE:
            created = reader.node(value, under(at), at)
            return Step(action, node=created.name, new_node=created)
        case StepAction.DELETE_NODE | StepAction.CORDON_NODE | StepAction.UNCORDON_NODE:
            return Step(action, node=reader.name(value, at))
        case StepAction.LABEL_NODE:
            given = keyed({"node", "labels"})
            labels = reader.check(schema.LABELS, given.get("labels"), f"{at}.labels")
            return Step(action, node=node_of(given), labels=dict(labels))
        case StepAction.UNLABEL_NODE | StepAction.UNTAINT_NODE:
            given = keyed({"node", "keys"})
            keys = reader.check(schema.List(schema.LABEL_KEY), given.get("keys"), f"{at}.keys")
            node = node_of(given)
            if action is StepAction.UNLABEL_NODE:
                return Step(action, node=node, labels=dict.fromkeys(keys))
            return Step(action, node=node, untaint=tuple(keys))
        case StepAction.TAINT_NODE:
            given = keyed({"node", "taints"})
            taints = reader.check(schema.List(schema.TAINT), given.get("taints"), f"{at}.taints")
            return Step(action, node=node_of(given), taints=tuple(taints))
        case StepAction.UPDATE_NODE:
            given = keyed({"node", "capacity", "allocatable"})
            capacity = allocatable = None
            if given.get("capacity") is not None:
                capacity = reader.check(schema.QUANTITIES, given["capacity"], f"{at}.capacity")
            if given.get("allocatable") is not None:
                allocatable = reader.check(schema.QUANTITIES, given["allocatable"], f"{at}.allocatable")
            if capacity is None and allocatable is None:
                raise reader.fail(at, "give capacity, allocatable or both")
            return Step(action, node=node_of(given), capacity=capacity, allocatable=allocatable)
        case StepAction.CREATE_PODS:
            items = reader.items(value, at)
            pods = [reader.pod(item, under(f"{at}[{i}]"), f"{at}[{i}]") for i, item in enumerate(items)]
            if not pods:
                raise reader.fail(at, "give at least one pod")
            return Step(action, pods=tuple(pods))
        case StepAction.DELETE_PODS:
            return Step(action, pod_keys=_pod_keys(reader, value, at))
        case StepAction.CREATE_OBJECT | StepAction.UPDATE_OBJECT:
            return Step(action, obj=reader.kube_object(value, at))
        case StepAction.DELETE_OBJECT:
            given = reader.mapping(value, at, {"apiVersion", "kind", "metadata"})
            return Step(action, obj=reader.kube_object(given, at))
    assert_never(action)


def object_key(obj: KubeObject) -> str:
    """How steps and messages name an object: Kind namespace/name."""
    return f"{obj.info.kind} {obj.namespace + '/' if obj.namespace else ''}{obj.name}"


def _pod_keys(reader: Reader, value: Any, at: str) -> tuple[tuple[str, str], ...]:
    keys = []
    for i, item in enumerate(reader.items(value, at)):
        if not isinstance(item, str):
            raise reader.fail(f"{at}[{i}]", f"{schema.shown(item)} must be a pod name (or namespace/name)")
        namespace, _, name = item.rpartition("/")
        keys.append((reader.namespace(namespace or None, f"{at}[{i}]"), reader.name(name, f"{at}[{i}]")))
    if not keys:
        raise reader.fail(at, "give at least one pod")
    return tuple(keys)


def check_steps(
    reader: Reader,
    steps: list[Step],
    nodes: set[str],
    pods: set[str],
    classes: set[str],
    runtime_classes: set[str],
    objects: set[str],
) -> None:
    """Every step names nodes, pods and objects that exist when it runs (``nodes``,
    ``pods`` and ``objects`` (object_key): those before the first step, changed as the
    steps go)."""
    nodes, pods, objects = set(nodes), set(pods), set(objects)
    for i, step in enumerate(steps):
        where = f"steps[{i}].{step.action}"
        if step.new_node is not None:
            if step.new_node.name in nodes:
                raise reader.fail(f"{where}.name", f"node {step.new_node.name!r} exists at this step")
            nodes.add(step.new_node.name)
        elif step.node and step.node not in nodes:
            raise reader.fail(
                where if step.action in NODE_NAMED else f"{where}.node",
                f"{step.node!r} is not a node of this scenario at this step",
            )
        if step.action == StepAction.DELETE_NODE:
            nodes.discard(step.node)
        for pod in step.pods:
            if pod.key in pods:
                raise reader.fail(where, f"pod {pod.key!r} exists at this step")
            if pod.node_name is not None and pod.node_name not in nodes:
                raise reader.fail(f"{where} ({pod.key}).nodeName", f"{pod.node_name!r} is not a node at this step")
            reader.references(pod, f"{where} ({pod.key})", classes, runtime_classes)
            pods.add(pod.key)
        for namespace, name in step.pod_keys:
            key = pod_key(namespace, name)
            if key not in pods:
                raise reader.fail(where, f"{key!r} is not a pod of this scenario at this step")
            pods.discard(key)
        if step.obj is not None:
            key = object_key(step.obj)
            if step.action is StepAction.CREATE_OBJECT:
                if key in objects:
                    raise reader.fail(where, f"{key} exists at this step (updateObject changes it)")
                objects.add(key)
            elif key not in objects:
                raise reader.fail(where, f"{key} is not an object of this scenario at this step")
            elif step.action is StepAction.DELETE_OBJECT:
                objects.discard(key)
