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
- a placement a PlacementFeasible plugin refused (1.38 on): "PodGroup placement rejected
  by plugin" (V(4) in the framework runtime's ``framework.go``, with the plugin, after the
  "Assuming placement in snapshot" line of the placement it refused), read where the
  scores are.
- a pod group's placements (1.36 on): "Assuming placement in snapshot" (V(4)) for each
  placement its cycle tries, and, where two or more took the group, "Plugin scored
  placement for podGroup" and "Calculated placement's final score for podGroup" (V(10)),
  in ``schedule_one_podgroup.go`` 1.36-1.37 and ``algorithm_podgroup.go`` 1.38; the
  scheduler takes the best total (a tie at random). 1.38 logs a group's pods' attempts
  there too. A cycle ends with "Successfully scheduled a pod group", "Unable to schedule a
  pod group" or "Pod group is waiting for preemption" (V(2)): a log that stops in a
  cycle's middle reports the last cycle that ended.
- a pod group's moves in the queue (1.37 on, where the queue holds groups as entities):
  "Entity moved to an internal scheduling queue" with ``type="podgroup"``. A gang that
  fails goes to the backoff queue with no plugin to wait for ("unschedulable plugins={}")
  and comes back on ``BackoffComplete``, so its retries are counted apart from the
  cluster events that moved it.
- preemption, V(2): "Preemptor Pod preempted victim Pod" (preemptor, victim, node).
- the events that left a rejected pod where it was, V(5) in ``scheduling_queue.go``:
  "Event is not making pod schedulable" (1.28-1.36, with the pod; 1.37 logs the queue's
  entry instead, which does not name it).
- the queue's PreQueueingHints (1.37 on, gate SchedulerPreQueueingHints: alpha in 1.37,
  on from 1.38), V(5) in ``scheduling_queue.go``: "PreQueueingHint narrowed pod set" with
  how many of the unschedulable pods an event's PreQueueingHints named (``candidates``)
  and how many there were (``total``); only the named ones are asked their QueueingHint.
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
from datetime import UTC, datetime, timedelta

from kplugin.e2e.logfacts import (
    GroupLog,
    LogFacts,
    Narrowing,
    NodeRejection,
    NodeScore,
    PlacementCycle,
    PlacementScore,
    Preemption,
    Requeue,
)
from kplugin.scenario.state import NAMESPACE

__all__ = [
    "GroupLog",
    "LogFacts",
    "Narrowing",
    "NodeRejection",
    "NodeScore",
    "PlacementCycle",
    "PlacementScore",
    "Preemption",
    "Requeue",
    "read_log",
]

# the -v and --vmodule that make the scheduler log all of the above
# (schedule_one_podgroup.go, 1.36 on: a pod group's cycle, V(3) for the group's attempt and
# V(4) for each of its pods'; a file a minor lacks is ignored)
# (zz_generated.rejections: the Filter rejections, node by node, as many lines as scores,
# so at the scores' level)
SCORE_VMODULE = "schedule_one=10,schedule_one_podgroup=10,algorithm_podgroup=10,zz_generated.rejections=5"
ATTEMPT_VMODULE = "schedule_one=3,schedule_one_podgroup=4,algorithm_podgroup=4"
QUEUE_VMODULE = "scheduling_queue=5,active_queue=5,backoff_queue=5"
# the queue's PreEnqueue line (V(4) from 1.29; V(0) at 1.28) at every size: without it a
# pod a PreEnqueue plugin holds is only found when --timeout runs out; from 1.35 the
# queue's moves are logged elsewhere, so this adds a line per held pod (up to 1.34, one
# per move too)
HELD_VMODULE = "scheduling_queue=4"
# the framework runtime's V(4): which PlacementFeasible plugin refused a placement (1.38
# on), for scenarios with pod groups, where the scores are read
GROUP_VMODULE = "framework=4"


_SCORE_LINE = re.compile(
    r'"(?P<what>Plugin scored node for pod|Calculated node\'s final score for pod)" '
    r'pod="(?P<pod>[^"]+)"(?: plugin="(?P<plugin>[^"]+)")? node="(?P<node>[^"]+)" score=(?P<score>-?[0-9]+)'
)
_ATTEMPT = re.compile(
    r'"Attempting to schedule (?:pod|a pod belonging to a pod group)"(?: podGroup="[^"]*")? pod="(?P<pod>[^"]+)"'
)
_GROUP_ATTEMPT = re.compile(r'"Attempting to schedule pod group"(?: podGroupType="[^"]*")? podGroup="(?P<group>[^"]+)"')
# a pod group's cycle's end, V(2) in schedule_one_podgroup.go 1.36-1.38: scheduled, waiting
# for preemption, or not scheduled
_GROUP_ENDED = re.compile(
    r'"(?:Successfully scheduled a pod group|Unable to schedule a pod group|Pod group is waiting for preemption)"'
    r'(?: podGroupType="[^"]*")? podGroup="(?P<group>[^"]+)"'
)
_PLACEMENT_TRIED = re.compile(
    r'"Assuming placement in snapshot"(?: podGroupType="[^"]*")? '
    r'podGroup="(?P<group>[^"]+)" placement="(?P<placement>[^"]+)"'
)
_PLACEMENT_REFUSED = re.compile(
    r'"PodGroup placement rejected by plugin"(?: logger="[^"]*")?(?: podGroupType="[^"]*")? '
    r'podGroup="(?P<group>[^"]+)" plugin="(?P<plugin>[^"]+)"'
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
# scheduling_queue.go V(5): an event that leaves a rejected pod where it is (no plugin that
# rejected it registered the event, or their QueueingHints said QueueSkip). 1.37 on logs
# the queue's entry instead of the pod ("Event is not making entity schedulable"): not read
_SKIPPED = re.compile(r'"Event is not making pod schedulable" pod="(?P<pod>[^"]+)" event="?(?P<event>[^" ]+)"?')
# scheduling_queue.go V(5), 1.37 on: the pods an event's PreQueueingHints named
_NARROWED = re.compile(r'"PreQueueingHint narrowed pod set" candidates=(?P<candidates>[0-9]+) total=(?P<total>[0-9]+)')
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


# a pod group's cycle as read so far: placements tried, plugins' and total scores, refusals
_Cycle = tuple[list[str], dict[str, dict[str, int]], dict[str, int], list[tuple[str, str]]]


class _Reader:
    """One pass over a scheduler's log: what each kind of line adds, kept apart until the
    end (a pod's last attempt's scores, a group's last cycle) and then made LogFacts."""

    def __init__(self, key: Callable[[str], str | None]) -> None:
        self.key = key
        self.facts = LogFacts()
        self.now = datetime.now(UTC)
        self.plugins: dict[str, dict[str, dict[str, int]]] = {}  # pod -> node -> plugin -> score
        self.totals: dict[str, dict[str, int]] = {}  # pod -> node -> total
        # a pod group's cycles and moves; its last cycle's placements, and their scores
        self.group_attempts: dict[str, int] = {}
        self.group_requeues: dict[str, list[Requeue]] = {}
        self.group_backoffs: dict[str, int] = {}
        self.tried: dict[str, list[str]] = {}
        self.placement_plugins: dict[str, dict[str, dict[str, int]]] = {}
        self.placement_totals: dict[str, dict[str, int]] = {}
        self.refused: dict[str, list[tuple[str, str]]] = {}
        # the last cycle that ended ("Unable to schedule a pod group", ...): its placements
        # and scores stand where the log stops in a later cycle's middle (the scheduler was
        # stopped while 1.36 retried a gang that does not fit, in a burst)
        self.ended: dict[str, bool] = {}
        self.last_ended: dict[str, _Cycle] = {}
        self.denied: set[str] = set()
        self.unserved: set[str] = set()
        self.rejected: dict[str, dict[tuple[str, str], NodeRejection]] = {}  # pod -> (node, plugin) -> why

    def placement_score(self, line: str) -> None:
        match = _PLACEMENT_SCORE.search(line)
        group = self.key(match["group"]) if match else None
        if match is None or group is None:
            return
        if match["plugin"] is not None:
            of_placement = self.placement_plugins.setdefault(group, {}).setdefault(match["placement"], {})
            of_placement[match["plugin"]] = int(match["score"])
        else:
            self.placement_totals.setdefault(group, {})[match["placement"]] = int(match["score"])

    def node_score(self, line: str) -> None:
        match = _SCORE_LINE.search(line)
        pod = self.key(match["pod"]) if match else None
        if match is None or pod is None:
            return
        score = int(match["score"])
        if match["plugin"] is not None:
            if pod in self.totals:  # a new attempt: forget the previous one
                del self.totals[pod]
                self.plugins.pop(pod, None)
            self.plugins.setdefault(pod, {}).setdefault(match["node"], {})[match["plugin"]] = score
        else:
            self.totals.setdefault(pod, {})[match["node"]] = score

    def group_attempt(self, line: str) -> None:
        match = _GROUP_ATTEMPT.search(line)
        group = self.key(match["group"]) if match else None  # NAMESPACE/NAME, mapped as a pod's
        if group is not None:
            self.group_attempts[group] = self.group_attempts.get(group, 0) + 1
            self._restore(group, ([], {}, {}, []))  # a new cycle
            self.ended[group] = False

    def _restore(self, group: str, cycle: _Cycle) -> None:
        self.tried[group], self.placement_plugins[group], self.placement_totals[group], self.refused[group] = cycle

    def group_ended(self, line: str) -> None:
        match = _GROUP_ENDED.search(line)
        group = self.key(match["group"]) if match else None
        if group is not None:
            self.ended[group] = True
            self.last_ended[group] = (
                self.tried.get(group, []),
                self.placement_plugins.get(group, {}),
                self.placement_totals.get(group, {}),
                self.refused.get(group, []),
            )

    def placement_tried(self, line: str) -> None:
        match = _PLACEMENT_TRIED.search(line)
        group = self.key(match["group"]) if match else None
        if match is not None and group is not None:
            self.tried.setdefault(group, []).append(match["placement"])

    def placement_refused(self, line: str) -> None:
        match = _PLACEMENT_REFUSED.search(line)
        group = self.key(match["group"]) if match else None
        tried = self.tried.get(group, []) if group is not None else []
        if match is not None and group is not None and tried:  # the placement tried last
            self.refused.setdefault(group, []).append((tried[-1], match["plugin"]))

    def attempt(self, line: str) -> None:
        match = _ATTEMPT.search(line)
        pod = self.key(match["pod"]) if match else None
        if pod is not None:
            self.facts.attempts[pod] = self.facts.attempts.get(pod, 0) + 1
            self.facts.attempt_times.setdefault(pod, []).append(line_time(line, self.now))
            self.rejected.pop(pod, None)  # a new attempt: its own rejections
            self.facts.held.pop(pod, None)  # let into the queue since

    def held(self, line: str) -> None:
        values = {m["key"]: m["value"] for m in _KEY_VALUE.finditer(line, line.index(_HELD) + len(_HELD))}
        pod = self.key(values["pod"]) if "pod" in values and "plugin" in values else None
        if pod is not None:
            self.facts.held[pod] = (values["plugin"], _unquote(values.get("status", "")))

    def node_rejected(self, line: str) -> None:
        values = {m["key"]: m["value"] for m in _KEY_VALUE.finditer(line, line.index(_REJECTED) + len(_REJECTED))}
        pod = self.key(values["pod"]) if all(k in values for k in _REJECTION_KEYS) else None
        if pod is not None:
            node, plugin = values["node"], values["plugin"]
            self.rejected.setdefault(pod, {})[(node, plugin)] = NodeRejection(
                node, plugin, values["code"], _unquote(values["reason"])
            )

    def moved(self, line: str) -> None:
        match = _MOVED.search(line)
        pod = self.key(match["pod"]) if match else None
        if match is None or pod is None:
            return
        if match["type"] == "podgroup":
            if match["event"] == "BackoffComplete":
                self.group_backoffs[pod] = self.group_backoffs.get(pod, 0) + 1
            elif match["event"] not in _NOT_REQUEUES:
                moved = Requeue(match["event"], match["queue"], at=line_time(line, self.now))
                self.group_requeues.setdefault(pod, []).append(moved)
            return
        if match["event"] in _NOT_REQUEUES:
            return
        hint = match["hint"] or ""
        requeue = Requeue(match["event"], match["queue"], _HINTS.get(hint, hint), line_time(line, self.now))
        moves = self.facts.requeues.setdefault(pod, [])
        last = moves[-1] if moves else None
        if hint and last is not None and (last.event, last.queue, last.hint) == (requeue.event, requeue.queue, ""):
            # the same move, logged again with its hint (1.31-1.34): its first time
            moves[-1] = Requeue(requeue.event, requeue.queue, requeue.hint, last.at)
        else:
            moves.append(requeue)

    def skipped(self, line: str) -> None:
        match = _SKIPPED.search(line)
        pod = self.key(match["pod"]) if match else None
        if match is not None and pod is not None:
            events = self.facts.skipped.setdefault(pod, {})
            events[match["event"]] = events.get(match["event"], 0) + 1

    def narrowed(self, line: str) -> None:
        match = _NARROWED.search(line)
        if match is not None and int(match["total"]):  # an event while no pod waits narrows nothing
            self.facts.narrowed.append(
                Narrowing(int(match["candidates"]), int(match["total"]), line_time(line, self.now))
            )

    def preempted(self, line: str) -> None:
        match = _PREEMPTED.search(line)
        if match is not None:
            victim, preemptor = self.key(match["victim"]), self.key(match["preemptor"])
            if victim is not None:
                self.facts.preempted[victim] = Preemption(preemptor or match["preemptor"], match["node"])

    def not_served(self, line: str) -> None:
        self.unserved.update(_shown_type(found["type"]) for found in _UNSERVED.finditer(line))

    def forbidden(self, line: str) -> None:
        if "resource" not in line:
            return
        for found in _FORBIDDEN.finditer(line):
            group = found["group"] or ""
            self.denied.add(f"{found['verb']} {found['resource']}" + (f".{group}" if group else ""))
            self.facts.informers_denied |= found["verb"] in ("list", "watch")

    def result(self) -> LogFacts:
        facts = self.facts
        for pod, by_node in self.totals.items():
            by_plugin = self.plugins.get(pod, {})
            scored = [NodeScore(n, total, dict(sorted(by_plugin.get(n, {}).items()))) for n, total in by_node.items()]
            facts.scores[pod] = tuple(sorted(scored, key=lambda s: (-s.total, s.node)))
        seen = (
            self.group_attempts.keys()
            | self.tried.keys()
            | self.placement_totals.keys()
            | self.group_requeues.keys()
            | self.group_backoffs.keys()
        )
        for group in sorted(seen):
            if not self.ended.get(group, True) and group in self.last_ended:  # the log stops mid-cycle
                self._restore(group, self.last_ended[group])
            per_placement = self.placement_plugins.get(group, {})
            placed = [
                PlacementScore(name, total, dict(sorted(per_placement.get(name, {}).items())))
                for name, total in self.placement_totals.get(group, {}).items()
            ]
            cycle = PlacementCycle(
                tuple(self.tried.get(group, ())),
                tuple(sorted(placed, key=lambda s: (-s.total, s.placement))),
                tuple(self.refused.get(group, ())),
            )
            facts.groups[group] = GroupLog(
                self.group_attempts.get(group, 0),
                cycle,
                tuple(self.group_requeues.get(group, ())),
                self.group_backoffs.get(group, 0),
            )
        facts.denied = sorted(self.denied)
        facts.unserved = sorted(self.unserved)
        facts.rejections = {pod: tuple(found[k] for k in sorted(found)) for pod, found in self.rejected.items()}
        return facts


# The classifier: what marks each kind of line, and what reads it, in order (the first
# marker a line holds decides: "Attempting to schedule pod group" before "Attempting to
# schedule", a placement's score before a node's).
_LINES: tuple[tuple[str, Callable[[_Reader, str], None]], ...] = (
    ("placement for podGroup", _Reader.placement_score),
    ("placement's final score for podGroup", _Reader.placement_score),
    ("score for pod", _Reader.node_score),
    ("scored node for pod", _Reader.node_score),
    ("Attempting to schedule pod group", _Reader.group_attempt),
    ("scheduled a pod group", _Reader.group_ended),  # Successfully scheduled a pod group
    ("Unable to schedule a pod group", _Reader.group_ended),
    ("Pod group is waiting for preemption", _Reader.group_ended),
    ("Assuming placement in snapshot", _Reader.placement_tried),
    ("PodGroup placement rejected by plugin", _Reader.placement_refused),
    ("Attempting to schedule", _Reader.attempt),
    (_HELD, _Reader.held),
    (_REJECTED, _Reader.node_rejected),
    ("moved to an internal scheduling queue", _Reader.moved),
    ("PreQueueingHint narrowed pod set", _Reader.narrowed),
    ("Event is not making pod schedulable", _Reader.skipped),
    ("Preemptor Pod preempted victim Pod", _Reader.preempted),
    ("could not find the requested resource", _Reader.not_served),
    ("cannot", _Reader.forbidden),
)


def read_log(lines: Iterable[str], key: Callable[[str], str | None] = pod_key) -> LogFacts:
    """Everything above, by pod; ``key`` maps the log's NAMESPACE/NAME to the pod's key
    in the report (None: not a pod of the run)."""
    reader = _Reader(key)
    for line in lines:
        for marker, read in _LINES:
            if marker in line:
                read(reader, line)
                break
    return reader.result()


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
