"""Many API requests at once: object creation (and deletion) that is not the bottleneck
of a replay or a benchmark.

A pool of worker threads, each with its own keep-alive connection (``Client`` keeps one
per thread), takes requests from a bounded queue that the caller's iterator fills: the
objects are made as they are sent, never all held at once. Throttling (429, with the
server's Retry-After) and the server's transient errors (500, 503, 504, a dropped
connection) are retried with backoff and counted: a run with many of them measured the
API server. The first other error stops the run and is raised, naming the object.
Progress goes to a callback (``what, done, total``) several times a second; the rate in
objects per second is in the result.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kplugin.core.errors import OperationError
from kplugin.kube.apiclient import ApiError, Client

WORKERS = 32  # measured on 2 cores: 16 gave 205 pods/s, 32 248/s (the API server's CPU decides)
RETRIES = 8
CONNECTION_RETRIES = 3  # a server that went away is not coming back in seconds
RETRYABLE = frozenset({429, 500, 502, 503, 504})
_REPORT_EVERY = 0.2  # seconds between progress callbacks

Counter = Callable[[str, int, int], None]  # (what, done, total)


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: object = None
    what: str = ""  # e.g. "pod default/web-1", for messages
    content_type: str = "application/json"


@dataclass(frozen=True)
class Result:
    done: int  # requests that succeeded (or met a tolerated status)
    tolerated: int  # of those, answered with a tolerated status (e.g. 409 exists, 404 gone)
    seconds: float
    retries: int
    throttled: int  # 429 answers among the retries
    workers: int

    @property
    def per_second(self) -> float:
        return self.done / self.seconds if self.seconds > 0 else 0.0


def create(path_of: Callable[[dict[str, object]], str], objects: Iterable[dict[str, object]]) -> Iterable[Request]:
    """POST requests for ``objects``, each to ``path_of(object)``."""
    for obj in objects:
        meta = obj.get("metadata")
        name = meta.get("name", "") if isinstance(meta, dict) else ""
        namespace = meta.get("namespace") if isinstance(meta, dict) else None
        shown = f"{namespace}/{name}" if namespace else str(name)
        yield Request("POST", path_of(obj), obj, f"{str(obj.get('kind', 'object')).lower()} {shown}")


class _Run:
    def __init__(self, client: Client, tolerate: frozenset[int]) -> None:
        self.client = client
        self.tolerate = tolerate
        self.lock = threading.Lock()
        self.done = 0
        self.tolerated = 0
        self.retries = 0
        self.throttled = 0
        self.failure: BaseException | None = None
        self.stop = threading.Event()

    def send(self, request: Request) -> None:
        delay = 0.05
        for attempt in range(RETRIES + 1):
            if self.stop.is_set():
                return
            try:
                status, payload, response = self.client.send(
                    request.method, request.path, request.body, request.content_type
                )
            except OperationError as err:  # the connection: retried a few times
                if attempt >= CONNECTION_RETRIES:
                    raise OperationError(f"{request.what or request.path}: {err}") from None
                self._count_retry(False)
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
                continue
            if status < 400 or status in self.tolerate:
                with self.lock:
                    self.done += 1
                    self.tolerated += status >= 400
                return
            if status in RETRYABLE and attempt < RETRIES:
                self._count_retry(status == 429)
                wait = delay
                after = response.getheader("Retry-After")
                if after and after.isdigit():
                    wait = max(wait, min(float(after), 10.0))
                time.sleep(wait)
                delay = min(delay * 2, 2.0)
                continue
            error = self.client.error(request.method, request.path, status, payload)
            shown = request.what or request.path
            raise ApiError(f"creating {shown}: {error}" if request.method == "POST" else f"{shown}: {error}", status)

    def _count_retry(self, throttled: bool) -> None:
        with self.lock:
            self.retries += 1
            self.throttled += throttled

    def worker(self, jobs: queue.Queue[Request | None]) -> None:
        try:
            while True:
                request = jobs.get()
                if request is None:
                    return
                if self.failure is None:
                    try:
                        self.send(request)
                    except BaseException as err:
                        with self.lock:
                            if self.failure is None:
                                self.failure = err
                        self.stop.set()
        finally:
            self.client.close()


def run(
    client: Client,
    requests: Iterable[Request],
    *,
    total: int,
    what: str = "objects",
    workers: int = WORKERS,
    tolerate: frozenset[int] = frozenset(),
    progress: Counter | None = None,
) -> Result:
    """Send every request through ``workers`` connections; ``total`` is how many there
    are (for progress). Statuses in ``tolerate`` count as done (e.g. 409 for objects that
    exist, 404 for deletes of objects already gone). On Ctrl-C the workers stop after
    their current request."""
    state = _Run(client, tolerate)
    workers = max(1, min(workers, total or 1))
    jobs: queue.Queue[Request | None] = queue.Queue(maxsize=workers * 8)
    threads = [threading.Thread(target=state.worker, args=(jobs,), daemon=True) for _ in range(workers)]
    started = time.monotonic()
    last = 0.0

    def report(force: bool = False) -> None:
        nonlocal last
        now = time.monotonic()
        if progress is not None and (force or now - last >= _REPORT_EVERY):
            last = now
            progress(what, state.done, total)

    for thread in threads:
        thread.start()
    try:
        report(force=True)
        for request in requests:
            while not state.stop.is_set():
                try:
                    jobs.put(request, timeout=_REPORT_EVERY)
                    break
                except queue.Full:
                    pass
                finally:
                    report()
            if state.stop.is_set():
                break
        for _ in threads:
            while True:
                try:
                    jobs.put(None, timeout=_REPORT_EVERY)
                    break
                except queue.Full:
                    report()
        for thread in threads:
            while thread.is_alive():
                thread.join(_REPORT_EVERY)
                report()
    except BaseException:
        state.stop.set()
        while True:  # unblock the workers: they see the stop and end
            try:
                jobs.get_nowait()
            except queue.Empty:
                break
        for _ in threads:
            try:
                jobs.put_nowait(None)
            except queue.Full:
                break
        raise
    report(force=True)
    if state.failure is not None:
        raise state.failure
    return Result(
        done=state.done,
        tolerated=state.tolerated,
        seconds=time.monotonic() - started,
        retries=state.retries,
        throttled=state.throttled,
        workers=workers,
    )
