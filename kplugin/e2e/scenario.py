"""e2e scenarios: nodes, pods and expectations, read from YAML and checked value by
value (every problem names the file and the key) before anything starts.

A scenario is YAML::

    nodes:
    - name: gpu-1
      labels: {example.com/gpu: "true"}
      capacity: {cpu: "8", memory: 32Gi, pods: "110"}   # these are the defaults
    pods:
    - name: train-1
      requests: {cpu: "2"}
      labels: {app: train}
      nodeSelector: {}
    expect:                # optional: pod -> node, or "pending"
      train-1: gpu-1
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kplugin.core import names, safefs, yamlio
from kplugin.core.errors import UsageError

PENDING = "pending"
NAMESPACE = "default"
OVERCOMMITABLE = frozenset({"cpu", "memory", "ephemeral-storage"})
DEFAULT_CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110"}


@dataclass(frozen=True)
class Node:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    capacity: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_CAPACITY))

    def manifest(self) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": self.name, "labels": dict(self.labels)},
            "status": {"capacity": dict(self.capacity), "allocatable": dict(self.capacity)},
        }


@dataclass(frozen=True)
class Pod:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    requests: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)

    def manifest(self, scheduler_name: str) -> dict[str, Any]:
        container: dict[str, Any] = {"name": "main", "image": "registry.k8s.io/pause:3.9"}
        if self.requests:
            container["resources"] = {"requests": dict(self.requests)}
            # extended resources and hugepages cannot be overcommitted: limits must equal requests
            fixed = {k: v for k, v in self.requests.items() if k not in OVERCOMMITABLE}
            if fixed:
                container["resources"]["limits"] = fixed
        spec: dict[str, Any] = {
            "schedulerName": scheduler_name,
            "terminationGracePeriodSeconds": 0,
            "containers": [container],
        }
        if self.node_selector:
            spec["nodeSelector"] = dict(self.node_selector)
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": self.name,
                "namespace": NAMESPACE,
                "labels": dict(self.labels),
                "annotations": dict(self.annotations),
            },
            "spec": spec,
        }


@dataclass(frozen=True)
class Scenario:
    nodes: tuple[Node, ...]
    pods: tuple[Pod, ...]
    expect: dict[str, str] = field(default_factory=dict)


DEFAULT_SCENARIO = Scenario(
    nodes=tuple(Node(f"node-{i}") for i in (1, 2, 3)),
    pods=tuple(Pod(f"pod-{i}", requests={"cpu": "1"}) for i in (1, 2, 3)),
)


class _Reader:
    """Reads one scenario file; every problem names the file and the key."""

    def __init__(self, path: Path) -> None:
        self.path = path

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
            raise self.fail(where, f"{_shown(value)} is not a DNS-1123 name (lowercase letters, digits, '-' and '.')")
        return str(value)

    def _entries(self, value: Any, where: str, key_kind: str, checked: Callable[[Any, str], str]) -> dict[str, str]:
        """A mapping whose keys are qualified names (labels, annotations and resource
        names alike) and whose values ``checked`` returns as strings."""
        out: dict[str, str] = {}
        for key, raw in self.mapping(value, where).items():
            if names.qualified_name_problem(key):
                raise self.fail(where, f"{_shown(key)} is not {key_kind}")
            out[key] = checked(raw, f"{where}.{key}")
        return dict(sorted(out.items()))

    def labels(self, value: Any, where: str) -> dict[str, str]:
        def label(raw: Any, at: str) -> str:
            text = _scalar(raw)
            if text is None or names.label_value_problem(text):
                raise self.fail(at, f'{_shown(raw)} is not a label value (quote it: "true")')
            return text

        return self._entries(value, where, "a label key (e.g. example.com/gpu)", label)

    def annotations(self, value: Any, where: str) -> dict[str, str]:
        def annotation(raw: Any, at: str) -> str:
            if not isinstance(raw, str):
                raise self.fail(at, f'{_shown(raw)} is not a string (quote it: "true")')
            return raw

        return self._entries(value, where, "an annotation key (e.g. example.com/hold)", annotation)

    def quantities(self, value: Any, where: str) -> dict[str, str]:
        def quantity(raw: Any, at: str) -> str:
            text = _scalar(raw)
            if text is None or names.quantity_problem(text):
                raise self.fail(at, f"{_shown(raw)} is not a quantity (e.g. 2, 500m, 4Gi)")
            return text

        return self._entries(value, where, "a resource name (e.g. cpu, memory, example.com/gpu)", quantity)

    def items(self, value: Any, where: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(where, "must be a list")
        return value


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return None  # YAML's true/false: a label value must be the string "true"
    if isinstance(value, int) and abs(value) < 10**18:
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value == value and abs(value) < 1e18:
        return str(value)
    return None


def _shown(value: Any) -> str:
    """A value as an error message shows it: repr, cut short."""
    text = (
        repr(value)
        if not isinstance(value, int) or abs(value) < 10**30
        else f"<an integer of {len(str(value))} digits>"
    )
    return text if len(text) <= 80 else text[:77] + "..."


def load_scenario(path: Path) -> Scenario:
    """Read and check a scenario file (see the module docstring)."""
    raw = yamlio.load_file(path, "--scenario", limit=safefs.LARGE_FILE)
    reader = _Reader(path)
    top = reader.mapping(raw, "the document", {"nodes", "pods", "expect"})
    nodes: list[Node] = []
    for i, item in enumerate(reader.items(top.get("nodes"), "nodes")):
        where = f"nodes[{i}]"
        entry = reader.mapping(item, where, {"name", "labels", "capacity"})
        capacity = {**DEFAULT_CAPACITY, **reader.quantities(entry.get("capacity"), f"{where}.capacity")}
        nodes.append(
            Node(
                name=reader.name(entry.get("name"), f"{where}.name"),
                labels=reader.labels(entry.get("labels"), f"{where}.labels"),
                capacity=dict(sorted(capacity.items())),
            )
        )
    pods: list[Pod] = []
    for i, item in enumerate(reader.items(top.get("pods"), "pods")):
        where = f"pods[{i}]"
        entry = reader.mapping(item, where, {"name", "labels", "annotations", "requests", "nodeSelector"})
        pods.append(
            Pod(
                name=reader.name(entry.get("name"), f"{where}.name"),
                labels=reader.labels(entry.get("labels"), f"{where}.labels"),
                annotations=reader.annotations(entry.get("annotations"), f"{where}.annotations"),
                requests=reader.quantities(entry.get("requests"), f"{where}.requests"),
                node_selector=reader.labels(entry.get("nodeSelector"), f"{where}.nodeSelector"),
            )
        )
    if not nodes or not pods:
        raise reader.fail("nodes, pods", "a scenario needs at least one node and one pod")
    for kind, given in (("node", [n.name for n in nodes]), ("pod", [p.name for p in pods])):
        twice = sorted(name for name, count in Counter(given).items() if count > 1)  # linear: 10^5 nodes happen
        if twice:
            raise reader.fail(f"{kind}s", f"{kind} {twice[0]!r} is named twice")
    expect: dict[str, str] = {}
    known_nodes, known_pods = {n.name for n in nodes}, {p.name for p in pods}
    for pod, node in reader.mapping(top.get("expect"), "expect").items():
        if not isinstance(pod, str) or pod not in known_pods:
            raise reader.fail("expect", f"{_shown(pod)} is not a pod of this scenario")
        if not isinstance(node, str):
            raise reader.fail(f"expect.{pod}", f"{_shown(node)} must be a node name or {PENDING!r}")
        if node != PENDING and node not in known_nodes:
            raise reader.fail(f"expect.{pod}", f"{_shown(node)} is neither a node of this scenario nor {PENDING!r}")
        expect[pod] = node
    return Scenario(tuple(nodes), tuple(pods), expect)
