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

Here: the test cases, the workload chosen and its ops read; the keys, params, counts
and durations are read as decode reads them, the templates as templates reads them,
into the ops of ops.
"""

from __future__ import annotations

import copy
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from kplugin.bench import gotemplate
from kplugin.bench.decode import Context, Fail, Keys, parse_duration, read_count, read_param, whole_number
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
    Workload,
    check_totals,
)
from kplugin.bench.templates import DEFAULT_NODE, TemplateFiles, data_dir
from kplugin.core import names, safefs, yamlio
from kplugin.core.errors import Setting, UsageError
from kplugin.model.apifacts import pod_group_api
from kplugin.model.points import GANG_SCHEDULING, minor_gates
from kplugin.model.versions import Target

SUPPORTED = ("createNodes", "createNamespaces", "createPods", "createPodGroups", "barrier", "churn", "sleep")
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
BUILT_IN = ("basic", "plugin", "mixed", "gang")


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


def _op(raw: Any, index: int, ctx: Context, default_pod: str | None) -> Op:
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
        keys = Keys(
            raw,
            where,
            ("opcode", "count", "countParam", "nodeTemplatePath", "nodeAllocatableStrategy",
             "labelNodePrepareStrategy", "uniqueNodeLabelStrategy"),
            ctx.fail,
        )  # fmt: skip
        template_path = keys.get("nodeTemplatePath")
        template = (
            ctx.templates.read(template_path, f"{where}.nodeTemplatePath", "Node")
            if template_path is not None
            else copy.deepcopy(DEFAULT_NODE)
        )
        return CreateNodes(index, read_count(keys, ctx, MAX_NODES, "nodes"), template, _strategy(keys, ctx))
    if canonical == "createNamespaces":
        keys = Keys(raw, where, ("opcode", "prefix", "count", "countParam", "namespaceTemplatePath"), ctx.fail)
        prefix = keys.string("prefix")
        if prefix is None or names.dns1123_label_problem(prefix) or len(prefix) > 50:
            raise ctx.fail(f"{where}.prefix", f"{yamlio.describe(prefix)} is not a namespace name prefix")
        namespace_path = keys.get("namespaceTemplatePath")
        namespace_template = (
            ctx.templates.read(namespace_path, f"{where}.namespaceTemplatePath", "Namespace")
            if namespace_path is not None
            else None
        )
        return CreateNamespaces(index, prefix, read_count(keys, ctx, MAX_NAMESPACES, "namespaces"), namespace_template)
    if canonical == "createPods":
        keys = Keys(
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
    if canonical == "createPodGroups":
        keys = Keys(
            raw, where, ("opcode", "count", "countParam", "namespace", "templatePath", "templateParams"), ctx.fail
        )
        if keys.string("namespace") is None:
            raise ctx.fail(where, "needs namespace (the pods' that name its groups)")
        if keys.get("templatePath") is None:
            raise ctx.fail(where, "needs templatePath (a PodGroup template)")
        count = read_count(keys, ctx, MAX_PODS, "pod groups")
        params = _template_params(keys, ctx)
        rendered = _rendered(keys, "templatePath", keys.get("templatePath"), "PodGroup", params, count, ctx)
        return CreatePodGroups(index, count, _namespace(keys, index, ctx), rendered, params)
    if canonical == "barrier":
        keys = Keys(raw, where, ("opcode", "namespaces", "labelSelector", "stageRequirement"), ctx.fail)
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
        keys = Keys(
            raw, where, ("opcode", "mode", "number", "intervalMilliseconds", "namespace", "templatePaths"), ctx.fail
        )
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
        return Churn(index, mode, number, interval / 1000, _namespace(keys, index, ctx), templates)
    keys = Keys(raw, where, ("opcode", "duration", "durationParam"), ctx.fail)
    param = keys.string("durationParam")
    if param is not None:
        return Sleep(
            index, parse_duration(read_param(param, ctx, f"{where}.durationParam"), f"{where}.durationParam", ctx.fail)
        )
    if "duration" not in keys:
        raise ctx.fail(where, "needs duration or durationParam")
    return Sleep(index, parse_duration(keys.get("duration"), f"{where}.duration", ctx.fail))


def _params(raw: Any, where: str, fail: Fail) -> dict[str, Any]:
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
    fail = Fail(source)
    if not isinstance(document, list) or not document:
        raise fail("the document", "must be a non-empty list of test cases (scheduler_perf's performance-config)")
    choices: list[tuple[str, Keys, Keys]] = []
    for i, raw_case in enumerate(document):
        keys = Keys(raw_case, f"[{i}]", _CASE_KEYS, fail)
        case_name = keys.string("name")
        if not case_name:
            raise fail(f"[{i}]", "needs a name")
        workloads = keys.get("workloads")
        if not isinstance(workloads, list) or not workloads:
            raise fail(f"{case_name}.workloads", "must be a non-empty list")
        for j, raw_workload in enumerate(workloads):
            inner = Keys(raw_workload, f"{case_name}.workloads[{j}]", _WORKLOAD_KEYS, fail)
            workload_name = inner.string("name")
            if not workload_name:
                raise fail(f"{case_name}.workloads[{j}]", "needs a name")
            choices.append((f"{case_name}/{workload_name}", keys, inner))
    titles = [title for title, _, _ in choices]
    if case is None:
        if len(choices) > 1:
            shown = ", ".join(titles[:8]) + (", ..." if len(titles) > 8 else "")
            raise UsageError(f"{source} has {len(choices)} workloads; choose one with {Setting.CASE}: {shown}")
        title, keys, inner = choices[0]
    else:
        found = [choice for choice in choices if choice[0] == case]
        if not found:
            raise UsageError(
                f"{Setting.CASE} {case[:80]!r}: no such workload in {source} (workloads: {', '.join(titles[:8])})"
            )
        title, keys, inner = found[0]
    case_name = str(keys.string("name"))
    if keys.get("schedulerConfigPath"):
        raise fail(
            f"{case_name}.schedulerConfigPath", "is not supported by kplugin bench (the profiles come from the project)"
        )
    params = _params(inner.get("params"), f"{title}.params", fail)
    ctx = Context(params=params, fail=fail, where=title, templates=TemplateFiles(base, fail))
    template = keys.get("workloadTemplate")
    if not isinstance(template, list) or not template:
        raise fail(f"{case_name}.workloadTemplate", "must be a non-empty list of ops")
    default_pod = keys.string("defaultPodTemplatePath")
    ops = tuple(_op(raw, index, ctx, default_pod) for index, raw in enumerate(template))
    workload = Workload(test_case=case_name, name=str(inner.string("name")), ops=ops, source=source)
    for where, gates in ((case_name, keys.get("featureGates")), (title, inner.get("featureGates"))):
        _check_gates(gates, f"{where}.featureGates", workload, fail)
    check_totals(workload, f"{source}: {workload.title}")
    return workload


def _check_gates(gates: Any, where: str, workload: Workload, fail: Fail) -> None:
    """A test case's featureGates: kplugin bench turns on the gates its objects need
    (GenericWorkload for pod groups, and GangScheduling with it where the minor has that
    gate: 1.35-1.36) itself, and takes no others (the profiles' gates are the project's
    plugins')."""
    if not gates:
        return
    if not isinstance(gates, dict) or not all(isinstance(v, bool) for v in gates.values()):
        raise fail(where, "must map feature gate names to true or false")
    needed = workload.gates
    accepted = minor_gates(needed, gang_gate=True)  # a file written for 1.36 names GangScheduling
    for gate, on in gates.items():
        if not on or gate not in accepted:
            gang = f", and {GANG_SCHEDULING} where the minor has that gate" if GANG_SCHEDULING in accepted else ""
            turned = f" (it turns on {', '.join(needed)}{gang} for this workload's pod groups)" if needed else ""
            raise fail(
                f"{where}.{str(gate)[:60]}",
                f"kplugin bench turns on only the gates the workload's objects need{turned}; "
                "the profiles' gates come from the project's plugins",
            )


def load(path: Path, case: str | None = None) -> Workload:
    """A workload from a performance-config file (see the module docstring)."""
    document = yamlio.load_file(path, Setting.WORKLOAD, limit=safefs.SMALL_FILE)
    return parse(document, str(path), path.parent, case)


def built_in(name: str) -> Workload:
    """basic, mixed or gang, from the package's performance-config files (plugin is made
    from the project's args: see shaped.plugin_workload)."""
    if name not in ("basic", "mixed", "gang"):
        raise UsageError(
            f"{Setting.WORKLOAD} {name!r}: no such built-in workload ({', '.join(BUILT_IN)}) and no such file"
        )
    text = (data_dir() / f"{name}.yaml").read_text()
    document = yamlio.parse(text, f"built-in workload {name}")
    return replace(parse(document, f"built-in {name}", None, None), source=f"built-in {name}")


def check_served(workload: Workload, target: Target) -> None:
    """Its pod groups at the API version the target's Kubernetes serves them (from 1.36,
    with the gate kplugin bench turns on), refused in one line otherwise."""
    served = pod_group_api(target.facts)
    for op in workload.ops:
        named = isinstance(op, CreatePods) and op.count and op.pod_group(0)
        if not isinstance(op, CreatePodGroups) and not named:
            continue
        where = f"{workload.source}: workloadTemplate[{op.index}] ({op.opcode})"
        if served is None:
            raise UsageError(
                f"{where}: pod groups are from Kubernetes 1.36 (scheduling.k8s.io), and this is {target.version}; "
                f"benchmark it on a later minor ({Setting.K8S})"
            )
        if isinstance(op, CreatePodGroups) and op.api_version != served:
            fix = f"write it as {served}"
            if workload.source.startswith("built-in"):
                fix = f"benchmark it on a later minor ({Setting.K8S}), or give a copy written as {served}"
            raise UsageError(
                f"{where}: Kubernetes {target.version} serves PodGroups as {served}, not {op.api_version}: {fix}"
            )
