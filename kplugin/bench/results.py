"""The figures of a benchmark per profile, their ratios, and scheduler_perf's DataItems
(``{"version": "v1", "dataItems": [{"data": {...}, "unit": ..., "labels": {...}}]}``),
so tooling that reads scheduler_perf's results (perf-dash, benchstat scripts) reads
kplugin bench's. Repeats are pooled: throughput samples together, histograms summed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kplugin.bench import metrics
from kplugin.bench.cpuprofile import Shares
from kplugin.bench.metrics import Summary
from kplugin.bench.ops import describe
from kplugin.bench.outcome import BenchOutcome, RunResult
from kplugin.bench.plan import BASELINE, PROJECT
from kplugin.model import points

NOT_APPLICABLE = "not applicable"  # scheduler_perf fills missing labels with it
# extension points in the order a scheduling cycle visits them (as the metrics name them)
EXTENSION_POINTS = points.metric_labels()


@dataclass(frozen=True)
class Figures:
    """One profile's figures over its runs."""

    kind: str
    scheduler_name: str
    runs: int
    throughput: Summary  # pods/s
    attempts: Summary  # ms
    e2e: Summary  # ms
    e2e_metric: str
    extension_points: dict[str, Summary]  # ms, every plugin at that point
    plugins: dict[tuple[str, str], Summary]  # ms, the project's plugins (sampled cycles)
    cpu_seconds: float
    cpu_per_pod_ms: float
    peak_rss_mib: float
    creation_rate: float  # measured pods created per second (the load generator)
    retries: int
    throttled: int
    dry_runs: int  # runs in which the scheduler's queue ran dry while pods were still created
    min_active: float | None
    min_backlog: int | None
    sampled: bool  # every run long enough for scheduler_perf's 1-second samples
    attempts_unschedulable: float
    attempts_error: float
    groups_per_second: float  # pod groups scheduled whole per second (NaN: the workload has none)


def _pooled(runs: list[RunResult], pick: Any) -> metrics.Histogram:
    total = metrics.EMPTY
    for run in runs:
        total = total + pick(run)
    return total


def figures(outcome: BenchOutcome, kind: str) -> Figures:
    runs = [r for r in outcome.runs if r.profile == kind]
    points = sorted({p for r in runs for p in r.extension_points}, key=_point_order)
    plugins = sorted({key for r in runs for key in r.plugins}, key=lambda k: (k[0], _point_order(k[1])))
    pods = sum(r.measured_pods for r in runs)
    cpu = sum(r.cpu_seconds for r in runs)
    created = sum(r.creation.created for r in runs)
    creating = sum(r.creation.seconds for r in runs)
    actives = [r.queue.min_active for r in runs if r.queue.min_active is not None]
    backlogs = [r.queue.min_backlog for r in runs if r.queue.min_backlog is not None]
    return Figures(
        kind=kind,
        scheduler_name=outcome.scheduler_names[kind],
        runs=len(runs),
        throughput=metrics.throughput_summary([s for r in runs for s in r.samples]),
        attempts=metrics.latency_summary(_pooled(runs, lambda r: r.attempts)),
        e2e=metrics.latency_summary(_pooled(runs, lambda r: r.e2e)),
        e2e_metric=runs[0].e2e_metric if runs else "",
        extension_points={
            p: metrics.latency_summary(_pooled(runs, lambda r, p=p: r.extension_points.get(p, metrics.EMPTY)))
            for p in points
        },
        plugins={
            k: metrics.latency_summary(_pooled(runs, lambda r, k=k: r.plugins.get(k, metrics.EMPTY))) for k in plugins
        },
        cpu_seconds=cpu,
        cpu_per_pod_ms=cpu * 1000 / pods if pods else math.nan,
        peak_rss_mib=max((r.peak_rss for r in runs), default=0) / 2**20,
        creation_rate=created / creating if creating > 0 else math.nan,
        retries=sum(r.creation.retries for r in runs),
        throttled=sum(r.creation.throttled for r in runs),
        dry_runs=sum(r.queue.ran_dry for r in runs),
        min_active=min(actives) if actives else None,
        min_backlog=min(backlogs) if backlogs else None,
        sampled=all(r.sampled for r in runs),
        attempts_unschedulable=sum(r.attempts_total.get("unschedulable", 0) for r in runs),
        attempts_error=sum(r.attempts_total.get("error", 0) for r in runs),
        groups_per_second=_groups_per_second(runs),
    )


def _groups_per_second(runs: list[RunResult]) -> float:
    """Over the runs: their measured pod groups per second of their measured phases."""
    groups, seconds = sum(r.measured_groups for r in runs), sum(r.seconds for r in runs if r.measured_groups)
    return groups / seconds if groups and seconds > 0 else math.nan


def _point_order(point: str) -> tuple[int, str]:
    return (EXTENSION_POINTS.index(point) if point in EXTENSION_POINTS else len(EXTENSION_POINTS), point)


def ratio(a: float, b: float) -> float:
    return a / b if b and not math.isnan(a) and not math.isnan(b) else math.nan


def throughput_ratio(outcome: BenchOutcome) -> float:
    """project / baseline of the SchedulingThroughput Average: what --threshold checks."""
    return ratio(figures(outcome, PROJECT).throughput.average, figures(outcome, BASELINE).throughput.average)


def cpu_ratio(outcome: BenchOutcome) -> float:
    """project / baseline of the scheduler's CPU per measured pod: what --threshold cpu= checks."""
    return ratio(figures(outcome, PROJECT).cpu_per_pod_ms, figures(outcome, BASELINE).cpu_per_pod_ms)


@dataclass(frozen=True)
class Thresholds:
    """The gates of a run: the lowest throughput ratio and the highest CPU-per-pod ratio
    (project / baseline) it may have."""

    throughput: float | None = None
    cpu: float | None = None

    def failures(self, outcome: BenchOutcome) -> list[str]:
        """One line per gate the outcome misses (a figure not measured misses it too)."""
        found: list[str] = []
        if self.throughput is not None:
            got = throughput_ratio(outcome)
            if math.isnan(got):
                found.append(f"no throughput ratio was measured (threshold {self.throughput:g})")
            elif got < self.throughput:
                found.append(
                    f"throughput ratio {got:.3f} is below the threshold {self.throughput:g}: the project's plugins "
                    f"cost {(1 - got) * 100:.0f}% of the baseline's throughput"
                )
        if self.cpu is not None:
            got = cpu_ratio(outcome)
            if math.isnan(got):
                found.append(f"no scheduler CPU per pod was measured (cpu threshold {self.cpu:g})")
            elif got > self.cpu:
                found.append(
                    f"scheduler CPU per pod ratio {got:.3f} is above the cpu threshold {self.cpu:g}: the project's "
                    f"scheduler spent {got:.2f}x the baseline's CPU per pod"
                )
        return found


def measured_name(outcome: BenchOutcome) -> str:
    """DataItem's Name label: TestCase/workload/namespace, as scheduler_perf writes it."""
    measured = outcome.workload.measured
    return f"{outcome.workload.title}/{measured[0].namespace}" if measured else outcome.workload.title


def _round(value: float) -> float:
    if math.isnan(value) or math.isinf(value):
        return value
    return round(value, 4) if abs(value) < 100 else round(value, 2)


def _known(value: float) -> float | None:
    """A ratio for JSON: null when it was not measured."""
    return None if math.isnan(value) else _round(value)


def _item(metric: str, name: str, profile: str, unit: str, data: dict[str, float], **labels: str) -> dict[str, Any]:
    return {
        "data": {k: _round(v) for k, v in data.items()},
        "unit": unit,
        "labels": {"Metric": metric, "Name": name, "Profile": profile, **labels},
    }


def _usable(data: dict[str, float]) -> bool:
    return bool(data) and not any(math.isnan(v) or math.isinf(v) for v in data.values())


def data_items(outcome: BenchOutcome) -> list[dict[str, Any]]:
    name = measured_name(outcome)
    base, proj = figures(outcome, BASELINE), figures(outcome, PROJECT)
    items: list[dict[str, Any]] = []

    def both(metric: str, unit: str, pick: Any, **labels: str) -> None:
        a, b = pick(base), pick(proj)
        for profile, summary in ((BASELINE, a), (PROJECT, b)):
            if summary is not None and not summary.empty:
                items.append(_item(metric, name, profile, unit, summary.data(), **labels))
        if a is not None and b is not None and not a.empty and not b.empty:
            items.append(_item(metric, name, "ratio", "ratio", b.ratio(a).data(), **labels))

    both("SchedulingThroughput", "pods/s", lambda f: f.throughput)
    both("scheduler_scheduling_attempt_duration_seconds", "ms", lambda f: f.attempts, result="scheduled")
    both(base.e2e_metric or proj.e2e_metric, "ms", lambda f: f.e2e)
    for point in sorted(set(base.extension_points) | set(proj.extension_points), key=_point_order):
        both(
            "scheduler_framework_extension_point_duration_seconds",
            "ms",
            lambda f, p=point: f.extension_points.get(p),
            extension_point=point,
        )
    for (plugin, point), summary in proj.plugins.items():
        if not summary.empty:
            items.append(
                _item(
                    "scheduler_plugin_execution_duration_seconds",
                    name,
                    PROJECT,
                    "ms",
                    summary.data(),
                    plugin=plugin,
                    extension_point=point,
                )
            )

    def resources(f: Figures) -> dict[str, dict[str, float]]:
        return {
            "SchedulerCPUSeconds": {"Total": f.cpu_seconds, "PerPodMilliseconds": f.cpu_per_pod_ms},
            "SchedulerPeakRSS": {"Max": f.peak_rss_mib},
            "PodCreationRate": {"Average": f.creation_rate},
            "PodGroupThroughput": {"Average": f.groups_per_second},
        }

    units = {
        "SchedulerCPUSeconds": "s",
        "SchedulerPeakRSS": "MiB",
        "PodCreationRate": "pods/s",
        "PodGroupThroughput": "groups/s",
    }
    for metric, unit in units.items():
        data = {BASELINE: resources(base)[metric], PROJECT: resources(proj)[metric]}
        for profile, values in data.items():
            if _usable(values):
                items.append(_item(metric, name, profile, unit, values))
        ratios = {k: ratio(data[PROJECT][k], data[BASELINE][k]) for k in data[BASELINE]}
        if metric != "PodCreationRate" and _usable(ratios):
            items.append(_item(metric, name, "ratio", "ratio", ratios))
    keys = sorted({k for item in items for k in item["labels"]})
    for item in items:
        item["labels"] = {k: item["labels"].get(k, NOT_APPLICABLE) for k in keys}
    return items


def _run_facts(run: RunResult) -> dict[str, Any]:
    return {
        "profile": run.profile,
        "schedulerName": run.scheduler_name,
        "repeat": run.repeat,
        "measuredPods": run.measured_pods,
        "measuredPodGroups": run.measured_groups,
        "throughputSamples": [_round(s) for s in run.samples],
        "sampledEverySecond": run.sampled,
        "seconds": _round(run.seconds),
        "creation": {
            "pods": run.creation.created,
            "seconds": _round(run.creation.seconds),
            "podsPerSecond": _round(run.creation.rate),
            "retries": run.creation.retries,
            "throttled429": run.creation.throttled,
        },
        "queue": {
            "ranDry": run.queue.ran_dry,
            "ticksWhileCreating": run.queue.ticks,
            "ticksEmpty": run.queue.dry_ticks,
            "minActiveQueue": run.queue.min_active,
            "minBacklog": run.queue.min_backlog,
        },
        "attempts": {k: v for k, v in sorted(run.attempts_total.items())},
        "batchAttempts": {k: v for k, v in sorted(run.batch.items())},
        "schedulerCPUSeconds": _round(run.cpu_seconds),
        "schedulerPeakRSSBytes": run.peak_rss,
        "apiserverCPUSeconds": None if run.apiserver_cpu is None else _round(run.apiserver_cpu),
        "loadGeneratorCPUSeconds": _round(run.loadgen_cpu),
        "machineLoadAverage": list(run.load_average),
    }


def as_json(outcome: BenchOutcome, thresholds: Thresholds | None = None) -> dict[str, Any]:
    """DataItems, and under "kplugin" what they were measured with."""
    settings = outcome.settings
    return {
        "version": "v1",
        "dataItems": data_items(outcome),
        "kplugin": {
            "kubernetes": outcome.kubernetes,
            "project": outcome.project,
            "plugins": list(outcome.plugins),
            "workload": dict(describe(outcome.workload)),
            "cluster": outcome.mode,
            "schedulerNames": dict(sorted(outcome.scheduler_names.items())),
            "settings": {
                "repeat": settings.repeat,
                "order": [run.profile for run in outcome.runs],
                "schedulerQPS": settings.scheduler_qps,
                "schedulerBurst": settings.scheduler_burst,
                "loadGeneratorQPS": settings.client_qps,
                "loadGeneratorBurst": settings.client_burst,
                "loadGeneratorWorkers": settings.workers,
                "schedulerVerbosity": settings.verbosity,
            },
            "nodes": {
                "created": outcome.nodes.created,
                "seconds": _round(outcome.nodes.seconds),
                "perSecond": _round(outcome.nodes.rate),
            },
            "throughputRatio": _known(throughput_ratio(outcome)),
            "cpuRatio": _known(cpu_ratio(outcome)),
            "threshold": None if thresholds is None else thresholds.throughput,
            "cpuThreshold": None if thresholds is None else thresholds.cpu,
            "machineCPUs": outcome.cpus,
            "runs": [_run_facts(run) for run in outcome.runs],
            "cpuProfiles": profiles_json(outcome),
            "notices": list(outcome.notices),
        },
    }


# --- the table for people ----------------------------------------------------------------------


def _fmt(value: float, digits: int = 1) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:,.{digits}f}"


def _ratio_text(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}"


def rows(outcome: BenchOutcome) -> list[tuple[str, str, str, str]]:
    """(figure, baseline, project, project/baseline), in the order a person reads them."""
    base, proj = figures(outcome, BASELINE), figures(outcome, PROJECT)
    table: list[tuple[str, str, str, str]] = []

    def add(label: str, a: float, b: float, digits: int = 1) -> None:
        table.append((label, _fmt(a, digits), _fmt(b, digits), _ratio_text(ratio(b, a))))

    for key, label in (("average", "average"), ("perc50", "p50"), ("perc90", "p90"), ("perc99", "p99")):
        add(f"throughput {label} (pods/s)", getattr(base.throughput, key), getattr(proj.throughput, key))
    if not (math.isnan(base.groups_per_second) and math.isnan(proj.groups_per_second)):
        add("pod groups scheduled whole/s", base.groups_per_second, proj.groups_per_second)
    for key, label in (("perc50", "p50"), ("perc90", "p90"), ("perc99", "p99")):
        add(f"attempt latency {label} (ms)", getattr(base.attempts, key), getattr(proj.attempts, key), 2)
    if not base.e2e.empty or not proj.e2e.empty:
        add("pod scheduling p99 (ms)", base.e2e.perc99, proj.e2e.perc99, 1)
    ours = {point for _, point in proj.plugins} | {"Filter", "Score"}
    for point in sorted(set(base.extension_points) | set(proj.extension_points), key=_point_order):
        if point in ours:
            a = base.extension_points.get(point, metrics.NO_DATA)
            b = proj.extension_points.get(point, metrics.NO_DATA)
            add(f"{point}, all plugins, p50 (ms)", a.perc50, b.perc50, 3)
            add(f"{point}, all plugins, p99 (ms)", a.perc99, b.perc99, 3)
    add("scheduler CPU (s)", base.cpu_seconds, proj.cpu_seconds, 2)
    add("scheduler CPU per pod (ms)", base.cpu_per_pod_ms, proj.cpu_per_pod_ms, 2)
    add("scheduler peak RSS (MiB)", base.peak_rss_mib, proj.peak_rss_mib, 0)
    table.append(("pods created/s (load generator)", _fmt(base.creation_rate, 0), _fmt(proj.creation_rate, 0), ""))
    return table


def plugin_rows(outcome: BenchOutcome) -> list[tuple[str, str, str, str, str, str]]:
    """(plugin, extension point, sampled calls, p50, p90, p99) in microseconds."""
    proj = figures(outcome, PROJECT)
    return [
        (plugin, point, f"{s.count:,.0f}", _fmt(s.perc50 * 1000), _fmt(s.perc90 * 1000), _fmt(s.perc99 * 1000))
        for (plugin, point), s in proj.plugins.items()
    ]


# --- the CPU profiles ------------------------------------------------------------------------

TOP_FUNCTIONS = 5  # the project's functions the table names (the JSON: twice as many)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _point_rank(label: str) -> tuple[int, str]:
    names = [p.go_name for p in points.ExtensionPoint]
    return (names.index(label), label) if label in names else (len(names), label)


def profile_rows(outcome: BenchOutcome) -> list[tuple[str, str, str]]:
    """(figure, baseline, project) of the CPU profiles: the scheduler's CPU sampled in the
    measured phases, and the part of it spent in the project's packages, flat (its own
    functions) and cumulative (its functions and what they call), by the extension point
    the framework called the project at, and its busiest functions."""
    by_kind = {p.kind: p.shares for p in outcome.cpu_profiles}
    if not by_kind:
        return []
    kinds = [by_kind.get(BASELINE), by_kind.get(PROJECT)]

    def row(label: str, pick: Any) -> tuple[str, str, str]:
        base, proj = (("-" if s is None else pick(s)) for s in kinds)
        return label, base, proj

    per_pod = [_per_pod(outcome, kind, by_kind.get(kind)) for kind in (BASELINE, PROJECT)]
    table = [
        row("CPU sampled (s)", lambda s: f"{s.total / 1e9:.2f}"),
        ("CPU sampled per measured pod (ms)", per_pod[0], per_pod[1]),
        row("Go garbage collector, background (s)", lambda s: f"{s.gc / 1e9:.2f}"),
        row("the project's packages, cumulative", lambda s: _share(s.cumulative, s.total)),
        row("the project's packages, flat", lambda s: _share(s.flat, s.total)),
    ]
    labels = sorted({label for s in kinds if s is not None for label in s.points}, key=_point_rank)
    table += [row(f"  called at {label}", lambda s, at=label: _share(s.points.get(at, 0), s.total)) for label in labels]
    project = by_kind.get(PROJECT)
    if project is not None:
        busiest = sorted(project.functions.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_FUNCTIONS]
        table += [("  flat: " + name.rsplit("/", 1)[-1], "-", _share(ns, project.total)) for name, ns in busiest]
    return table


def _per_pod(outcome: BenchOutcome, kind: str, shares: Shares | None) -> str:
    pods = sum(r.measured_pods for r in outcome.runs if r.profile == kind)
    return f"{shares.total / 1e6 / pods:.2f}" if pods and shares is not None else "-"


def profiles_json(outcome: BenchOutcome) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for profile in outcome.cpu_profiles:
        s = profile.shares
        busiest = sorted(s.functions.items(), key=lambda kv: (-kv[1], kv[0]))[: 2 * TOP_FUNCTIONS]
        found[profile.kind] = {
            "file": str(profile.path),
            "runs": [str(p) for p in profile.runs],
            "cpuSeconds": _round(s.total / 1e9),
            "gcBackgroundSeconds": _round(s.gc / 1e9),
            "projectCumulativeSeconds": _round(s.cumulative / 1e9),
            "projectFlatSeconds": _round(s.flat / 1e9),
            "projectCumulativeShare": _round(s.cumulative / s.total) if s.total else None,
            "projectFlatShare": _round(s.flat / s.total) if s.total else None,
            "projectByExtensionPoint": {k: _round(v / 1e9) for k, v in sorted(s.points.items())},
            "projectFunctionsFlat": {name: _round(ns / 1e9) for name, ns in busiest},
        }
    return found


def harness_lines(outcome: BenchOutcome) -> list[str]:
    """What the harness did, and whether it held up: for the summary under the table."""
    settings = outcome.settings
    lines = [
        f"client limits: scheduler QPS {settings.scheduler_qps:g}/burst {settings.scheduler_burst}, "
        f"load generator QPS {settings.client_qps:g}/burst {settings.client_burst} with {settings.workers} workers",
        f"nodes: {outcome.nodes.created} created at {outcome.nodes.rate:,.0f}/s; runs in order: "
        + ", ".join(f"{r.profile}" for r in outcome.runs),
    ]
    for kind in (BASELINE, PROJECT):
        f = figures(outcome, kind)
        queue = (
            "the scheduler's queue never ran dry while pods were created"
            if f.dry_runs == 0
            else f"the scheduler's queue ran dry in {f.dry_runs} of {f.runs} run(s): the load generator limited it"
        )
        detail = []
        if f.min_active is not None:
            detail.append(f"fewest pods in its active queue {f.min_active:.0f}")
        if f.min_backlog is not None:
            detail.append(f"fewest created but unbound {f.min_backlog}")
        retries = f", {f.retries} retries ({f.throttled} answered 429)" if f.retries else ""
        runs = [r for r in outcome.runs if r.profile == kind]
        own = sum(r.loadgen_cpu for r in runs)
        api = [r.apiserver_cpu for r in runs if r.apiserver_cpu is not None]
        cpu = f"; CPU while measuring: load generator {own:.1f}s" + (f", kube-apiserver {sum(api):.1f}s" if api else "")
        load = ", ".join(f"{r.load_average[0]:.1f} to {r.load_average[1]:.1f}" for r in runs)
        lines.append(
            f"{kind}: pods created at {_fmt(f.creation_rate, 0)}/s{retries}; {queue}"
            + (f" ({', '.join(detail)})" if detail else "")
            + cpu
            + f"; machine load (1-minute average, {outcome.cpus} CPUs) {load}"
        )
        if not f.sampled:
            lines.append(
                f"{kind}: a run was shorter than two 1-second ticks: its throughput is one sample over the run"
            )
        batched = [r for r in runs if r.batch]
        used = sum(r.batch.get("hint_used", 0.0) for r in batched)
        if used:
            scheduled = sum(r.attempts_total.get("scheduled", 0.0) for r in batched)
            lines.append(
                f"{kind}: {used:.0f} of {scheduled:.0f} pods took their node from an earlier pod's cycle "
                "(batching of pods that sign alike): Filter and Score ran in the other cycles only, and the "
                "plugins' durations are sampled from those"
            )
        if f.attempts_unschedulable or f.attempts_error:
            lines.append(
                f"{kind}: {f.attempts_unschedulable:.0f} unschedulable and {f.attempts_error:.0f} failed attempts"
            )
    return lines
