"""What kplugin e2e reads from the real scheduler's log, in one pass over its lines:
each node's score per plugin, how often each pod was attempted and what requeued it,
which pods preemption removed and for whom, and what the API server refused it.

The lines, read from the sources of every supported minor (klog's structured format):

- ``schedule_one.go`` V(10): "Plugin scored node for pod" and "Calculated node's final
  score for pod" (1.28 to 1.37 alike); V(3): "Attempting to schedule pod".
- the scheduling queue, "Pod moved to an internal scheduling queue" with the cluster
  event that moved the pod (``event=``) and the queue it went to: V(4) in
  ``scheduling_queue.go`` 1.28-1.34 (with the queueing ``hint``, a number there:
  0 QueueSkip, 1 QueueAfterBackoff, 2 QueueImmediately), V(5) in
  ``active_queue.go``/``backoff_queue.go`` 1.35-1.36; 1.37 says "Entity moved to an
  internal scheduling queue" (``entity=``) at V(5) in the same two files. In 1.31-1.34
  one move is logged twice, by the queue it went to (V(5), no hint) and then with the
  hint (V(4)): counted once.
- a pod group's placements (1.36 on): "Assuming placement in snapshot" (V(4)) for each
  placement its cycle tries, and, where two or more took the group, "Plugin scored
  placement for podGroup" and "Calculated placement's final score for podGroup" (V(10)),
  in ``schedule_one_podgroup.go`` 1.36-1.37 and ``algorithm_podgroup.go`` 1.38; the
  scheduler takes the best total (a tie at random). 1.38 logs a group's pods' attempts
  there too.
- a pod group's moves in the queue (1.37 on, where the queue holds groups as entities):
  "Entity moved to an internal scheduling queue" with ``type="podgroup"``. A gang that
  fails goes to the backoff queue with no plugin to wait for ("unschedulable plugins={}")
  and comes back on ``BackoffComplete``, so its retries are counted apart from the
  cluster events that moved it.
- preemption, V(2): "Preemptor Pod preempted victim Pod" (preemptor, victim, node).
- each node's Filter status for a pod no node fits: the scheduler itself logs them only
  as the counts of its message, so e2e enables kplugin's reporting plugin (the project's
  ``internal/rejections/zz_generated.rejections.go``), the first PostFilter plugin, which
  logs them node by node, V(5) "Filter rejected node" (plugin, pod, node, code, reason),
  the in-tree plugins' and the project's alike. A node Filter did not evaluate (1.32 on:
  PreFilter narrowed the nodes) has no plugin.
- a pod a PreEnqueue plugin keeps from the queue ("Status after running PreEnqueue
  plugin", the plugin and its status; at the queue's verbosity): it gets no attempt until
  an event lets it in, so e2e counts it as decided (held) rather than wait for it.
- each line's klog header, "I1206 04:28:23.509108": when an attempt or a requeue happened
  (the year left out; UTC, the zone kplugin starts the scheduler in).
- client-go's reflector (``tools/cache/reflector.go``), when an informer cannot list: a
  refusal by RBAC ("User ... cannot list resource ...") or a kind the API server does
  not serve ("failed to list *v1alpha1.PodGroup: the server could not find the requested
  resource", a missing CustomResourceDefinition), in 1.28's plain "Failed to watch" lines
  and 1.34's structured ones alike. Either way the informer never syncs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from kplugin.e2e.state import NAMESPACE

# the -v and --vmodule that make the scheduler log all of the above
# (schedule_one_podgroup.go, 1.36 on: a pod group's cycle, V(3) for the group's attempt and
# V(4) for each of its pods'; a file a minor lacks is ignored)
# (zz_generated.rejections: the Filter rejections, node by node, as many lines as scores,
# so at the scores' level)
SCORE_VMODULE = "schedule_one=10,schedule_one_podgroup=10,algorithm_podgroup=10,zz_generated.rejections=5"
ATTEMPT_VMODULE = "schedule_one=3,schedule_one_podgroup=4,algorithm_podgroup=4"
QUEUE_VMODULE = "scheduling_queue=5,active_queue=5,backoff_queue=5"


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

    @property
    def chosen(self) -> str | None:
        """The placement the scheduler took, where the log tells: the best total (None
        for a tie, which it breaks at random), or the only placement tried."""
        if self.scores:
            best = [s for s in self.scores if s.total == self.scores[0].total]
            return best[0].placement if len(best) == 1 else None
        return self.tried[0] if len(self.tried) == 1 else None


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

    @property
    def not_ready(self) -> bool:
        """An informer that cannot list: the scheduler never syncs, never schedules."""
        return self.informers_denied or bool(self.unserved)


_SCORE_LINE = re.compile(
    r'"(?P<what>Plugin scored node for pod|Calculated node\'s final score for pod)" '
    r'pod="(?P<pod>[^"]+)"(?: plugin="(?P<plugin>[^"]+)")? node="(?P<node>[^"]+)" score=(?P<score>-?[0-9]+)'
)
_ATTEMPT = re.compile(
    r'"Attempting to schedule (?:pod|a pod belonging to a pod group)"(?: podGroup="[^"]*")? pod="(?P<pod>[^"]+)"'
)
_GROUP_ATTEMPT = re.compile(r'"Attempting to schedule pod group"(?: podGroupType="[^"]*")? podGroup="(?P<group>[^"]+)"')
_PLACEMENT_TRIED = re.compile(
    r'"Assuming placement in snapshot"(?: podGroupType="[^"]*")? '
    r'podGroup="(?P<group>[^"]+)" placement="(?P<placement>[^"]+)"'
)
_PLACEMENT_SCORE = re.compile(
    r'"(?:Plugin scored placement|Calculated placement\'s final score) for podGroup"(?: podGroupType="[^"]*")? '
    r'podGroup="(?P<group>[^"]+)"(?: plugin="(?P<plugin>[^"]+)")? placement="(?P<placement>[^"]+)" '
    r"score=(?P<score>-?[0-9]+)"
)
_MOVED = re.compile(
    r'"(?:Pod|Entity) moved to an internal scheduling queue" (?:[^"]*"[^"]*" )*?(?:type="(?P<type>[^"]*)" )?'
    r'(?:pod|entity)="(?P<pod>[^"]+)" event="?(?P<event>[^" ]+)"? queue="?(?P<queue>[^" ]+)"?'
    r'(?: hint="?(?P<hint>[^"\s]+)"?)?'
)
# the reporting plugin's line: its keys in any order (a contextual logger's own, such as
# the pod at the framework's V(4), come first); a value quoted as klog writes it (Go's quoting)
_KEY_VALUE = re.compile(r'(?P<key>[A-Za-z]+)="(?P<value>(?:[^"\\]|\\.)*)"')
_REJECTED = '"Filter rejected node"'
# the queue's line for a pod a PreEnqueue plugin keeps out of it (V(0) at 1.28, V(4) later:
# the queue's --vmodule), with the plugin and its status's message
_HELD = '"Status after running PreEnqueue plugin"'
_REJECTION_KEYS = ("plugin", "pod", "node", "code", "reason")
# a pod's own arrival, its failed attempt and the end of its backoff are not requeues by an
# event (1.31-1.36 label the pod's own events Unschedulable..., 1.37 Unscheduled...)
_NOT_REQUEUES = frozenset(
    {"PodAdd", "ScheduleAttemptFailure", "BackoffComplete", "PodUpdate"}
    | {f"{state}Pod{change}" for state in ("Unscheduled", "Unschedulable") for change in ("Add", "Update")}
)
# the queueing strategies 1.28-1.34 log as numbers
_HINTS = {"0": "QueueSkip", "1": "QueueAfterBackoff", "2": "QueueImmediately"}
_PREEMPTED = re.compile(
    r'"Preemptor Pod preempted victim Pod" preemptor="(?P<preemptor>[^"]+)" victim="(?P<victim>[^"]+)" '
    r'node="(?P<node>[^"]+)"'
)
# "failed to list *v1alpha1.PodGroup: ..." (a typed informer), "failed to list
# quota.example.com/v1alpha1, Resource=quotas: ..." (a dynamic one: the scheduler's for
# the custom resources plugins register events on, or a plugin's own)
_UNSERVED = re.compile(r'failed to list (?P<type>[^:"\\]+?): the server could not find the requested resource')
_DYNAMIC = re.compile(r"(?P<gv>\S+), Resource=(?P<resource>\S+)")
# what the API server says when RBAC denies a request, as client-go logs it
_FORBIDDEN = re.compile(
    r'User \\?"(?P<user>[^"\\]+)\\?" cannot (?P<verb>[a-z]+) resource \\?"(?P<resource>[^"\\]+)\\?"'
    r'(?: in API group \\?"(?P<group>[^"\\]*)\\?")?'
)


_KLOG_TIME = re.compile(r"[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(\.\d+)?")


def line_time(line: str, now: datetime | None = None) -> float | None:
    """When a klog line was written, in seconds since the epoch (None: no klog header),
    its header read as UTC. klog leaves the year out: the line is taken to be from the
    last year in which that day is not after ``now`` (a day of slack for clocks)."""
    match = _KLOG_TIME.match(line)
    if match is None:
        return None
    now = now or datetime.now(UTC)
    month, day, hour, minute, second = (int(match[i]) for i in range(1, 6))
    fraction = float(match[6] or 0)
    try:
        when = datetime(now.year, month, day, hour, minute, second, tzinfo=UTC)
        if when > now + timedelta(days=1):
            when = when.replace(year=now.year - 1)
    except ValueError:  # 29 February of another year, or a garbled header
        return None
    return when.timestamp() + fraction


def _shown_type(described: str) -> str:
    """A reflector's type as a user reads it: "quotas (quota.example.com/v1alpha1)" for a
    dynamic informer's "quota.example.com/v1alpha1, Resource=quotas"."""
    dynamic = _DYNAMIC.fullmatch(described.strip())
    return f"{dynamic['resource']} ({dynamic['gv']})" if dynamic else described.strip()


def pod_key(reference: str) -> str:
    """NAMESPACE/NAME as the scenario names the pod: NAME in the default namespace."""
    namespace, _, name = reference.partition("/")
    return name if namespace == NAMESPACE else reference


def read_log(lines: Iterable[str], key: Callable[[str], str | None] = pod_key) -> LogFacts:
    """Everything above, by pod; ``key`` maps the log's NAMESPACE/NAME to the pod's key
    in the report (None: not a pod of the run)."""
    facts = LogFacts()
    now = datetime.now(UTC)
    plugins: dict[str, dict[str, dict[str, int]]] = {}
    # a pod group's cycles and moves; its last cycle's placements, and their scores (plugin and total)
    group_attempts: dict[str, int] = {}
    group_requeues: dict[str, list[Requeue]] = {}
    group_backoffs: dict[str, int] = {}
    tried: dict[str, list[str]] = {}
    placement_plugins: dict[str, dict[str, dict[str, int]]] = {}
    placement_totals: dict[str, dict[str, int]] = {}
    totals: dict[str, dict[str, int]] = {}
    denied: set[str] = set()
    unserved: set[str] = set()
    rejected: dict[str, dict[tuple[str, str], NodeRejection]] = {}  # pod -> (node, plugin) -> why
    for line in lines:
        if "placement for podGroup" in line or "placement's final score for podGroup" in line:
            match = _PLACEMENT_SCORE.search(line)
            group = key(match["group"]) if match else None
            if match is not None and group is not None:
                if match["plugin"] is not None:
                    of_placement = placement_plugins.setdefault(group, {}).setdefault(match["placement"], {})
                    of_placement[match["plugin"]] = int(match["score"])
                else:
                    placement_totals.setdefault(group, {})[match["placement"]] = int(match["score"])
        elif "score for pod" in line or "scored node for pod" in line:
            match = _SCORE_LINE.search(line)
            if match is None:
                continue
            pod = key(match["pod"])
            if pod is None:
                continue
            score = int(match["score"])
            if match["plugin"] is not None:
                if pod in totals:  # a new attempt: forget the previous one
                    del totals[pod]
                    plugins.pop(pod, None)
                plugins.setdefault(pod, {}).setdefault(match["node"], {})[match["plugin"]] = score
            else:
                totals.setdefault(pod, {})[match["node"]] = score
        elif "Attempting to schedule pod group" in line:
            match = _GROUP_ATTEMPT.search(line)
            group = key(match["group"]) if match else None  # NAMESPACE/NAME, mapped as a pod's
            if group is not None:
                group_attempts[group] = group_attempts.get(group, 0) + 1
                tried[group], placement_plugins[group], placement_totals[group] = [], {}, {}  # a new cycle
        elif "Assuming placement in snapshot" in line:
            match = _PLACEMENT_TRIED.search(line)
            group = key(match["group"]) if match else None
            if match is not None and group is not None:
                tried.setdefault(group, []).append(match["placement"])
        elif "Attempting to schedule" in line:
            match = _ATTEMPT.search(line)
            pod = key(match["pod"]) if match else None
            if pod is not None:
                facts.attempts[pod] = facts.attempts.get(pod, 0) + 1
                facts.attempt_times.setdefault(pod, []).append(line_time(line, now))
                rejected.pop(pod, None)  # a new attempt: its own rejections
                facts.held.pop(pod, None)  # let into the queue since
        elif _HELD in line:
            values = {m["key"]: m["value"] for m in _KEY_VALUE.finditer(line, line.index(_HELD) + len(_HELD))}
            pod = key(values["pod"]) if "pod" in values and "plugin" in values else None
            if pod is not None:
                facts.held[pod] = (values["plugin"], _unquote(values.get("status", "")))
        elif _REJECTED in line:
            after = line.index(_REJECTED) + len(_REJECTED)
            values = {m["key"]: m["value"] for m in _KEY_VALUE.finditer(line, after)}
            pod = key(values["pod"]) if all(k in values for k in _REJECTION_KEYS) else None
            if pod is not None:
                node, plugin = values["node"], values["plugin"]
                rejected.setdefault(pod, {})[(node, plugin)] = NodeRejection(
                    node, plugin, values["code"], _unquote(values["reason"])
                )
        elif "moved to an internal scheduling queue" in line:
            match = _MOVED.search(line)
            pod = key(match["pod"]) if match else None
            if match is not None and pod is not None and match["type"] == "podgroup":
                if match["event"] == "BackoffComplete":
                    group_backoffs[pod] = group_backoffs.get(pod, 0) + 1
                elif match["event"] not in _NOT_REQUEUES:
                    moved = Requeue(match["event"], match["queue"], at=line_time(line, now))
                    group_requeues.setdefault(pod, []).append(moved)
            elif match is not None and pod is not None and match["event"] not in _NOT_REQUEUES:
                hint = match["hint"] or ""
                requeue = Requeue(match["event"], match["queue"], _HINTS.get(hint, hint), line_time(line, now))
                moves = facts.requeues.setdefault(pod, [])
                last = moves[-1] if moves else None
                if (
                    hint
                    and last is not None
                    and (last.event, last.queue, last.hint) == (requeue.event, requeue.queue, "")
                ):
                    # the same move, logged again with its hint (1.31-1.34): its first time
                    moves[-1] = Requeue(requeue.event, requeue.queue, requeue.hint, last.at)
                else:
                    moves.append(requeue)
        elif "Preemptor Pod preempted victim Pod" in line:
            match = _PREEMPTED.search(line)
            if match is not None:
                victim, preemptor = key(match["victim"]), key(match["preemptor"])
                if victim is not None:
                    facts.preempted[victim] = Preemption(preemptor or match["preemptor"], match["node"])
        elif "could not find the requested resource" in line:
            unserved.update(_shown_type(found["type"]) for found in _UNSERVED.finditer(line))
        elif "cannot" in line and "resource" in line:
            for found in _FORBIDDEN.finditer(line):
                group = found["group"] or ""
                denied.add(f"{found['verb']} {found['resource']}" + (f".{group}" if group else ""))
                facts.informers_denied |= found["verb"] in ("list", "watch")
    for pod, by_node in totals.items():
        by_plugin = plugins.get(pod, {})
        scored = [NodeScore(n, total, dict(sorted(by_plugin.get(n, {}).items()))) for n, total in by_node.items()]
        facts.scores[pod] = tuple(sorted(scored, key=lambda s: (-s.total, s.node)))
    seen = (
        group_attempts.keys() | tried.keys() | placement_totals.keys() | group_requeues.keys() | group_backoffs.keys()
    )
    for group in sorted(seen):
        per_placement = placement_plugins.get(group, {})
        placed = [
            PlacementScore(name, total, dict(sorted(per_placement.get(name, {}).items())))
            for name, total in placement_totals.get(group, {}).items()
        ]
        cycle = PlacementCycle(
            tuple(tried.get(group, ())), tuple(sorted(placed, key=lambda s: (-s.total, s.placement)))
        )
        facts.groups[group] = GroupLog(
            group_attempts.get(group, 0), cycle, tuple(group_requeues.get(group, ())), group_backoffs.get(group, 0)
        )
    facts.denied = sorted(denied)
    facts.unserved = sorted(unserved)
    facts.rejections = {pod: tuple(found[k] for k in sorted(found)) for pod, found in rejected.items()}
    return facts


def _unquote(quoted: str) -> str:
    """A value klog quoted (Go's strconv.Quote) as its text: JSON reads Go's common escapes;
    one it does not (\\x, \\U) is kept as written."""
    try:
        text = json.loads(f'"{quoted}"')
    except ValueError:
        return quoted
    return text if isinstance(text, str) else quoted


def scores_from_log(text: str) -> dict[str, tuple[NodeScore, ...]]:
    """Per pod, each node's scores in the pod's last scheduling attempt, best first."""
    return read_log(text.splitlines()).scores


def denied_requests(log: str) -> list[str]:
    """What the API server refused the scheduler, from its log: sorted "verb resource.group"."""
    return read_log(log.splitlines()).denied
