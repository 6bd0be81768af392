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
import secrets
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kplugin.bench import cpuprofile
from kplugin.bench import scheduler as schedulers
from kplugin.bench import workload as workloads
from kplugin.bench.cluster import (
    BENCH_LABEL,
    OP_LABEL,
    RUN_LABEL,
    BenchCluster,
    check_cluster,
    create_nodes,
    remove_everything,
    remove_run,
)
from kplugin.bench.loadgen import BindWatch, CreationStats
from kplugin.bench.ops import MAX_NODES, MAX_PODS, Workload, check_count
from kplugin.bench.outcome import BenchOutcome, RunResult
from kplugin.bench.phases import WorkloadRun
from kplugin.bench.plan import (
    Bars,
    BenchInputs,
    BenchProfile,
    Settings,
    own_profiles,
    profiles,
    scheduler_document,
)
from kplugin.bench.results import EXTENSION_POINTS
from kplugin.bench.scheduler import peak_rss
from kplugin.bench.shaped import plugin_workload
from kplugin.config import render
from kplugin.config.own import own_config
from kplugin.core import yamlio
from kplugin.core.errors import KpluginError, OperationError, Setting, UsageError
from kplugin.kube import discovery, kinds
from kplugin.kube import kubeconfig as kubeconfigs
from kplugin.kube.apiclient import Client
from kplugin.kube.cluster import require_served
from kplugin.kube.controlplane import ControlPlane
from kplugin.model.project import Project
from kplugin.model.versions import Target

# what the command line uses (BenchInputs and Settings are plan's, given here too), and
# results' EXTENSION_POINTS, which tests/unit/model/test_extension_points.py reads here
__all__ = ["EXTENSION_POINTS", "BenchInputs", "Settings", "check_config", "prepare", "run"]

CLIENT_TIMEOUT = 60.0  # the load generator's requests (a loaded API server answers slowly)


def check_config(inputs: BenchInputs, scheduler: Path, settings: Settings) -> str | None:
    """Both profiles loaded by the project's own scheduler (--write-config-to,
    kplugin.config.render.check_run_config): for an adopted repository whose plugin's
    factory waits for an API server, what is said instead of a verdict."""
    for profile in inputs.profiles:
        document = scheduler_document(profile, Path("/dev/null"), settings)
        shown = f"the {profile.kind} configuration"
        then, gates = "each run's scheduler loads it against the cluster", inputs.gate_flags.scheduler
        if (undecided := render.check_run_config(inputs.project, scheduler, document, shown, gates, then)) is not None:
            return undecided
    return None


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


def _one_run(
    number: int,
    repeat: int,
    profile: BenchProfile,
    cluster: BenchCluster,
    inputs: BenchInputs,
    binary: Path,
    settings: Settings,
    reporter: Bars,
    work: Path,
    apiserver_pid: int | None,
) -> RunResult:
    config = work / f"scheduler-{number}-{profile.kind}.yaml"
    config.write_text(yamlio.dump(scheduler_document(profile, cluster.kubeconfig, settings)))
    reporter.step(f"run {number}: {profile.kind} profile (schedulerName {profile.scheduler_name}), repeat {repeat}")
    log = work / f"kube-scheduler-{number}-{profile.kind}.log"
    profiling = settings.cpu_profiles is not None
    flags = inputs.gate_flags.scheduler
    prefix = inputs.project.scheduler_arguments
    scheduler = schedulers.start(binary, config, log, settings.verbosity, flags, profiling, prefix)
    watch: BindWatch | None = None
    run: WorkloadRun | None = None
    try:
        scheduler.wait_ready()
        selector = f"{BENCH_LABEL}={cluster.id},{RUN_LABEL}={number}"
        watch = BindWatch(cluster.client, selector, OP_LABEL).start()
        run = WorkloadRun(
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
            profile_dir=work if profiling else None,
        )
        for op in inputs.workload.run_ops:
            run.execute(op)
        run.check()
        peak = peak_rss(scheduler.pid)
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
        remove_run(cluster, number)
    assert run is not None and run.result is not None
    return replace(run.result, peak_rss=peak, cpu_chunks=tuple(run.profile_chunks))


def run(inputs: BenchInputs, binary: Path, apiserver: Path | None, settings: Settings, reporter: Bars) -> BenchOutcome:
    """The benchmark: the cluster's nodes once, then ``settings.repeat`` pairs of runs."""
    started = time.monotonic()
    bench_id = secrets.token_hex(3)
    work = Path(tempfile.mkdtemp(prefix=f"kplugin-bench-{inputs.project.name}-"))
    notices = list(inputs.notices)
    stack = contextlib.ExitStack()
    try:
        target = _enter(stack, inputs, apiserver, work, reporter)
        cluster = BenchCluster(target.client, target.kubeconfig, bench_id, existing=inputs.kubeconfig is not None)
        mode = target.mode
        if cluster.existing:
            reporter.step(f"checking {mode} (schedulerNames in use)")
            check_cluster(cluster, inputs)
            require_served(target.client, inputs.gate_flags.served)
            stack.callback(lambda: notices.extend(remove_everything(cluster, reporter)))
        node_stats = CreationStats()
        for op in inputs.workload.cluster_nodes:
            node_stats = node_stats + create_nodes(cluster, op, settings, reporter, run=None)
        runs = []
        number = 0
        baseline, project = inputs.profiles
        for repeat in range(1, settings.repeat + 1):
            for profile in (baseline, project) if repeat % 2 else (project, baseline):
                number += 1
                runs.append(
                    _one_run(
                        number, repeat, profile, cluster, inputs, binary, settings, reporter, work, target.apiserver_pid
                    )
                )
        cpu_profiles = _merged_profiles(runs, inputs, settings, reporter, notices)
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
    return BenchOutcome(
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
        cpu_profiles=cpu_profiles,
        module=inputs.project.module,
    )


@dataclass(frozen=True)
class _Target:
    """Where the benchmark runs: a client of its API server, the kubeconfig its
    schedulers get, the API server's pid (one kplugin started), and how it is named."""

    client: Client
    kubeconfig: Path
    apiserver_pid: int | None
    mode: str


def _enter(
    stack: contextlib.ExitStack, inputs: BenchInputs, apiserver: Path | None, work: Path, reporter: Bars
) -> _Target:
    """A local control plane (kube-apiserver ``apiserver``, with the gates the plugins'
    points need), or the cluster of --kubeconfig; closed with ``stack``."""
    if inputs.kubeconfig is None:
        assert apiserver is not None
        gated = inputs.gate_flags.apiserver  # what the plugins' points need
        plane = stack.enter_context(ControlPlane(work, apiserver, reporter.step, gated))
        client = plane.client(timeout=CLIENT_TIMEOUT)
        stack.callback(client.close)
        _create_crds(client, inputs.project, reporter)
        pid = next(p.popen.pid for p in plane.processes if p.name == "kube-apiserver")
        return _Target(client, plane.kubeconfig(), pid, "local control plane")
    endpoint = inputs.endpoint or kubeconfigs.endpoint(inputs.kubeconfig)
    client = Client(endpoint, timeout=CLIENT_TIMEOUT)
    stack.callback(client.close)
    # the chosen context alone, relative paths made absolute: the scheduler cannot pick one
    return _Target(client, inputs.kubeconfig.write_narrowed(work / "kubeconfig"), None, endpoint.server)


def _create_crds(client: Client, project: Project, reporter: Bars) -> None:
    """The project's CRDs on the local control plane, served before a scheduler starts (a
    plugin's informers of them would never sync otherwise)."""
    definitions = project.crd_definitions()
    if not definitions:
        return
    reporter.step(f"creating {len(definitions)} CustomResourceDefinition(s)")
    for definition in definitions:
        try:
            client.create(kinds.CRD.path(), definition.body)
        except OperationError as err:
            raise OperationError(
                f"{definition.where}: creating CustomResourceDefinition {definition.name}: {err}"
            ) from err
    discovery.wait_established(client, [d.name for d in definitions])


def _merged_profiles(
    runs: list[Any], inputs: BenchInputs, settings: Settings, reporter: Bars, notices: list[str]
) -> tuple[cpuprofile.CpuProfile, ...]:
    """The runs' CPU profiles, merged per profile (--cpu-profiles); none when not asked or
    when pprof fails (the benchmark's figures stand without them: said in ``notices``)."""
    if settings.cpu_profiles is None:
        return ()
    reporter.step(f"merging the CPU profiles into {settings.cpu_profiles} (go tool pprof: Go builds it on first use)")
    recorded = [(r.profile, number, r.cpu_chunks) for number, r in enumerate(runs, 1)]
    try:
        return cpuprofile.collect(recorded, settings.cpu_profiles, inputs.project.module)
    except OperationError as err:
        notices.append(f"the CPU profiles were not written: {err}")
        return ()


def load_workload(choice: str, case: str | None) -> Workload | None:
    """--workload: a file if one exists at that path, else a built-in name (None for
    "plugin", which needs the project's args)."""
    path = Path(choice)
    if choice in workloads.BUILT_IN and not path.exists():
        if case is not None:
            raise UsageError(f"{Setting.CASE} is for a workload file; {choice} is a built-in workload")
        return None if choice == "plugin" else workloads.built_in(choice)
    if not path.exists() and "/" not in choice and not choice.endswith((".yaml", ".yml", ".json")):
        raise UsageError(
            f"{Setting.WORKLOAD} {choice[:60]!r}: no such built-in workload ({', '.join(workloads.BUILT_IN)}) "
            "and no such file"
        )
    return workloads.load(path, case)


def check_workload(
    choice: str, case: str | None, nodes: int | None, pods: int | None, target: Target
) -> Workload | None:
    """The counts and the workload (a file's or a built-in, scaled), checked against what
    ``target`` serves; None for the plugin workload, which the plugins' args shape."""
    check_count(nodes, Setting.NODES, MAX_NODES, "nodes")
    check_count(pods, Setting.PODS, MAX_PODS, "pods")
    loaded = load_workload(choice, case)
    if loaded is not None:  # a file's or a built-in: checked before the plugins' args are read (a build)
        loaded = loaded.scaled(nodes, pods)
        workloads.check_served(loaded, target)
    return loaded


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
) -> BenchInputs:
    """Everything a benchmark needs from the user, read and checked before anything is
    built or started: the workload (cheap) first, then the kubeconfig, then the
    profiles (whose args the plugins' Go code decodes)."""
    loaded = check_workload(choice, case, nodes, pods, project.target)
    cluster_config = endpoint = None
    if kubeconfig is not None:
        cluster_config = kubeconfigs.load(kubeconfig, context)
        endpoint = kubeconfigs.endpoint(cluster_config)  # an exec plugin runs once, here
    plugins = tuple(p.name for p in project.plugins)
    if project.layout is not None:  # an adopted repository's own configuration
        own, notices = own_config(project, project.target)
        args = {name: value for name, value in own.args.items() if name in plugins}
        compared = own_profiles(own, plugins, project.name)
    else:
        request = render.RenderRequest(project=project, target=project.target, leader_elect=False)
        config, notices = render.compose_config(request, progress)
        args, compared = config.args, profiles(config, project)
    scaled = loaded if loaded is not None else plugin_workload(args, plugins).scaled(nodes, pods)
    return BenchInputs(
        project=project,
        workload=scaled,
        profiles=compared,
        plugins=plugins,
        kubeconfig=cluster_config,
        endpoint=endpoint,
        allow_existing_pods=allow_existing_pods,
        notices=(*notices, *scaled.notices),
    )
