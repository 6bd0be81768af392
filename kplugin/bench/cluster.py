"""Where a benchmark runs, and what it creates and removes there: the local control
plane, or an existing cluster, where everything kplugin bench creates carries the label
``kplugin/bench=<id>``, its namespaces and nodes have names of their own, its nodes
carry the annotations kwok manages and its pods go only to them. The nodes, the
cleanup after each run and after the benchmark, and the check of an existing cluster's
schedulerNames.
"""

from __future__ import annotations

import contextlib
import copy
import time
from pathlib import Path
from typing import Any

from kplugin.bench.loadgen import CreationStats, PooledCreation, RateLimiter
from kplugin.bench.ops import CreateNodes
from kplugin.bench.plan import Bars, BenchInputs, Settings
from kplugin.core.errors import OperationError, Setting, UsageError
from kplugin.kube.apiclient import ApiError, Client, query
from kplugin.kube.cluster import KWOK_ANNOTATIONS

BENCH_LABEL = "kplugin/bench"  # on everything kplugin bench creates: the invocation's id
RUN_LABEL = "kplugin/bench-run"  # on what one run creates: the run's number
OP_LABEL = "kplugin/bench-op"  # on pods: the op that created them


class BenchCluster:
    """Names and extras that differ between the local control plane and an existing
    cluster; the rest is the same API."""

    def __init__(self, client: Client, kubeconfig: Path, bench_id: str, existing: bool) -> None:
        self.client = client
        self.kubeconfig = kubeconfig
        self.id = bench_id
        self.existing = existing
        self.namespaces: dict[str, None] = {}  # created (or found) so far, real names
        self.node_prefixes: set[str] = set()

    def namespace(self, name: str) -> str:
        return f"kplugin-bench-{self.id}-{name}"[:63].rstrip("-") if self.existing else name

    def node_name(self, prefix: str, index: int) -> str:
        return f"kplugin-bench-{self.id}-{prefix}{index}" if self.existing else f"{prefix}{index}"

    def labels(self, run: int | None = None) -> dict[str, str]:
        labels = {BENCH_LABEL: self.id}
        if run is not None:
            labels[RUN_LABEL] = str(run)
        return labels

    def ensure_namespace(self, name: str, template: dict[str, Any] | None = None) -> None:
        real = self.namespace(name)
        if real in self.namespaces:
            return
        body: dict[str, Any] = copy.deepcopy(template) if template else {"apiVersion": "v1", "kind": "Namespace"}
        metadata: dict[str, Any] = body.setdefault("metadata", {})
        metadata.pop("generateName", None)
        metadata["name"] = real
        metadata["labels"] = {**(metadata.get("labels") or {}), **self.labels()}
        self.namespaces[real] = None  # first: a Ctrl-C while the request is out leaves it known
        try:
            self.client.request("POST", "/api/v1/namespaces", body)
        except ApiError as err:
            if err.status != 409:  # exists: ours (its name has this invocation's id), or a local run's
                del self.namespaces[real]
                raise

    def node(
        self, op_template: dict[str, Any], name: str, index: int, op: CreateNodes | None, run: int | None
    ) -> dict[str, Any]:
        node = copy.deepcopy(op_template)
        metadata = node.setdefault("metadata", {})
        metadata.pop("generateName", None)
        metadata["name"] = name
        labels = {**(metadata.get("labels") or {}), **self.labels(run)}
        labels.setdefault("kubernetes.io/hostname", name)
        status = node.setdefault("status", {})
        capacity = dict(status.get("capacity") or {})
        allocatable = {**capacity, **(status.get("allocatable") or {})}
        if op is not None and op.strategy is not None:
            strategy = op.strategy
            if strategy.kind == "label":
                labels[strategy.label_key] = strategy.label_values[index % len(strategy.label_values)]
            elif strategy.kind == "unique":
                labels[strategy.label_key] = name
            else:
                allocatable.update(dict(strategy.allocatable))
        metadata["labels"] = labels
        if allocatable:
            status["allocatable"] = allocatable
        if self.existing:
            metadata["annotations"] = {**(metadata.get("annotations") or {}), **KWOK_ANNOTATIONS}
        return node

    def pod(
        self, template: dict[str, Any], name: str, namespace: str, scheduler: str, run: int, op: int
    ) -> dict[str, Any]:
        pod = copy.deepcopy(template)
        metadata = pod.setdefault("metadata", {})
        metadata.pop("generateName", None)
        metadata["name"] = name
        metadata["namespace"] = namespace
        metadata["labels"] = {**(metadata.get("labels") or {}), **self.labels(run), OP_LABEL: str(op)}
        spec = pod["spec"]
        spec["schedulerName"] = scheduler
        if self.existing:  # never onto a real node of the cluster: only onto kplugin's own
            spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), BENCH_LABEL: self.id}
        group = spec.get("schedulingGroup")
        if isinstance(group, dict) and group.get("podGroupName"):
            spec["schedulingGroup"] = {**group, "podGroupName": pod_group_name(str(group["podGroupName"]), run)}
        return pod

    def pod_group(self, rendered: dict[str, Any], namespace: str, run: int) -> dict[str, Any]:
        """A PodGroup of ``run``: named for the run (its pods name it so), labelled."""
        group = copy.deepcopy(rendered)
        metadata = group.setdefault("metadata", {})
        metadata.pop("generateName", None)
        metadata["name"] = pod_group_name(str(metadata.get("name") or "group"), run)
        metadata["namespace"] = namespace
        metadata["labels"] = {**(metadata.get("labels") or {}), **self.labels(run)}
        return group


def pod_group_name(name: str, run: int) -> str:
    """A pod group's name in ``run``: each run has its own groups (the run before's are
    left to the namespace's end: deleting one waits for a controller's finalizer)."""
    return f"{name}-run{run}"


def _node_prefix(cluster: BenchCluster, op: CreateNodes) -> str:
    prefix = str((op.template.get("metadata") or {}).get("generateName") or f"node-{op.index}-")
    if prefix in cluster.node_prefixes:  # two ops of one template: names of their own
        prefix = f"{prefix}{op.index}-"
    cluster.node_prefixes.add(prefix)
    return prefix


def create_nodes(
    cluster: BenchCluster, op: CreateNodes, settings: Settings, reporter: Bars, run: int | None
) -> CreationStats:
    """A createNodes op's nodes (``run`` None: the cluster's own, created once and kept
    for every run)."""
    prefix = _node_prefix(cluster, op)

    def make(i: int) -> tuple[str, dict[str, Any]]:
        return "/api/v1/nodes", cluster.node(op.template, cluster.node_name(prefix, i), i, op, run)

    def refused(_: int, err: ApiError) -> BaseException:
        if err.status in (400, 422):
            return UsageError(
                f"workloadTemplate[{op.index}] (createNodes): the API server refuses its nodes: {err.detail}"
            )
        return err

    reporter.bar(f"creating {op.count} nodes ({prefix}*)", op.count)
    creation = PooledCreation(
        cluster.client, op.count, make, RateLimiter(settings.client_qps, settings.client_burst), settings.workers
    )
    creation.refused = refused
    creation.start()
    stats = creation.wait(lambda: reporter.advance(creation.created))
    reporter.advance(creation.created)
    reporter.finish()
    return stats


def _wait_gone(client: Client, path: str, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        left = client.get(query(path, limit=1)).get("items") or []
        if not left:
            return
        if time.monotonic() > deadline:
            name = left[0].get("metadata", {}).get("name")
            raise OperationError(f"{what} (e.g. {name}) still there {timeout:.0f}s after kplugin bench deleted them")
        time.sleep(0.2)


def remove_run(cluster: BenchCluster, number: int) -> None:
    """Everything one run created: its pods (deleted at once: no kubelet waits on them) and
    the nodes its ops made; the cluster's nodes and the namespaces stay for the next run."""
    selector = f"{BENCH_LABEL}={cluster.id},{RUN_LABEL}={number}"
    for namespace in cluster.namespaces:
        cluster.client.request(
            "DELETE", query(f"/api/v1/namespaces/{namespace}/pods", label_selector=selector, grace_period_seconds=0)
        )
    cluster.client.request("DELETE", query("/api/v1/nodes", label_selector=selector))
    _wait_gone(cluster.client, query("/api/v1/pods", label_selector=selector), f"pods of run {number}")


def remove_everything(cluster: BenchCluster, reporter: Bars, finalize_after: float = 10.0) -> list[str]:
    """Remove all that has this invocation's label from an existing cluster: pods, nodes,
    then namespaces. Returns notes for the user. A namespace whose deletion no namespace
    controller takes up (a bare API server) is finalized by kplugin once it is empty of
    what kplugin made, as the controller would."""
    client, selector = cluster.client, f"{BENCH_LABEL}={cluster.id}"
    notes = []
    reporter.step(f"removing everything labelled {selector}")
    labelled = client.get(query("/api/v1/namespaces", label_selector=selector)).get("items") or []
    namespaces = {ns["metadata"]["name"] for ns in labelled} | set(cluster.namespaces)
    for namespace in sorted(namespaces):
        with contextlib.suppress(ApiError):
            client.request(
                "DELETE", query(f"/api/v1/namespaces/{namespace}/pods", label_selector=selector, grace_period_seconds=0)
            )
    for pod in client.get(query("/api/v1/pods", label_selector=selector)).get("items") or []:
        meta = pod["metadata"]
        with contextlib.suppress(ApiError):
            client.request("DELETE", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}?gracePeriodSeconds=0")
    client.request("DELETE", query("/api/v1/nodes", label_selector=selector))
    _wait_gone(client, query("/api/v1/pods", label_selector=selector), "kplugin bench's pods")
    _wait_gone(client, query("/api/v1/nodes", label_selector=selector), "kplugin bench's nodes")
    for namespace in sorted(namespaces):
        with contextlib.suppress(ApiError):
            client.request("DELETE", f"/api/v1/namespaces/{namespace}")
    deadline = time.monotonic() + finalize_after
    finalized = []
    while namespaces:
        for namespace in sorted(namespaces):
            try:
                found = client.get(f"/api/v1/namespaces/{namespace}")
            except ApiError as err:
                if err.status == 404:
                    namespaces.discard(namespace)
                    continue
                raise
            handled = (found.get("status") or {}).get("conditions")
            if time.monotonic() > deadline and not handled:
                # what the namespace controller would have done: its content first (the
                # scheduler's events), then the namespace
                client.request("DELETE", f"/api/v1/namespaces/{namespace}/events")
                found["spec"] = {"finalizers": []}
                client.request("PUT", f"/api/v1/namespaces/{namespace}/finalize", found)
                finalized.append(namespace)
        if namespaces:
            if time.monotonic() > deadline + 120:
                raise OperationError(f"namespace(s) {', '.join(sorted(namespaces))} not deleted within 2 minutes")
            time.sleep(0.25)
    if finalized:
        notes.append(
            f"no namespace controller took up the deletion of {', '.join(finalized)}: "
            "kplugin bench finalized them itself after removing its pods"
        )
    return notes


def check_cluster(cluster: BenchCluster, inputs: BenchInputs) -> None:
    """An existing cluster whose pods already use one of the benchmark's schedulerNames
    is refused: a scheduler of that name may be running there (it would bind the
    benchmark's pods), and the benchmark's scheduler would bind those pods."""
    if inputs.allow_existing_pods:
        return
    for profile in inputs.profiles:
        found = cluster.client.get(
            query("/api/v1/pods", field_selector=f"spec.schedulerName={profile.scheduler_name}", limit=1)
        ).get("items")
        if found:
            meta = found[0]["metadata"]
            raise UsageError(
                f"the cluster has pods with schedulerName {profile.scheduler_name} (e.g. {meta['namespace']}/"
                f"{meta['name']}): a scheduler of that name may be running there; pass {Setting.ALLOW_EXISTING_PODS} "
                "to benchmark anyway"
            )
