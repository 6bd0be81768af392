"""Where a replay runs: a fresh local control plane per run (``Local``), or a cluster
the user already has (``Existing``, through ``--kubeconfig``: kwok keeps fake nodes for
replays bigger than one machine).

On an existing cluster everything kplugin creates carries the label
``kplugin.dev/replay=<run id>``; the scenario's namespaces become namespaces of kplugin's
own (``kp-<run id>-<name>``); profiles get names of the run (so no scheduler of the
cluster's own takes the pods); and all of it is removed afterwards, on failure and
Ctrl-C too. A cluster with nodes kplugin did not create is refused: the run's pods
would land on them.
"""

from __future__ import annotations

import contextlib
import secrets
import time
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from kplugin.core import digest, yamlio
from kplugin.core.errors import OperationError
from kplugin.core.progress import Progress
from kplugin.kube import kinds
from kplugin.kube.apiclient import ApiError, Client
from kplugin.kube.controlplane import ControlPlane
from kplugin.kube.discovery import Resolver
from kplugin.kube.kubeconfig import Kubeconfig
from kplugin.kube.scheduler import Scheduler

REPLAY_LABEL = "kplugin.dev/replay"
# what kwok's controller looks for to keep a fake node Ready (and its heartbeats), so that
# the cluster's node lifecycle controller does not taint it not-ready
KWOK_ANNOTATIONS = {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}
# pods' and scheduler's client limits: a KubeSchedulerConfiguration defaults to 50/100,
# which would measure the rate limiter, not the scheduler (scheduler_perf uses 5000)
LOCAL_QPS = 5000
EXISTING_QPS = 1000


class Cluster(Protocol):
    client: Client
    identity: str
    qps: int
    custom_kinds: set[kinds.KindInfo]  # cluster-scoped custom kinds a replay created objects of

    def namespace(self, name: str) -> str: ...

    def scenario_key(self, namespace: str, name: str) -> str | None: ...

    def labels(self) -> dict[str, str]: ...

    def existing_namespaces(self) -> set[str]: ...

    def start_scheduler(self, binary: Path, config: dict[str, Any], verbosity: int, vmodule: str) -> Scheduler: ...

    def pods_path(self) -> str: ...

    def scheduler_name(self, wanted: str) -> str: ...

    def check(self) -> None: ...

    def stop_scheduler(self) -> Path | None: ...

    def __enter__(self) -> Cluster: ...

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None: ...


def _key(namespace: str, name: str) -> str:
    return name if namespace == "default" else f"{namespace}/{name}"


class Local:
    """A fresh etcd and kube-apiserver in ``work`` (see ControlPlane)."""

    qps = LOCAL_QPS

    def __init__(
        self,
        work: Path,
        apiserver: Path,
        rbac: list[dict[str, Any]] | None,
        progress: Progress,
        apiserver_args: Sequence[str] = (),
        scheduler_args: Sequence[str] = (),
        prefix: Sequence[str] = (),
    ) -> None:
        self.work = work
        self.plane = ControlPlane(work, apiserver, progress, apiserver_args)
        self.scheduler_args = tuple(scheduler_args)
        self.prefix = tuple(prefix)  # an adopted binary's subcommand, before the scheduler's flags
        self.rbac = rbac
        self.identity = "admin"
        self.custom_kinds: set[kinds.KindInfo] = set()
        self.token: str | None = None
        self.scheduler: Scheduler | None = None

    def __enter__(self) -> Local:
        self.work.mkdir(parents=True, exist_ok=True)
        self.plane.__enter__()
        self.client = self.plane.client()
        if self.rbac is not None:
            self.token, self.identity = self.plane.apply_rbac(self.rbac)
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.client.close()
        self.plane.stop()

    def namespace(self, name: str) -> str:
        return name

    def scenario_key(self, namespace: str, name: str) -> str | None:
        return _key(namespace, name)

    def labels(self) -> dict[str, str]:
        return {}

    def existing_namespaces(self) -> set[str]:
        return {"default", "kube-system", "kube-public", "kube-node-lease"}

    def pods_path(self) -> str:
        return "/api/v1/pods"

    def scheduler_name(self, wanted: str) -> str:
        return wanted

    def start_scheduler(self, binary: Path, config: dict[str, Any], verbosity: int, vmodule: str) -> Scheduler:
        document = {**config, "clientConnection": {"kubeconfig": str(self.plane.kubeconfig(self.token))}}
        document["clientConnection"].update(qps=self.qps, burst=self.qps)
        path = self.work / "scheduler-config.yaml"
        path.write_text(yamlio.dump(document))
        self.scheduler = self.plane.scheduler(binary, path, verbosity, vmodule, self.scheduler_args, self.prefix)
        return self.scheduler

    def check(self) -> None:
        self.plane.check()

    def stop_scheduler(self) -> Path | None:
        if self.scheduler is None:
            return None
        self.scheduler.stop()
        return self.scheduler.log


class Existing:
    """A cluster the user has, through a kubeconfig (see the module docstring)."""

    def __init__(
        self,
        config: Kubeconfig,
        client: Client,
        work: Path,
        progress: Progress,
        scheduler_args: Sequence[str] = (),
        served: Sequence[tuple[str, str]] = (),
        prefix: Sequence[str] = (),
    ) -> None:
        self.config = config
        self.scheduler_args = tuple(scheduler_args)
        self.prefix = tuple(prefix)  # an adopted binary's subcommand, before the scheduler's flags
        self.served = tuple(served)
        self.client = client
        self.work = work
        self.progress = progress
        self.run = secrets.token_hex(3)
        self.identity = f"context {config.context}"
        self.qps = EXISTING_QPS
        self.scheduler: Scheduler | None = None
        self.created_namespaces: list[str] = []
        self.custom_kinds: set[kinds.KindInfo] = set()
        self._names: dict[str, str] = {}
        self._back: dict[str, str] = {}

    @property
    def selector(self) -> str:
        return f"{REPLAY_LABEL}={self.run}"

    def __enter__(self) -> Existing:
        self.work.mkdir(parents=True, exist_ok=True)
        try:
            preflight(self.client)
            require_served(self.client, self.served)
        except BaseException:
            self.client.close()  # __exit__ does not run when __enter__ fails
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        with contextlib.suppress(BaseException):
            self.stop_scheduler()
        try:
            self.cleanup()
        finally:
            self.client.close()

    def cleanup(self) -> None:
        """Remove everything the run created: its pods, namespaces, nodes and cluster-wide
        objects (by label); wait (up to two minutes) until its pods are gone."""
        selector = urllib.parse.quote(self.selector)
        self.progress(f"removing what the replay created ({self.selector})")
        for namespace in self.created_namespaces:
            with contextlib.suppress(ApiError, OperationError):
                self.client.request(
                    "DELETE",
                    f"/api/v1/namespaces/{namespace}/pods?labelSelector={selector}",
                    {"gracePeriodSeconds": 0},
                )
            with contextlib.suppress(ApiError, OperationError):
                self.client.delete(f"/api/v1/namespaces/{namespace}")
        cluster_wide = [
            kinds.CORE["Node"],
            kinds.CORE["PriorityClass"],
            *(k for k in kinds.KINDS if not k.namespaced),
            *sorted(self.custom_kinds, key=lambda k: (k.api_version, k.kind)),
            kinds.CRD,  # last: deleting a CRD deletes its objects, the cluster's own CRDs are not labelled
        ]
        for info in cluster_wide:
            with contextlib.suppress(ApiError, OperationError):
                self.client.request("DELETE", f"{info.path()}?labelSelector={selector}")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                left = self.client.get(f"/api/v1/pods?labelSelector={selector}&limit=1")
            except OperationError:
                return
            if not left.get("items"):
                return
            time.sleep(1)

    def namespace(self, name: str) -> str:
        if name not in self._names:
            real = f"kp-{self.run}-{name}"
            if len(real) > 63:
                real = f"kp-{self.run}-{digest.sha256_hex(name.encode())[:16]}"
            self._names[name] = real
            self._back[real] = name
            self.created_namespaces.append(real)  # removed afterwards, created or not
        return self._names[name]

    def scenario_key(self, namespace: str, name: str) -> str | None:
        original = self._back.get(namespace)
        return None if original is None else _key(original, name)

    def labels(self) -> dict[str, str]:
        return {REPLAY_LABEL: self.run}

    def existing_namespaces(self) -> set[str]:
        return set()

    def pods_path(self) -> str:
        return f"/api/v1/pods?labelSelector={urllib.parse.quote(self.selector)}"

    def scheduler_name(self, wanted: str) -> str:
        """A name of this run's own: no scheduler of the cluster's takes its pods."""
        return f"{wanted[:50]}-{self.run}"

    def start_scheduler(self, binary: Path, config: dict[str, Any], verbosity: int, vmodule: str) -> Scheduler:
        kubeconfig = self.config.write_narrowed(self.work / "kubeconfig")
        document = {**config, "clientConnection": {"kubeconfig": str(kubeconfig), "qps": self.qps, "burst": self.qps}}
        path = self.work / "scheduler-config.yaml"
        path.write_text(yamlio.dump(document))
        log = self.work / "kube-scheduler.log"
        self.scheduler = Scheduler(
            binary, path, log, verbosity, vmodule=vmodule, extra_args=self.scheduler_args, prefix=self.prefix
        )
        return self.scheduler

    def check(self) -> None:
        if self.scheduler is not None:
            self.scheduler.check()

    def stop_scheduler(self) -> Path | None:
        if self.scheduler is None:
            return None
        self.scheduler.stop()
        return self.scheduler.log


def require_served(client: Client, served: Sequence[tuple[str, str]]) -> None:
    """The API server serves each (API version, resource): the plugins' feature gates need
    them (a PodGroup API is off unless its kube-apiserver turns it on)."""
    resolver = Resolver(client)
    for api_version, resource in served:
        if not resolver.serves(api_version, resource):
            raise OperationError(
                f"the cluster does not serve {resource} of {api_version}, which the plugins' feature gates need: "
                f"its kube-apiserver must run with the gates on and --runtime-config={api_version}=true"
            )


def preflight(client: Client) -> None:
    """The cluster answers, takes the credentials, and has no nodes kplugin did not
    create (the replay's pods would land on them)."""
    client.get("/version")
    foreign = []
    for node in client.list_pages("/api/v1/nodes"):
        labels = (node.get("metadata") or {}).get("labels") or {}
        if REPLAY_LABEL in labels:
            raise OperationError(
                f"{client.endpoint.name} has node {node['metadata']['name']} left by an earlier replay "
                f"({REPLAY_LABEL}={labels[REPLAY_LABEL]}); remove them: kubectl delete nodes -l {REPLAY_LABEL}"
            )
        foreign.append(str(node["metadata"]["name"]))
    if foreign:
        raise OperationError(
            f"{client.endpoint.name} has {len(foreign)} node(s) kplugin did not create (e.g. {foreign[0]}); "
            "the replay's pods would land on them: use a cluster of its own (kwok keeps fake nodes)"
        )
