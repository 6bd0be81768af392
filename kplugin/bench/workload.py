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

Here: the test cases and the workload chosen; each of its ops is read by its opcode's
reader (opreaders); the keys, params, counts and durations are read as decode reads them,
the templates as templates reads them, into the ops of ops.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from kplugin.bench.decode import Context, Fail, Keys
from kplugin.bench.opreaders import SUPPORTED, UNSUPPORTED, read_op
from kplugin.bench.ops import (
    CreatePodGroups,
    CreatePods,
    Workload,
    check_totals,
)
from kplugin.bench.templates import TemplateFiles, data_dir
from kplugin.core import safefs, yamlio
from kplugin.core.errors import Setting, UsageError
from kplugin.model.apifacts import pod_group_api
from kplugin.model.points import GANG_SCHEDULING, minor_gates
from kplugin.model.versions import Target

__all__ = ["BUILT_IN", "SUPPORTED", "UNSUPPORTED", "built_in", "check_served", "load", "parse"]

BUILT_IN = ("basic", "plugin", "mixed", "gang")


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
    ops = tuple(read_op(raw, index, ctx, default_pod) for index, raw in enumerate(template))
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
