"""The load generator's side of the API server: keep-alive HTTPS connections (one per
thread), a client-side rate limit set on purpose (scheduler_perf's clients use
QPS 5000 / burst 5000), parallel creation with retries that are counted, and a watch
that counts pods as they are bound.

(kplugin.e2e.controlplane.Api opens a connection per request, which is right for a
handful of objects and about ten times too slow for thousands.)
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kplugin.core.errors import OperationError

RETRIES = 5


class ApiError(OperationError):
    """The API server answered with an error status."""

    def __init__(self, method: str, path: str, status: int, message: str) -> None:
        super().__init__(f"API server: {method} {path.split('?')[0]}: {status} {message}")
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Endpoint:
    """Where the API server is and who we are there (from a kubeconfig, or the local
    control plane's admin token)."""

    server: str  # https://host:port
    token: str | None = None
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    insecure: bool = False  # the kubeconfig's insecure-skip-tls-verify

    def ssl_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)
        if self.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.cert_file is not None:
            context.load_cert_chain(str(self.cert_file), str(self.key_file) if self.key_file else None)
        return context

    @property
    def host_port(self) -> tuple[str, int, str]:
        parsed = urllib.parse.urlsplit(self.server)
        default = 443 if parsed.scheme == "https" else 80
        return parsed.hostname or "127.0.0.1", parsed.port or default, parsed.path.rstrip("/")


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


class Client:
    """JSON over HTTPS with keep-alive: one connection per thread."""

    def __init__(self, endpoint: Endpoint, timeout: float = 60.0) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self._context = endpoint.ssl_context()
        self._local = threading.local()
        self._all: list[http.client.HTTPSConnection] = []
        self._lock = threading.Lock()

    def _connection(self, timeout: float | None = None) -> http.client.HTTPSConnection:
        conn: http.client.HTTPSConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            host, port, _ = self.endpoint.host_port
            conn = http.client.HTTPSConnection(host, port, context=self._context, timeout=timeout or self.timeout)
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def headers(self, body: bytes | None) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "kplugin-bench"}
        if self.endpoint.token:
            headers["Authorization"] = f"Bearer {self.endpoint.token}"
        if body is not None:
            headers["Content-Type"] = "application/json"
        return headers

    def raw(self, method: str, path: str, body: Any = None) -> tuple[int, bytes, Mapping[str, str]]:
        """One request on this thread's connection (re-opened once if the server closed
        it): status, body and headers. Network errors are OSErrors."""
        data = json.dumps(body, separators=(",", ":")).encode() if body is not None else None
        _, _, prefix = self.endpoint.host_port
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, prefix + path, body=data, headers=self.headers(data))
                response = conn.getresponse()
                payload = response.read()
                return response.status, payload, dict(response.getheaders())
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, http.client.BadStatusLine):
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """The decoded answer; an error status is an ApiError with the server's message."""
        try:
            status, payload, _ = self.raw(method, path, body)
        except OSError as err:
            raise OperationError(f"API server {self.endpoint.server}: {method} {path.split('?')[0]}: {err}") from None
        if status >= 400:
            raise ApiError(method, path, status, _message(payload))
        return json.loads(payload) if payload.strip().startswith((b"{", b"[")) else payload.decode(errors="replace")

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()


def _message(payload: bytes) -> str:
    text = payload.decode(errors="replace").strip()
    with contextlib.suppress(ValueError, AttributeError):
        return str(json.loads(text).get("message", text))
    return text[:300]


def query(path: str, **params: str | int | None) -> str:
    """``path`` with query parameters given in snake_case (label_selector=...)."""

    def camel(name: str) -> str:
        first, *rest = name.split("_")
        return first + "".join(part.capitalize() for part in rest)

    shown = {camel(k): v for k, v in params.items() if v is not None}
    if not shown:
        return path
    return f"{path}{'&' if '?' in path else '?'}{urllib.parse.urlencode(shown)}"


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
class Creation:
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

    def start(self) -> Creation:
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

    def _create(self, index: int, path: str, body: dict[str, Any]) -> None:
        for attempt in range(RETRIES + 1):
            self.limiter.take(self._stop)
            if self._stop.is_set():
                return
            retry_after = 0.0
            try:
                status, payload, headers = self.client.raw("POST", path, body)
            except OSError as err:
                if attempt == RETRIES:
                    raise OperationError(f"API server {self.client.endpoint.server}: POST {path}: {err}") from None
                status, payload, headers = 0, b"", {}
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
                    retry_after = float(headers.get("Retry-After", "0"))
                self._stop.wait(max(retry_after, 0.05 * 2**attempt * (1 + random.random())))
                continue
            error = ApiError("POST", path, status, _message(payload))
            raise self.refused(index, error) if self.refused else error
        raise OperationError(f"API server: POST {path}: still failing after {RETRIES} retries")

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
    _conn: http.client.HTTPSConnection | None = None

    def start(self) -> BindWatch:
        listed = self.client.get(
            query("/api/v1/pods", label_selector=self.selector, field_selector="spec.nodeName!=", limit=500)
        )
        self._count_list(listed)
        version = listed["metadata"]["resourceVersion"]
        self._thread = threading.Thread(target=self._run, args=(version,), daemon=True, name="kplugin-bench-watch")
        self._thread.start()
        if not self._ready.wait(30):
            self.check()
            raise OperationError("API server: the watch of the benchmark's pods did not start within 30s")
        self.check()
        return self

    def _count_list(self, listed: Mapping[str, Any]) -> None:
        for item in listed.get("items") or []:
            self._bound(item["metadata"], time.monotonic())

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

    def _stream(self, version: str) -> Iterator[dict[str, Any]]:
        host, port, prefix = self.client.endpoint.host_port
        if self._conn is not None:
            self._conn.close()
        conn = http.client.HTTPSConnection(host, port, context=self.client.endpoint.ssl_context(), timeout=None)
        self._conn = conn
        path = query(
            f"{prefix}/api/v1/pods",
            watch=1,
            label_selector=self.selector,
            field_selector="spec.nodeName!=",
            resource_version=version,
            allow_watch_bookmarks="true",
            timeout_seconds=3600,
        )
        conn.request("GET", path, headers=self.client.headers(None))  # the same credentials
        response = conn.getresponse()
        if response.status != 200:
            raise ApiError("GET", path, response.status, _message(response.read()))
        self._ready.set()
        while not self._stop.is_set():
            line = response.readline()
            if not line:
                return
            yield json.loads(line)

    def _run(self, version: str) -> None:
        try:
            while not self._stop.is_set():
                for event in self._stream(version):
                    obj = event.get("object") or {}
                    kind = event.get("type")
                    if kind == "ERROR":
                        if obj.get("code") == 410:  # too old: recount from a list, go on from there
                            listed = self.client.get(
                                query("/api/v1/pods", label_selector=self.selector, field_selector="spec.nodeName!=")
                            )
                            self._count_list(listed)
                            version = listed["metadata"]["resourceVersion"]
                            break
                        raise OperationError(f"API server: watching pods: {obj.get('message', obj)}")
                    version = (obj.get("metadata") or {}).get("resourceVersion", version)
                    if kind == "ADDED":
                        self._bound(obj.get("metadata") or {}, time.monotonic())
        except BaseException as err:  # handed to the thread that waits
            if not self._stop.is_set():
                self.error = err
                self._ready.set()

    def check(self) -> None:
        if self.error is not None:
            raise (
                self.error
                if isinstance(self.error, OperationError)
                else OperationError(f"API server: watching pods: {self.error}")
            )

    def stop(self) -> None:
        self._stop.set()
        if self._conn is not None:
            with contextlib.suppress(OSError):
                if self._conn.sock is not None:
                    self._conn.sock.shutdown(2)
            self._conn.close()
        if self._thread is not None:
            self._thread.join(timeout=5)
