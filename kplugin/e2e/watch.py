"""Following a replay's pods: every pod's state from a watch (PodWatch), the scheduler's
log read as it grows for refused informers (Refusals), waiting until the scheduler is up
(probe) and until the pods are decided and nothing moves any more (settle)."""

from __future__ import annotations

import contextlib
import http.client
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kplugin.core.errors import OperationError
from kplugin.core.progress import Observer
from kplugin.e2e import logs
from kplugin.e2e.session import ReplayProfile
from kplugin.kube.apiclient import Client
from kplugin.kube.cluster import Cluster
from kplugin.scenario.state import DELETED, PAUSE_IMAGE, PENDING, PREEMPTED

QUIET = 1.0  # seconds without a change after every pod is decided
QUIET_NOMINATED = 5.0  # ... while a preemptor waits for its victims to go
# a pending pod that keeps a nominatedNodeName is decided once nothing changed for this
# long: its victims are gone (they go at once: no grace period, no kubelet), and the
# scheduler tries it again within its longest backoff (podMaxBackoffSeconds, 10 s by
# default, which e2e leaves alone), binding it or leaving the nomination of a cycle whose
# outcome is final (a gang's pod nominated when another placement took the group, say)
NOMINATION_SETTLED = 15.0
PATIENCE = 10.0  # ... while a pod is not where the scenario expects it (a requeue may be on its way)
PROBE_WAIT = 120.0  # a big cluster takes a while to list; a PreEnqueue plugin may hold the probe


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


def is_decided(state: PodState | None, quiet: float = 0.0) -> bool:
    """Bound, deleted, or refused: a refused pod nominated to a node (its victims
    leaving) only once nothing changed for NOMINATION_SETTLED seconds (``quiet``)."""
    if state is None:
        return False
    if state.deleted or state.node is not None:
        return True
    return state.refused and (not state.nominated or quiet >= NOMINATION_SETTLED)


def meets(state: PodState | None, expected: tuple[str, ...] | None) -> bool:
    if expected is None or state is None:
        return True
    if state.deleted:
        return PREEMPTED in expected or DELETED in expected
    return (state.node or PENDING) in expected


class Refusals:
    """Reads the scheduler's log as it grows, for what the API server refused its
    informers (list, watch) or does not serve them (a custom kind without its CRD): a
    scheduler whose informers never sync never schedules, so waiting is pointless. Other
    refusals (creating events, say) do not stop a run; e2e reports every refusal at its
    end. On the way it keeps the pods a PreEnqueue plugin holds out of the queue (by the
    log's NAMESPACE/NAME, mapped with ``key``): they get no attempt to wait for."""

    def __init__(self, log: Path, key: Callable[[str], str | None] = logs.pod_key) -> None:
        self.log = log
        self.key = key
        self.offset = 0
        self.checked = 0.0
        self.found = False
        self.held: set[str] = set()

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
        facts = logs.read_log(chunk[:end].decode(errors="replace").splitlines(), self.key)
        self.held = (self.held - set(facts.attempts)) | set(facts.held)
        self.found = facts.not_ready
        return self.found


def settle(
    watch: PodWatch,
    wanted: set[str],
    target: Cluster,
    timeout: float,
    feedback: Observer,
    what: str,
    expect: dict[str, tuple[str, ...]],
    refusals: Refusals | None = None,
) -> None:
    """Until every wanted pod is decided and nothing changed for a moment (longer while
    a preemptor waits, or a pod is not where the scenario expects it yet); or nothing
    changed for ``timeout`` seconds."""
    said = False
    while True:
        target.check()
        watch.check()
        states = watch.snapshot()
        held = refusals.held if refusals is not None else set()
        quiet = time.monotonic() - watch.last_change
        decided = sum(is_decided(states.get(key), quiet) or key in held for key in wanted)
        feedback.count(what, decided, len(wanted))
        nominated = sorted(k for k in wanted if _nominated(states.get(k)) and not is_decided(states.get(k), quiet))
        if nominated and decided + len(nominated) == len(wanted) and not said:
            feedback.step(f"{what}: {_waiting_on(nominated, states)}")  # the only ones left: say why it waits
            said = True
        waiting = any(_nominated(s) for s in states.values())
        pending = not all(meets(states.get(key), expect.get(key)) for key in wanted if key in expect)
        patience = PATIENCE if pending else QUIET_NOMINATED if waiting else QUIET
        if decided == len(wanted) and quiet >= patience:
            return
        if quiet >= timeout or (refusals is not None and refusals.any()):
            return
        time.sleep(0.25)


def _nominated(state: PodState | None) -> bool:
    """A pending pod the scheduler nominated to a node (preemption: its victims leave)."""
    return state is not None and bool(state.nominated) and state.node is None and not state.deleted


def _waiting_on(keys: list[str], states: dict[str, PodState]) -> str:
    """Why a settle waits longer: the nominated pods, and where (at most three named)."""
    named = ", ".join(f"{k} on {states[k].nominated}" for k in keys[:3]) + (" …" if len(keys) > 3 else "")
    return f"waiting up to {NOMINATION_SETTLED:.0f}s of quiet for nominated pods ({named}): their victims leave"


def probe(target: Cluster, profile: ReplayProfile, watch: PodWatch, namespace: str, refusals: Refusals) -> None:
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
