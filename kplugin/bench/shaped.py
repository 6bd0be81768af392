"""The "plugin" workload: SchedulingBasic's ops over nodes and pods shaped by the
project's args (the label keys and resources they name), so that the plugins have
real work and real differences to find.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kplugin.bench.ops import CreateNodes, CreatePods, Op, Workload
from kplugin.bench.templates import DEFAULT_NODE, data_dir
from kplugin.core import names, yamlio

# resources every node has: sized per node group rather than added
_NATIVE = frozenset({"cpu", "memory", "pods", "ephemeral-storage"})
# (share of the nodes, cpu, memory, amount of each extended resource, carries the labels)
_GROUPS = (
    ("large", 2, "16", "64Gi", 16, True),
    ("small", 1, "4", "16Gi", 4, True),
    ("plain", 1, "4", "16Gi", 0, False),
)


@dataclass(frozen=True)
class ArgsShape:
    """What the project's args name: label keys nodes may carry, resources they may have."""

    labels: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()


def shape_of(args: Mapping[str, Mapping[str, Any]]) -> ArgsShape:
    """Label keys and resource names in the plugins' (decoded) args: a string field whose
    name says label (nodeLabel, labelKey, ...) and holds a label key, and a string field
    whose name, or whose list's name, says resource (resourceName, resources[].name)."""
    labels: dict[str, None] = {}
    found: dict[str, None] = {}

    def walk(value: Any, path: tuple[str, ...]) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, (*path, str(key).lower()))
        elif isinstance(value, list):
            for item in value:
                walk(item, path)
        elif isinstance(value, str) and value and path:
            leaf = path[-1]
            if "label" in leaf and not names.qualified_name_problem(value):
                labels[value] = None
            elif ("resource" in leaf or (leaf == "name" and any("resource" in p for p in path))) and not (
                names.qualified_name_problem(value)
            ):
                found[value] = None

    for plugin in sorted(args):
        walk(dict(args[plugin]), ())
    return ArgsShape(tuple(labels), tuple(found))


def plugin_workload(args: Mapping[str, Mapping[str, Any]], plugins: tuple[str, ...]) -> Workload:
    """SchedulingBasic's ops over three groups of nodes (large, small, plain; 2:1:1) that
    the plugins' args tell apart: the label keys the args name are on the large and
    small nodes, the extended resources they name are on those nodes in different
    amounts (and each pod requests one), and cpu and memory differ by group, so a Filter
    or Score that reads any of them has real work and real differences to find."""
    shape = shape_of(args)
    extended = tuple(r for r in shape.resources if r not in _NATIVE)
    ops: list[Op] = []
    for index, (group, share, cpu, memory, amount, labelled) in enumerate(_GROUPS):
        capacity = {"pods": "110", "cpu": cpu, "memory": memory}
        capacity.update({resource: str(amount) for resource in extended if amount})
        labels = {"kplugin/bench-group": group, **({key: "true" for key in shape.labels} if labelled else {})}
        node = copy.deepcopy(DEFAULT_NODE)
        node["metadata"] = {"generateName": f"node-{group}-", "labels": labels}
        node["status"]["capacity"] = capacity
        ops.append(CreateNodes(index, share * 1250, node))
    path = data_dir() / "pod-default.yaml"
    pod = yamlio.parse(path.read_text(), "built-in template pod-default.yaml", path=path)
    if extended:
        resources = pod["spec"]["containers"][0]["resources"]
        for part in ("requests", "limits"):  # extended resources: limits must equal requests
            resources[part].update({resource: "1" for resource in extended})
    init, measured = len(ops), len(ops) + 1
    ops.append(CreatePods(init, 1000, f"namespace-{init}", pod))
    ops.append(CreatePods(measured, 1000, f"namespace-{measured}", copy.deepcopy(pod), collect_metrics=True))
    named = [f"label {key}" for key in shape.labels] + [f"resource {r}" for r in shape.resources]
    notice = (
        f"plugin workload: nodes and pods shaped by {', '.join(plugins)}'s args ({', '.join(named)})"
        if named
        else f"plugin workload: {', '.join(plugins)}'s args name no label or resource; "
        "three sizes of nodes, pods as basic"
    )
    return Workload("PluginShaped", "5000Nodes", tuple(ops), "built-in plugin", (notice,))
