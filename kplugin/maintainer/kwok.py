"""A real kwok controller against a local control plane: a user's kwok cluster, for the
tests that play one (bench and e2e with --kubeconfig) and benchmarks/kwok_vs_local.py.

The pinned kwok (kplugin.model.tools, installed with go install by the test set-up, or
here when missing) manages the nodes kplugin creates (their ``kwok.x-k8s.io/node: fake``
annotation) with kwok's own stages, read from its module at that version: nodes
initialized Ready, their leases renewed (heartbeats), bound pods Running, deleted pods
finished."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kplugin.core.errors import OperationError
from kplugin.kube.cluster import KWOK_ANNOTATIONS
from kplugin.kube.controlplane import ControlPlane
from kplugin.kube.process import Process, free_ports
from kplugin.maintainer import tools
from kplugin.model.tools import KWOK

# kwok's stages (kustomize/stage in its module): a node's first Ready, a pod's Running and
# its deletion; the node heartbeat is kwok's lease renewal (--node-lease-duration-seconds)
STAGES = ("node/fast/node-initialize.yaml", "pod/fast/pod-ready.yaml", "pod/fast/pod-delete.yaml")
LEASE_SECONDS = 40  # kwok renews a node's lease at a quarter of this (as a kubelet would)
SELECTOR = ",".join(f"{k}={v}" for k, v in KWOK_ANNOTATIONS.items() if k.startswith("kwok."))


def binary() -> Path:
    return tools.ensure(KWOK, lambda line: print(line, file=sys.stderr))


def stages() -> str:
    """kwok's own stage documents at the pinned version, from the Go module cache."""
    done = subprocess.run(
        ["go", "mod", "download", "-json", f"{KWOK.module}@{KWOK.version}"],
        capture_output=True, text=True, check=True, cwd="/",
    )  # fmt: skip
    source = Path(json.loads(done.stdout)["Dir"]) / "kustomize" / "stage"
    return "\n---\n".join((source / name).read_text() for name in STAGES)


@contextmanager
def controller(plane: ControlPlane, work: Path) -> Iterator[Process]:
    """kwok running against ``plane`` (its admin kubeconfig) until the block ends."""
    config = work / "kwok.yaml"
    config.write_text(stages())
    (port,) = free_ports(1)
    command = [
        str(binary()),
        f"--kubeconfig={plane.kubeconfig()}",
        f"--config={config}",
        "--manage-all-nodes=false",
        f"--manage-nodes-with-annotation-selector={SELECTOR}",
        f"--node-lease-duration-seconds={LEASE_SECONDS}",
        f"--server-address=127.0.0.1:{port}",
    ]
    process = Process("kwok", command, work / "kwok.log")
    try:
        deadline = time.monotonic() + 60
        while "Starting" not in "\n".join(process.tail(200)):
            process.check()
            if time.monotonic() > deadline:
                raise OperationError("kwok did not start within 60s; the end of its log:", details=process.tail())
            time.sleep(0.2)
        yield process
    finally:
        process.stop()


def ready(node: dict[str, Any]) -> bool:
    conditions = node.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
