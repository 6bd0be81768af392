"""What kplugin e2e reads from the scheduler's log, as records (kplugin.e2e.logs reads
the lines): each node's score for a pod, the events that requeued it, a pod group's
cycles and placements, the nodes Filter rejected, preemptions, the events the plugins'
PreQueueingHints narrowed, and what the API server refused or did not serve."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class NodeScore:
    """One node's score for a pod: each Score plugin's weighted score and their sum."""

    node: str
    total: int
    plugins: dict[str, int]


@dataclass(frozen=True)
class Requeue:
    """A cluster event that moved a pod back to the active or backoff queue."""

    event: str
    queue: str
    hint: str = ""
    at: float | None = None  # when: the log's time (seconds since the epoch), or an offset from it

    def as_json(self) -> dict[str, object]:
        """As --json has it: the hint and the time only where the log gave them."""
        return {
            "event": self.event,
            "queue": self.queue,
            **({"hint": self.hint} if self.hint else {}),
            **({"at": self.at} if self.at is not None else {}),
        }


@dataclass(frozen=True)
class PlacementScore:
    """One placement's score for a pod group: each PlacementScore plugin's weighted score
    and their sum."""

    placement: str
    total: int
    plugins: dict[str, int]


@dataclass(frozen=True)
class PlacementCycle:
    """A pod group's last cycle: the placements it tried, in order, and the scores of
    those that took the group (none where fewer than two did)."""

    tried: tuple[str, ...] = ()
    scores: tuple[PlacementScore, ...] = ()  # best first
    refused: tuple[tuple[str, str], ...] = ()  # (placement, the PlacementFeasible plugin that refused it)

    @property
    def chosen(self) -> str | None:
        """The placement the scheduler took, where the log tells: the best total (None
        for a tie, which it breaks at random), or the only placement tried that no
        PlacementFeasible plugin refused."""
        if self.scores:
            best = [s for s in self.scores if s.total == self.scores[0].total]
            return best[0].placement if len(best) == 1 else None
        refused = {placement for placement, _ in self.refused}
        left = [t for t in self.tried if t not in refused]
        return left[0] if len(left) == 1 else None


@dataclass(frozen=True)
class GroupLog:
    """What the log tells of one pod group: its cycles, its last cycle's placements, the
    cluster events that moved it back to the active or backoff queue, and how often it
    came back when its backoff ended."""

    attempts: int = 0
    placements: PlacementCycle = field(default_factory=PlacementCycle)
    requeues: tuple[Requeue, ...] = ()
    backoffs: int = 0


@dataclass(frozen=True)
class NodeRejection:
    """A node a Filter plugin rejected for a pod, and why (plugin "": a node Filter did not
    evaluate)."""

    node: str
    plugin: str
    code: str
    reason: str

    def as_json(self) -> dict[str, str]:
        return {"node": self.node, "plugin": self.plugin, "code": self.code, "reason": self.reason}


@dataclass(frozen=True)
class Narrowing:
    """An event for which the plugins' PreQueueingHints named the pods to ask the
    QueueingHints about (1.37 on, gate SchedulerPreQueueingHints): ``candidates`` of the
    ``total`` pods the queue held as unschedulable. The queue logs it only where every
    plugin that registered the event has a PreQueueingHint and none answered AllPods."""

    candidates: int
    total: int
    at: float | None = None

    def as_json(self) -> dict[str, object]:
        return {"candidates": self.candidates, "total": self.total, **({"at": self.at} if self.at is not None else {})}


@dataclass(frozen=True)
class Preemption:
    preemptor: str
    node: str


@dataclass
class LogFacts:
    scores: dict[str, tuple[NodeScore, ...]] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    # pod -> each attempt's log time (None where its line had no readable header)
    attempt_times: dict[str, list[float | None]] = field(default_factory=dict)
    groups: dict[str, GroupLog] = field(default_factory=dict)  # pod group (its key, as a pod's) -> its log
    requeues: dict[str, list[Requeue]] = field(default_factory=dict)
    preempted: dict[str, Preemption] = field(default_factory=dict)  # victim -> by whom, where
    # pod -> the nodes the Filter plugins rejected in its last attempt, by node and plugin
    rejections: dict[str, tuple[NodeRejection, ...]] = field(default_factory=dict)
    # pod -> (plugin, status) of a PreEnqueue plugin that keeps it from the queue, where no
    # attempt came after it
    held: dict[str, tuple[str, str]] = field(default_factory=dict)
    denied: list[str] = field(default_factory=list)  # sorted "verb resource.group"
    informers_denied: bool = False  # a list or watch among them: the informers never sync
    unserved: list[str] = field(default_factory=list)  # sorted types an informer lists that are not served
    narrowed: list[Narrowing] = field(default_factory=list)  # events PreQueueingHints narrowed, in order
    # pod -> event -> how often the queue left it where it was on that event (1.28-1.36: 1.37 logs
    # the queue's entry, not the pod)
    skipped: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def not_ready(self) -> bool:
        """An informer that cannot list: the scheduler never syncs, never schedules."""
        return self.informers_denied or bool(self.unserved)
