"""One run of a workload: its ops in order with the run's own scheduler (namespaces,
nodes, pods, barriers, churn in the background, sleeps), each waited for as
scheduler_perf waits, and the measured createPods (collectMetrics): the scheduler's
/metrics read at its edges, its throughput sampled once a second, whether its queue
ran dry, and the CPU the scheduler, the API server and the load generator used.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kplugin.bench import cpuprofile, metrics
from kplugin.bench.cluster import RUN_LABEL, BenchCluster, create_nodes
from kplugin.bench.loadgen import BindWatch, Make, PooledCreation, RateLimiter
from kplugin.bench.ops import (
    Barrier,
    Churn,
    CreateNamespaces,
    CreateNodes,
    CreatePodGroups,
    CreatePods,
    Op,
    Sleep,
    Workload,
)
from kplugin.bench.outcome import QueueFacts, RunResult, run_result
from kplugin.bench.plan import Bars, BenchProfile, Settings
from kplugin.bench.scheduler import FLUSH_SECONDS, cpu_seconds, own_cpu, scrape
from kplugin.core.errors import OperationError, UsageError
from kplugin.kube.apiclient import ApiError, query
from kplugin.kube.scheduler import Scheduler


class _Churn:
    """A churn op in the background: every interval, one object per template is created
    (create mode, up to ``number`` rounds) or, in recreate mode, created in ``number``
    rounds and deleted in the next ``number``, and so on."""

    def __init__(self, run: WorkloadRun, op: Churn) -> None:
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


@dataclass(frozen=True)
class _Cpu:
    """CPU seconds a measured phase took: the scheduler's, the API server's (None: not
    started here), kplugin's own (the load generator)."""

    scheduler: float
    apiserver: float | None
    own: float


@dataclass
class WorkloadRun:
    """One run: the workload's ops after the cluster's nodes, with the run's own
    scheduler; ``result`` is its measured phase's figures."""

    number: int
    repeat: int
    profile: BenchProfile
    cluster: BenchCluster
    scheduler: Scheduler
    watch: BindWatch
    settings: Settings
    reporter: Bars
    workload: Workload
    apiserver_pid: int | None
    plugins: tuple[str, ...]
    churns: list[_Churn] = field(default_factory=list)
    expected: dict[int, int] = field(default_factory=dict)  # op index -> pods created
    result: RunResult | None = None
    profile_dir: Path | None = None  # where the measured phase's CPU profile is recorded (None: not)
    profile_chunks: list[Path] = field(default_factory=list)  # what was recorded there

    def limiter(self) -> RateLimiter:
        return RateLimiter(self.settings.client_qps, self.settings.client_burst)

    def check(self) -> None:
        self.scheduler.check()
        self.watch.check()
        for churn in self.churns:
            if churn.error is not None:
                raise churn.error

    def execute(self, op: Op) -> None:
        match op:
            case CreateNamespaces():
                for name in op.names:
                    self.cluster.ensure_namespace(name, op.template)
            case CreateNodes():
                create_nodes(self.cluster, op, self.settings, self.reporter, run=self.number)
            case CreatePods():
                self.create_pods(op)
            case CreatePodGroups():
                self.create_pod_groups(op)
            case Barrier():
                self.barrier(op)
            case Churn():
                self.cluster.ensure_namespace(op.namespace)
                churn = _Churn(self, op)
                self.churns.append(churn)
                churn.thread.start()
            case Sleep():
                self.reporter.step(f"{self.label}: sleep {op.seconds:g}s")
                deadline = time.monotonic() + op.seconds
                while (left := deadline - time.monotonic()) > 0:
                    self.check()
                    time.sleep(min(left, 0.25))

    def _pool(self, op: CreatePods | CreatePodGroups, what: str, make: Make) -> PooledCreation:
        """The op's objects, to be created by the pool; an object the API server refuses
        is the workload's error."""

        def refused(_: int, err: ApiError) -> BaseException:
            if err.status in (400, 404, 422):
                return UsageError(
                    f"{self.workload.source}: workloadTemplate[{op.index}] ({op.opcode}): the API server refuses "
                    f"its {what}: {err.detail}"
                )
            return err

        creation = PooledCreation(self.cluster.client, op.count, make, self.limiter(), self.settings.workers)
        creation.refused = refused
        return creation

    def _create_all(self, creation: PooledCreation, what: str) -> None:
        """``creation`` from start to end, its progress shown."""
        self.reporter.bar(f"{self.label}: creating {what}", creation.count)
        creation.start()

        def tick() -> None:
            self.check()
            self.reporter.advance(creation.created)

        creation.wait(tick)
        self.reporter.advance(creation.created)
        self.reporter.finish()

    def _creation(self, op: CreatePods) -> PooledCreation:
        namespace = self.cluster.namespace(op.namespace)
        prefix = str((op.template.get("metadata") or {}).get("generateName") or "pod-")
        scheduler = self.profile.scheduler_name
        path = f"/api/v1/namespaces/{namespace}/pods"

        def make(i: int) -> tuple[str, dict[str, Any]]:
            return path, self.cluster.pod(
                op.pod(i), f"{prefix}{self.number}-{i}", namespace, scheduler, self.number, op.index
            )

        return self._pool(op, "pods", make)

    def create_pods(self, op: CreatePods) -> None:
        self.cluster.ensure_namespace(op.namespace)
        self.expected[op.index] = op.count
        if op.collect_metrics:
            self.measure(op)
            return
        self._create_all(self._creation(op), f"{op.count} pods ({self.cluster.namespace(op.namespace)})")
        if not op.skip_wait:
            self.wait_bound([op.index], f"{op.count} pods of workloadTemplate[{op.index}]")

    def create_pod_groups(self, op: CreatePodGroups) -> None:
        """The run's PodGroups, before the pods that name them (scheduler_perf also waits
        for its scheduler's informer to have them; here a pod whose group the scheduler has
        not seen yet waits in its queue until it has)."""
        self.cluster.ensure_namespace(op.namespace)
        namespace = self.cluster.namespace(op.namespace)
        path = f"/apis/{op.api_version}/namespaces/{namespace}/podgroups"

        def make(i: int) -> tuple[str, dict[str, Any]]:
            return path, self.cluster.pod_group(op.group(i), namespace, self.number)

        self._create_all(self._pool(op, "pod groups", make), f"{op.count} pod groups ({namespace})")

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
            scrape(self.scheduler, ("scheduler_pending_pods",)), "scheduler_pending_pods", {"queue": "unschedulable"}
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

    def _recorder(self) -> cpuprofile.Recorder | None:
        """The measured phase's CPU profile, recording (None: not asked for)."""
        if self.profile_dir is None:
            return None
        stem = f"run-{self.number}-{self.profile.kind}"
        return cpuprofile.Recorder(self.scheduler, self.profile_dir, stem).start()

    def measure(self, op: CreatePods) -> None:
        """The measured createPods: collectors start before its pods are created and stop
        when the last one is bound (scheduler_perf's collectMetrics)."""
        scheduler = self.scheduler
        time.sleep(FLUSH_SECONDS)  # the earlier phases' sampled plugin durations reach /metrics first
        before = scrape(scheduler)
        load0 = os.getloadavg()[0]
        cpu0, own0 = cpu_seconds(scheduler.pid), own_cpu()
        api0 = cpu_seconds(self.apiserver_pid) if self.apiserver_pid else None
        sampler = metrics.ThroughputSampler()
        namespace = self.cluster.namespace(op.namespace)
        self.reporter.bar(f"{self.label}: measuring {op.count} pods ({namespace})", op.count)
        recorder = self._recorder()
        try:  # the recorder stops however the phase ends (after the CPU is read: not its wait)
            creation = self._creation(op).start()
            try:
                queue = self._until_bound(op, creation, sampler)
                stats = creation.wait()
            finally:
                creation.stop()
            cpu1, own1 = cpu_seconds(scheduler.pid), own_cpu()
            api1 = cpu_seconds(self.apiserver_pid) if self.apiserver_pid else None
        finally:
            if recorder is not None:
                self.profile_chunks = recorder.stop()
        if recorder is not None:
            recorder.check()
        self.reporter.finish()
        api = (api1 - api0) if api0 is not None and api1 is not None else None
        cpu = _Cpu(scheduler=cpu1 - cpu0, apiserver=api, own=own1 - own0)
        self.result = replace(
            self._measured(op, before, sampler, stats, queue, cpu),
            load_average=(round(load0, 2), round(os.getloadavg()[0], 2)),
            measured_groups=len({group for i in range(op.count) if (group := op.pod_group(i))}),
        )

    def _until_bound(self, op: CreatePods, creation: Any, sampler: metrics.ThroughputSampler) -> QueueFacts:
        """Wait until every pod of ``op`` is bound, sampling throughput each second and,
        while pods are still being created, the active queue (was it ever dry: the load
        generator, not the scheduler, set the pace then)."""
        queue_ticks = dry_ticks = 0
        min_active: float | None = None
        min_backlog: int | None = None
        next_tick = time.monotonic() + 1.0
        last, last_change = 0, time.monotonic()
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
                    samples = scrape(self.scheduler, ("scheduler_pending_pods",))
                    active = metrics.value(samples, "scheduler_pending_pods", {"queue": "active"})
                    queue_ticks += 1
                    dry_ticks += active == 0
                    min_active = active if min_active is None else min(min_active, active)
            self.reporter.advance(bound)
            if bound >= op.count:
                return QueueFacts(queue_ticks, dry_ticks, min_active, min_backlog)
            if bound != last:
                last, last_change = bound, now
            elif now - last_change > self.settings.stall_timeout:
                raise self.stalled(bound, op.count)
            time.sleep(max(0.0, min(0.25, next_tick - time.monotonic())))

    def _measured(
        self,
        op: CreatePods,
        before: Any,
        sampler: metrics.ThroughputSampler,
        stats: Any,
        queue: QueueFacts,
        cpu: _Cpu,
    ) -> RunResult:
        """The phase's result from its binds, samples and the metrics after it."""
        binds = self.watch.bind_times(str(op.index))
        seconds = (max(binds) - stats.started) if binds else 0.0
        samples_list, points, sampled = list(sampler.samples), list(sampler.points), True
        if not samples_list and len(binds) > 1 and max(binds) > min(binds):
            # shorter than two ticks: scheduler_perf would report nothing; one sample over the run
            rate = (len(binds) - 1) / (max(binds) - min(binds))
            samples_list, points, sampled = [rate], [(max(binds), rate)], False
        time.sleep(FLUSH_SECONDS)
        after = scrape(self.scheduler)
        origin = min(binds) if binds else 0.0
        return run_result(
            self.profile,
            self.repeat,
            self.plugins,
            op.count,
            before,
            after,
            samples=tuple(samples_list),
            points=tuple((round(t - origin, 3), r) for t, r in points),
            sampled=sampled,
            seconds=seconds,
            creation=stats,
            queue=queue,
            cpu=cpu.scheduler,
            api=cpu.apiserver,
            own=cpu.own,
        )
