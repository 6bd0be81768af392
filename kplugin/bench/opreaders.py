"""A workload file's ops, read one opcode at a time (scheduler_perf's workloadTemplate
entries): each supported opcode has a reader that checks its keys and makes its op."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kplugin.bench import gotemplate
from kplugin.bench.decode import Context, Keys, parse_duration, read_count, read_param, whole_number
from kplugin.bench.gotemplate import INDEX, ObjectTemplate
from kplugin.bench.ops import (
    MAX_CHURN_OBJECTS,
    MAX_NAMESPACES,
    MAX_NODES,
    MAX_PODS,
    MAX_SECONDS,
    Barrier,
    Churn,
    CreateNamespaces,
    CreateNodes,
    CreatePodGroups,
    CreatePods,
    NodeStrategy,
    Op,
    Sleep,
)
from kplugin.bench.templates import DEFAULT_NODE
from kplugin.core import names, yamlio


class Opcode(StrEnum):
    """The scheduler_perf ops kplugin bench runs (their opcodes as the files spell them)."""

    CREATE_NODES = "createNodes"
    CREATE_NAMESPACES = "createNamespaces"
    CREATE_PODS = "createPods"
    CREATE_POD_GROUPS = "createPodGroups"
    BARRIER = "barrier"
    CHURN = "churn"
    SLEEP = "sleep"


SUPPORTED = tuple(str(op) for op in Opcode)
# scheduler_perf's other ops (1.28 to 1.37): named as such when a file uses them
UNSUPPORTED = (
    "createAny",
    "createPodSets",
    "createResourceClaims",
    "createResourceClaimTemplate",
    "createResourceClass",
    "createResourceDriver",
    "allocResourceClaims",
    "deletePods",
    "updateAny",
    "startCollectingMetrics",
    "stopCollectingMetrics",
    "startCollectingProfile",
    "stopCollectingProfile",
)


def _strategy(keys: Keys, ctx: Context) -> NodeStrategy | None:
    given = [k for k in ("nodeAllocatableStrategy", "labelNodePrepareStrategy", "uniqueNodeLabelStrategy") if k in keys]
    if len(given) > 1:
        raise ctx.fail(keys.where, f"{' and '.join(given)}: at most one node strategy")
    if not given:
        return None
    key = given[0]
    where = f"{keys.where}.{key}"
    if key == "nodeAllocatableStrategy":
        inner = Keys(keys.get(key), where, ("nodeAllocatable", "csiNodeAllocatable", "migratedPlugins"), ctx.fail)
        for unsupported in ("csiNodeAllocatable", "migratedPlugins"):
            if inner.get(unsupported):
                raise ctx.fail(f"{where}.{unsupported}", "is not supported by kplugin bench (CSI nodes are not made)")
        allocatable = inner.get("nodeAllocatable")
        if not isinstance(allocatable, dict) or not allocatable:
            raise ctx.fail(f"{where}.nodeAllocatable", "must map resource names to quantities")
        pairs = []
        for resource, quantity in allocatable.items():
            if names.qualified_name_problem(resource):
                raise ctx.fail(f"{where}.nodeAllocatable", f"{str(resource)[:60]!r} is not a resource name")
            text = str(quantity) if isinstance(quantity, int) and not isinstance(quantity, bool) else quantity
            if names.quantity_problem(text):
                raise ctx.fail(f"{where}.nodeAllocatable.{resource}", f"{yamlio.describe(quantity)} is not a quantity")
            pairs.append((str(resource), str(text)))
        return NodeStrategy("allocatable", allocatable=tuple(pairs))
    inner = Keys(
        keys.get(key),
        where,
        ("labelKey", "labelValues") if key != "uniqueNodeLabelStrategy" else ("labelKey",),
        ctx.fail,
    )
    label = inner.string("labelKey")
    if label is None or names.qualified_name_problem(label):
        raise ctx.fail(f"{where}.labelKey", f"{yamlio.describe(label)} is not a label key")
    if key == "uniqueNodeLabelStrategy":
        return NodeStrategy("unique", label_key=label)
    values = inner.get("labelValues")
    if not isinstance(values, list) or not values:
        raise ctx.fail(f"{where}.labelValues", "must be a non-empty list of label values")
    for value in values:
        if not isinstance(value, str) or names.label_value_problem(value):
            raise ctx.fail(f"{where}.labelValues", f"{yamlio.describe(value)} is not a label value")
    return NodeStrategy("label", label_key=label, label_values=tuple(values))


def _namespace(keys: Keys, index: int, ctx: Context) -> str:
    namespace = keys.string("namespace")
    if namespace is None:
        return f"namespace-{index}"  # scheduler_perf's default: one namespace per op
    if names.dns1123_label_problem(namespace):
        raise ctx.fail(f"{keys.where}.namespace", f"{namespace[:60]!r} is not a namespace name")
    return namespace


def _template_params(keys: Keys, ctx: Context) -> tuple[tuple[str, int], ...]:
    """templateParams: each a whole number or a $param of the workload (scheduler_perf's
    "$name|default" too), sorted by name."""
    raw = keys.get("templateParams")
    where = f"{keys.where}.templateParams"
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not raw or not all(isinstance(k, str) for k in raw):
        raise ctx.fail(where, "must map names to whole numbers or $params")
    params = []
    for name, value in raw.items():
        if name == INDEX or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ctx.fail(f"{where}.{name[:40]}", f"{name[:40]!r} is not a name a template can print (nor {INDEX})")
        if isinstance(value, str) and value.startswith("$"):
            reference, _, default = value.partition("|")
            if default and reference[1:] not in ctx.params:
                value = yamlio.parse(default, f"{where}.{name}")
            else:
                value = read_param(reference, ctx, f"{where}.{name}")
        params.append((name, whole_number(value, f"{where}.{name}", ctx.fail)))
    return tuple(sorted(params))


def _rendered(
    keys: Keys, key: str, path: Any, kind: str, params: tuple[tuple[str, int], ...], count: int, ctx: Context
) -> ObjectTemplate:
    """The op's template, each action checked against its params, rendered once for its
    first and last object (a division by zero fails here, not halfway through a run)."""
    where = f"{keys.where}.{key}"
    template = ctx.templates.read_object(path, where, kind, frozenset(name for name, _ in params))
    for i in {0, max(count - 1, 0)}:
        gotemplate.check_rendered(template, {**dict(params), INDEX: i}, lambda problem: ctx.fail(where, problem))
    return template


def read_op(raw: Any, index: int, ctx: Context, default_pod: str | None) -> Op:
    where = f"workloadTemplate[{index}]"
    if not isinstance(raw, dict):
        raise ctx.fail(where, f"must be a mapping with an opcode, not {yamlio.describe(raw)}")
    opcode = next((v for k, v in raw.items() if isinstance(k, str) and k.lower() == "opcode"), None)
    if not isinstance(opcode, str):
        raise ctx.fail(where, "needs an opcode")
    canonical = {op.lower(): op for op in (*SUPPORTED, *UNSUPPORTED)}.get(opcode.lower())
    if canonical in UNSUPPORTED:
        raise ctx.fail(
            where, f"opcode {canonical} is not supported by kplugin bench (supported: {', '.join(SUPPORTED)})"
        )
    if canonical is None:
        raise ctx.fail(where, f"opcode {opcode[:60]!r} is not a scheduler_perf op (supported: {', '.join(SUPPORTED)})")
    read = _OP_READERS[Opcode(canonical)]
    return read(_OpInput(raw, index, f"{where} ({canonical})", ctx, default_pod))


@dataclass(frozen=True)
class _OpInput:
    """One op of a workload file, as its reader gets it."""

    raw: dict[str, Any]
    index: int
    where: str
    ctx: Context
    default_pod: str | None

    def keys(self, allowed: tuple[str, ...]) -> Keys:
        return Keys(self.raw, self.where, allowed, self.ctx.fail)


def _create_nodes(op: _OpInput) -> Op:
    where, ctx = op.where, op.ctx
    keys = op.keys(
        ("opcode", "count", "countParam", "nodeTemplatePath", "nodeAllocatableStrategy",
         "labelNodePrepareStrategy", "uniqueNodeLabelStrategy")
    )  # fmt: skip
    template_path = keys.get("nodeTemplatePath")
    template = (
        ctx.templates.read(template_path, f"{where}.nodeTemplatePath", "Node")
        if template_path is not None
        else copy.deepcopy(DEFAULT_NODE)
    )
    return CreateNodes(op.index, read_count(keys, ctx, MAX_NODES, "nodes"), template, _strategy(keys, ctx))


def _create_namespaces(op: _OpInput) -> Op:
    where, ctx = op.where, op.ctx
    keys = op.keys(("opcode", "prefix", "count", "countParam", "namespaceTemplatePath"))
    prefix = keys.string("prefix")
    if prefix is None or names.dns1123_label_problem(prefix) or len(prefix) > 50:
        raise ctx.fail(f"{where}.prefix", f"{yamlio.describe(prefix)} is not a namespace name prefix")
    namespace_path = keys.get("namespaceTemplatePath")
    namespace_template = (
        ctx.templates.read(namespace_path, f"{where}.namespaceTemplatePath", "Namespace")
        if namespace_path is not None
        else None
    )
    return CreateNamespaces(op.index, prefix, read_count(keys, ctx, MAX_NAMESPACES, "namespaces"), namespace_template)


# createPods keys scheduler_perf has and kplugin bench does not run
_PODS_UNSUPPORTED = (
    "persistentVolumeTemplatePath",
    "persistentVolumeClaimTemplatePath",
    "steadyState",
    "steadyStateParam",
    "duration",
    "durationParam",
    "deletePodsPerSecond",
    "signatureBatchSize",
    "signatureBatchSizeParam",
)


def _create_pods(op: _OpInput) -> Op:
    where, ctx, index = op.where, op.ctx, op.index
    keys = op.keys(
        ("opcode", "count", "countParam", "collectMetrics", "namespace", "podTemplatePath", "skipWaitToCompletion",
         "countMultiplierParam", "templateParams", *_PODS_UNSUPPORTED)
    )  # fmt: skip
    for unsupported in _PODS_UNSUPPORTED:
        if keys.get(unsupported) not in (None, False):
            raise ctx.fail(f"{where}.{unsupported}", "is not supported by kplugin bench")
    collect, skip = keys.boolean("collectMetrics"), keys.boolean("skipWaitToCompletion")
    if collect and skip:
        raise ctx.fail(where, "collectMetrics and skipWaitToCompletion cannot both be true")
    template_path = keys.get("podTemplatePath", op.default_pod)
    if template_path is None:
        raise ctx.fail(where, "needs podTemplatePath (the test case has no defaultPodTemplatePath)")
    count = read_count(keys, ctx, MAX_PODS, "pods")
    multiplier = keys.string("countMultiplierParam")
    if multiplier is not None:  # scheduler_perf: count times the param (pods per pod group)
        at = f"{where}.countMultiplierParam ({multiplier})"
        factor = whole_number(read_param(multiplier, ctx, f"{where}.countMultiplierParam"), at, ctx.fail)
        if factor < 0 or count * factor > MAX_PODS:
            raise ctx.fail(at, f"{count} times {factor} pods is not from 0 to {MAX_PODS}")
        count *= factor
    if "templateParams" not in keys:
        template = ctx.templates.read(template_path, f"{where}.podTemplatePath", "Pod")
        return CreatePods(index, count, _namespace(keys, index, ctx), template, collect, skip)
    params = _template_params(keys, ctx)
    rendered = _rendered(keys, "podTemplatePath", template_path, "Pod", params, count, ctx)
    namespace = _namespace(keys, index, ctx)
    return CreatePods(index, count, namespace, rendered.document, collect, skip, rendered=rendered, params=params)


def _create_pod_groups(op: _OpInput) -> Op:
    where, ctx = op.where, op.ctx
    keys = op.keys(("opcode", "count", "countParam", "namespace", "templatePath", "templateParams"))
    if keys.string("namespace") is None:
        raise ctx.fail(where, "needs namespace (the pods' that name its groups)")
    if keys.get("templatePath") is None:
        raise ctx.fail(where, "needs templatePath (a PodGroup template)")
    count = read_count(keys, ctx, MAX_PODS, "pod groups")
    params = _template_params(keys, ctx)
    rendered = _rendered(keys, "templatePath", keys.get("templatePath"), "PodGroup", params, count, ctx)
    return CreatePodGroups(op.index, count, _namespace(keys, op.index, ctx), rendered, params)


def _barrier(op: _OpInput) -> Op:
    where, ctx = op.where, op.ctx
    keys = op.keys(("opcode", "namespaces", "labelSelector", "stageRequirement"))
    stage = keys.string("stageRequirement")
    if stage not in (None, "", "Scheduled"):
        raise ctx.fail(
            f"{where}.stageRequirement", f"{stage[:40]!r} is not supported (kplugin bench waits for Scheduled)"
        )
    namespaces = keys.get("namespaces") or []
    if not isinstance(namespaces, list) or not all(
        isinstance(n, str) and not names.dns1123_label_problem(n) for n in namespaces
    ):
        raise ctx.fail(f"{where}.namespaces", "must be a list of namespace names")
    selector = keys.get("labelSelector") or {}
    if not isinstance(selector, dict) or any(
        names.qualified_name_problem(k) or names.label_value_problem(v) for k, v in selector.items()
    ):
        raise ctx.fail(f"{where}.labelSelector", "must map label keys to label values")
    return Barrier(op.index, tuple(namespaces), tuple(sorted(selector.items())))


def _churn(op: _OpInput) -> Op:
    where, ctx = op.where, op.ctx
    keys = op.keys(("opcode", "mode", "number", "intervalMilliseconds", "namespace", "templatePaths"))
    mode = keys.string("mode")
    if mode not in ("create", "recreate"):
        raise ctx.fail(f"{where}.mode", f"{yamlio.describe(mode)} must be create or recreate")
    number = whole_number(keys.get("number", 0), f"{where}.number", ctx.fail)
    if number < 0 or number > MAX_CHURN_OBJECTS:
        raise ctx.fail(f"{where}.number", f"{number} must be from 0 to {MAX_CHURN_OBJECTS}")
    if mode == "recreate" and number == 0:
        raise ctx.fail(f"{where}.number", "cannot be 0 in recreate mode")
    if mode == "create" and number == 0:
        raise ctx.fail(f"{where}.number", "0 (unlimited) is not supported; give the number of objects to create")
    interval = whole_number(keys.get("intervalMilliseconds", 500), f"{where}.intervalMilliseconds", ctx.fail)
    if not 1 <= interval <= MAX_SECONDS * 1000:
        raise ctx.fail(f"{where}.intervalMilliseconds", f"{interval} must be from 1 to {int(MAX_SECONDS * 1000)}")
    paths = keys.get("templatePaths")
    if not isinstance(paths, list) or not paths:
        raise ctx.fail(f"{where}.templatePaths", "needs at least one template file")
    templates = tuple(
        ctx.templates.read(p, f"{where}.templatePaths[{i}]", ("Node", "Pod")) for i, p in enumerate(paths)
    )
    return Churn(op.index, mode, number, interval / 1000, _namespace(keys, op.index, ctx), templates)


def _sleep(op: _OpInput) -> Op:
    where, ctx = op.where, op.ctx
    keys = op.keys(("opcode", "duration", "durationParam"))
    param = keys.string("durationParam")
    if param is not None:
        duration = read_param(param, ctx, f"{where}.durationParam")
        return Sleep(op.index, parse_duration(duration, f"{where}.durationParam", ctx.fail))
    if "duration" not in keys:
        raise ctx.fail(where, "needs duration or durationParam")
    return Sleep(op.index, parse_duration(keys.get("duration"), f"{where}.duration", ctx.fail))


# each supported opcode's reader
_OP_READERS: dict[Opcode, Callable[[_OpInput], Op]] = {
    Opcode.CREATE_NODES: _create_nodes,
    Opcode.CREATE_NAMESPACES: _create_namespaces,
    Opcode.CREATE_PODS: _create_pods,
    Opcode.CREATE_POD_GROUPS: _create_pod_groups,
    Opcode.BARRIER: _barrier,
    Opcode.CHURN: _churn,
    Opcode.SLEEP: _sleep,
}
