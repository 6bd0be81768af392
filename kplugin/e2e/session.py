"""What a replay takes and gives: the scheduler profile it runs, where it reports
progress, and what it found (each pod's placement, what creating the state took)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from kplugin.e2e.logs import GroupLog, Narrowing, NodeRejection, NodeScore, Requeue
from kplugin.kube import bulk
from kplugin.scenario.state import DELETED, PENDING, PREEMPTED


class ProfileLabel(StrEnum):
    """The profiles a run replays the scenario with: the project's, and (--compare) the
    scheduler's default profile."""

    PLUGIN = "plugin"
    DEFAULT = "default"


@dataclass(frozen=True)
class ReplayProfile:
    """The scheduler profile one replay runs (not kplugin.bench.run.Profile)."""

    label: ProfileLabel
    scheduler_name: str
    document: dict[str, Any]  # its KubeSchedulerConfiguration, without clientConnection


@dataclass(frozen=True)
class PodPlacement:
    """Where one pod of the scenario ended in a replay, and why (not
    kplugin.model.manifests.Placement, which places the scheduler's Deployment)."""

    pod: str
    node: str | None  # None: not bound (pending, preempted or deleted)
    reason: str  # why it is not bound (the scheduler's own message), or ""
    expected: tuple[str, ...] | None = None
    scores: tuple[NodeScore, ...] = ()  # empty where one node was feasible (no scoring), or not logged
    attempts: int = 0
    # each attempt's time (None: not read), seconds after kplugin began creating the pods to place
    attempts_at: tuple[float | None, ...] = ()
    requeues: tuple[Requeue, ...] = ()  # their ``at`` in the same seconds
    bound_before: bool = False  # created bound: the scheduler never placed it
    preempted_by: str | None = None
    preempted_on: str | None = None  # the node it was on
    deleted: bool = False  # by a step
    # the nodes the Filter plugins rejected in its last attempt (kplugin's reporting plugin logs them)
    rejections: tuple[NodeRejection, ...] = ()
    # events the queue left it pending on, with how often (1.28-1.36's log names them)
    skipped: tuple[tuple[str, int], ...] = ()

    @property
    def where(self) -> str:
        if self.preempted_by is not None:
            return PREEMPTED
        if self.deleted:
            return DELETED
        return self.node or PENDING

    @property
    def as_expected(self) -> bool:
        return self.expected is None or self.where in self.expected

    @property
    def tied(self) -> bool:
        """The best score was shared: the scheduler picked one of the best at random."""
        return len(self.scores) > 1 and self.scores[0].total == self.scores[1].total


@dataclass(frozen=True)
class CreationTotals:
    """What creating a replay's objects took, summed over the bulk phases."""

    objects: int = 0
    seconds: float = 0.0
    retries: int = 0
    throttled: int = 0
    workers: int = 0

    @property
    def per_second(self) -> float:
        return self.objects / self.seconds if self.seconds > 0 else 0.0

    def plus(self, result: bulk.Result) -> CreationTotals:
        return CreationTotals(
            self.objects + result.done,
            self.seconds + result.seconds,
            self.retries + result.retries,
            self.throttled + result.throttled,
            max(self.workers, result.workers),
        )


@dataclass
class Session:
    """What one replay with one profile found."""

    profile: ProfileLabel
    scheduler_name: str
    placements: list[PodPlacement]
    created: CreationTotals
    scheduled: int  # pods this profile bound
    scheduling_seconds: float  # from the scheduler's start to its last bind
    identity: str
    denied: list[str] = field(default_factory=list)
    unserved: list[str] = field(default_factory=list)  # types the scheduler's informers list, not served
    detail: str = ""  # what the log was asked for
    log: Path | None = None
    groups: dict[str, GroupLog] = field(default_factory=dict)  # pod group -> what the scheduler's log tells of it
    narrowed: tuple[Narrowing, ...] = ()  # events the plugins' PreQueueingHints narrowed, times since the start

    @property
    def pods_per_second(self) -> float:
        return self.scheduled / self.scheduling_seconds if self.scheduling_seconds > 0 else 0.0
