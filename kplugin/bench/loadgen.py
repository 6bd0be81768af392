"""kplugin bench's load generator, on kplugin.kube.apiclient's Client (a keep-alive
connection per thread): a client-side rate limit set on purpose (scheduler_perf's
clients use QPS 5000 / burst 5000), creation by a pool of workers that runs while the
scheduler is measured, with retries that are counted, and a watch that counts pods as
they are bound.

(kplugin.kube.bulk sends a known list of requests as fast as it can and returns when
they are done; this runs in the background, at a rate, and is read while it runs.)
"""

from __future__ import annotations

import contextlib
import http.client
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kplugin.core.errors import OperationError
from kplugin.kube.apiclient import ApiError, Client, query

RETRIES = 5


class RateLimiter:
    """A token bucket shared by every worker: ``qps`` tokens a second, at most ``burst``
    saved up (client-go's flowcontrol limiter, in spirit)."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = qps
        self.burst = burst
        self._tokens = float(burst)
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def take(self, stop: threading.Event) -> None:
        while not stop.is_set():
            with self._lock:
                now = time.monotonic()
                self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
                self._last = now
                if self._tokens >= 1:
                    self._tokens -= 1
                    return
                wait = (1 - self._tokens) / self.qps
            stop.wait(wait)


# --- parallel creation -------------------------------------------------------------------


@dataclass(frozen=True)
class CreationStats:
    """What the load generator did: objects, seconds, retries and why."""

    objects: int = 0
    created: int = 0
    seconds: float = 0.0  # the first request to the last answer
    retries: int = 0
    throttled: int = 0  # 429s: the API server refused the rate
    started: float = 0.0  # time.monotonic() of the first request

    @property
    def rate(self) -> float:
        return self.created / self.seconds if self.seconds > 0 else 0.0

    def __add__(self, other: CreationStats) -> CreationStats:
        return CreationStats(
            objects=self.objects + other.objects,
            created=self.created + other.created,
            seconds=self.seconds + other.seconds,
            retries=self.retries + other.retries,
            throttled=self.throttled + other.throttled,
            started=min(self.started, other.started) if self.started else other.started,
        )


Make = Callable[[int], tuple[str, dict[str, Any]]]


@dataclass
class PooledCreation:
    """Objects being created by a pool of workers; ``created`` grows as they land."""

    client: Client
    count: int
    make: Make
    limiter: RateLimiter
    workers: int
    error: BaseException | None = None
    created: int = 0
    retries: int = 0
    throttled: int = 0
    started: float = 0.0
    finished: float = 0.0
    _next: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _threads: list[threading.Thread] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    refused: Callable[[int, ApiError], BaseException] | None = None  # a 4xx on an object: what to raise

    def start(self) -> PooledCreation:
        self.started = time.monotonic()
        for _ in range(max(1, min(self.workers, self.count))):
            thread = threading.Thread(target=self._work, daemon=True, name="kplugin-bench-create")
            thread.start()
            self._threads.append(thread)
        return self

    @property
    def stats(self) -> CreationStats:
        with self._lock:
            return CreationStats(
                objects=self.count,
                created=self.created,
                seconds=max(0.0, self.finished - self.started),
                retries=self.retries,
                throttled=self.throttled,
                started=self.started,
            )

    @property
    def done(self) -> bool:
        return not any(t.is_alive() for t in self._threads)

    def _take(self) -> int | None:
        with self._lock:
            if self._next >= self.count or self._stop.is_set():
                return None
            self._next += 1
            return self._next - 1

    def _work(self) -> None:
        try:
            while (index := self._take()) is not None:
                path, body = self.make(index)
                self._create(index, path, body)
        except BaseException as err:  # handed to the thread that waits
            with self._lock:
                if self.error is None:
                    self.error = err
            self._stop.set()
        finally:
            self.client.close()  # this thread's connection

    def _create(self, index: int, path: str, body: dict[str, Any]) -> None:
        for attempt in range(RETRIES + 1):
            self.limiter.take(self._stop)
            if self._stop.is_set():
                return
            retry_after = 0.0
            try:
                status, payload, response = self.client.send("POST", path, body)
            except OperationError:  # the connection (the client retried a dropped one once already)
                if attempt == RETRIES:
                    raise
                status, payload, response = 0, b"", None
            if 200 <= status < 300 or (status == 409 and attempt > 0):  # 409 after a retry: the first one landed
                with self._lock:
                    self.created += 1
                    self.finished = time.monotonic()
                return
            if status == 429 or status >= 500 or status == 0:
                with self._lock:
                    self.retries += 1
                    self.throttled += status == 429
                with contextlib.suppress(ValueError):
                    retry_after = float((response.getheader("Retry-After") if response else None) or "0")
                self._stop.wait(max(retry_after, 0.05 * 2**attempt * (1 + random.random())))
                continue
            error = self.client.error("POST", path, status, payload)
            raise self.refused(index, error) if self.refused else error
        raise OperationError(f"{self.client.endpoint.name}: POST {path}: still failing after {RETRIES} retries")

    def wait(self, tick: Callable[[], None] = lambda: None, period: float = 0.25) -> CreationStats:
        """Block until every object is created (``tick`` runs every ``period``);
        re-raises a worker's error; Ctrl-C stops the workers."""
        try:
            while not self.done:
                tick()
                for thread in self._threads:
                    thread.join(timeout=period / max(1, len(self._threads)))
            self.check()
        finally:
            self.stop()
        return self.stats

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)


# --- counting bound pods -------------------------------------------------------------------


@dataclass
class BindWatch:
    """A watch of the pods matching ``selector`` that have a node: each pod counts once,
    when it is bound (as scheduler_perf 1.32+ counts nodeName going from "" to set),
    by the value of its ``key`` label, with the time it was seen."""

    client: Client
    selector: str
    key: str
    bound: dict[str, int] = field(default_factory=dict)
    times: dict[str, list[float]] = field(default_factory=dict)
    error: BaseException | None = None
    _seen: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _ready: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _conn: http.client.HTTPConnection | None = None

    @property
    def _path(self) -> str:
        return query("/api/v1/pods", label_selector=self.selector, field_selector="spec.nodeName!=")

    def start(self) -> BindWatch:
        version = self.client.list_all(self._path, lambda item: self._bound(item["metadata"], time.monotonic()))
        self._thread = threading.Thread(target=self._run, args=(version,), daemon=True, name="kplugin-bench-watch")
        self._thread.start()
        if not self._ready.wait(30):
            self.check()
            raise OperationError("API server: the watch of the benchmark's pods did not start within 30s")
        self.check()
        return self

    def _bound(self, metadata: Mapping[str, Any], when: float) -> None:
        uid = str(metadata.get("uid"))
        with self._lock:
            if uid in self._seen:
                return
            self._seen.add(uid)
            group = str((metadata.get("labels") or {}).get(self.key, ""))
            self.bound[group] = self.bound.get(group, 0) + 1
            self.times.setdefault(group, []).append(when)

    def count(self, group: str) -> int:
        with self._lock:
            return self.bound.get(group, 0)

    def bind_times(self, group: str) -> list[float]:
        with self._lock:
            return list(self.times.get(group, []))

    def _opened(self, conn: http.client.HTTPConnection) -> None:
        self._conn = conn

    def _event(self, kind: str, obj: dict[str, Any]) -> None:
        if kind == "ADDED":
            self._bound(obj.get("metadata") or {}, time.monotonic())

    def _run(self, version: str) -> None:
        try:
            self.client.follow(self._path, version, self._event, self._stop.is_set, 3600, self._opened, self._ready.set)
        except BaseException as err:  # handed to the thread that waits
            if not self._stop.is_set():
                self.error = err
                self._ready.set()
        finally:
            self.client.close()  # this thread's connection (a list's after a 410)

    def check(self) -> None:
        if self.error is not None:
            raise (
                self.error
                if isinstance(self.error, OperationError)
                else OperationError(f"API server: watching pods: {self.error}")
            )

    def stop(self) -> None:
        self._stop.set()
        conn = self._conn
        if conn is not None and conn.sock is not None:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(2)  # its reading thread wakes up; the watch closes it
        if self._thread is not None:
            self._thread.join(timeout=5)
