"""One replay of a scenario with one scheduler profile: the state is created (in
parallel, through kplugin.kube.bulk), the scheduler started, every pod's fate followed
through a watch until each is bound or reported unschedulable and nothing moves any
more, the steps run in order (then the same wait), and what the scheduler's log says
about scores, attempts, requeues and preemptions is read.

The state is created before the scheduler starts: bound pods are created bound (they
only take room). Pending pods come once the scheduler runs, one at a time in the order
its queue takes them (priority, then namespace and name), each with the profile's
schedulerName: whether it keeps up or a backlog builds, it takes them in that order.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kplugin.core.errors import OperationError
from kplugin.e2e import entries, logs
from kplugin.e2e.logs import NodeScore, Requeue
from kplugin.e2e.scenario import DELETED, PAUSE_IMAGE, PENDING, PREEMPTED, Node, Pod, Scenario, Step
from kplugin.kube import bulk, kinds
from kplugin.kube.apiclient import Client
from kplugin.kube.cluster import KWOK_ANNOTATIONS, Cluster

# full detail (every plugin's score for every node) while the log stays small
SCORE_PAIRS = 250_000  # pods x nodes
QUEUE_PODS = 5_000
QUIET = 1.0  # seconds without a change after every pod is decided
QUIET_NOMINATED = 5.0  # ... while a preemptor waits for its victims to go
PATIENCE = 10.0  # ... while a pod is not where the scenario expects it (a requeue may be on its way)


class Feedback(Protocol):
    def step(self, text: str) -> None: ...

    def count(self, what: str, done: int, total: int) -> None: ...


class Silent:
    def step(self, text: str) -> None:
        pass

    def count(self, what: str, done: int, total: int) -> None:
        pass


@dataclass(frozen=True)
class Profile:
    label: str  # "plugin" (the project's) or "default"
    scheduler_name: str
    document: dict[str, Any]  # its KubeSchedulerConfiguration, without clientConnection


@dataclass(frozen=True)
class Placement:
    pod: str
    node: str | None  # None: not bound (pending, preempted or deleted)
    reason: str  # why it is not bound (the scheduler's own message), or ""
    expected: tuple[str, ...] | None = None
    scores: tuple[NodeScore, ...] = ()  # empty where one node was feasible (no scoring), or not logged
    attempts: int = 0
    requeues: tuple[Requeue, ...] = ()
    bound_before: bool = False  # created bound: the scheduler never placed it
    preempted_by: str | None = None
    preempted_on: str | None = None  # the node it was on
    deleted: bool = False  # by a step

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
class Creation:
    objects: int = 0
    seconds: float = 0.0
    retries: int = 0
    throttled: int = 0
    workers: int = 0

    @property
    def per_second(self) -> float:
        return self.objects / self.seconds if self.seconds > 0 else 0.0

    def plus(self, result: bulk.Result) -> Creation:
        return Creation(
            self.objects + result.done,
            self.seconds + result.seconds,
            self.retries + result.retries,
            self.throttled + result.throttled,
            max(self.workers, result.workers),
        )


@dataclass
class Session:
    profile: str
    scheduler_name: str
    placements: list[Placement]
    created: Creation
    scheduled: int  # pods this profile bound
    scheduling_seconds: float  # from the scheduler's start to its last bind
    identity: str
    denied: list[str] = field(default_factory=list)
    detail: str = ""  # what the log was asked for
    log: Path | None = None

    @property
    def pods_per_second(self) -> float:
        return self.scheduled / self.scheduling_seconds if self.scheduling_seconds > 0 else 0.0


# --- following the pods ------------------------------------------------------------------


@dataclass
class PodState:
    uid: str = ""
    node: str | None = None
    reason: str = ""
    refused: bool = False  # PodScheduled=False seen
    nominated: str = ""
    deleted: bool = False
    bound_at: float | None = None


class PodWatch:
    """Every pod's state, kept current by a watch in a thread of its own."""

    def __init__(self, client: Client, path: str, key: Callable[[str, str], str | None]) -> None:
        self.client = client
        self.path = path
        self.key = key
        self.states: dict[str, PodState] = {}
        self.lock = threading.Lock()
        self.last_change = time.monotonic()
        self.stopped = False
        self.failure: BaseException | None = None
        self._conn: http.client.HTTPConnection | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        # every pod, page by page (a cluster's worth in one answer would be gigabytes of
        # Python objects), then a watch from the list's resourceVersion
        version = self.client.list_all(self.path, lambda item: self._update("ADDED", item))
        self._thread = threading.Thread(target=self._follow, args=(version,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.stopped = True
        conn = self._conn
        if conn is not None and conn.sock is not None:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(2)

    def _opened(self, conn: http.client.HTTPConnection) -> None:
        self._conn = conn

    def _follow(self, version: str) -> None:
        try:
            self.client.follow(self.path, version, self._update, lambda: self.stopped, 600, self._opened)
        except BaseException as err:  # the API server went away: the run reports it
            if not self.stopped:
                self.failure = err

    def _update(self, kind: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = self.key(str(meta.get("namespace")), str(meta.get("name")))
        if key is None:
            return
        with self.lock:
            state = self.states.get(key)
            uid = str(meta.get("uid") or "")
            if state is None or (state.uid and uid and state.uid != uid and kind == "ADDED"):
                state = self.states[key] = PodState(uid=uid)
            before = (state.node, state.refused, state.reason, state.nominated, state.deleted)
            if kind == "DELETED":
                state.deleted = True
            else:
                spec, status = obj.get("spec") or {}, obj.get("status") or {}
                node = spec.get("nodeName") or None
                if node and state.node is None:
                    state.bound_at = time.monotonic()
                state.node = node
                state.nominated = str(status.get("nominatedNodeName") or "")
                for condition in status.get("conditions") or []:
                    if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
                        state.refused = True
                        state.reason = str(condition.get("message") or condition.get("reason") or "")
            if (state.node, state.refused, state.reason, state.nominated, state.deleted) != before:
                self.last_change = time.monotonic()

    def snapshot(self) -> dict[str, PodState]:
        with self.lock:
            return {k: PodState(**vars(v)) for k, v in self.states.items()}

    def check(self) -> None:
        if self.failure is not None:
            raise OperationError(f"following the pods failed: {self.failure}")


def _decided(state: PodState | None) -> bool:
    if state is None:
        return False
    return state.deleted or state.node is not None or (state.refused and not state.nominated)


# --- creating ------------------------------------------------------------------------------


def _object_path(target: Cluster, info: kinds.KindInfo, namespace: str | None) -> str:
    return info.path(target.namespace(namespace) if namespace else None)


def _labelled(meta: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    return {**meta, "labels": {**(meta.get("labels") or {}), **labels}} if labels else meta


def _rewrite_namespaces(spec: dict[str, Any], target: Cluster) -> dict[str, Any]:
    """Pod (anti-)affinity terms name namespaces: on an existing cluster, kplugin's own."""
    affinity = spec.get("affinity")
    if not affinity or target.namespace("default") == "default":
        return spec
    affinity = json.loads(json.dumps(affinity))
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind) or {}
        terms = list(section.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [
            p.get("podAffinityTerm") or {} for p in section.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        ]
        for term in terms:
            if term.get("namespaces"):
                term["namespaces"] = [target.namespace(n) for n in term["namespaces"]]
    return {**spec, "affinity": affinity}


def pod_manifest(pod: Pod, profile: Profile, target: Cluster, bound: bool = True) -> dict[str, Any]:
    manifest = pod.manifest(
        profile.scheduler_name, namespace=target.namespace(pod.namespace), labels=target.labels(), bound=bound
    )
    manifest["spec"] = _rewrite_namespaces(manifest["spec"], target)
    return manifest


def node_manifest(node: Node, target: Cluster) -> dict[str, Any]:
    """The node as the scenario has it; on an existing cluster (kplugin's labels) with the
    annotations kwok manages, so that kwok keeps it Ready there."""
    labels = target.labels()
    manifest = node.manifest(labels)
    if labels:
        manifest["metadata"]["annotations"] = {**manifest["metadata"].get("annotations", {}), **KWOK_ANNOTATIONS}
    return manifest


def _create_state(scenario: Scenario, profile: Profile, target: Cluster, feedback: Feedback) -> Creation:
    """Namespaces, classes and RuntimeClasses first (pods' admission reads them), then
    the other objects and the nodes, then the pods, then the statuses objects keep."""
    client, labels = target.client, target.labels()
    created = Creation()
    exist_ok = frozenset({409}) if labels else frozenset()  # a cluster's own StorageClass, ...

    def phase(what: str, requests: list[bulk.Request] | Iterable[bulk.Request], total: int, ok: frozenset[int]) -> None:
        nonlocal created
        if total:
            created = created.plus(
                bulk.run(client, requests, total=total, what=what, progress=feedback.count, tolerate=ok)
            )

    existing = target.existing_namespaces()
    declared = {ns.name: ns for ns in scenario.namespaces}
    first: list[bulk.Request] = []
    for name in scenario.namespace_names():
        ns_labels = {**(declared[name].labels if name in declared else {}), **labels}
        real = target.namespace(name)
        if name in existing:
            if ns_labels:
                first.append(
                    bulk.Request("PATCH", f"/api/v1/namespaces/{real}", {"metadata": {"labels": ns_labels}},
                                 f"namespace {name}", "application/merge-patch+json")
                )  # fmt: skip
            continue
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": real, "labels": ns_labels}}
        first.append(bulk.Request("POST", "/api/v1/namespaces", namespace, f"namespace {name}"))
    for pc in scenario.priority_classes:
        first.append(bulk.Request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", pc.manifest(labels),
                                  f"priorityclass {pc.name}"))  # fmt: skip
    later: list[bulk.Request] = []
    for obj in scenario.objects:
        body: dict[str, Any] = dict(obj.body)
        meta = dict(body["metadata"])
        if obj.namespace:
            meta["namespace"] = target.namespace(obj.namespace)
        body["metadata"] = _labelled(meta, labels)
        ref = (body.get("spec") or {}).get("claimRef") if obj.info.kind == "PersistentVolume" else None
        if isinstance(ref, dict) and ref.get("namespace"):
            body["spec"] = {**body["spec"], "claimRef": {**ref, "namespace": target.namespace(ref["namespace"])}}
        shown = f"{obj.info.kind.lower()} {obj.namespace + '/' if obj.namespace else ''}{obj.name}"
        request = bulk.Request("POST", _object_path(target, obj.info, obj.namespace), body, shown)
        (first if obj.info.kind == "RuntimeClass" else later).append(request)
    phase("namespaces and classes", first, len(first), exist_ok)
    phase("objects", later, len(later), exist_ok)
    phase("nodes", (bulk.Request("POST", "/api/v1/nodes", node_manifest(n, target), f"node {n.name}")
                    for n in scenario.nodes), len(scenario.nodes), frozenset())  # fmt: skip

    def pod_request(pod: Pod) -> bulk.Request:
        path = f"/api/v1/namespaces/{target.namespace(pod.namespace)}/pods"
        return bulk.Request("POST", path, pod_manifest(pod, profile, target), f"pod {pod.key}")

    bound = [p for p in scenario.pods if p.node_name]
    phase("bound pods", (pod_request(p) for p in bound), len(bound), frozenset())
    statuses = [
        bulk.Request(
            "PATCH",
            f"{_object_path(target, o.info, o.namespace)}/{o.name}/status",
            {"status": o.status},
            f"{o.info.kind.lower()} {o.name} status",
            "application/merge-patch+json",
        )
        for o in scenario.objects
        if o.status
    ]
    phase("statuses", statuses, len(statuses), frozenset())
    return created


def queue_order(scenario: Scenario, pods: Iterable[Pod]) -> list[Pod]:
    """Pods in the order the scheduler's queue takes them: higher priority first (the
    PriorityClass's value; the global default's without one), then namespace and name."""
    values = {c.name: c.value for c in scenario.priority_classes}
    values.update(entries.BUILTIN_PRIORITY_CLASS_VALUES)
    default = next((c.value for c in scenario.priority_classes if c.global_default), 0)

    def key(pod: Pod) -> tuple[int, str, str]:
        value = values.get(pod.priority_class, default) if pod.priority_class else default
        return (-value, pod.namespace, pod.name)

    return sorted(pods, key=key)


def _create_pending(
    scenario: Scenario, profile: Profile, target: Cluster, feedback: Feedback, pods: list[Pod]
) -> bulk.Result:
    """Pending pods one at a time in queue order, to a scheduler that is running: each
    arrives as an event of its own, in that order, whether the scheduler keeps up or a
    backlog builds (a scheduler's first list of pods comes in no fixed order), so a
    replay comes out the same every time."""
    requests = (
        bulk.Request(
            "POST",
            f"/api/v1/namespaces/{target.namespace(p.namespace)}/pods",
            pod_manifest(p, profile, target),
            f"pod {p.key}",
        )
        for p in pods
    )
    what = f"{profile.label}: pending pods"
    return bulk.run(target.client, requests, total=len(pods), what=what, progress=feedback.count, workers=1)


PROBE_WAIT = 120.0  # a big cluster takes a while to list; a PreEnqueue plugin may hold the probe


def _probe(target: Cluster, profile: Profile, watch: PodWatch, namespace: str, refusals: Refusals) -> None:
    """Wait until the scheduler has started and synced its caches: a pod nothing can
    take gets its verdict (or PROBE_WAIT seconds pass, or RBAC refused the scheduler
    something: its informers may never sync)."""
    name = f"kplugin-probe-{secrets.token_hex(3)}"
    real = target.namespace(namespace)
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": real, "labels": target.labels()},
        "spec": {
            "schedulerName": profile.scheduler_name,
            "terminationGracePeriodSeconds": 0,
            "nodeSelector": {"kplugin.dev/probe": "never"},
            "containers": [{"name": "probe", "image": PAUSE_IMAGE}],
        },
    }
    target.client.create(f"/api/v1/namespaces/{real}/pods", body)
    key = target.scenario_key(real, name)
    deadline = time.monotonic() + PROBE_WAIT
    while time.monotonic() < deadline:
        target.check()
        watch.check()
        state = watch.snapshot().get(key or "")
        if (state is not None and state.refused) or refusals.any():
            break
        time.sleep(0.1)
    target.client.delete(f"/api/v1/namespaces/{real}/pods/{name}")


# --- steps ---------------------------------------------------------------------------------


def _run_step(step: Step, scenario: Scenario, profile: Profile, target: Cluster, wanted: set[str],
              deleted: set[str], watch: PodWatch) -> None:  # fmt: skip
    client = target.client
    node_path = f"/api/v1/nodes/{step.node}"
    merge = "application/merge-patch+json"
    if step.action == "wait":
        until = time.monotonic() + step.seconds
        while time.monotonic() < until:
            target.check()
            watch.check()
            time.sleep(min(0.25, max(0.0, until - time.monotonic())))
    elif step.action == "createNode" and step.new_node is not None:
        client.create("/api/v1/nodes", node_manifest(step.new_node, target))
    elif step.action == "deleteNode":
        client.delete(node_path)
    elif step.action in ("labelNode", "unlabelNode"):
        client.patch(node_path, {"metadata": {"labels": step.labels}}, merge)
    elif step.action == "cordonNode":
        client.patch(node_path, {"spec": {"unschedulable": True}}, merge)
    elif step.action == "uncordonNode":
        client.patch(node_path, {"spec": {"unschedulable": None}}, merge)
    elif step.action in ("taintNode", "untaintNode"):
        current = client.get(node_path).get("spec", {}).get("taints") or []
        if step.action == "taintNode":
            replaced = {(t["key"], t["effect"]) for t in step.taints}
            taints = [t for t in current if (t.get("key"), t.get("effect")) not in replaced] + list(step.taints)
        else:
            taints = [t for t in current if t.get("key") not in step.untaint]
        client.patch(node_path, {"spec": {"taints": taints or None}}, merge)
    elif step.action == "updateNode":
        status: dict[str, Any] = {}
        if step.capacity is not None:
            status["capacity"] = step.capacity
            status["allocatable"] = step.capacity
        if step.allocatable is not None:
            status["allocatable"] = step.allocatable
        client.patch(f"{node_path}/status", {"status": status}, merge)
    elif step.action == "createPods":
        for pod in step.pods:
            path = f"/api/v1/namespaces/{target.namespace(pod.namespace)}/pods"
            client.create(path, pod_manifest(pod, profile, target))
            wanted.add(pod.key)
            deleted.discard(pod.key)
    elif step.action == "deletePods":
        for namespace, name in step.pod_keys:
            client.delete(f"/api/v1/namespaces/{target.namespace(namespace)}/pods/{name}")
            key = name if namespace == "default" else f"{namespace}/{name}"
            wanted.discard(key)
            deleted.add(key)


def _met(state: PodState | None, expected: tuple[str, ...] | None) -> bool:
    if expected is None or state is None:
        return True
    if state.deleted:
        return PREEMPTED in expected or DELETED in expected
    return (state.node or PENDING) in expected


class Refusals:
    """Reads the scheduler's log as it grows, for what the API server refused its
    informers (list, watch): a scheduler whose informers never sync never schedules, so
    waiting is pointless. Other refusals (creating events, say) do not stop a run; e2e
    reports every refusal at its end."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.offset = 0
        self.checked = 0.0
        self.found = False

    def any(self) -> bool:
        now = time.monotonic()
        if self.found or now - self.checked < 2.0:
            return self.found
        self.checked = now
        try:
            with self.log.open("rb") as handle:
                handle.seek(self.offset)
                chunk = handle.read(16 << 20)
        except OSError:
            return False
        end = chunk.rfind(b"\n") + 1  # whole lines only
        self.offset += end
        self.found = logs.read_log(chunk[:end].decode(errors="replace").splitlines()).informers_denied
        return self.found


def _settle(
    watch: PodWatch,
    wanted: set[str],
    target: Cluster,
    timeout: float,
    feedback: Feedback,
    what: str,
    expect: dict[str, tuple[str, ...]],
    refusals: Refusals | None = None,
) -> None:
    """Until every wanted pod is decided and nothing changed for a moment (longer while
    a preemptor waits, or a pod is not where the scenario expects it yet); or nothing
    changed for ``timeout`` seconds."""
    while True:
        target.check()
        watch.check()
        states = watch.snapshot()
        decided = sum(_decided(states.get(key)) for key in wanted)
        feedback.count(what, decided, len(wanted))
        quiet = time.monotonic() - watch.last_change
        waiting = any(s.nominated and s.node is None and not s.deleted for s in states.values())
        pending = not all(_met(states.get(key), expect.get(key)) for key in wanted if key in expect)
        patience = PATIENCE if pending else QUIET_NOMINATED if waiting else QUIET
        if decided == len(wanted) and quiet >= patience:
            return
        if quiet >= timeout or (refusals is not None and refusals.any()):
            return
        time.sleep(0.25)


def detail_level(scenario: Scenario) -> tuple[str, str]:
    """(--vmodule, what it shows): scores and queue moves while the log stays small."""
    pods = sum(1 for _ in scenario.all_pods())
    nodes = len(scenario.nodes) + sum(1 for s in scenario.steps if s.new_node)
    parts, shown = [logs.ATTEMPT_VMODULE], ["attempts"]
    if pods * nodes <= SCORE_PAIRS:
        parts, shown = [logs.SCORE_VMODULE], ["scores", "attempts"]
    if pods <= QUEUE_PODS:
        parts.append(logs.QUEUE_VMODULE)
        shown.append("requeues")
    return ",".join(parts), ", ".join(shown)


def replay(
    scenario: Scenario,
    profile: Profile,
    target: Cluster,
    binary: Path,
    *,
    timeout: float,
    verbosity: int,
    feedback: Feedback,
) -> Session:
    """Replay ``scenario`` on ``target`` (entered already) with ``profile``."""
    feedback.step(f"{profile.label}: creating the cluster state")
    created = _create_state(scenario, profile, target, feedback)
    watch = PodWatch(target.client, target.pods_path(), target.scenario_key)
    watch.start()
    vmodule, detail = detail_level(scenario)
    wanted = {p.key for p in scenario.pods}
    deleted: set[str] = set()
    try:
        feedback.step(f"{profile.label}: scheduling with profile {profile.scheduler_name}")
        process = target.start_scheduler(binary, profile.document, verbosity, vmodule)
        refusals = Refusals(process.log)
        pending = queue_order(scenario, [p for p in scenario.pods if not p.node_name])
        if pending:
            _probe(target, profile, watch, pending[0].namespace, refusals)
        started = time.monotonic()
        created = created.plus(_create_pending(scenario, profile, target, feedback, pending))
        watch.last_change = time.monotonic()
        # expectations are about the end: the last wait weighs them
        expect = scenario.expect if profile.label == "plugin" else {}
        first = f"{profile.label}: pods decided"
        _settle(watch, wanted, target, timeout, feedback, first, {} if scenario.steps else expect, refusals)
        for i, step in enumerate(scenario.steps):
            feedback.step(f"{profile.label}: steps[{i}] {step.describe()}")
            _run_step(step, scenario, profile, target, wanted, deleted, watch)
        if scenario.steps:
            watch.last_change = time.monotonic()
            what = f"{profile.label}: pods decided after the steps"
            _settle(watch, wanted, target, timeout, feedback, what, expect, refusals)
    finally:
        watch.stop()
        log = target.stop_scheduler()
    states = watch.snapshot()
    facts = logs.LogFacts()
    if log is not None and log.is_file():
        with log.open(errors="replace") as lines:
            facts = logs.read_log(lines, lambda ref: target.scenario_key(*ref.split("/", 1)) if "/" in ref else None)
    placements = _placements(scenario, states, facts, deleted, timeout)
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
        detail=detail,
        log=log,
    )


def _placements(
    scenario: Scenario, states: dict[str, PodState], facts: logs.LogFacts, deleted: set[str], timeout: float
) -> list[Placement]:
    seen: dict[str, Placement] = {}
    for pod in scenario.all_pods():
        state = states.get(pod.key) or PodState()
        reason = state.reason if state.node is None else ""
        preemption = facts.preempted.get(pod.key) if state.deleted else None
        if state.node is None and not state.refused and not state.deleted:
            reason = f"no scheduling attempt reported within {timeout:.0f}s: held back by a PreEnqueue plugin?"
        elif preemption is not None:
            reason = f"preempted by {preemption.preemptor} on {preemption.node}"
        seen[pod.key] = Placement(
            pod=pod.key,
            node=None if state.deleted else state.node,
            reason=reason,
            expected=scenario.expect.get(pod.key),
            scores=facts.scores.get(pod.key, ()),
            attempts=facts.attempts.get(pod.key, 0),
            requeues=tuple(facts.requeues.get(pod.key, ())),
            bound_before=pod.node_name is not None,
            preempted_by=preemption.preemptor if preemption is not None else None,
            preempted_on=preemption.node if preemption is not None else None,
            deleted=pod.key in deleted,
        )
    return list(seen.values())
