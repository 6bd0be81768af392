"""kplugin e2e as one job: every input read and checked (the scenario, the cluster of
--kubeconfig, the RBAC, the configuration) before anything is built, the project's
scheduler readied (kplugin.builder.ready), the scenario replayed once per profile, and
what happened returned. The command line holds the options, the printing and the exit
codes; the integration tests call this same ``run``."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from kplugin.builder import BuilderName, BuildRequest, Choice
from kplugin.builder.ready import Ready, ready
from kplugin.core.errors import Setting
from kplugin.core.progress import Observer
from kplugin.e2e import gates
from kplugin.e2e.replay import Session
from kplugin.e2e.run import (
    ClusterFactory,
    Inputs,
    Options,
    Outcome,
    check_config,
    existing_clusters,
    for_copy,
    local_clusters,
    outcome_of,
    prepare,
    read_scenario,
    sessions,
)
from kplugin.e2e.session import ProfileLabel
from kplugin.kube import apiclient, cluster, controlplane, labelselector
from kplugin.kube import kubeconfig as kubeconfigs
from kplugin.kube.kubeconfig import Kubeconfig
from kplugin.model.project import Project
from kplugin.model.versions import Target
from kplugin.scenario.format import Scenario
from kplugin.scenario.source import unread_note


@dataclass(frozen=True)
class Request:
    """One e2e run, as the options ask it."""

    project: Project  # as loaded, at its own pin
    target: Target  # the Kubernetes version to run on: the project's, or --k8s (a retargeted copy)
    scenario: Path | None = None  # None: the default scenario
    reschedule: str | None = None  # a label selector: the bound pods it matches are scheduled again
    kubeconfig: Path | None = None  # an existing cluster; None: a local control plane per replay
    context: str | None = None
    args_file: Path | None = None
    admin: bool = False
    weights: tuple[str, ...] = ()
    disable_default: tuple[str, ...] = ()
    feature_gates: tuple[tuple[str, bool], ...] = ()
    compare: bool = False  # also replay with the default profile
    options: Options = field(default_factory=Options)


@dataclass(frozen=True)
class Result:
    inputs: Inputs
    sessions: tuple[tuple[Session, Path | None], ...]  # each profile's session and the work kept (--keep)
    seconds: float

    def outcome(self) -> Outcome:
        """The project's profile's replay as one outcome."""
        return outcome_of(self.inputs, *self.sessions[0], self.seconds)


def run(request: Request, observer: Observer) -> Result:
    """The run: its inputs checked, the scheduler built, each profile replayed on a target
    of its own (a fresh local control plane, or the run's own part of --kubeconfig's
    cluster), everything it started stopped and removed after."""
    matcher = labelselector.parse(request.reschedule) if request.reschedule is not None else None
    existing = kubeconfigs.load(request.kubeconfig, request.context) if request.kubeconfig is not None else None
    loaded = _scenario(request, matcher, observer)
    inputs = _inputs(request, loaded, existing, observer)
    if existing is None:
        controlplane.etcd_binary()  # fail before building anything when etcd is missing
    labels = (ProfileLabel.PLUGIN, ProfileLabel.DEFAULT) if request.compare else (ProfileLabel.PLUGIN,)
    started = time.monotonic()
    build = BuildRequest(project=request.project, builder=BuilderName.LOCAL)
    choice, local = Choice(BuilderName.LOCAL, "e2e"), existing is None
    with ready(request.project, request.target, build, choice, _Job(inputs), observer, control_plane=local) as done:
        targets = _targets(existing, done, observer)
        replays = tuple(sessions(done.inputs, done.scheduler, targets, request.options, observer, labels))
    return Result(done.inputs, replays, time.monotonic() - started)


def _scenario(request: Request, matcher: labelselector.Matcher | None, observer: Observer) -> Scenario:
    """The scenario, its bound pods that --reschedule matches made pending again."""
    project = request.project
    loaded = read_scenario(request.scenario, request.target, project.root, project.crd_files)
    if lacking := unread_note(loaded.source):
        observer.note(f"{request.scenario}: {lacking}")
    if matcher is not None:
        loaded, count = loaded.rescheduled(matcher)
        if not count:
            observer.note(f"{Setting.RESCHEDULE} {request.reschedule}: no bound pod of the scenario matches")
    return loaded


def _inputs(request: Request, loaded: Scenario, existing: Kubeconfig | None, observer: Observer) -> Inputs:
    """The cluster answering (--kubeconfig), the RBAC and the configuration: read and
    checked before anything is built or started."""
    if existing is not None:
        probe = apiclient.Client(kubeconfigs.endpoint(existing))
        try:
            cluster.preflight(probe)  # reachable, authorized, no nodes of its own: before anything is built
        finally:
            probe.close()
    inputs = prepare(
        request.project,
        loaded,
        request.args_file,
        request.admin or existing is not None,
        observer.step,
        weights=request.weights,
        disable_default=request.disable_default,
        feature_gates=request.feature_gates,
    )
    for notice in inputs.notices:
        observer.note(notice)
    return inputs


class _Job:
    """ready's job for e2e: the inputs of the project built (the retargeted copy's own
    RBAC and configuration), the configuration checked by its scheduler."""

    def __init__(self, inputs: Inputs) -> None:
        self.inputs = inputs

    def prepare(self, project: Project) -> Inputs:
        return for_copy(self.inputs, project)

    def check(self, inputs: Inputs, scheduler: Path) -> str | None:
        return check_config(inputs, scheduler)  # the scheduler's own verdict, before anything starts


def _targets(existing: Kubeconfig | None, done: Ready[Inputs], observer: Observer) -> ClusterFactory:
    """A fresh local control plane for each replay, or a run's own Existing target
    (labels, namespaces) for each on the cluster of --kubeconfig; the gates said in one line."""
    if (line := gates.gates_line(done.inputs, existing=existing is not None)) is not None:
        observer.note(line)
    if (line := gates.alpha_pre_hints_line(done.inputs)) is not None:
        observer.note(line)
    if existing is None:
        assert done.apiserver is not None  # ready built it for the control plane
        return local_clusters(done.apiserver, done.inputs, observer.step)
    return existing_clusters(existing, done.inputs, observer.step)
