"""One replay of a scenario with one scheduler profile: the state is created (in
parallel, through kplugin.kube.bulk), the scheduler started, every pod's fate followed
through a watch until each is bound or reported unschedulable and nothing moves any
more, the steps run in order (then the same wait), and what the scheduler's log says
about scores, attempts, requeues and preemptions is read.

The state is created before the scheduler starts: bound pods are created bound (they
only take room). Pending pods come once the scheduler runs, one at a time in the order
its queue takes them (priority, then namespace and name), each with the profile's
schedulerName: whether it keeps up or a backlog builds, it takes them in that order. A
scenario with ``backlog: true`` has them created before it starts instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from kplugin.core.progress import Observer
from kplugin.e2e import logs
from kplugin.e2e.create import (
    create_pending,
    create_state,
    node_manifest,
    object_body,
    object_path,
    pod_manifest,
    queue_order,
    resolve_kinds,
    status_request,
)
from kplugin.e2e.session import CreationTotals, PodPlacement, ProfileLabel, ReplayProfile, Session
from kplugin.e2e.watch import PodState, PodWatch, Refusals, probe, settle
from kplugin.kube import discovery, kinds
from kplugin.kube.apiclient import MERGE_PATCH
from kplugin.kube.cluster import Cluster
from kplugin.scenario.format import Scenario, Step, StepAction, pod_groups
from kplugin.scenario.state import pod_key

__all__ = [  # what a replay takes and gives (kplugin.e2e.session), kept importable from here
    "CreationTotals",
    "PodPlacement",
    "ReplayProfile",
    "Session",
    "detail_level",
    "replay",
]

# full detail (every plugin's score for every node) while the log stays small
SCORE_PAIRS = 250_000  # pods x nodes
QUEUE_PODS = 5_000


# --- steps ---------------------------------------------------------------------------------


def _run_step(step: Step, profile: ReplayProfile, target: Cluster, wanted: set[str], deleted: set[str],
              watch: PodWatch) -> None:  # fmt: skip
    """Make the change ``step`` says; ``wanted`` and ``deleted`` follow the pods it creates
    and deletes."""
    client = target.client
    node_path = f"/api/v1/nodes/{step.node}"
    match step.action:
        case StepAction.WAIT:
            until = time.monotonic() + step.seconds
            while time.monotonic() < until:
                target.check()
                watch.check()
                time.sleep(min(0.25, max(0.0, until - time.monotonic())))
        case StepAction.CREATE_NODE:
            if step.new_node is not None:
                client.create("/api/v1/nodes", node_manifest(step.new_node, target))
        case StepAction.DELETE_NODE:
            client.delete(node_path)
        case StepAction.LABEL_NODE | StepAction.UNLABEL_NODE:
            client.patch(node_path, {"metadata": {"labels": step.labels}}, MERGE_PATCH)
        case StepAction.CORDON_NODE:
            client.patch(node_path, {"spec": {"unschedulable": True}}, MERGE_PATCH)
        case StepAction.UNCORDON_NODE:
            client.patch(node_path, {"spec": {"unschedulable": None}}, MERGE_PATCH)
        case StepAction.TAINT_NODE:
            replaced = {(t["key"], t["effect"]) for t in step.taints}
            current = _taints(target, node_path)
            taints = [t for t in current if (t.get("key"), t.get("effect")) not in replaced] + list(step.taints)
            client.patch(node_path, {"spec": {"taints": taints or None}}, MERGE_PATCH)
        case StepAction.UNTAINT_NODE:
            taints = [t for t in _taints(target, node_path) if t.get("key") not in step.untaint]
            client.patch(node_path, {"spec": {"taints": taints or None}}, MERGE_PATCH)
        case StepAction.UPDATE_NODE:
            status: dict[str, Any] = {}
            if step.capacity is not None:
                status["capacity"] = step.capacity
                status["allocatable"] = step.capacity
            if step.allocatable is not None:
                status["allocatable"] = step.allocatable
            client.patch(f"{node_path}/status", {"status": status}, MERGE_PATCH)
        case StepAction.CREATE_PODS:
            for pod in step.pods:
                path = f"/api/v1/namespaces/{target.namespace(pod.namespace)}/pods"
                client.create(path, pod_manifest(pod, profile, target))
                wanted.add(pod.key)
                deleted.discard(pod.key)
        case StepAction.DELETE_PODS:
            for namespace, name in step.pod_keys:
                client.delete(f"/api/v1/namespaces/{target.namespace(namespace)}/pods/{name}")
                key = pod_key(namespace, name)
                wanted.discard(key)
                deleted.add(key)
        case StepAction.CREATE_OBJECT | StepAction.UPDATE_OBJECT if step.obj is not None:
            obj = step.obj
            if step.action is StepAction.CREATE_OBJECT:
                client.create(object_path(obj, target), object_body(obj, target))
                if obj.info.custom and not obj.info.namespaced:
                    target.custom_kinds.add(obj.info)
            else:  # a JSON merge patch: the fields given replace theirs, a null removes one
                client.patch(f"{object_path(obj, target)}/{obj.name}", object_body(obj, target), MERGE_PATCH)
            keeps = status_request(obj, target)
            if keeps is not None:
                client.patch(keeps.path, keeps.body, MERGE_PATCH)
            if obj.info is kinds.CRD:
                discovery.wait_established(client, [obj.name])
        case StepAction.DELETE_OBJECT if step.obj is not None:
            client.delete(f"{object_path(step.obj, target)}/{step.obj.name}")


def _taints(target: Cluster, node_path: str) -> list[dict[str, Any]]:
    """The node's taints as the API server has them now."""
    taints: list[dict[str, Any]] = target.client.get(node_path).get("spec", {}).get("taints") or []
    return taints


def target_key(target: Cluster) -> Callable[[str], str | None]:
    """The scenario's key of a pod the scheduler's log names NAMESPACE/NAME (None: not one
    of the run's)."""
    return lambda ref: target.scenario_key(*ref.split("/", 1)) if "/" in ref else None


def detail_level(scenario: Scenario) -> tuple[str, str]:
    """(--vmodule, what it shows): scores and queue moves while the log stays small.
    Scores are logged for the pods the scheduler places: a snapshot's pods bound already
    log none, however many they are."""
    pods = sum(1 for _ in scenario.all_pods())
    placed = sum(1 for pod in scenario.all_pods() if not pod.node_name)
    nodes = len(scenario.nodes) + sum(1 for s in scenario.steps if s.new_node)
    parts, shown = [logs.ATTEMPT_VMODULE], ["attempts"]
    if placed * nodes <= SCORE_PAIRS:
        parts, shown = [logs.SCORE_VMODULE], ["scores", "attempts"]
        if any(pod.spec.get("schedulingGroup") for pod in scenario.all_pods()):
            parts.append(logs.GROUP_VMODULE)
            shown.append("placements refused")
    if pods <= QUEUE_PODS:
        parts.append(logs.QUEUE_VMODULE)
        shown.append("requeues")
    else:
        parts.append(logs.HELD_VMODULE)
        shown.append("held pods")
    return ",".join(parts), ", ".join(shown)


def replay(
    scenario: Scenario,
    profile: ReplayProfile,
    target: Cluster,
    binary: Path,
    *,
    timeout: float,
    verbosity: int,
    feedback: Observer,
) -> Session:
    """Replay ``scenario`` on ``target`` (entered already) with ``profile``."""
    feedback.step(f"{profile.label}: creating the cluster state")
    scenario = resolve_kinds(scenario, discovery.Resolver(target.client))
    created = create_state(scenario, profile, target, feedback)
    watch = PodWatch(target.client, target.pods_path(), target.scenario_key)
    watch.start()
    vmodule, detail = detail_level(scenario)
    wanted = {p.key for p in scenario.pods}
    deleted: set[str] = set()
    try:
        pending = queue_order(scenario, [p for p in scenario.pods if not p.node_name])
        started, origin = time.monotonic(), time.time()
        if scenario.backlog:  # there when it starts, as a restarted scheduler finds them
            created = created.plus(create_pending(profile, target, feedback, pending))
        feedback.step(f"{profile.label}: scheduling with profile {profile.scheduler_name}")
        process = target.start_scheduler(binary, profile.document, verbosity, vmodule)
        refusals = Refusals(process.log, target_key(target))
        if not scenario.backlog:
            if pending:
                probe(target, profile, watch, pending[0].namespace, refusals)
            started, origin = time.monotonic(), time.time()
            created = created.plus(create_pending(profile, target, feedback, pending))
        watch.last_change = time.monotonic()
        # expectations are about the end: the last wait weighs them
        expect = scenario.expect if profile.label == ProfileLabel.PLUGIN else {}
        first = f"{profile.label}: pods decided"
        settle(watch, wanted, target, timeout, feedback, first, {} if scenario.steps else expect, refusals)
        for i, step in enumerate(scenario.steps):
            feedback.step(f"{profile.label}: steps[{i}] {step.describe()}")
            _run_step(step, profile, target, wanted, deleted, watch)
        if scenario.steps:
            watch.last_change = time.monotonic()
            what = f"{profile.label}: pods decided after the steps"
            settle(watch, wanted, target, timeout, feedback, what, expect, refusals)
    finally:
        watch.stop()
        log = target.stop_scheduler()
    states = watch.snapshot()
    facts = logs.LogFacts()
    if log is not None and log.is_file():
        with log.open(errors="replace") as lines:
            facts = logs.read_log(lines, target_key(target))
    placements = _placements(scenario, states, facts, deleted, timeout, origin)
    prebound = {p.key for p in scenario.all_pods() if p.node_name}
    bound = [s.bound_at for k, s in states.items() if s.bound_at is not None and k not in prebound]
    return Session(
        profile=profile.label,
        scheduler_name=profile.scheduler_name,
        placements=placements,
        created=created,
        scheduled=len(bound),
        scheduling_seconds=round(max(bound) - started, 3) if bound else 0.0,
        identity=target.identity,
        denied=facts.denied,
        unserved=facts.unserved,
        detail=detail,
        log=log,
        groups={
            key: replace(group, requeues=tuple(replace(r, at=_since(r.at, origin)) for r in group.requeues))
            for key, group in facts.groups.items()
        },
        narrowed=tuple(replace(n, at=_since(n.at, origin)) for n in facts.narrowed),
    )


def _since(at: float | None, origin: float) -> float | None:
    """A log time as seconds after ``origin``, to the millisecond (None stays None)."""
    return None if at is None else round(at - origin, 3)


def _placements(
    scenario: Scenario,
    states: dict[str, PodState],
    facts: logs.LogFacts,
    deleted: set[str],
    timeout: float,
    origin: float,
) -> list[PodPlacement]:
    """Each pod's outcome; the log's times become seconds after ``origin`` (when kplugin
    began creating the pods to place)."""
    seen: dict[str, PodPlacement] = {}
    # a pod group preempts as one (1.37 on): its log line names the group, and the domain
    # its placement took instead of a node; the victim's own node is where the watch saw it
    groups = pod_groups(scenario)
    for pod in scenario.all_pods():
        state = states.get(pod.key) or PodState()
        reason = state.reason if state.node is None else ""
        preemption = facts.preempted.get(pod.key) if state.deleted else None
        if state.node is None and not state.refused and not state.deleted and facts.not_ready:
            reason = "never attempted: the scheduler's informers could not list what they need (see the error below)"
        elif state.node is None and not state.refused and not state.deleted and pod.key in facts.held:
            plugin, status = facts.held[pod.key]
            reason = f"held out of the scheduling queue by PreEnqueue plugin {plugin}: {status}"
        elif state.node is None and not state.refused and not state.deleted:
            reason = f"no scheduling attempt reported within {timeout:.0f}s: held back by a PreEnqueue plugin?"
        elif preemption is not None:
            by = f"pod group {preemption.preemptor}" if preemption.preemptor in groups else preemption.preemptor
            reason = f"preempted by {by} on {state.node or preemption.node}"
        seen[pod.key] = PodPlacement(
            pod=pod.key,
            node=None if state.deleted else state.node,
            reason=reason,
            expected=scenario.expect.get(pod.key),
            scores=facts.scores.get(pod.key, ()),
            attempts=facts.attempts.get(pod.key, 0),
            attempts_at=tuple(_since(at, origin) for at in facts.attempt_times.get(pod.key, ())),
            requeues=tuple(replace(r, at=_since(r.at, origin)) for r in facts.requeues.get(pod.key, ())),
            bound_before=pod.node_name is not None,
            preempted_by=preemption.preemptor if preemption is not None else None,
            preempted_on=(state.node or preemption.node) if preemption is not None else None,
            deleted=pod.key in deleted,
            rejections=facts.rejections.get(pod.key, ()) if state.node is None else (),
            skipped=tuple(sorted(facts.skipped.get(pod.key, {}).items())) if state.node is None else (),
        )
    return list(seen.values())
