"""A workload as kplugin bench runs it: its ops (the subset of scheduler_perf's that
kplugin bench supports), the limits on what it creates, and its scaling to other
numbers of nodes and pods (--nodes, --pods). The file format that gives one is in
workload; the objects' templates are in templates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kplugin.bench.gotemplate import INDEX, ObjectTemplate
from kplugin.core.errors import Setting, UsageError
from kplugin.model.points import GENERIC_WORKLOAD

# Far above what one machine (or a kwok cluster) holds, far below what would run for
# days: Kubernetes documents 5,000 nodes and 150,000 pods per cluster.
MAX_NODES = 50_000
MAX_PODS = 500_000
MAX_NAMESPACES = 10_000
MAX_CHURN_OBJECTS = 100_000
MAX_SECONDS = 3600.0


@dataclass(frozen=True)
class NodeStrategy:
    """One of createNodes' strategies: extra allocatable resources on every node, a
    label whose values go round the nodes, or a label unique to each node."""

    kind: str  # "allocatable" | "label" | "unique"
    allocatable: tuple[tuple[str, str], ...] = ()
    label_key: str = ""
    label_values: tuple[str, ...] = ()


@dataclass(frozen=True)
class CreateNodes:
    index: int
    count: int
    template: dict[str, Any]
    strategy: NodeStrategy | None = None
    opcode: str = "createNodes"


@dataclass(frozen=True)
class CreateNamespaces:
    index: int
    prefix: str
    count: int
    template: dict[str, Any] | None = None
    opcode: str = "createNamespaces"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f"{self.prefix}-{i}" for i in range(self.count))


@dataclass(frozen=True)
class CreatePods:
    index: int
    count: int
    namespace: str
    template: dict[str, Any]
    collect_metrics: bool = False
    skip_wait: bool = False
    opcode: str = "createPods"
    # with templateParams: the template rendered per pod (its Index in the op) with these params
    rendered: ObjectTemplate | None = None
    params: tuple[tuple[str, int], ...] = ()

    def pod(self, i: int) -> dict[str, Any]:
        """The template of the op's ``i``-th pod."""
        if self.rendered is None:
            return self.template
        return self.rendered.render({**dict(self.params), INDEX: i})

    def pod_group(self, i: int) -> str | None:
        """The PodGroup the ``i``-th pod names (spec.schedulingGroup.podGroupName), or None."""
        group = ((self.pod(i).get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        return str(group) if group else None


@dataclass(frozen=True)
class CreatePodGroups:
    """scheduler_perf's createPodGroups: ``count`` PodGroups from a template rendered with
    each one's Index and the params, in ``namespace``, before the pods that name them."""

    index: int
    count: int
    namespace: str
    rendered: ObjectTemplate
    params: tuple[tuple[str, int], ...] = ()
    opcode: str = "createPodGroups"

    def group(self, i: int) -> dict[str, Any]:
        return self.rendered.render({**dict(self.params), INDEX: i})

    @property
    def api_version(self) -> str:
        return str(self.rendered.document.get("apiVersion"))


@dataclass(frozen=True)
class Barrier:
    index: int
    namespaces: tuple[str, ...] = ()  # empty: every namespace of the run
    label_selector: tuple[tuple[str, str], ...] = ()
    opcode: str = "barrier"


@dataclass(frozen=True)
class Churn:
    index: int
    mode: str  # "create" | "recreate"
    number: int
    interval: float  # seconds
    namespace: str
    templates: tuple[dict[str, Any], ...]
    opcode: str = "churn"


@dataclass(frozen=True)
class Sleep:
    index: int
    seconds: float
    opcode: str = "sleep"


Op = CreateNodes | CreateNamespaces | CreatePods | CreatePodGroups | Barrier | Churn | Sleep


@dataclass(frozen=True)
class Workload:
    """One workload of one test case, its params applied."""

    test_case: str
    name: str
    ops: tuple[Op, ...]
    source: str  # the file, or "built-in NAME"
    notices: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return f"{self.test_case}/{self.name}"

    @property
    def cluster_nodes(self) -> tuple[CreateNodes, ...]:
        """The createNodes ops before any other op: the cluster every run starts from
        (created once, kept for every run)."""
        leading = []
        for op in self.ops:
            if not isinstance(op, CreateNodes):
                break
            leading.append(op)
        return tuple(leading)

    @property
    def run_ops(self) -> tuple[Op, ...]:
        """The ops each run performs (everything after the cluster's nodes)."""
        return self.ops[len(self.cluster_nodes) :]

    @property
    def measured(self) -> tuple[CreatePods, ...]:
        return tuple(op for op in self.ops if isinstance(op, CreatePods) and op.collect_metrics)

    @property
    def nodes(self) -> int:
        return sum(op.count for op in self.ops if isinstance(op, CreateNodes))

    @property
    def pods(self) -> int:
        return sum(op.count for op in self.ops if isinstance(op, CreatePods))

    @property
    def measured_pods(self) -> int:
        return sum(op.count for op in self.measured)

    @property
    def pod_groups(self) -> tuple[CreatePodGroups, ...]:
        return tuple(op for op in self.ops if isinstance(op, CreatePodGroups))

    @property
    def grouped(self) -> bool:
        """Whether it creates pod groups, or pods that name one."""
        pods = (op for op in self.ops if isinstance(op, CreatePods))
        return bool(self.pod_groups) or any(op.count and op.pod_group(0) for op in pods)

    @property
    def gates(self) -> tuple[str, ...]:
        """The feature gates its objects need: the PodGroup API and the pod-group cycle."""
        return (GENERIC_WORKLOAD,) if self.grouped else ()

    def scaled(self, nodes: int | None, pods: int | None) -> Workload:
        """This workload for ``nodes`` nodes (the cluster's createNodes ops keep their
        shares) and ``pods`` measured pods (the other createPods ops keep their
        proportion to them)."""
        check_count(nodes, Setting.NODES, MAX_NODES, "nodes")
        check_count(pods, Setting.PODS, MAX_PODS, "pods")
        ops = list(self.ops)
        if nodes is not None:
            leading = self.cluster_nodes
            if not leading:
                raise UsageError(f"{Setting.NODES}: workload {self.title} creates no nodes before its other ops")
            for i, count in enumerate(_shares(nodes, [op.count for op in leading])):
                ops[i] = replace(leading[i], count=count)
        if pods is not None and self.pod_groups:
            raise UsageError(
                f"{Setting.PODS}: workload {self.title} creates pod groups, whose sizes its params set with its pods' "
                "count: change its params instead"
            )
        if pods is not None:
            measured = self.measured_pods
            if measured == 0:
                raise UsageError(
                    f"{Setting.PODS}: workload {self.title} measures no pods (no createPods with collectMetrics)"
                )
            shares = iter(_shares(pods, [op.count for op in self.measured]))
            for i, op in enumerate(ops):
                if isinstance(op, CreatePods):
                    scaled = next(shares) if op.collect_metrics else round(op.count * pods / measured)
                    ops[i] = replace(op, count=max(scaled, 1 if op.count else 0))
        result = replace(self, ops=tuple(ops))
        if nodes is not None or pods is not None:
            result = replace(result, name=f"{result.nodes}Nodes_{result.measured_pods}Pods")
        check_totals(result, f"workload {result.title}")
        return result


def _shares(total: int, weights: list[int]) -> list[int]:
    """``total`` split in proportion to ``weights`` (largest remainders), each share at
    least 1 where its weight is not 0 and the total allows it."""
    weight = sum(weights) or len(weights)
    raw = [total * (w if sum(weights) else 1) / weight for w in weights]
    shares = [int(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: (shares[i] - raw[i], i))
    for i in order[: total - sum(shares)]:
        shares[i] += 1
    return shares


def check_count(value: int | None, what: str, limit: int, unit: str) -> None:
    if value is None:
        return
    if value < 1:
        raise UsageError(f"{what} {value}: must be at least 1")
    if value > limit:
        raise UsageError(f"{what} {value}: more than {limit} {unit}, the most kplugin bench creates in one workload")


def check_totals(workload: Workload, where: str) -> None:
    for total, limit, unit in (
        (workload.nodes, MAX_NODES, "nodes"),
        (workload.pods, MAX_PODS, "pods"),
        (sum(op.count for op in workload.ops if isinstance(op, CreateNamespaces)), MAX_NAMESPACES, "namespaces"),
        (sum(op.count for op in workload.pod_groups), MAX_PODS, "pod groups"),
    ):
        if total > limit:
            raise UsageError(f"{where}: {total} {unit} in all, more than {limit}, the most kplugin bench creates")
    if workload.measured_pods == 0:
        raise UsageError(
            f"{where}: no pods are measured; mark a createPods op with collectMetrics: true (and count > 0)"
        )


def describe(workload: Workload) -> Mapping[str, Any]:
    """The workload's shape, for --json and the report."""
    return {
        "testCase": workload.test_case,
        "workload": workload.name,
        "source": workload.source,
        "nodes": workload.nodes,
        "pods": workload.pods,
        "measuredPods": workload.measured_pods,
        "podGroups": sum(op.count for op in workload.pod_groups),
        "ops": [op.opcode for op in workload.ops],
    }
