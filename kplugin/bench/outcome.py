"""What a benchmark gives: each run's figures, read from the scheduler's /metrics at the
edges of its measured phase (and from the load generator and the processes), and the
whole benchmark's outcome, which results and report turn into DataItems, tables and
pictures.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kplugin.bench import metrics
from kplugin.bench.cpuprofile import CpuProfile
from kplugin.bench.loadgen import CreationStats
from kplugin.bench.ops import Workload
from kplugin.bench.plan import BenchProfile, Settings


@dataclass(frozen=True)
class QueueFacts:
    """Whether the scheduler always had pods waiting while the measured pods were still
    being created (after that, its queue drains by design)."""

    ticks: int  # 1-second readings of scheduler_pending_pods{queue="active"} while creating
    dry_ticks: int  # of which found the active queue empty
    min_active: float | None
    min_backlog: int | None  # created - bound, read 4 times a second while creating

    @property
    def ran_dry(self) -> bool:
        return self.dry_ticks > 0 or self.min_backlog == 0


@dataclass(frozen=True)
class RunResult:
    """One run's figures: one profile, one repeat."""

    profile: str  # BASELINE or PROJECT
    scheduler_name: str
    repeat: int
    measured_pods: int
    samples: tuple[float, ...]  # SchedulingThroughput samples (pods/s)
    points: tuple[tuple[float, float], ...]  # (seconds since the first bound pod, pods/s)
    sampled: bool  # False: the run was shorter than two ticks; one sample over the whole run
    seconds: float  # first measured pod created to last one bound
    creation: CreationStats
    queue: QueueFacts
    attempts: metrics.Histogram  # scheduling_attempt_duration_seconds{result="scheduled"}
    e2e: metrics.Histogram  # pod_scheduling_sli_duration_seconds (1.28: pod_scheduling_duration_seconds)
    e2e_metric: str
    extension_points: dict[str, metrics.Histogram]
    plugins: dict[tuple[str, str], metrics.Histogram]  # (plugin, extension point), sampled cycles
    attempts_total: dict[str, float]  # by result
    cpu_seconds: float  # the scheduler's, in the measured phase
    peak_rss: int  # bytes, the scheduler's VmHWM at the end of the run
    apiserver_cpu: float | None  # in the measured phase (local control plane only)
    loadgen_cpu: float  # this process, in the measured phase
    load_average: tuple[float, float] = (0.0, 0.0)  # the machine's 1-minute load at the start and end
    # scheduler_batch_attempts_total by result (1.35 and later; empty where the scheduler has none)
    batch: dict[str, float] = field(default_factory=dict)
    cpu_chunks: tuple[Path, ...] = ()  # the measured phase's CPU profile, as recorded (bench's work directory)
    measured_groups: int = 0  # the pod groups the measured pods name (all of them complete when it ends)


@dataclass(frozen=True)
class BenchOutcome:
    """The whole benchmark: its runs, and what they were run with."""

    kubernetes: str
    project: str
    plugins: tuple[str, ...]
    workload: Workload
    mode: str  # "local control plane" or the kubeconfig's server
    settings: Settings
    runs: tuple[RunResult, ...]
    nodes: CreationStats
    scheduler_names: dict[str, str]
    seconds: float
    notices: tuple[str, ...] = ()
    work: Path | None = None
    cpus: int = field(default_factory=lambda: os.cpu_count() or 1)  # this machine's, beside its load average
    cpu_profiles: tuple[CpuProfile, ...] = ()  # baseline's and project's, when recorded
    module: str = ""  # the project's Go module (its packages' share of the profiles)


# scheduler_batch_attempts_total's results (pkg/scheduler/metrics, 1.35 and later)
BATCH_RESULTS = ("hint_used", "hint_not_used", "no_hint")


def run_result(
    profile: BenchProfile,
    repeat: int,
    plugins: tuple[str, ...],
    measured_pods: int,
    before: list[metrics.Sample],
    after: list[metrics.Sample],
    *,
    samples: tuple[float, ...],
    points: tuple[tuple[float, float], ...],
    sampled: bool,
    seconds: float,
    creation: CreationStats,
    queue: QueueFacts,
    cpu: float,
    api: float | None,
    own: float,
) -> RunResult:
    """A run's figures: the scheduler's histograms and counters at the end of its
    measured phase (``after``) minus those at its start (``before``), with what was
    measured around them."""
    name = profile.scheduler_name

    def diff(metric: str, by: tuple[str, ...], where: dict[str, str]) -> dict[metrics.Labels, metrics.Histogram]:
        earlier = metrics.histograms(before, metric, by, where)
        return {k: h - earlier.get(k, metrics.EMPTY) for k, h in metrics.histograms(after, metric, by, where).items()}

    attempts = diff("scheduler_scheduling_attempt_duration_seconds", (), {"result": "scheduled", "profile": name})
    e2e_metric = next(
        (m for m in ("scheduler_pod_scheduling_sli_duration_seconds", "scheduler_pod_scheduling_duration_seconds")
         if any(s.name.startswith(m) for s in after)),
        "scheduler_pod_scheduling_sli_duration_seconds",
    )  # fmt: skip
    e2e = diff(e2e_metric, (), {})
    points_by = diff("scheduler_framework_extension_point_duration_seconds", ("extension_point",), {"profile": name})
    plugin_series = diff("scheduler_plugin_execution_duration_seconds", ("plugin", "extension_point"), {})

    def counted(metric: str, results: tuple[str, ...]) -> dict[str, float]:
        return {
            result: metrics.value(after, metric, {"result": result, "profile": name})
            - metrics.value(before, metric, {"result": result, "profile": name})
            for result in results
        }

    attempts_total = counted("scheduler_schedule_attempts_total", ("scheduled", "unschedulable", "error"))
    # from 1.35: pods that sign alike may take a node from an earlier pod's cycle (hint_used)
    # without running Filter and Score; the plugin durations are sampled from full cycles only
    batch = counted("scheduler_batch_attempts_total", BATCH_RESULTS)
    return RunResult(
        profile=profile.kind,
        scheduler_name=name,
        repeat=repeat,
        measured_pods=measured_pods,
        samples=samples,
        points=points,
        sampled=sampled,
        seconds=seconds,
        creation=creation,
        queue=queue,
        attempts=attempts.get((), metrics.EMPTY),
        e2e=e2e.get((), metrics.EMPTY),
        e2e_metric=e2e_metric,
        extension_points={dict(k)["extension_point"]: h for k, h in points_by.items() if h.count > 0},
        plugins={
            (dict(k)["plugin"], dict(k)["extension_point"]): h
            for k, h in plugin_series.items()
            if h.count > 0 and dict(k)["plugin"] in plugins
        },
        attempts_total=attempts_total,
        batch=batch if any(s.name == "scheduler_batch_attempts_total" for s in after) else {},
        cpu_seconds=cpu,
        peak_rss=0,
        apiserver_cpu=api,
        loadgen_cpu=own,
    )
