"""What-if: the same scenario replayed with the project's profile and with the default
profile of the same binary, and the difference: each pod placed differently (both nodes
and both score breakdowns), pods that became or stopped being schedulable (with the
scheduler's own reasons), each profile's preemption victims, and each node's use of the
resources that changed. Summary counts first; everything sorted, so the same replay
gives the same report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplugin.e2e import usage
from kplugin.e2e.groups import Group, group_json, group_line, groups
from kplugin.e2e.report import DEFAULT_VIEW, ScoreView, score_table
from kplugin.e2e.run import Inputs, creation_json, placement_json
from kplugin.e2e.session import PodPlacement, ProfileLabel, Session
from kplugin.scenario.format import Pod, Scenario

PLUGIN, DEFAULT = ProfileLabel.PLUGIN, ProfileLabel.DEFAULT  # the JSON's keys: the two profiles compared


@dataclass(frozen=True)
class Change:
    pod: str
    plugin: PodPlacement
    default: PodPlacement


@dataclass(frozen=True)
class Victim:
    pod: str
    preemptor: str
    node: str  # where it was


@dataclass(frozen=True)
class NodeUse:
    node: str
    resource: str
    allocatable: int  # thousandths (usage.milli)
    plugin: int
    default: int


@dataclass
class Comparison:
    kubernetes: str
    plugin: Session
    default: Session
    compared: int = 0  # pods the profiles placed (not bound before, not deleted by a step)
    same: int = 0
    moved: list[Change] = field(default_factory=list)
    became_schedulable: list[Change] = field(default_factory=list)  # pending with default, bound with plugin
    became_unschedulable: list[Change] = field(default_factory=list)  # bound with default, pending with plugin
    victims: dict[str, list[Victim]] = field(default_factory=dict)  # profile -> victims
    use: list[NodeUse] = field(default_factory=list)
    totals: dict[str, tuple[int, int]] = field(default_factory=dict)  # resource -> (plugin, default), changed only
    seconds: float = 0.0
    groups: list[tuple[Group, Group]] = field(default_factory=list)  # each pod group: (plugin, default)

    @property
    def changed(self) -> int:
        victims = sum(len(v) for v in self.victims.values())
        return len(self.moved) + len(self.became_schedulable) + len(self.became_unschedulable) + victims


def _requests(pod: Pod) -> usage.Amounts:
    return usage.pod_requests(pod.containers(), pod.spec.get("initContainers", []), pod.spec.get("overhead", {}))


def _use(scenario: Scenario, session: Session) -> dict[str, usage.Amounts]:
    """What the pods bound at the end use of each node."""
    pods = {p.key: p for p in scenario.all_pods()}
    used: dict[str, usage.Amounts] = {}
    for placement in session.placements:
        pod = pods.get(placement.pod)
        if pod is None or placement.node is None:
            continue
        into = used.setdefault(placement.node, {})
        for resource, amount in _requests(pod).items():
            into[resource] = into.get(resource, 0) + amount
        into["pods"] = into.get("pods", 0) + 1000
    return used


def compare(inputs: Inputs, plugin: Session, default: Session, seconds: float) -> Comparison:
    scenario = inputs.scenario
    result = Comparison(str(inputs.project.version), plugin, default, seconds=round(seconds, 1))
    plugin_groups, default_groups = (groups(scenario, s.placements, s.groups) for s in (plugin, default))
    result.groups = list(zip(plugin_groups, default_groups, strict=True))
    theirs = {p.pod: p for p in default.placements}
    for mine in plugin.placements:
        other = theirs.get(mine.pod)
        if other is None or mine.bound_before or mine.deleted or other.deleted:
            continue
        result.compared += 1
        change = Change(mine.pod, mine, other)
        if mine.node == other.node and mine.where == other.where:
            result.same += 1
        elif mine.node is not None and other.node is not None:
            result.moved.append(change)
        elif mine.node is not None:
            result.became_schedulable.append(change)
        elif other.node is not None:
            result.became_unschedulable.append(change)
        else:
            result.same += 1  # pending (or preempted) in both
    for session in (plugin, default):
        victims = []
        for placement in session.placements:
            if placement.preempted_by is not None:
                victims.append(Victim(placement.pod, placement.preempted_by, placement.preempted_on or ""))
        result.victims[session.profile] = sorted(victims, key=lambda v: v.pod)
    allocatable = {}
    for node in scenario.nodes:
        capacity = node.allocatable if node.allocatable is not None else node.capacity
        allocatable[node.name] = {k: usage.milli(v) for k, v in capacity.items()}
    mine_use, their_use = _use(scenario, plugin), _use(scenario, default)
    totals: dict[str, list[int]] = {}
    for name in sorted(set(mine_use) | set(their_use)):
        a, b = mine_use.get(name, {}), their_use.get(name, {})
        for resource in sorted(set(a) | set(b)):
            totals.setdefault(resource, [0, 0])
            totals[resource][0] += a.get(resource, 0)
            totals[resource][1] += b.get(resource, 0)
            if a.get(resource, 0) != b.get(resource, 0):
                result.use.append(
                    NodeUse(
                        name,
                        resource,
                        allocatable.get(name, {}).get(resource, 0),
                        a.get(resource, 0),
                        b.get(resource, 0),
                    )
                )
    changed = {u.resource for u in result.use}
    result.totals = {r: (t[0], t[1]) for r, t in sorted(totals.items()) if r in changed}
    for changes in (result.moved, result.became_schedulable, result.became_unschedulable):
        changes.sort(key=lambda c: c.pod)
    return result


def _profile_json(session: Session) -> dict[str, Any]:
    return {
        "schedulerName": session.scheduler_name,
        "identity": session.identity,
        "created": creation_json(session.created),
        "scheduling": {
            "pods": session.scheduled,
            "seconds": session.scheduling_seconds,
            "perSecond": round(session.pods_per_second, 1),
        },
        "logDetail": session.detail,
        "denied": session.denied,
        "unserved": session.unserved,
        "preempted": [],
    }


def _change_json(change: Change) -> dict[str, Any]:
    return {"pod": change.pod, PLUGIN: placement_json(change.plugin), DEFAULT: placement_json(change.default)}


def as_json(result: Comparison) -> dict[str, Any]:
    profiles: dict[str, dict[str, Any]] = {PLUGIN: _profile_json(result.plugin), DEFAULT: _profile_json(result.default)}
    for label, victims in result.victims.items():
        profiles[label]["preempted"] = [{"pod": v.pod, "by": v.preemptor, "node": v.node} for v in victims]
    return {
        "kubernetes": result.kubernetes,
        "seconds": result.seconds,
        "summary": {
            "compared": result.compared,
            "same": result.same,
            "moved": len(result.moved),
            "becameSchedulable": len(result.became_schedulable),
            "becameUnschedulable": len(result.became_unschedulable),
            "preempted": {label: len(v) for label, v in result.victims.items()},
        },
        "profiles": profiles,
        "moved": [_change_json(c) for c in result.moved],
        "becameSchedulable": [_change_json(c) for c in result.became_schedulable],
        "becameUnschedulable": [_change_json(c) for c in result.became_unschedulable],
        "nodeUse": [
            {
                "node": u.node,
                "resource": u.resource,
                "allocatable": usage.shown(u.resource, u.allocatable),
                PLUGIN: usage.shown(u.resource, u.plugin),
                DEFAULT: usage.shown(u.resource, u.default),
            }
            for u in result.use
        ],
        "totals": {r: {PLUGIN: usage.shown(r, a), DEFAULT: usage.shown(r, b)} for r, (a, b) in result.totals.items()},
        "groups": [
            {"group": mine.key, PLUGIN: group_json(mine), DEFAULT: group_json(theirs)} for mine, theirs in result.groups
        ],
        "ok": all(p.as_expected for p in result.plugin.placements),
    }


def _scores(change: Change, view: ScoreView) -> list[str]:
    """Both profiles' scores of a pod placed differently, each under its profile's name."""
    lines = []
    for label, placement in ((PLUGIN, change.plugin), (DEFAULT, change.default)):
        table = score_table(placement.scores, view, indent="        ")
        if table:
            lines += [f"      {label}:", *table]
    return lines


def text(result: Comparison, view: ScoreView = DEFAULT_VIEW) -> str:
    """The report for people: summary counts first, then each difference (a pod placed
    differently with both profiles' scores, laid out as ``view`` says)."""
    lines = []
    victims = result.victims
    lines.append(
        f"what-if on Kubernetes {result.kubernetes}: {result.compared} pod(s) compared: {result.same} placed alike, "
        f"{len(result.moved)} moved, {len(result.became_schedulable)} became schedulable, "
        f"{len(result.became_unschedulable)} became unschedulable; preempted: "
        f"plugin {len(victims.get(PLUGIN, []))}, default {len(victims.get(DEFAULT, []))}"
    )
    for session in (result.plugin, result.default):
        lines.append(
            f"  {session.profile:7} {session.scheduler_name}: {session.created.objects:,} objects created "
            f"({session.created.per_second:,.0f}/s), {session.scheduled:,} pods scheduled in "
            f"{session.scheduling_seconds:.1f}s ({session.pods_per_second:,.0f} pods/s)"
        )
    if result.groups:
        lines.append("")
        lines.append("pod groups:")
        for mine, theirs in result.groups:
            lines.append(f"  plugin:  {group_line(mine)}")
            lines.append(f"  default: {group_line(theirs)}")
    if result.moved:
        lines.append("")
        lines.append("placed differently (plugin -> default):")
        for change in result.moved:
            ties = [label for label, p in ((PLUGIN, change.plugin), (DEFAULT, change.default)) if p.tied]
            tie = f"  (a tie of best scores with the {' and '.join(ties)} profile: picked at random)" if ties else ""
            lines.append(f"  {change.pod:30} {change.plugin.node} -> {change.default.node}{tie}")
            lines += _scores(change, view)
    if result.became_unschedulable:
        lines.append("")
        lines.append("unschedulable with the plugin (the default scheduler places them):")
        for change in result.became_unschedulable:
            lines.append(f"  {change.pod:30} default: {change.default.node}")
            lines.append(f"      plugin: {change.plugin.reason}")
    if result.became_schedulable:
        lines.append("")
        lines.append("schedulable only with the plugin:")
        for change in result.became_schedulable:
            lines.append(f"  {change.pod:30} plugin: {change.plugin.node}")
            lines.append(f"      default: {change.default.reason}")
    for label, found in victims.items():
        if found:
            lines.append("")
            lines.append(f"preempted with the {label} profile:")
            for victim in found:
                lines.append(f"  {victim.pod:30} by {victim.preemptor} on {victim.node}")
    if result.use:
        lines.append("")
        lines.append("node use that changed (plugin vs default, of allocatable):")
        for use in result.use:
            lines.append(
                f"  {use.node:24} {use.resource:20} {usage.shown(use.resource, use.plugin):>10} vs "
                f"{usage.shown(use.resource, use.default):>10} of {usage.shown(use.resource, use.allocatable)}"
            )
        lines.append(
            "  totals: "
            + ", ".join(f"{r} {usage.shown(r, a)} vs {usage.shown(r, b)}" for r, (a, b) in result.totals.items())
        )
    return "\n".join(lines) + "\n"
