"""Workloads in scheduler_perf's performance-config format, read and checked before
anything starts.

A file is a list of test cases; each has a ``workloadTemplate`` (a list of ops) and
``workloads`` that give the template's ``$params`` values::

    - name: SchedulingBasic
      defaultPodTemplatePath: pod-default.yaml
      workloadTemplate:
      - opcode: createNodes
        countParam: $initNodes
      - opcode: createPods
        countParam: $initPods
      - opcode: createPods
        countParam: $measurePods
        collectMetrics: true
      workloads:
      - name: 5000Nodes
        params: {initNodes: 5000, initPods: 1000, measurePods: 1000}

kplugin bench runs the subset of ops its built-in workloads need: createNodes (with a
node template and one of the allocatable, label or unique-label strategies),
createNamespaces, createPods (collectMetrics marks the measured one), barrier, churn
(of Nodes and Pods) and sleep. Keys are matched without regard to case, as
scheduler_perf's decoder does. Template paths are relative to the workload file's
directory or, as scheduler_perf reads them, to the current directory; templates are
plain YAML (scheduler_perf's Go template syntax, ``{{.Index}}``, is not read).
Every problem is a UsageError naming the file and the key.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from kplugin.core import names, safefs, yamlio
from kplugin.core.errors import UsageError

# Far above what one machine (or a kwok cluster) holds, far below what would run for
# days: Kubernetes documents 5,000 nodes and 150,000 pods per cluster.
MAX_NODES = 50_000
MAX_PODS = 500_000
MAX_NAMESPACES = 10_000
MAX_CHURN_OBJECTS = 100_000
MAX_SECONDS = 3600.0

SUPPORTED = ("createNodes", "createNamespaces", "createPods", "barrier", "churn", "sleep")
# scheduler_perf's other ops (1.28 to 1.37): named as such when a file uses them
UNSUPPORTED = (
    "createAny",
    "createPodSets",
    "createPodGroups",
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
BUILT_IN = ("basic", "plugin", "mixed")
DEFAULT_NODE: dict[str, Any] = {
    # scheduler_perf's node when a createNodes op names no template (every minor)
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"generateName": "node-0-"},
    "status": {
        "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}


@dataclass(frozen=True)
class NodeStrategy:
    """One of createNodes' strategies: extra allocatable resources on every node, a
    label whose values go round the nodes, or a label unique to each node."""

    kind: str  # "allocatable" | "label" | "unique"
    allocatable: tuple[tuple[str, str], ...] = ()
    label_key: str = ""
    label_values: tuple[str, ...] = ()


@dataclass(frozen=True)
class CreateNodes:
    index: int
    count: int
    template: dict[str, Any]
    strategy: NodeStrategy | None = None
    opcode: str = "createNodes"


@dataclass(frozen=True)
class CreateNamespaces:
    index: int
    prefix: str
    count: int
    template: dict[str, Any] | None = None
    opcode: str = "createNamespaces"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f"{self.prefix}-{i}" for i in range(self.count))


@dataclass(frozen=True)
class CreatePods:
    index: int
    count: int
    namespace: str
    template: dict[str, Any]
    collect_metrics: bool = False
    skip_wait: bool = False
    opcode: str = "createPods"


@dataclass(frozen=True)
class Barrier:
    index: int
    namespaces: tuple[str, ...] = ()  # empty: every namespace of the run
    label_selector: tuple[tuple[str, str], ...] = ()
    opcode: str = "barrier"


@dataclass(frozen=True)
class Churn:
    index: int
    mode: str  # "create" | "recreate"
    number: int
    interval: float  # seconds
    namespace: str
    templates: tuple[dict[str, Any], ...]
    opcode: str = "churn"


@dataclass(frozen=True)
class Sleep:
    index: int
    seconds: float
    opcode: str = "sleep"


Op = CreateNodes | CreateNamespaces | CreatePods | Barrier | Churn | Sleep


@dataclass(frozen=True)
class Workload:
    """One workload of one test case, its params applied."""

    test_case: str
    name: str
    ops: tuple[Op, ...]
    source: str  # the file, or "built-in NAME"
    notices: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return f"{self.test_case}/{self.name}"

    @property
    def cluster_nodes(self) -> tuple[CreateNodes, ...]:
        """The createNodes ops before any other op: the cluster every run starts from
        (created once, kept for every run)."""
        leading = []
        for op in self.ops:
            if not isinstance(op, CreateNodes):
                break
            leading.append(op)
        return tuple(leading)

    @property
    def run_ops(self) -> tuple[Op, ...]:
        """The ops each run performs (everything after the cluster's nodes)."""
        return self.ops[len(self.cluster_nodes) :]

    @property
    def measured(self) -> tuple[CreatePods, ...]:
        return tuple(op for op in self.ops if isinstance(op, CreatePods) and op.collect_metrics)

    @property
    def nodes(self) -> int:
        return sum(op.count for op in self.ops if isinstance(op, CreateNodes))

    @property
    def pods(self) -> int:
        return sum(op.count for op in self.ops if isinstance(op, CreatePods))

    @property
    def measured_pods(self) -> int:
        return sum(op.count for op in self.measured)

    def scaled(self, nodes: int | None, pods: int | None) -> Workload:
        """This workload for ``nodes`` nodes (the cluster's createNodes ops keep their
        shares) and ``pods`` measured pods (the other createPods ops keep their
        proportion to them)."""
        check_count(nodes, "--nodes", MAX_NODES, "nodes")
        check_count(pods, "--pods", MAX_PODS, "pods")
        ops = list(self.ops)
        if nodes is not None:
            leading = self.cluster_nodes
            if not leading:
                raise UsageError(f"--nodes: workload {self.title} creates no nodes before its other ops")
            for i, count in enumerate(_shares(nodes, [op.count for op in leading])):
                ops[i] = replace(leading[i], count=count)
        if pods is not None:
            measured = self.measured_pods
            if measured == 0:
                raise UsageError(f"--pods: workload {self.title} measures no pods (no createPods with collectMetrics)")
            shares = iter(_shares(pods, [op.count for op in self.measured]))
            for i, op in enumerate(ops):
                if isinstance(op, CreatePods):
                    scaled = next(shares) if op.collect_metrics else round(op.count * pods / measured)
                    ops[i] = replace(op, count=max(scaled, 1 if op.count else 0))
        result = replace(self, ops=tuple(ops))
        if nodes is not None or pods is not None:
            result = replace(result, name=f"{result.nodes}Nodes_{result.measured_pods}Pods")
        check_totals(result, f"workload {result.title}")
        return result


def _shares(total: int, weights: list[int]) -> list[int]:
    """``total`` split in proportion to ``weights`` (largest remainders), each share at
    least 1 where its weight is not 0 and the total allows it."""
    weight = sum(weights) or len(weights)
    raw = [total * (w if sum(weights) else 1) / weight for w in weights]
    shares = [int(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: (shares[i] - raw[i], i))
    for i in order[: total - sum(shares)]:
        shares[i] += 1
    return shares


def check_count(value: int | None, what: str, limit: int, unit: str) -> None:
    if value is None:
        return
    if value < 1:
        raise UsageError(f"{what} {value}: must be at least 1")
    if value > limit:
        raise UsageError(f"{what} {value}: more than {limit} {unit}, the most kplugin bench creates in one workload")


def check_totals(workload: Workload, where: str) -> None:
    for total, limit, unit in (
        (workload.nodes, MAX_NODES, "nodes"),
        (workload.pods, MAX_PODS, "pods"),
        (sum(op.count for op in workload.ops if isinstance(op, CreateNamespaces)), MAX_NAMESPACES, "namespaces"),
    ):
        if total > limit:
            raise UsageError(f"{where}: {total} {unit} in all, more than {limit}, the most kplugin bench creates")
    if workload.measured_pods == 0:
        raise UsageError(
            f"{where}: no pods are measured; mark a createPods op with collectMetrics: true (and count > 0)"
        )


# --- reading a performance-config file -------------------------------------------------


class _Keys:
    """A mapping from the file, its keys matched without regard to case (as
    scheduler_perf's decoder matches Go field names); unknown keys are errors."""

    def __init__(self, raw: Any, where: str, allowed: tuple[str, ...], fail: _Fail) -> None:
        if not isinstance(raw, dict):
            raise fail(where, f"must be a mapping, not {yamlio.describe(raw)}")
        self.where = where
        self.fail = fail
        known = {key.lower(): key for key in allowed}
        self.values: dict[str, Any] = {}
        for key, value in raw.items():
            if not isinstance(key, str) or key.lower() not in known:
                shown = str(key)[:60]
                raise fail(where, f"unknown key {shown!r} (known: {', '.join(allowed)})")
            name = known[key.lower()]
            if name in self.values:
                raise fail(where, f"{name} is given twice (keys are matched without regard to case)")
            self.values[name] = value

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def string(self, key: str, default: str | None = None) -> str | None:
        value = self.values.get(key, default)
        if value is not None and not isinstance(value, str):
            raise self.fail(f"{self.where}.{key}", f"must be a string, not {yamlio.describe(value)}")
        return value

    def boolean(self, key: str) -> bool:
        value = self.values.get(key, False)
        if not isinstance(value, bool):
            raise self.fail(f"{self.where}.{key}", f"must be true or false, not {yamlio.describe(value)}")
        return value


class _Fail:
    def __init__(self, source: str) -> None:
        self.source = source

    def __call__(self, where: str, problem: str) -> UsageError:
        return UsageError(f"{self.source}: {where}: {problem}")


@dataclass
class _Context:
    """What reading one workload needs: where templates are, its params, and the
    templates already read (one file is read once)."""

    base: Path | None  # the workload file's directory; None for built-ins (package data)
    params: dict[str, Any]
    fail: _Fail
    where: str
    cache: dict[str, dict[str, Any]] = field(default_factory=dict)


def _int(value: Any, where: str, fail: _Fail) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(where, f"must be a whole number, not {yamlio.describe(value)}")
    return value


def _count(keys: _Keys, ctx: _Context, limit: int, unit: str, default: int | None = None) -> int:
    """count / countParam (countParam wins, as in scheduler_perf), checked against the limit."""
    where = keys.where
    param = keys.string("countParam")
    if param is not None:
        value = _param(param, ctx, f"{where}.countParam")
        at = f"{where}.countParam ({param})"
    elif "count" in keys:
        value = keys.get("count")
        at = f"{where}.count"
    elif default is not None:
        return default
    else:
        raise ctx.fail(where, "needs count or countParam")
    number = _int(value, at, ctx.fail)
    if number < 0:
        raise ctx.fail(at, f"{number} is negative")
    if number > limit:
        raise ctx.fail(at, f"{number} {unit} is more than {limit}, the most kplugin bench creates")
    return number


def _param(reference: str, ctx: _Context, where: str) -> Any:
    if not reference.startswith("$") or len(reference) < 2:
        raise ctx.fail(where, f"{reference!r} must name a param as $name")
    name = reference[1:]
    if name not in ctx.params:
        known = ", ".join(sorted(ctx.params)) or "none"
        raise ctx.fail(where, f"${name} is not a param of workload {ctx.where} (params: {known})")
    return ctx.params[name]


_DURATION = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: Any, where: str, fail: _Fail) -> float:
    """A Go duration ("500ms", "1m30s") in seconds."""
    if not isinstance(text, str) or not text or len(text) > 40:
        raise fail(where, f"must be a duration such as 500ms, 5s or 1m, not {yamlio.describe(text)}")
    position, seconds = 0, 0.0
    while position < len(text):
        match = _DURATION.match(text, position)
        if match is None:
            raise fail(where, f"{text!r} is not a duration (e.g. 500ms, 5s, 1m30s)")
        seconds += float(match[1]) * _UNITS[match[2]]
        position = match.end()
    if seconds > MAX_SECONDS:
        raise fail(where, f"{text} is longer than {MAX_SECONDS:.0f}s, the longest kplugin bench waits")
    return seconds


def _template(path_value: Any, ctx: _Context, where: str, kind: str | tuple[str, ...]) -> dict[str, Any]:
    """A node, pod or namespace template file: plain YAML of one object of ``kind``."""
    kinds = (kind,) if isinstance(kind, str) else kind
    if not isinstance(path_value, str) or not path_value.strip():
        raise ctx.fail(where, f"must be a template file's path, not {yamlio.describe(path_value)}")
    if path_value in ctx.cache:
        document = ctx.cache[path_value]
    else:
        if ctx.base is None:  # a built-in workload: its templates are package data
            path = _data_dir() / path_value
            text = path.read_text()
            shown = f"built-in template {path_value}"
        else:
            if "\x00" in path_value or Path(path_value).is_absolute():
                raise ctx.fail(where, f"{path_value!r}: give a path relative to the workload file")
            candidates = [ctx.base / path_value, Path.cwd() / path_value]
            path = next((p for p in candidates if safefs.lstat_mode(p) is not None), candidates[0])
            if safefs.lstat_mode(path) is None:
                raise ctx.fail(where, f"template {path_value!r} not found (looked in {ctx.base} and {Path.cwd()})")
            shown = str(path)
            text = safefs.read_text(path, "template", safefs.SMALL_FILE)
        if "{{" in text:
            raise ctx.fail(
                where, f"template {shown} uses Go template syntax ({{{{ }}}}), which kplugin bench does not expand"
            )
        document = yamlio.parse(text, f"template {shown}", path=path)
        ctx.cache[path_value] = document
    if not isinstance(document, dict):
        raise ctx.fail(where, f"template {path_value} must be one Kubernetes object, not {yamlio.describe(document)}")
    found = document.get("kind")
    if found not in kinds:
        raise ctx.fail(
            where, f"template {path_value} is a {found or 'document without kind'}; expected {' or '.join(kinds)}"
        )
    if document.get("apiVersion", "v1") != "v1":
        raise ctx.fail(where, f"template {path_value}: apiVersion {document.get('apiVersion')!r}; expected v1")
    metadata = document.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ctx.fail(where, f"template {path_value}: metadata must be a mapping")
    if found == "Pod":
        _check_pod(document, path_value, where, ctx.fail)
    return copy.deepcopy(document)


def _check_pod(pod: dict[str, Any], name: str, where: str, fail: _Fail) -> None:
    spec = pod.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("containers"), list) or not spec["containers"]:
        raise fail(where, f"pod template {name} needs spec.containers")
    if spec.get("nodeName"):
        raise fail(where, f"pod template {name} sets spec.nodeName: such a pod is bound already, never scheduled")
    for key in ("labels", "annotations"):
        value = (pod.get("metadata") or {}).get(key)
        if value is not None and (not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values())):
            raise fail(where, f"pod template {name}: metadata.{key} must map names to strings")


def _data_dir() -> Path:
    return Path(str(resources.files("kplugin").joinpath("data/bench")))


def _strategy(keys: _Keys, ctx: _Context) -> NodeStrategy | None:
    given = [k for k in ("nodeAllocatableStrategy", "labelNodePrepareStrategy", "uniqueNodeLabelStrategy") if k in keys]
    if len(given) > 1:
        raise ctx.fail(keys.where, f"{' and '.join(given)}: at most one node strategy")
    if not given:
        return None
    key = given[0]
    where = f"{keys.where}.{key}"
    if key == "nodeAllocatableStrategy":
        inner = _Keys(keys.get(key), where, ("nodeAllocatable", "csiNodeAllocatable", "migratedPlugins"), ctx.fail)
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
    inner = _Keys(
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


def _namespace(keys: _Keys, index: int, ctx: _Context) -> str:
    namespace = keys.string("namespace")
    if namespace is None:
        return f"namespace-{index}"  # scheduler_perf's default: one namespace per op
    if names.dns1123_label_problem(namespace):
        raise ctx.fail(f"{keys.where}.namespace", f"{namespace[:60]!r} is not a namespace name")
    return namespace


def _op(raw: Any, index: int, ctx: _Context, default_pod: str | None) -> Op:
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
    where = f"{where} ({canonical})"
    if canonical == "createNodes":
        keys = _Keys(
            raw,
            where,
            ("opcode", "count", "countParam", "nodeTemplatePath", "nodeAllocatableStrategy",
             "labelNodePrepareStrategy", "uniqueNodeLabelStrategy"),
            ctx.fail,
        )  # fmt: skip
        template_path = keys.get("nodeTemplatePath")
        template = (
            _template(template_path, ctx, f"{where}.nodeTemplatePath", "Node")
            if template_path is not None
            else copy.deepcopy(DEFAULT_NODE)
        )
        return CreateNodes(index, _count(keys, ctx, MAX_NODES, "nodes"), template, _strategy(keys, ctx))
    if canonical == "createNamespaces":
        keys = _Keys(raw, where, ("opcode", "prefix", "count", "countParam", "namespaceTemplatePath"), ctx.fail)
        prefix = keys.string("prefix")
        if prefix is None or names.dns1123_label_problem(prefix) or len(prefix) > 50:
            raise ctx.fail(f"{where}.prefix", f"{yamlio.describe(prefix)} is not a namespace name prefix")
        namespace_path = keys.get("namespaceTemplatePath")
        namespace_template = (
            _template(namespace_path, ctx, f"{where}.namespaceTemplatePath", "Namespace")
            if namespace_path is not None
            else None
        )
        return CreateNamespaces(index, prefix, _count(keys, ctx, MAX_NAMESPACES, "namespaces"), namespace_template)
    if canonical == "createPods":
        keys = _Keys(
            raw,
            where,
            ("opcode", "count", "countParam", "collectMetrics", "namespace", "podTemplatePath",
             "skipWaitToCompletion", "persistentVolumeTemplatePath", "persistentVolumeClaimTemplatePath",
             "steadyState", "steadyStateParam", "duration", "durationParam", "deletePodsPerSecond",
             "countMultiplierParam", "templateParams", "signatureBatchSize", "signatureBatchSizeParam"),
            ctx.fail,
        )  # fmt: skip
        for unsupported in (
            "persistentVolumeTemplatePath",
            "persistentVolumeClaimTemplatePath",
            "steadyState",
            "steadyStateParam",
            "duration",
            "durationParam",
            "deletePodsPerSecond",
            "countMultiplierParam",
            "templateParams",
            "signatureBatchSize",
            "signatureBatchSizeParam",
        ):
            if keys.get(unsupported) not in (None, False):
                raise ctx.fail(f"{where}.{unsupported}", "is not supported by kplugin bench")
        collect, skip = keys.boolean("collectMetrics"), keys.boolean("skipWaitToCompletion")
        if collect and skip:
            raise ctx.fail(where, "collectMetrics and skipWaitToCompletion cannot both be true")
        template_path = keys.get("podTemplatePath", default_pod)
        if template_path is None:
            raise ctx.fail(where, "needs podTemplatePath (the test case has no defaultPodTemplatePath)")
        template = _template(template_path, ctx, f"{where}.podTemplatePath", "Pod")
        count = _count(keys, ctx, MAX_PODS, "pods")
        return CreatePods(index, count, _namespace(keys, index, ctx), template, collect, skip)
    if canonical == "barrier":
        keys = _Keys(raw, where, ("opcode", "namespaces", "labelSelector", "stageRequirement"), ctx.fail)
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
        return Barrier(index, tuple(namespaces), tuple(sorted(selector.items())))
    if canonical == "churn":
        keys = _Keys(
            raw, where, ("opcode", "mode", "number", "intervalMilliseconds", "namespace", "templatePaths"), ctx.fail
        )
        mode = keys.string("mode")
        if mode not in ("create", "recreate"):
            raise ctx.fail(f"{where}.mode", f"{yamlio.describe(mode)} must be create or recreate")
        number = _int(keys.get("number", 0), f"{where}.number", ctx.fail)
        if number < 0 or number > MAX_CHURN_OBJECTS:
            raise ctx.fail(f"{where}.number", f"{number} must be from 0 to {MAX_CHURN_OBJECTS}")
        if mode == "recreate" and number == 0:
            raise ctx.fail(f"{where}.number", "cannot be 0 in recreate mode")
        if mode == "create" and number == 0:
            raise ctx.fail(f"{where}.number", "0 (unlimited) is not supported; give the number of objects to create")
        interval = _int(keys.get("intervalMilliseconds", 500), f"{where}.intervalMilliseconds", ctx.fail)
        if not 1 <= interval <= MAX_SECONDS * 1000:
            raise ctx.fail(f"{where}.intervalMilliseconds", f"{interval} must be from 1 to {int(MAX_SECONDS * 1000)}")
        paths = keys.get("templatePaths")
        if not isinstance(paths, list) or not paths:
            raise ctx.fail(f"{where}.templatePaths", "needs at least one template file")
        templates = tuple(
            _template(p, ctx, f"{where}.templatePaths[{i}]", ("Node", "Pod")) for i, p in enumerate(paths)
        )
        return Churn(index, mode, number, interval / 1000, _namespace(keys, index, ctx), templates)
    keys = _Keys(raw, where, ("opcode", "duration", "durationParam"), ctx.fail)
    param = keys.string("durationParam")
    if param is not None:
        return Sleep(
            index, parse_duration(_param(param, ctx, f"{where}.durationParam"), f"{where}.durationParam", ctx.fail)
        )
    if "duration" not in keys:
        raise ctx.fail(where, "needs duration or durationParam")
    return Sleep(index, parse_duration(keys.get("duration"), f"{where}.duration", ctx.fail))


def _params(raw: Any, where: str, fail: _Fail) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(k, str) for k in raw):
        raise fail(where, "must map param names to values")
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise fail(f"{where}.{key}", f"must be a whole number or a duration, not {yamlio.describe(value)}")
    return dict(raw)


_CASE_KEYS = (
    "name",
    "workloadTemplate",
    "workloads",
    "defaultPodTemplatePath",
    "labels",
    "featureGates",
    "schedulerConfigPath",
    "metricsCollectorConfig",
    "defaultThresholdMetricSelector",
)
# threshold and labels are scheduler_perf's CI metadata: read, not used (kplugin bench's
# threshold is a ratio to the baseline, given with --threshold)
_WORKLOAD_KEYS = ("name", "params", "labels", "threshold", "thresholdMetricSelector", "featureGates")


def parse(document: Any, source: str, base: Path | None, case: str | None) -> Workload:
    """The workload ``case`` ("TestCase/workload", or None when the file has only one)
    of a performance-config document."""
    fail = _Fail(source)
    if not isinstance(document, list) or not document:
        raise fail("the document", "must be a non-empty list of test cases (scheduler_perf's performance-config)")
    choices: list[tuple[str, _Keys, _Keys]] = []
    for i, raw_case in enumerate(document):
        keys = _Keys(raw_case, f"[{i}]", _CASE_KEYS, fail)
        case_name = keys.string("name")
        if not case_name:
            raise fail(f"[{i}]", "needs a name")
        workloads = keys.get("workloads")
        if not isinstance(workloads, list) or not workloads:
            raise fail(f"{case_name}.workloads", "must be a non-empty list")
        for j, raw_workload in enumerate(workloads):
            inner = _Keys(raw_workload, f"{case_name}.workloads[{j}]", _WORKLOAD_KEYS, fail)
            workload_name = inner.string("name")
            if not workload_name:
                raise fail(f"{case_name}.workloads[{j}]", "needs a name")
            choices.append((f"{case_name}/{workload_name}", keys, inner))
    titles = [title for title, _, _ in choices]
    if case is None:
        if len(choices) > 1:
            shown = ", ".join(titles[:8]) + (", ..." if len(titles) > 8 else "")
            raise UsageError(f"{source} has {len(choices)} workloads; choose one with --case: {shown}")
        title, keys, inner = choices[0]
    else:
        found = [choice for choice in choices if choice[0] == case]
        if not found:
            raise UsageError(f"--case {case[:80]!r}: no such workload in {source} (workloads: {', '.join(titles[:8])})")
        title, keys, inner = found[0]
    case_name = str(keys.string("name"))
    for unsupported in ("featureGates", "schedulerConfigPath"):
        if keys.get(unsupported):
            raise fail(
                f"{case_name}.{unsupported}", "is not supported by kplugin bench (the profiles come from the project)"
            )
    if inner.get("featureGates"):
        raise fail(f"{title}.featureGates", "is not supported by kplugin bench")
    params = _params(inner.get("params"), f"{title}.params", fail)
    ctx = _Context(base=base, params=params, fail=fail, where=title)
    template = keys.get("workloadTemplate")
    if not isinstance(template, list) or not template:
        raise fail(f"{case_name}.workloadTemplate", "must be a non-empty list of ops")
    default_pod = keys.string("defaultPodTemplatePath")
    ops = tuple(_op(raw, index, ctx, default_pod) for index, raw in enumerate(template))
    workload = Workload(test_case=case_name, name=str(inner.string("name")), ops=ops, source=source)
    check_totals(workload, f"{source}: {workload.title}")
    return workload


def load(path: Path, case: str | None = None) -> Workload:
    """A workload from a performance-config file (see the module docstring)."""
    document = yamlio.load_file(path, "--workload", limit=safefs.SMALL_FILE)
    return parse(document, str(path), path.parent, case)


def built_in(name: str) -> Workload:
    """basic or mixed, from the package's performance-config files (plugin is made from
    the project's args: see shaped.plugin_workload)."""
    if name not in ("basic", "mixed"):
        raise UsageError(f"--workload {name!r}: no such built-in workload ({', '.join(BUILT_IN)}) and no such file")
    text = (_data_dir() / f"{name}.yaml").read_text()
    document = yamlio.parse(text, f"built-in workload {name}")
    return replace(parse(document, f"built-in {name}", None, None), source=f"built-in {name}")


def describe(workload: Workload) -> Mapping[str, Any]:
    """The workload's shape, for --json and the report."""
    return {
        "testCase": workload.test_case,
        "workload": workload.name,
        "source": workload.source,
        "nodes": workload.nodes,
        "pods": workload.pods,
        "measuredPods": workload.measured_pods,
        "ops": [op.opcode for op in workload.ops],
    }


# --- the "plugin" workload: nodes and pods shaped by the project's args ----------------

# resources every node has: sized per node group rather than added
_NATIVE = frozenset({"cpu", "memory", "pods", "ephemeral-storage"})
# (share of the nodes, cpu, memory, amount of each extended resource, carries the labels)
_GROUPS = (
    ("large", 2, "16", "64Gi", 16, True),
    ("small", 1, "4", "16Gi", 4, True),
    ("plain", 1, "4", "16Gi", 0, False),
)


@dataclass(frozen=True)
class Shape:
    """What the project's args name: label keys nodes may carry, resources they may have."""

    labels: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()


def shape_of(args: Mapping[str, Mapping[str, Any]]) -> Shape:
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
    return Shape(tuple(labels), tuple(found))


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
    path = _data_dir() / "pod-default.yaml"
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
