"""Pod groups as groups (workload-aware scheduling): which of a scenario's PodGroups a
replay placed, all or nothing, and where.

A pod belongs to the PodGroup its ``schedulingGroup.podGroupName`` names, in its own
namespace. A gang policy's ``minCount`` is the all-or-nothing threshold the scheduler's
GangScheduling holds a group to: the group is placed once that many of its pods are bound.
A group without one (the basic policy) is placed when every pod is. A group named by pods
but not in the scenario is reported too, without a policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kplugin.e2e.logs import GroupLog, PlacementCycle, Requeue
from kplugin.e2e.session import PodPlacement
from kplugin.scenario.format import Scenario, pod_groups
from kplugin.scenario.state import pod_key


class GroupOutcome(StrEnum):
    ALL = "all"  # every pod bound
    NONE = "none"  # no pod bound: the gang held back
    SOME = "some"  # some bound (a basic group, or a gang bound at its minimum)


@dataclass(frozen=True)
class Group:
    key: str  # NAME, or NAMESPACE/NAME
    min_count: int | None  # the gang policy's, None without one
    pods: tuple[str, ...]  # the scenario's pods of the group, by key
    bound: tuple[str, ...]
    nodes: tuple[str, ...]  # the nodes its bound pods are on, sorted
    log: GroupLog = field(default_factory=GroupLog)  # what the scheduler's log tells of it

    @property
    def attempts(self) -> int:
        """The scheduler's cycles of the group (1.36 on)."""
        return self.log.attempts

    @property
    def placements(self) -> PlacementCycle:
        """Its last cycle's placements."""
        return self.log.placements

    @property
    def requeues(self) -> tuple[Requeue, ...]:
        """Cluster events that moved it back to a queue (1.37 on)."""
        return self.log.requeues

    @property
    def backoffs(self) -> int:
        """Times it came back when its backoff ended (1.37 on)."""
        return self.log.backoffs

    @property
    def outcome(self) -> GroupOutcome:
        if not self.bound:
            return GroupOutcome.NONE
        return GroupOutcome.ALL if len(self.bound) == len(self.pods) else GroupOutcome.SOME

    @property
    def placed(self) -> bool:
        """The group got what it needs: its gang minimum, or every pod."""
        return len(self.bound) >= (self.min_count if self.min_count is not None else len(self.pods)) > 0


def _min_count(body: dict[str, Any]) -> int | None:
    gang = ((body.get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
    count = gang.get("minCount") if isinstance(gang, dict) else None
    return count if isinstance(count, int) else None


def groups(
    scenario: Scenario, placements: Sequence[PodPlacement], logs: Mapping[str, GroupLog] | None = None
) -> list[Group]:
    """The scenario's pod groups after a replay, sorted by key ([] without any), with what
    the scheduler's log shows of each: its cycles, its last cycle's placements, its moves."""
    policies = {key: _min_count(obj.body) for key, obj in pod_groups(scenario).items()}
    members: dict[str, list[str]] = {key: [] for key in policies}
    for pod in scenario.all_pods():
        name = (pod.spec.get("schedulingGroup") or {}).get("podGroupName")
        if isinstance(name, str):
            members.setdefault(pod_key(pod.namespace, name), []).append(pod.key)
    where = {p.pod: p.node for p in placements}
    found = []
    for key, pods in sorted(members.items()):
        bound = tuple(sorted(p for p in pods if where.get(p)))
        nodes = tuple(sorted({str(where[p]) for p in bound}))
        log = (logs or {}).get(key, GroupLog())
        found.append(Group(key, policies.get(key), tuple(sorted(pods)), bound, nodes, log))
    return found


def group_json(group: Group) -> dict[str, Any]:
    return {
        "group": group.key,
        "minCount": group.min_count,
        "pods": len(group.pods),
        "bound": len(group.bound),
        "outcome": str(group.outcome),
        "placed": group.placed,
        "nodes": list(group.nodes),
        "attempts": group.attempts,
        "placement": group.placements.chosen if group.bound else None,
        "placementsTried": list(group.placements.tried),
        "placementsRefused": [{"placement": t, "plugin": plugin} for t, plugin in group.placements.refused],
        "placementScores": [
            {"placement": p.placement, "total": p.total, "plugins": p.plugins} for p in group.placements.scores
        ],
        "requeues": [r.as_json() for r in group.requeues],
        "backoffRetries": group.backoffs,
    }


def group_line(group: Group) -> str:
    """One line: 'pod group gang (gang of 4): 4/4 bound, on a-1, a-2'."""
    policy = f"gang of {group.min_count}" if group.min_count is not None else "no gang policy"
    on = f", on {', '.join(group.nodes)}" if group.nodes else ""
    held = "" if group.placed or group.bound else " (held back: all or nothing)"
    tried = f"; {group.attempts} attempt(s)" if group.attempts else ""
    if group.backoffs:
        tried += f", {group.backoffs} after a backoff"
    if group.requeues:
        tried += "; requeued by: " + ", ".join(f"{r.event} ({r.queue})" for r in group.requeues)
    counts = f"{len(group.bound)}/{len(group.pods)} bound"
    return f"pod group {group.key} ({policy}): {counts}{on}{held}{tried}{_placement(group)}"


def _placement(group: Group) -> str:
    """'; placement rack-b (251, rack-a 200)': the one taken, its total and the others', where the log tells;
    then the placements a PlacementFeasible plugin refused ('; rack-a refused by RackGang')."""
    cycle = group.placements
    chosen = cycle.chosen if group.bound else None
    scores = "; ".join(f"{p.placement} {p.total}" for p in cycle.scores if p.placement != chosen)
    refused = "".join(f"; {placement} refused by {plugin}" for placement, plugin in cycle.refused)
    if chosen is not None:
        best = next((p.total for p in cycle.scores if p.placement == chosen), None)
        detail = ", ".join(x for x in (str(best) if best is not None else "", scores) if x)
        return f"; placement {chosen}" + (f" ({detail})" if detail else "") + refused
    if cycle.scores:
        return f"; placements scored: {scores}{refused}"
    return (f"; placements tried: {', '.join(cycle.tried)}" if cycle.tried else "") + refused
