"""A pytest plugin for ``benchmarks/ci_cpu``: each test's CPU time (the pytest process's
own and that of the processes it waited for: go, kube-apiserver, etcd, the schedulers,
golangci-lint) and wall time, one JSON line per test in ``$KPLUGIN_CPU_DIR/<worker>.jsonl``.
Work a daemon does for a test (dockerd's image builds) is not counted."""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    started, (own, children) = time.time(), _cpu()
    yield
    own_after, children_after = _cpu()
    record = {
        "id": item.nodeid,
        "start": started,
        "wall": time.time() - started,
        "self": own_after - own,
        "children": children_after - children,
    }
    out = Path(os.environ["KPLUGIN_CPU_DIR"]) / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl"
    with out.open("a") as stream:
        stream.write(json.dumps(record) + "\n")
