"""kplugin bench as one job: the workload, the cluster and the two profiles read and
checked before anything is built, the project's scheduler readied (kplugin.builder.ready),
the pairs of runs, and their outcome returned. The command line holds the options, the
printing, the report and the thresholds' exit code; the tests call this same ``run``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kplugin.bench.outcome import BenchOutcome
from kplugin.bench.plan import Bars, BenchInputs, Settings
from kplugin.bench.run import check_config, check_workload, prepare
from kplugin.bench.run import run as run_pairs
from kplugin.builder import BuilderName, BuildRequest, Choice
from kplugin.builder.ready import ready
from kplugin.core.progress import Observer
from kplugin.kube import controlplane
from kplugin.kube import kubeconfig as kubeconfigs
from kplugin.kube.kubeconfig import Kubeconfig
from kplugin.model.project import Project
from kplugin.model.versions import Target


@dataclass(frozen=True)
class Request:
    """One benchmark, as the options ask it."""

    project: Project  # as loaded, at its own pin
    target: Target  # the project's Kubernetes version, or --k8s's (a retargeted copy)
    workload: str = "basic"  # a built-in workload's name, or a scheduler_perf file
    case: str | None = None
    nodes: int | None = None
    pods: int | None = None
    kubeconfig: Path | None = None  # an existing cluster; None: the local control plane
    context: str | None = None
    allow_existing_pods: bool = False
    settings: Settings = field(default_factory=Settings)


def run(request: Request, observer: Observer) -> BenchOutcome:
    """The benchmark: its inputs checked, the scheduler built (in a retargeted copy, which
    goes with it, never in the project's bin/), then the pairs of runs."""
    # what the user gave, checked before anything is copied or built (prepare reads it again
    # from what is built, with the plugins' args)
    check_workload(request.workload, request.case, request.nodes, request.pods, request.target)
    if request.kubeconfig is not None:
        kubeconfigs.load(request.kubeconfig, request.context)
    else:
        controlplane.etcd_binary()
    build = BuildRequest(project=request.project, builder=BuilderName.LOCAL)
    choice, job = Choice(BuilderName.LOCAL, "bench"), _Job(request, observer)
    local = request.kubeconfig is None
    # keep_binary=False: a retargeted copy's binary goes with the copy, never into the project's bin/
    with ready(
        request.project, request.target, build, choice, job, observer, control_plane=local, keep_binary=False
    ) as done:
        observer.step(_headline(done.inputs, request.settings.repeat))
        return run_pairs(done.inputs, done.scheduler, done.apiserver, request.settings, Bars(observer))


class _Job:
    """ready's job for bench: the workload and profiles of the project built, both
    profiles checked by its scheduler."""

    def __init__(self, request: Request, observer: Observer) -> None:
        self.request = request
        self.observer = observer

    def prepare(self, project: Project) -> BenchInputs:
        r = self.request
        inputs = prepare(
            project,
            r.workload,
            case=r.case,
            nodes=r.nodes,
            pods=r.pods,
            kubeconfig=r.kubeconfig,
            context=r.context,
            allow_existing_pods=r.allow_existing_pods,
            progress=self.observer.step,
        )
        for notice in inputs.notices:
            self.observer.note(notice)
        return inputs

    def check(self, inputs: BenchInputs, scheduler: Path) -> str | None:
        return check_config(inputs, scheduler, self.request.settings)


def _headline(inputs: BenchInputs, repeat: int) -> str:
    w = inputs.workload
    return (
        f"bench: {w.title} ({w.nodes} nodes, {w.measured_pods} of {w.pods} pods measured) on "
        f"{'the local control plane' if inputs.kubeconfig is None else _where(inputs.kubeconfig)}, "
        f"{repeat} pair(s) of runs: baseline {inputs.profiles[0].scheduler_name} and "
        f"project {inputs.profiles[1].scheduler_name} ({', '.join(inputs.plugins)})"
    )


def _where(config: Kubeconfig) -> str:
    return f"{config.server} (context {config.context} of {config.path})"
