"""``kplugin bench``: run a workload against the project's real kube-scheduler, twice per
repeat and interleaved (baseline, project; then project, baseline; ...): the project's
profile and a baseline profile that is the same binary with the project's plugins left
out. Each run starts its own scheduler on the same nodes, with no pods, and its pods are
deleted after it.

Where it runs: the local control plane ``kplugin e2e`` starts (etcd and kube-apiserver
as processes), or with --kubeconfig an existing cluster, where everything kplugin
creates carries the label ``kplugin/bench=<id>``, its pods only go to its own nodes
(created with the annotations kwok manages) and lives in namespaces it creates; all of
it is removed afterwards, after a failure and after Ctrl-C too.
"""

from __future__ import annotations

import contextlib
import copy
import os
import secrets
import shutil
import signal
import ssl
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from kplugin.bench import metrics
from kplugin.bench.loadgen import BindWatch, Creation, CreationStats, RateLimiter
from kplugin.bench.workload import (
    Barrier,
    Churn,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    Op,
    Sleep,
    Workload,
)
from kplugin.config import render
from kplugin.core import yamlio
from kplugin.core.errors import KpluginError, OperationError, UsageError
from kplugin.kube import kubeconfig as kubeconfigs
from kplugin.kube.apiclient import ApiError, Client, Endpoint, query
from kplugin.kube.cluster import KWOK_ANNOTATIONS
from kplugin.kube.controlplane import ControlPlane, Process, free_ports
from kplugin.model.project import Project
from kplugin.model.schedconfig import SchedulerConfig

BENCH_LABEL = "kplugin/bench"  # on everything kplugin bench creates: the invocation's id
RUN_LABEL = "kplugin/bench-run"  # on what one run creates: the run's number
OP_LABEL = "kplugin/bench-op"  # on pods: the op that created them
BASELINE, PROJECT = "baseline", "project"
# extension points in the order a scheduling cycle visits them (as the metrics name them)
EXTENSION_POINTS = (
    "PreEnqueue",
    "QueueSort",
    "PreFilter",
    "PreFilterExtensionAddPod",
    "PreFilterExtensionRemovePod",
    "Filter",
    "PostFilter",
    "PreScore",
    "Score",
    "ScoreExtensionNormalize",
    "Reserve",
    "Unreserve",
    "Permit",
    "PreBindPreFlight",
    "PreBind",
    "Bind",
    "PostBind",
)
# plugin_execution_duration_seconds goes through the scheduler's asynchronous recorder,
# flushed once a second: wait that long before reading /metrics at a phase's edge
FLUSH_SECONDS = 1.3
CLIENT_TIMEOUT = 60.0  # the load generator's requests (a loaded API server answers slowly)


@dataclass(frozen=True)
class Settings:
    """How the benchmark drives things; every one of these is reported with the results."""

    repeat: int = 1
    scheduler_qps: float = 5000.0  # the scheduler's clientConnection (scheduler_perf: 5000/5000)
    scheduler_burst: int = 5000
    client_qps: float = 5000.0  # the load generator's own limit
    client_burst: int = 5000
    workers: int = 30  # parallel creators (scheduler_perf creates pods with 30)
    stall_timeout: float = 120.0  # seconds without a pod bound before a run is given up
    verbosity: int = 0  # the scheduler's -v (its per-pod log lines at -v=2 cost throughput)
    keep: bool = False


@dataclass(frozen=True)
class Profile:
    kind: str  # BASELINE or PROJECT
    scheduler_name: str
    config: SchedulerConfig


@dataclass(frozen=True)
class Inputs:
    project: Project
    workload: Workload
    profiles: tuple[Profile, Profile]  # baseline, project
    plugins: tuple[str, ...]  # the project's plugins
    kubeconfig: kubeconfigs.Kubeconfig | None = None  # an existing cluster's (its chosen context)
    endpoint: Endpoint | None = None  # of that context, its credentials obtained once
    allow_existing_pods: bool = False
    notices: tuple[str, ...] = ()


def baseline_name(project: Project) -> str:
    return f"{project.scheduler_name}-baseline"[:253]


def profiles(config: SchedulerConfig, project: Project) -> tuple[Profile, Profile]:
    """The project's profile as render-config renders it (its plugins with their real
    args), and the same configuration without them (PrioritySort and DefaultBinder where
    the project replaced them)."""
    project_config = replace(config, leader_elect=False, percentage_of_nodes_to_score=None)
    baseline_config = replace(
        project_config, scheduler_names=(baseline_name(project),), plugins=(), args={}, weights={}, disable_default=()
    )
    return Profile(BASELINE, baseline_name(project), baseline_config), Profile(
        PROJECT, project.scheduler_name, project_config
    )


def scheduler_document(profile: Profile, kubeconfig: Path, settings: Settings) -> dict[str, Any]:
    document = replace(profile.config, kubeconfig=str(kubeconfig)).document()
    document["clientConnection"].update({"qps": settings.scheduler_qps, "burst": settings.scheduler_burst})
    return document


def check_config(inputs: Inputs, scheduler: Path, settings: Settings) -> None:
    """Both profiles loaded by the project's own scheduler (--write-config-to)."""
    for profile in inputs.profiles:
        document = scheduler_document(profile, Path("/dev/null"), settings)
        accepted, message = render.validate(scheduler, yamlio.dump(document), f"the {profile.kind} configuration")
        if not accepted:
            raise OperationError(
                f"kube-scheduler {inputs.project.version} rejects the {profile.kind} configuration: {message}"
            )


class Reporter(Protocol):
    """Progress for a person: a line per step, a bar for counted work."""

    def step(self, text: str) -> None: ...

    def bar(self, text: str, total: int) -> None: ...

    def advance(self, done: int) -> None: ...

    def finish(self) -> None: ...


class Quiet:
    def step(self, text: str) -> None:
        pass

    def bar(self, text: str, total: int) -> None:
        pass

    def advance(self, done: int) -> None:
        pass

    def finish(self) -> None:
        pass


# --- results ---------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueFacts:
    """Whether the scheduler always had pods waiting while the measured pods were still
    being created (after that, its queue drains by design)."""

    ticks: int  # 1-second readings of scheduler_pending_pods{queue="active"} while creating
    dry_ticks: int  # of which found the active queue empty
    min_active: float | None
    min_backlog: int | None  # created - bound, read 4 times a second while creating

    @property
    def ran_dry(self) -> bool:
        return self.dry_ticks > 0 or self.min_backlog == 0


@dataclass(frozen=True)
class RunResult:
    profile: str  # BASELINE or PROJECT
    scheduler_name: str
    repeat: int
    measured_pods: int
    samples: tuple[float, ...]  # SchedulingThroughput samples (pods/s)
    points: tuple[tuple[float, float], ...]  # (seconds since the first bound pod, pods/s)
    sampled: bool  # False: the run was shorter than two ticks; one sample over the whole run
    seconds: float  # first measured pod created to last one bound
    creation: CreationStats
    queue: QueueFacts
    attempts: metrics.Histogram  # scheduling_attempt_duration_seconds{result="scheduled"}
    e2e: metrics.Histogram  # pod_scheduling_sli_duration_seconds (1.28: pod_scheduling_duration_seconds)
    e2e_metric: str
    extension_points: dict[str, metrics.Histogram]
    plugins: dict[tuple[str, str], metrics.Histogram]  # (plugin, extension point), sampled cycles
    attempts_total: dict[str, float]  # by result
    cpu_seconds: float  # the scheduler's, in the measured phase
    peak_rss: int  # bytes, the scheduler's VmHWM at the end of the run
    apiserver_cpu: float | None  # in the measured phase (local control plane only)
    loadgen_cpu: float  # this process, in the measured phase
    load_average: tuple[float, float] = (0.0, 0.0)  # the machine's 1-minute load at the start and end


@dataclass(frozen=True)
class Outcome:
    kubernetes: str
    project: str
    plugins: tuple[str, ...]
    workload: Workload
    mode: str  # "local control plane" or the kubeconfig's server
    settings: Settings
    runs: tuple[RunResult, ...]
    nodes: CreationStats
    scheduler_names: dict[str, str]
    seconds: float
    notices: tuple[str, ...] = ()
    work: Path | None = None


# --- where it runs -----------------------------------------------------------------------


class Cluster:
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
        return pod


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _own_cpu() -> float:
    times = os.times()
    return times.user + times.system


class Scheduler:
    """The project's kube-scheduler for one run: its process and its /metrics."""

    def __init__(self, binary: Path, config: Path, log: Path, verbosity: int) -> None:
        (self.port,) = free_ports(1)
        cmd = [
            str(binary),
            f"--config={config}",
            f"--secure-port={self.port}",
            "--bind-address=127.0.0.1",
            # anonymous reads of /metrics on loopback (no authorization kubeconfig is given)
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
            f"-v={verbosity}",
        ]
        self.process = Process("kube-scheduler", cmd, log)
        # its serving certificate is self-signed and made up at start: nothing to verify it by
        self._ssl = ssl.create_default_context()
        self._ssl.check_hostname = False
        self._ssl.verify_mode = ssl.CERT_NONE

    @property
    def pid(self) -> int:
        return self.process.popen.pid

    def get(self, path: str, timeout: float = 10.0) -> str:
        url = f"https://127.0.0.1:{self.port}{path}"
        with urllib.request.urlopen(url, context=self._ssl, timeout=timeout) as response:
            return str(response.read().decode())

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        paths = ["/readyz", "/healthz"]  # 1.28 serves no /readyz
        while time.monotonic() < deadline:
            self.process.check()
            try:
                if self.get(paths[0], timeout=2).strip() == "ok":
                    return
            except urllib.error.HTTPError as err:
                err.close()
                if err.code == 404 and len(paths) > 1:
                    paths.pop(0)
            except OSError:
                pass
            time.sleep(0.2)
        raise OperationError(
            f"kube-scheduler did not answer on 127.0.0.1:{self.port} within {timeout:.0f}s", details=self.process.tail()
        )

    def scrape(self, prefixes: tuple[str, ...] = ("scheduler_",)) -> list[metrics.Sample]:
        try:
            return metrics.parse(self.get("/metrics"), prefixes)
        except OSError as err:
            self.process.check()
            raise OperationError(f"kube-scheduler /metrics: {err}") from None

    def stop(self) -> None:
        self.process.stop()


# --- one run -----------------------------------------------------------------------------


class _Churn:
    """A churn op in the background: every interval, one object per template is created
    (create mode, up to ``number`` rounds) or, in recreate mode, created in ``number``
    rounds and deleted in the next ``number``, and so on."""

    def __init__(self, run: _Run, op: Churn) -> None:
        self.run = run
        self.op = op
        self.stop_event = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._loop, daemon=True, name="kplugin-bench-churn")

    def _create(self, template: dict[str, Any], serial: int) -> tuple[str, str]:
        run, cluster = self.run, self.run.cluster
        prefix = f"churn-{self.op.index}-"
        if template.get("kind") == "Node":
            name = cluster.node_name(prefix, serial)
            cluster.client.request("POST", "/api/v1/nodes", cluster.node(template, name, serial, None, run.number))
            return "/api/v1/nodes", name
        namespace = cluster.namespace(self.op.namespace)
        name = f"{prefix}{run.number}-{serial}"
        body = cluster.pod(template, name, namespace, run.profile.scheduler_name, run.number, self.op.index)
        path = f"/api/v1/namespaces/{namespace}/pods"
        cluster.client.request("POST", path, body)
        return path, name

    def _loop(self) -> None:
        try:
            slots: list[list[tuple[str, str] | None]] = [[None] * self.op.number for _ in self.op.templates]
            serial, rounds = 0, 0
            while not self.stop_event.wait(self.op.interval):
                if self.op.mode == "create" and rounds >= self.op.number:
                    return
                for i, template in enumerate(self.op.templates):
                    slot = rounds % self.op.number
                    if self.op.mode == "recreate" and slots[i][slot] is not None:
                        path, name = slots[i][slot]  # type: ignore[misc]
                        with contextlib.suppress(ApiError):
                            self.run.cluster.client.request("DELETE", f"{path}/{name}?gracePeriodSeconds=0")
                        slots[i][slot] = None
                    else:
                        slots[i][slot] = self._create(template, serial)
                        serial += 1
                rounds += 1
        except BaseException as err:  # handed to the run
            self.error = err
        finally:
            self.run.cluster.client.close()  # this thread's connection

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(timeout=10)


@dataclass
class _Run:
    number: int
    repeat: int
    profile: Profile
    cluster: Cluster
    scheduler: Scheduler
    watch: BindWatch
    settings: Settings
    reporter: Reporter
    workload: Workload
    apiserver_pid: int | None
    plugins: tuple[str, ...]
    churns: list[_Churn] = field(default_factory=list)
    expected: dict[int, int] = field(default_factory=dict)  # op index -> pods created
    result: RunResult | None = None

    def limiter(self) -> RateLimiter:
        return RateLimiter(self.settings.client_qps, self.settings.client_burst)

    def check(self) -> None:
        self.scheduler.process.check()
        self.watch.check()
        for churn in self.churns:
            if churn.error is not None:
                raise churn.error

    def execute(self, op: Op) -> None:
        if isinstance(op, CreateNamespaces):
            for name in op.names:
                self.cluster.ensure_namespace(name, op.template)
        elif isinstance(op, CreateNodes):
            _create_nodes(self.cluster, op, self.settings, self.reporter, run=self.number)
        elif isinstance(op, CreatePods):
            self.create_pods(op)
        elif isinstance(op, Barrier):
            self.barrier(op)
        elif isinstance(op, Churn):
            self.cluster.ensure_namespace(op.namespace)
            churn = _Churn(self, op)
            self.churns.append(churn)
            churn.thread.start()
        elif isinstance(op, Sleep):
            self.reporter.step(f"{self.label}: sleep {op.seconds:g}s")
            deadline = time.monotonic() + op.seconds
            while (left := deadline - time.monotonic()) > 0:
                self.check()
                time.sleep(min(left, 0.25))

    def _creation(self, op: CreatePods) -> Creation:
        namespace = self.cluster.namespace(op.namespace)
        prefix = str((op.template.get("metadata") or {}).get("generateName") or "pod-")
        scheduler = self.profile.scheduler_name
        path = f"/api/v1/namespaces/{namespace}/pods"

        def make(i: int) -> tuple[str, dict[str, Any]]:
            return path, self.cluster.pod(
                op.template, f"{prefix}{self.number}-{i}", namespace, scheduler, self.number, op.index
            )

        def refused(_: int, err: ApiError) -> BaseException:
            if err.status in (400, 422):
                return UsageError(
                    f"{self.workload.source}: workloadTemplate[{op.index}] (createPods): the API server refuses "
                    f"its pods: {err.detail}"
                )
            return err

        creation = Creation(self.cluster.client, op.count, make, self.limiter(), self.settings.workers)
        creation.refused = refused
        return creation

    def create_pods(self, op: CreatePods) -> None:
        self.cluster.ensure_namespace(op.namespace)
        self.expected[op.index] = op.count
        if op.collect_metrics:
            self.measure(op)
            return
        self.reporter.bar(f"{self.label}: creating {op.count} pods ({self.cluster.namespace(op.namespace)})", op.count)
        creation = self._creation(op).start()

        def tick() -> None:
            self.check()
            self.reporter.advance(creation.created)

        creation.wait(tick)
        self.reporter.advance(creation.created)
        self.reporter.finish()
        if not op.skip_wait:
            self.wait_bound([op.index], f"{op.count} pods of workloadTemplate[{op.index}]")

    @property
    def label(self) -> str:
        return f"{self.profile.kind} #{self.repeat}"

    def bound(self, op: int) -> int:
        return self.watch.count(str(op))

    def wait_bound(self, ops: list[int], what: str) -> None:
        total = sum(self.expected.get(i, 0) for i in ops)
        self.reporter.bar(f"{self.label}: scheduling {what}", total)
        last, last_change = -1, time.monotonic()
        while True:
            self.check()
            done = sum(self.bound(i) for i in ops)
            self.reporter.advance(done)
            if done >= total:
                break
            if done != last:
                last, last_change = done, time.monotonic()
            elif time.monotonic() - last_change > self.settings.stall_timeout:
                raise self.stalled(done, total)
            time.sleep(0.1)
        self.reporter.finish()

    def stalled(self, done: int, total: int) -> OperationError:
        pending = metrics.value(
            self.scheduler.scrape(("scheduler_pending_pods",)), "scheduler_pending_pods", {"queue": "unschedulable"}
        )
        why = f"; {pending:.0f} unschedulable (too many pods for the nodes?)" if pending else ""
        return OperationError(
            f"{self.label}: {done} of {total} pods bound, none more in {self.settings.stall_timeout:.0f}s{why}"
        )

    def barrier(self, op: Barrier) -> None:
        namespaces = [self.cluster.namespace(n) for n in op.namespaces] or list(self.cluster.namespaces)
        selector = ",".join([f"{RUN_LABEL}={self.number}", *(f"{k}={v}" for k, v in op.label_selector)])
        self.reporter.step(f"{self.label}: barrier (every pod scheduled)")
        last_change, last = time.monotonic(), None
        while True:
            self.check()
            waiting = 0
            for namespace in namespaces:
                listed = self.cluster.client.get(
                    query(
                        f"/api/v1/namespaces/{namespace}/pods", label_selector=selector, field_selector="spec.nodeName="
                    )
                )
                waiting += len(listed.get("items") or [])
            if waiting == 0:
                return
            if waiting != last:
                last, last_change = waiting, time.monotonic()
            elif time.monotonic() - last_change > self.settings.stall_timeout:
                raise self.stalled(0, waiting)
            time.sleep(0.2)

    def measure(self, op: CreatePods) -> None:
        """The measured createPods: collectors start before its pods are created and stop
        when the last one is bound (scheduler_perf's collectMetrics)."""
        scheduler, settings = self.scheduler, self.settings
        time.sleep(FLUSH_SECONDS)  # the earlier phases' sampled plugin durations reach /metrics first
        before = scheduler.scrape()
        load0 = os.getloadavg()[0]
        cpu0, own0 = _cpu_seconds(scheduler.pid), _own_cpu()
        api0 = _cpu_seconds(self.apiserver_pid) if self.apiserver_pid else None
        sampler = metrics.ThroughputSampler()
        namespace = self.cluster.namespace(op.namespace)
        self.reporter.bar(f"{self.label}: measuring {op.count} pods ({namespace})", op.count)
        creation = self._creation(op).start()
        queue_ticks = dry_ticks = 0
        min_active: float | None = None
        min_backlog: int | None = None
        next_tick = time.monotonic() + 1.0
        last, last_change = 0, time.monotonic()
        try:
            while True:
                self.check()
                creation.check()
                now = time.monotonic()
                bound = self.bound(op.index)
                creating = not creation.done
                if creating and bound > 0:
                    backlog = creation.created - bound
                    min_backlog = backlog if min_backlog is None else min(min_backlog, backlog)
                if now >= next_tick:
                    sampler.tick(now, bound)
                    while next_tick <= now:
                        next_tick += 1.0
                    if creating and bound > 0:
                        samples = scheduler.scrape(("scheduler_pending_pods",))
                        active = metrics.value(samples, "scheduler_pending_pods", {"queue": "active"})
                        queue_ticks += 1
                        dry_ticks += active == 0
                        min_active = active if min_active is None else min(min_active, active)
                self.reporter.advance(bound)
                if bound >= op.count:
                    break
                if bound != last:
                    last, last_change = bound, now
                elif now - last_change > settings.stall_timeout:
                    raise self.stalled(bound, op.count)
                time.sleep(max(0.0, min(0.25, next_tick - time.monotonic())))
            stats = creation.wait()
        finally:
            creation.stop()
        cpu1, own1 = _cpu_seconds(scheduler.pid), _own_cpu()
        api1 = _cpu_seconds(self.apiserver_pid) if self.apiserver_pid else None
        self.reporter.finish()
        binds = self.watch.bind_times(str(op.index))
        seconds = (max(binds) - stats.started) if binds else 0.0
        samples_list, points, sampled = list(sampler.samples), list(sampler.points), True
        if not samples_list and len(binds) > 1 and max(binds) > min(binds):
            # shorter than two ticks: scheduler_perf would report nothing; one sample over the run
            rate = (len(binds) - 1) / (max(binds) - min(binds))
            samples_list, points, sampled = [rate], [(max(binds), rate)], False
        time.sleep(FLUSH_SECONDS)
        after = scheduler.scrape()
        origin = min(binds) if binds else 0.0
        self.result = replace(
            _result(
                self,
                op,
                before,
                after,
                samples=tuple(samples_list),
                points=tuple((round(t - origin, 3), r) for t, r in points),
                sampled=sampled,
                seconds=seconds,
                creation=stats,
                queue=QueueFacts(queue_ticks, dry_ticks, min_active, min_backlog),
                cpu=cpu1 - cpu0,
                api=(api1 - api0) if api0 is not None and api1 is not None else None,
                own=own1 - own0,
            ),
            load_average=(round(load0, 2), round(os.getloadavg()[0], 2)),
        )


def _result(
    run: _Run,
    op: CreatePods,
    before: list[metrics.Sample],
    after: list[metrics.Sample],
    *,
    samples: tuple[float, ...],
    points: tuple[tuple[float, float], ...],
    sampled: bool,
    seconds: float,
    creation: CreationStats,
    queue: QueueFacts,
    cpu: float,
    api: float | None,
    own: float,
) -> RunResult:
    name = run.profile.scheduler_name

    def diff(metric: str, by: tuple[str, ...], where: dict[str, str]) -> dict[metrics.Labels, metrics.Histogram]:
        earlier = metrics.histograms(before, metric, by, where)
        return {k: h - earlier.get(k, metrics.EMPTY) for k, h in metrics.histograms(after, metric, by, where).items()}

    attempts = diff("scheduler_scheduling_attempt_duration_seconds", (), {"result": "scheduled", "profile": name})
    e2e_metric = next(
        (m for m in ("scheduler_pod_scheduling_sli_duration_seconds", "scheduler_pod_scheduling_duration_seconds")
         if any(s.name.startswith(m) for s in after)),
        "scheduler_pod_scheduling_sli_duration_seconds",
    )  # fmt: skip
    e2e = diff(e2e_metric, (), {})
    points_by = diff("scheduler_framework_extension_point_duration_seconds", ("extension_point",), {"profile": name})
    plugin_series = diff("scheduler_plugin_execution_duration_seconds", ("plugin", "extension_point"), {})
    attempts_total = {
        result: metrics.value(after, "scheduler_schedule_attempts_total", {"result": result, "profile": name})
        - metrics.value(before, "scheduler_schedule_attempts_total", {"result": result, "profile": name})
        for result in ("scheduled", "unschedulable", "error")
    }
    return RunResult(
        profile=run.profile.kind,
        scheduler_name=name,
        repeat=run.repeat,
        measured_pods=op.count,
        samples=samples,
        points=points,
        sampled=sampled,
        seconds=seconds,
        creation=creation,
        queue=queue,
        attempts=attempts.get((), metrics.EMPTY),
        e2e=e2e.get((), metrics.EMPTY),
        e2e_metric=e2e_metric,
        extension_points={dict(k)["extension_point"]: h for k, h in points_by.items() if h.count > 0},
        plugins={
            (dict(k)["plugin"], dict(k)["extension_point"]): h
            for k, h in plugin_series.items()
            if h.count > 0 and dict(k)["plugin"] in run.plugins
        },
        attempts_total=attempts_total,
        cpu_seconds=cpu,
        peak_rss=0,
        apiserver_cpu=api,
        loadgen_cpu=own,
    )


# --- the whole benchmark ---------------------------------------------------------------------


_deferring = threading.local()


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Cleanup that a second Ctrl-C (or SIGTERM) cannot cut short: the signals that
    arrive meanwhile are held and raised after it, unless an error is on its way
    already. Only the main thread can do this; elsewhere it does nothing."""
    if threading.current_thread() is not threading.main_thread() or getattr(_deferring, "active", False):
        yield
        return
    held: list[signal.Signals] = []
    watched = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {signum: signal.getsignal(signum) for signum in watched}

    def hold(signum: int, _frame: object) -> None:
        held.append(signal.Signals(signum))

    _deferring.active = True
    for signum in watched:
        signal.signal(signum, hold)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _deferring.active = False
    if held:
        handler = previous[held[0]]
        if callable(handler):
            handler(held[0], None)
        else:
            raise KeyboardInterrupt


def _node_prefix(cluster: Cluster, op: CreateNodes) -> str:
    prefix = str((op.template.get("metadata") or {}).get("generateName") or f"node-{op.index}-")
    if prefix in cluster.node_prefixes:  # two ops of one template: names of their own
        prefix = f"{prefix}{op.index}-"
    cluster.node_prefixes.add(prefix)
    return prefix


def _create_nodes(
    cluster: Cluster, op: CreateNodes, settings: Settings, reporter: Reporter, run: int | None
) -> CreationStats:
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
    creation = Creation(
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


def _remove_run(cluster: Cluster, number: int) -> None:
    """Everything one run created: its pods (deleted at once: no kubelet waits on them) and
    the nodes its ops made; the cluster's nodes and the namespaces stay for the next run."""
    selector = f"{BENCH_LABEL}={cluster.id},{RUN_LABEL}={number}"
    for namespace in cluster.namespaces:
        cluster.client.request(
            "DELETE", query(f"/api/v1/namespaces/{namespace}/pods", label_selector=selector, grace_period_seconds=0)
        )
    cluster.client.request("DELETE", query("/api/v1/nodes", label_selector=selector))
    _wait_gone(cluster.client, query("/api/v1/pods", label_selector=selector), f"pods of run {number}")


def remove_everything(cluster: Cluster, reporter: Reporter, finalize_after: float = 10.0) -> list[str]:
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


def check_cluster(cluster: Cluster, inputs: Inputs) -> None:
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
                f"{meta['name']}): a scheduler of that name may be running there; pass --allow-existing-pods "
                "to benchmark anyway"
            )


def _one_run(
    number: int,
    repeat: int,
    profile: Profile,
    cluster: Cluster,
    inputs: Inputs,
    binary: Path,
    settings: Settings,
    reporter: Reporter,
    work: Path,
    apiserver_pid: int | None,
) -> RunResult:
    config = work / f"scheduler-{number}-{profile.kind}.yaml"
    config.write_text(yamlio.dump(scheduler_document(profile, cluster.kubeconfig, settings)))
    reporter.step(f"run {number}: {profile.kind} profile (schedulerName {profile.scheduler_name}), repeat {repeat}")
    scheduler = Scheduler(binary, config, work / f"kube-scheduler-{number}-{profile.kind}.log", settings.verbosity)
    watch: BindWatch | None = None
    run: _Run | None = None
    try:
        scheduler.wait_ready()
        selector = f"{BENCH_LABEL}={cluster.id},{RUN_LABEL}={number}"
        watch = BindWatch(cluster.client, selector, OP_LABEL).start()
        run = _Run(
            number=number,
            repeat=repeat,
            profile=profile,
            cluster=cluster,
            scheduler=scheduler,
            watch=watch,
            settings=settings,
            reporter=reporter,
            workload=inputs.workload,
            apiserver_pid=apiserver_pid,
            plugins=inputs.plugins,
        )
        for op in inputs.workload.run_ops:
            run.execute(op)
        run.check()
        peak = _peak_rss(scheduler.pid)
    finally:
        with _signals_deferred():
            for churn in run.churns if run is not None else []:
                churn.stop()
            if watch is not None:
                watch.stop()
            scheduler.stop()
    # the next run starts with no pods (after a failure, the benchmark's own cleanup of an
    # existing cluster, or the local control plane's end, takes them instead)
    with _signals_deferred():
        _remove_run(cluster, number)
    assert run is not None and run.result is not None
    return replace(run.result, peak_rss=peak)


def run(inputs: Inputs, binary: Path, apiserver: Path | None, settings: Settings, reporter: Reporter) -> Outcome:
    """The benchmark: the cluster's nodes once, then ``settings.repeat`` pairs of runs."""
    started = time.monotonic()
    bench_id = secrets.token_hex(3)
    work = Path(tempfile.mkdtemp(prefix=f"kplugin-bench-{inputs.project.name}-"))
    notices = list(inputs.notices)
    stack = contextlib.ExitStack()
    try:
        apiserver_pid = None
        if inputs.kubeconfig is None:
            assert apiserver is not None
            plane = stack.enter_context(ControlPlane(work, apiserver, reporter.step))
            client = plane.client(timeout=CLIENT_TIMEOUT)
            kubeconfig = plane.kubeconfig()
            apiserver_pid = next(p.popen.pid for p in plane.processes if p.name == "kube-apiserver")
            mode = "local control plane"
        else:
            endpoint = inputs.endpoint or kubeconfigs.endpoint(inputs.kubeconfig)
            client = Client(endpoint, timeout=CLIENT_TIMEOUT)
            # the chosen context alone, relative paths made absolute: the scheduler cannot pick one
            kubeconfig = inputs.kubeconfig.write_narrowed(work / "kubeconfig")
            mode = endpoint.server
        stack.callback(client.close)
        cluster = Cluster(client, kubeconfig, bench_id, existing=inputs.kubeconfig is not None)
        if cluster.existing:
            reporter.step(f"checking {mode} (schedulerNames in use)")
            check_cluster(cluster, inputs)
            stack.callback(lambda: notices.extend(remove_everything(cluster, reporter)))
        node_stats = CreationStats()
        for op in inputs.workload.cluster_nodes:
            node_stats = node_stats + _create_nodes(cluster, op, settings, reporter, run=None)
        runs = []
        number = 0
        baseline, project = inputs.profiles
        for repeat in range(1, settings.repeat + 1):
            for profile in (baseline, project) if repeat % 2 else (project, baseline):
                number += 1
                runs.append(
                    _one_run(number, repeat, profile, cluster, inputs, binary, settings, reporter, work, apiserver_pid)
                )
    except BaseException as err:
        with _signals_deferred():
            try:
                stack.close()
            except Exception as cleanup:  # the first failure is the one to tell; this one goes under it
                if isinstance(err, KpluginError):
                    err.details.append(f"and cleaning up failed: {cleanup}")
        raise
    else:
        with _signals_deferred():
            stack.close()
    finally:
        if not settings.keep:
            shutil.rmtree(work, ignore_errors=True)
    return Outcome(
        kubernetes=str(inputs.project.version),
        project=inputs.project.name,
        plugins=inputs.plugins,
        workload=inputs.workload,
        mode=mode,
        settings=settings,
        runs=tuple(runs),
        nodes=node_stats,
        scheduler_names={p.kind: p.scheduler_name for p in inputs.profiles},
        seconds=round(time.monotonic() - started, 1),
        notices=tuple(notices),
        work=work if settings.keep else None,
    )


def load_workload(choice: str, case: str | None) -> Workload | None:
    """--workload: a file if one exists at that path, else a built-in name (None for
    "plugin", which needs the project's args)."""
    from kplugin.bench import workload as workloads

    path = Path(choice)
    if choice in workloads.BUILT_IN and not path.exists():
        if case is not None:
            raise UsageError(f"--case is for a workload file; {choice} is a built-in workload")
        return None if choice == "plugin" else workloads.built_in(choice)
    if not path.exists() and "/" not in choice and not choice.endswith((".yaml", ".yml", ".json")):
        raise UsageError(
            f"--workload {choice[:60]!r}: no such built-in workload ({', '.join(workloads.BUILT_IN)}) and no such file"
        )
    return workloads.load(path, case)


def prepare(
    project: Project,
    choice: str,
    *,
    case: str | None = None,
    nodes: int | None = None,
    pods: int | None = None,
    kubeconfig: Path | None = None,
    context: str | None = None,
    allow_existing_pods: bool = False,
    progress: Callable[[str], None] = lambda _: None,
) -> Inputs:
    """Everything a benchmark needs from the user, read and checked before anything is
    built or started: the workload (cheap) first, then the kubeconfig, then the
    profiles (whose args the plugins' Go code decodes)."""
    from kplugin.bench import workload as workloads

    workloads.check_count(nodes, "--nodes", workloads.MAX_NODES, "nodes")
    workloads.check_count(pods, "--pods", workloads.MAX_PODS, "pods")
    loaded = load_workload(choice, case)
    cluster_config = endpoint = None
    if kubeconfig is not None:
        cluster_config = kubeconfigs.load(kubeconfig, context)
        endpoint = kubeconfigs.endpoint(cluster_config)  # an exec plugin runs once, here
    request = render.RenderRequest(project=project, target=project.target, leader_elect=False)
    config, notices = render.compose_config(request, progress)
    plugins = tuple(p.name for p in project.plugins)
    if loaded is None:
        loaded = workloads.plugin_workload(config.args, plugins)
    scaled = loaded.scaled(nodes, pods)
    return Inputs(
        project=project,
        workload=scaled,
        profiles=profiles(config, project),
        plugins=plugins,
        kubeconfig=cluster_config,
        endpoint=endpoint,
        allow_existing_pods=allow_existing_pods,
        notices=(*notices, *scaled.notices),
    )
