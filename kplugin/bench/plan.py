"""What a benchmark is run with: the two profiles it compares (the project's, and the
baseline, the same configuration without the project's plugins), the workload, the
cluster, how it drives things, and how it tells a person what it is doing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kplugin.bench.ops import Workload
from kplugin.config.own import OwnConfig
from kplugin.core.progress import Observer
from kplugin.kube import kubeconfig as kubeconfigs
from kplugin.kube.apiclient import Endpoint
from kplugin.model.manifests import GateFlags
from kplugin.model.project import Project
from kplugin.model.schedconfig import SchedulerConfig

BASELINE, PROJECT = "baseline", "project"
DEFAULT_SCHEDULER = "default-scheduler"


@dataclass(frozen=True)
class Settings:
    """How the benchmark drives things; every one of these is reported with the results."""

    repeat: int = 1
    scheduler_qps: float = 5000.0  # the scheduler's clientConnection (scheduler_perf: 5000/5000)
    scheduler_burst: int = 5000
    client_qps: float = 5000.0  # the load generator's own limit
    client_burst: int = 5000
    workers: int = 30  # parallel creators (scheduler_perf creates pods with 30)
    stall_timeout: float = 120.0  # seconds without a pod bound before a run is given up
    verbosity: int = 0  # the scheduler's -v (its per-pod log lines at -v=2 cost throughput)
    keep: bool = False
    cpu_profiles: Path | None = None  # record CPU profiles of the measured phases into this new directory


@dataclass(frozen=True)
class BenchProfile:
    """One of the two profiles a benchmark compares, the scheduler's configuration of it."""

    kind: str  # BASELINE or PROJECT
    scheduler_name: str
    config: SchedulerConfig | OwnConfig  # an adopted repository's: its own file


@dataclass(frozen=True)
class BenchInputs:
    """Everything a benchmark needs from the user, read and checked (run.prepare)."""

    project: Project
    workload: Workload
    profiles: tuple[BenchProfile, BenchProfile]  # baseline, project
    plugins: tuple[str, ...]  # the project's plugins
    kubeconfig: kubeconfigs.Kubeconfig | None = None  # an existing cluster's (its chosen context)
    endpoint: Endpoint | None = None  # of that context, its credentials obtained once
    allow_existing_pods: bool = False
    notices: tuple[str, ...] = ()

    @property
    def gate_flags(self) -> GateFlags:
        """The gates the project's points need and the workload's objects (pod groups)."""
        gates = tuple(sorted({*self.project.gates, *self.workload.gates}))
        return GateFlags.of(gates, self.project.target.facts)


def baseline_name(project: Project) -> str:
    return f"{project.scheduler_name}-baseline"[:253]


def profiles(config: SchedulerConfig, project: Project) -> tuple[BenchProfile, BenchProfile]:
    """The project's profile as render-config renders it (its plugins with their real
    args), and the same configuration without them (PrioritySort and DefaultBinder where
    the project replaced them)."""
    project_config = replace(config, leader_elect=False, percentage_of_nodes_to_score=None)
    baseline_config = replace(
        project_config, scheduler_names=(baseline_name(project),), plugins=(), args={}, weights={}, disable_default=()
    )
    return BenchProfile(BASELINE, baseline_name(project), baseline_config), BenchProfile(
        PROJECT, project.scheduler_name, project_config
    )


def own_profiles(config: OwnConfig, plugins: tuple[str, ...], project: str) -> tuple[BenchProfile, BenchProfile]:
    """An adopted repository's profile (its own file's), and the same profile with its
    plugins left out. A profile named default-scheduler (scheduler-plugins' configs) runs
    under the project's name: on a cluster, the default scheduler would take its pods."""
    name = project if config.scheduler_name == DEFAULT_SCHEDULER else config.scheduler_name
    mine = replace(config, scheduler_names=(name,))
    baseline = replace(config, scheduler_names=(f"{name}-baseline"[:253],), left_out=plugins)
    return BenchProfile(BASELINE, baseline.scheduler_name, baseline), BenchProfile(PROJECT, name, mine)


def scheduler_document(profile: BenchProfile, kubeconfig: Path, settings: Settings) -> dict[str, Any]:
    document = replace(profile.config, kubeconfig=str(kubeconfig)).document()
    document["clientConnection"].update({"qps": settings.scheduler_qps, "burst": settings.scheduler_burst})
    return document


class Bars:
    """bench's phases told to a kplugin.core.progress.Observer: its steps, and each
    counted phase as counts of one ``what``; a phase that ends short of its total says
    where it stopped."""

    def __init__(self, observer: Observer) -> None:
        self.observer = observer
        self.what, self.total, self.done = "", 0, 0

    def step(self, text: str) -> None:
        self.observer.step(text)

    def bar(self, text: str, total: int) -> None:
        self.what, self.total, self.done = text, total, 0
        self.observer.count(text, 0, total)

    def advance(self, done: int) -> None:
        if done != self.done:
            self.done = done
            self.observer.count(self.what, done, self.total)

    def finish(self) -> None:
        if self.what and self.done < self.total:
            self.observer.note(f"{self.what}: ended at {self.done}/{self.total}")
        self.what = ""
