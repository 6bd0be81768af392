"""kplugin.kube.bulk against a small HTTP server that plays the API server: requests go
out in parallel on kept-alive connections, throttling is retried and counted, the first
real error names its object, and the caller's objects are made as they are sent."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.fakeapi import JsonHandler, serving

from kplugin.core.errors import OperationError
from kplugin.kube import bulk
from kplugin.kube.apiclient import ApiError, Client, Endpoint


class FakeApi:
    """Records every POST; answers by the rules a test sets."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.active = 0
        self.most_active = 0
        self.connections: set[tuple[str, int]] = set()
        self.delay = 0.0
        self.throttle_first = 0  # the first N requests get 429
        self.refuse: set[str] = set()  # names answered 422
        self.exists: set[str] = set()  # names answered 409
        self.requests = 0


@pytest.fixture
def api() -> Iterator[tuple[FakeApi, Client]]:
    fake = FakeApi()

    class Handler(JsonHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            name = body["metadata"]["name"]
            with fake.lock:
                fake.requests += 1
                number = fake.requests
                fake.active += 1
                fake.most_active = max(fake.most_active, fake.active)
                fake.connections.add(self.client_address)
            try:
                time.sleep(fake.delay)
                if number <= fake.throttle_first:
                    self.answer(429, {"message": "too many requests"}, {"Retry-After": "0"})
                elif name in fake.refuse:
                    self.answer(422, {"kind": "Status", "message": f'Pod "{name}" is invalid: spec: bad'})
                elif name in fake.exists:
                    self.answer(409, {"message": "exists", "reason": "AlreadyExists"})
                else:
                    with fake.lock:
                        fake.bodies.append(body)
                    self.answer(201, body)
            finally:
                with fake.lock:
                    fake.active -= 1

    with serving(Handler) as url:
        client = Client(Endpoint(url))
        try:
            yield fake, client
        finally:
            client.close()


def pods(count: int, made: list[int] | None = None) -> Iterator[dict[str, Any]]:
    for i in range(count):
        if made is not None:
            made.append(i)
        yield {"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"}}


def path(_obj: dict[str, object]) -> str:
    return "/api/v1/namespaces/default/pods"


def test_everything_arrives_in_parallel_on_kept_alive_connections(api: tuple[FakeApi, Client]) -> None:
    fake, client = api
    fake.delay = 0.05  # one at a time: 10 s
    seen: list[tuple[str, int, int]] = []
    result = bulk.run(
        client, bulk.create(path, pods(200)), total=200, what="pods", workers=16, progress=lambda *a: seen.append(a)
    )
    assert sorted(b["metadata"]["name"] for b in fake.bodies) == sorted(f"p{i}" for i in range(200))
    assert (result.done, result.tolerated, result.retries, result.workers) == (200, 0, 0, 16)
    assert fake.most_active >= 4, "requests overlap"
    assert len(fake.connections) <= 16, "one kept-alive connection per worker, not one per request"
    assert seen[0] == ("pods", 0, 200) and seen[-1] == ("pods", 200, 200)
    assert result.per_second == pytest.approx(200 / result.seconds)


def test_objects_are_made_as_they_are_sent(api: tuple[FakeApi, Client]) -> None:
    """The caller's generator is drained only a bounded queue ahead of the workers."""
    fake, client = api
    fake.delay = 0.005
    made: list[int] = []
    ahead: list[int] = []

    def watch(_what: str, done: int, _total: int) -> None:
        ahead.append(len(made) - done)

    bulk.run(client, bulk.create(path, pods(600, made)), total=600, workers=4, progress=watch)
    assert max(ahead) <= 4 * 8 + 4 + 1, max(ahead)


def test_throttling_is_retried_and_counted(api: tuple[FakeApi, Client]) -> None:
    fake, client = api
    fake.throttle_first = 5
    result = bulk.run(client, bulk.create(path, pods(20)), total=20, workers=2)
    assert len(fake.bodies) == 20
    assert (result.done, result.retries, result.throttled) == (20, 5, 5)


def test_tolerated_status(api: tuple[FakeApi, Client]) -> None:
    fake, client = api
    fake.exists = {"p3", "p4"}
    result = bulk.run(client, bulk.create(path, pods(10)), total=10, tolerate=frozenset({409}))
    assert (result.done, result.tolerated, len(fake.bodies)) == (10, 2, 8)


def test_the_first_error_stops_the_run_and_names_the_object(api: tuple[FakeApi, Client]) -> None:
    fake, client = api
    fake.refuse = {"p50"}
    made: list[int] = []
    with pytest.raises(ApiError) as failed:
        bulk.run(client, bulk.create(path, pods(5000, made)), total=5000, workers=4)
    message = str(failed.value)
    assert message.startswith("creating pod default/p50: the API server at http://127.0.0.1:")
    assert 'POST /api/v1/namespaces/default/pods: 422 Pod "p50" is invalid: spec: bad' in message
    assert failed.value.status == 422
    assert len(made) < 5000, "nothing more is made after the failure"


def test_an_unreachable_server_is_one_line() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    client = Client(Endpoint(f"http://127.0.0.1:{port}"))
    with pytest.raises(OperationError) as failed:
        bulk.run(client, bulk.create(path, pods(3)), total=3, workers=1)
    assert (
        str(failed.value)
        == f"pod default/p0: cannot reach the API server at http://127.0.0.1:{port}: Connection refused"
    )


def test_ctrl_c_stops_the_workers(api: tuple[FakeApi, Client]) -> None:
    fake, client = api
    fake.delay = 0.01

    def interrupted() -> Iterator[dict[str, Any]]:
        yield from pods(20)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bulk.run(client, bulk.create(path, interrupted()), total=100, workers=4)
    time.sleep(0.2)
    assert fake.active == 0
    assert len(fake.bodies) <= 20


def test_plain_progress_lines(capsys: pytest.CaptureFixture[str]) -> None:
    """Off a terminal: the title, each new step once (its end with its own time), and a
    batch's first and last count."""
    from kplugin.cli.progress import Reporter

    with Reporter("replaying") as reporter:
        reporter.step("creating nodes")
        reporter.step("creating nodes")
        for done in range(0, 1001, 100):
            reporter.count("pods", done, 1000)
        reporter.count("pods", 1000, 1000)
    lines = capsys.readouterr().err.splitlines()
    assert lines[:3] == ["replaying", "  creating nodes …", "  pods: 0/1,000"]
    assert lines[3].startswith("  pods: 1,000/1,000 (") and lines[3].endswith("/s)")
    assert lines[4:] == ["  creating nodes: done in 0s"]


def test_a_count_of_one_says_its_end_only(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 44, item 10: a single object (the one CRD, the one object of a step) is one
    line, "1/1", with no "0/1" before it and no rate of one."""
    from kplugin.cli.progress import Reporter

    with Reporter("replaying") as reporter:
        reporter.count("objects", 0, 1)
        reporter.count("objects", 1, 1)
    assert capsys.readouterr().err.splitlines() == ["replaying", "  objects: 1/1"]
