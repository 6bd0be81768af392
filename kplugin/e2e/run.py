"""``kplugin e2e``: the project's scheduler against a real control plane and a scenario;
where each pod landed, and why the others did not. The pods carry the project's
schedulerName, so only the plugin's scheduler places them. Inputs are read and checked
here (``prepare``) before anything is built or started; the replay itself is
kplugin.e2e.replay, the comparison with the default profile kplugin.e2e.compare."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kplugin.config import render
from kplugin.core.errors import OperationError, Setting
from kplugin.core.progress import Observer, Progress
from kplugin.e2e.adopted import OwnConfig
from kplugin.e2e.gates import gate_flags
from kplugin.e2e.groups import Group, group_json, groups
from kplugin.e2e.logs import Narrowing
from kplugin.e2e.rbac import RBAC_FILE, check_rules_cover, rbac_beyond, rbac_documents
from kplugin.e2e.replay import CreationTotals, PodPlacement, ReplayProfile, Session, replay
from kplugin.e2e.session import ProfileLabel
from kplugin.kube import kubeconfig as kubeconfigs
from kplugin.kube.apiclient import Client
from kplugin.kube.cluster import Cluster, Existing, Local
from kplugin.kube.kubeconfig import Kubeconfig
from kplugin.model import rbacrules
from kplugin.model.project import Project
from kplugin.model.schedconfig import SchedulerConfig
from kplugin.model.versions import Target
from kplugin.scenario.format import (
    DEFAULT_SCENARIO,
    Scenario,
    check_served,
    load_scenario,
    project_crds,
    with_objects,
)

DEFAULT_PROFILE = "default-scheduler"


@dataclass
class Outcome:
    kubernetes: str
    scheduler_name: str
    placements: list[PodPlacement]
    seconds: float
    work: Path | None = None  # kept with --keep: logs, configs
    identity: str = "admin"
    denied: list[str] = field(default_factory=list)  # "verb resource.group" RBAC refused the scheduler
    unserved: list[str] = field(default_factory=list)  # types its informers list that the API server does not serve
    created: CreationTotals = field(default_factory=CreationTotals)
    scheduled: int = 0
    scheduling_seconds: float = 0.0
    detail: str = ""
    groups: list[Group] = field(default_factory=list)  # the scenario's pod groups, as groups
    narrowed: tuple[Narrowing, ...] = ()  # events the plugins' PreQueueingHints narrowed
    adopted: bool = False  # an adopted repository's run: its RBAC and CRDs are its own files

    @property
    def failed(self) -> list[PodPlacement]:
        return [p for p in self.placements if not p.as_expected]

    @property
    def pods_per_second(self) -> float:
        return self.scheduled / self.scheduling_seconds if self.scheduling_seconds > 0 else 0.0


# kplugin's reporting plugin in a generated project (cmd/scheduler registers it)
REJECTIONS_SOURCE = "internal/rejections/zz_generated.rejections.go"


@dataclass(frozen=True)
class Options:
    timeout: float = 120.0  # give up waiting when nothing changed for this long
    keep: bool = False
    verbosity: int = 2


@dataclass(frozen=True)
class Inputs:
    """Everything a run needs from the user, read and checked before anything is built."""

    project: Project
    scenario: Scenario
    # render-config's, for a single test scheduler (kubeconfig set per run); an adopted repository's own
    config: SchedulerConfig | OwnConfig
    rbac: list[dict[str, Any]] | None  # deploy/rbac.yaml's objects; None: run with an admin token
    notices: tuple[str, ...] = ()  # e.g. args not checked by the plugins' Go code
    # the scheduler's feature gates as --feature-gates sets them (they win over kplugin's)
    feature_gates: tuple[tuple[str, bool], ...] = ()


def for_copy(inputs: Inputs, copy: Project) -> Inputs:
    """The inputs for a run of ``copy`` (the project retargeted to another version): the
    RBAC its deploy/rbac.yaml gives, which that version's scheduler reads, and the
    reporting plugin, which the copy's files have."""
    if copy is inputs.project:
        return inputs
    if copy.layout is not None:  # the moved copy's own configuration, CRDs and manifests
        return _adopted_inputs(copy, inputs.scenario, inputs.rbac is None, inputs.feature_gates)
    rbac = None if inputs.rbac is None else rbac_documents(copy)
    config = replace(inputs.config, node_rejections=reports_rejections(copy))
    return Inputs(copy, inputs.scenario, config, rbac, inputs.notices, inputs.feature_gates)


def reports_rejections(project: Project) -> bool:
    """Whether the project's scheduler has kplugin's reporting plugin: its generated file
    is there (projects made before it came have none until kplugin upgrade writes it)."""
    return (project.root / REJECTIONS_SOURCE).is_file()


def rejections_notice(project: Project) -> str | None:
    """What a run of a project without the reporting plugin says, once."""
    if reports_rejections(project):
        return None
    return (
        f"{project.name} has no {REJECTIONS_SOURCE} (made by an older kplugin): a pending pod's "
        f"rejections are counted, not listed node by node; kplugin upgrade to {project.version} (its own) writes it"
    )


def read_scenario(path: Path | None, target: Target, root: Path, recorded: tuple[str, ...] | None = None) -> Scenario:
    """The scenario (checked), its objects served by the target's Kubernetes, with the
    CRDs of the project at ``root`` (config/crd/, or the files ``recorded`` of an adopted
    repository) it does not hold itself."""
    defined = project_crds(root, recorded)
    loaded = with_objects(DEFAULT_SCENARIO, defined) if path is None else load_scenario(path, defined)
    check_served(loaded, target, path)
    return loaded


def prepare(
    project: Project,
    scenario: Path | Scenario | None,
    args_file: Path | None,
    admin: bool,
    progress: Progress = lambda _: None,
    *,
    weights: tuple[str, ...] = (),
    disable_default: tuple[str, ...] = (),
    feature_gates: tuple[tuple[str, bool], ...] = (),
) -> Inputs:
    """Read and check everything the run needs from the user: the scenario first (cheap),
    then the RBAC, then the configuration (whose args the plugins' Go code decodes)."""
    loaded = (
        scenario
        if isinstance(scenario, Scenario)
        else read_scenario(scenario, project.target, project.root, project.crd_files)
    )
    if project.layout is not None:
        return _adopted_inputs(project, loaded, admin, feature_gates)
    if not admin:
        check_rules_cover(project)
    rbac = None if admin else rbac_documents(project)
    request = render.RenderRequest(
        project=project,
        target=project.target,
        leader_elect=False,
        percentage_of_nodes_to_score=100,
        args_file=args_file,
        weights=weights,
        disable_default=disable_default,
    )
    config, notices = render.compose_config(request, progress)
    config = replace(config, node_rejections=reports_rejections(project))
    missing = rejections_notice(project)
    notices = (*notices, missing) if missing else notices
    beyond = rbac_beyond(project, rbac) if rbac is not None else None
    notices = (*notices, beyond) if beyond else notices
    return Inputs(
        project=project, scenario=loaded, config=config, rbac=rbac, notices=notices, feature_gates=feature_gates
    )


def _adopted_inputs(
    project: Project, loaded: Scenario, admin: bool, feature_gates: tuple[tuple[str, bool], ...]
) -> Inputs:
    """An adopted repository's run: its own configuration and RBAC (kplugin.e2e.adopted)."""
    from kplugin.e2e import adopted

    config, notices = adopted.own_config(project, project.target)
    rbac, said = (None, ()) if admin else adopted.rbac(project)
    return Inputs(project, loaded, config, rbac, notices + said, feature_gates)


def check_config(inputs: Inputs, scheduler: Path) -> str | None:
    """The configuration the run uses, loaded by the project's own scheduler binary
    (--write-config-to: it builds every profile and exits) with the run's feature gates
    (an unknown gate is the binary's to refuse, here): kplugin.config.render.check_run_config."""
    document = replace(inputs.config, kubeconfig="/dev/null").document()
    flags = gate_flags(inputs).scheduler
    then = "the run's scheduler loads it against the control plane"
    return render.check_run_config(inputs.project, scheduler, document, "the e2e configuration", flags, then)


def plugin_profile(inputs: Inputs, target: Cluster) -> ReplayProfile:
    name = target.scheduler_name(inputs.config.scheduler_name)
    document = replace(inputs.config, scheduler_names=(name,)).document()
    return ReplayProfile(ProfileLabel.PLUGIN, name, document)


def default_profile(inputs: Inputs, target: Cluster) -> ReplayProfile:
    """The scheduler's default profile, in the same binary with the same settings (the
    reporting plugin too: it decides nothing)."""
    name = target.scheduler_name(DEFAULT_PROFILE)
    config = SchedulerConfig(
        scheduler_names=(name,),
        plugins=(),
        api_version=inputs.config.api_version,
        leader_elect=False,
        percentage_of_nodes_to_score=inputs.config.percentage_of_nodes_to_score,
        node_rejections=inputs.config.node_rejections,
    )
    return ReplayProfile(ProfileLabel.DEFAULT, name, config.document())


ClusterFactory = Callable[[Path, str], AbstractContextManager[Cluster]]  # (work dir, profile label)


def local_clusters(apiserver: Path, inputs: Inputs, progress: Progress) -> ClusterFactory:
    """A fresh local control plane for each replay, with the run's RBAC and the feature
    gates the project's plugins need."""
    flags = gate_flags(inputs)

    def make(work: Path, _label: str) -> AbstractContextManager[Cluster]:
        return Local(
            work, apiserver, inputs.rbac, progress, flags.apiserver, flags.scheduler, inputs.project.scheduler_arguments
        )

    return make


def existing_clusters(config: Kubeconfig, inputs: Inputs, progress: Progress) -> ClusterFactory:
    """The run's own part of the user's cluster for each replay (labels, namespaces); the
    scheduler with the feature gates the project's plugins need, once the cluster is
    found to serve what they need."""
    endpoint = kubeconfigs.endpoint(config)
    flags = gate_flags(inputs)

    def make(work: Path, _label: str) -> AbstractContextManager[Cluster]:
        prefix = inputs.project.scheduler_arguments
        return Existing(config, Client(endpoint), work, progress, flags.scheduler, flags.served, prefix)

    return make


def sessions(
    inputs: Inputs,
    scheduler: Path,
    targets: ClusterFactory,
    options: Options,
    feedback: Observer,
    labels: tuple[ProfileLabel, ...] = (ProfileLabel.PLUGIN,),
) -> Iterator[tuple[Session, Path | None]]:
    """The run of kplugin e2e once its scheduler is built: start each target (a control
    plane, or the user's cluster) and the scheduler, create the scenario, wait until
    every pod is bound or reported unschedulable (nothing changed for ``options.timeout``
    seconds: give up), run the steps and wait again. Once per profile label (the
    project's, then the default), each on a target of its own; yields each session and
    the working directory kept (--keep)."""
    project = inputs.project
    work = Path(tempfile.mkdtemp(prefix=f"kplugin-e2e-{project.name}-"))
    try:
        for label in labels:
            place = work if len(labels) == 1 else work / label
            with targets(place, label) as target:
                chosen = plugin_profile if label == ProfileLabel.PLUGIN else default_profile
                profile = chosen(inputs, target)
                yield (
                    replay(
                        inputs.scenario,
                        profile,
                        target,
                        scheduler,
                        timeout=options.timeout,
                        verbosity=options.verbosity,
                        feedback=feedback,
                    ),
                    work if options.keep else None,
                )
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)


def outcome_of(inputs: Inputs, session: Session, kept: Path | None, seconds: float) -> Outcome:
    return Outcome(
        kubernetes=str(inputs.project.version),
        scheduler_name=session.scheduler_name,
        placements=session.placements,
        seconds=round(seconds, 1),
        work=kept,
        identity=session.identity,
        denied=session.denied,
        unserved=session.unserved,
        created=session.created,
        scheduled=session.scheduled,
        scheduling_seconds=session.scheduling_seconds,
        detail=session.detail,
        groups=groups(inputs.scenario, session.placements, session.groups),
        narrowed=session.narrowed,
        adopted=inputs.project.layout is not None,
    )


def placement_json(p: PodPlacement) -> dict[str, Any]:
    return {
        "pod": p.pod,
        "node": p.node,
        "where": p.where,
        "reason": p.reason,
        "expected": list(p.expected) if p.expected is not None else None,
        "ok": p.as_expected,
        "boundBefore": p.bound_before,
        "attempts": p.attempts,
        "attemptsAt": list(p.attempts_at),
        "requeues": [r.as_json() for r in p.requeues],
        "preemptedBy": p.preempted_by,
        "preemptedOn": p.preempted_on,
        "nodeRejections": [r.as_json() for r in p.rejections],
        "skippedEvents": [{"event": event, "count": count} for event, count in p.skipped],
        "tied": p.tied,
        "scores": [{"node": s.node, "total": s.total, "plugins": s.plugins} for s in p.scores],
    }


def creation_json(created: CreationTotals) -> dict[str, Any]:
    return {
        "objects": created.objects,
        "seconds": round(created.seconds, 3),
        "perSecond": round(created.per_second, 1),
        "retries": created.retries,
        "throttled": created.throttled,
        "workers": created.workers,
    }


def as_json(outcome: Outcome) -> dict[str, Any]:
    return {
        "kubernetes": outcome.kubernetes,
        "schedulerName": outcome.scheduler_name,
        "seconds": outcome.seconds,
        "ok": not outcome.failed,
        "work": str(outcome.work) if outcome.work else None,
        "identity": outcome.identity,
        "denied": outcome.denied,
        "unserved": outcome.unserved,
        "created": creation_json(outcome.created),
        "scheduling": {
            "pods": outcome.scheduled,
            "seconds": outcome.scheduling_seconds,
            "perSecond": round(outcome.pods_per_second, 1),
        },
        "logDetail": outcome.detail,
        "pods": [placement_json(p) for p in outcome.placements],
        "groups": [group_json(g) for g in outcome.groups],
        "preQueueingHints": [n.as_json() for n in outcome.narrowed],
    }


def narrowed_line(narrowed: tuple[Narrowing, ...]) -> str | None:
    """What the run says of the events the plugins' PreQueueingHints narrowed (None: none)."""
    if not narrowed:
        return None
    asked = sum(n.candidates for n in narrowed)
    held = sum(n.total for n in narrowed)
    return (
        f"e2e: PreQueueingHints narrowed {len(narrowed)} event(s): the queue asked the QueueingHints about "
        f"{asked} of the {held} unschedulable pod(s) it held then"
    )


def check(outcome: Outcome) -> None:
    """An error if the scheduler was not ready (RBAC refused it something, or its
    informers list a kind the API server does not serve), or a pod is not where the
    scenario expects it."""
    check_ready(outcome.denied, outcome.unserved, outcome.identity, outcome.adopted)
    check_expectations(outcome.placements)


def check_ready(denied: list[str], unserved: list[str], identity: str, adopted: bool = False) -> None:
    """What kept the scheduler from working: RBAC refused it, or a kind it lists is not
    served; the fix in an adopted repository's own files, or in a generated project's."""
    if denied:
        where, fix = (
            ("the repository's RBAC manifests do", "add the rules to a ClusterRole they bind to its ServiceAccount")
            if adopted
            else (f"{RBAC_FILE} does", f"add the rules to {rbacrules.RULES_FILE} and run kplugin refresh")
        )
        raise OperationError(
            f"{where} not let the scheduler ({identity}) {', '.join(denied)}: {fix}, or run with {Setting.ADMIN}"
        )
    if unserved:
        where = "the repository and run kplugin refresh" if adopted else "config/crd/"
        raise OperationError(
            f"the scheduler never became ready: the API server does not serve {', '.join(unserved)}, which its "
            'informers list ("the server could not find the requested resource"): add the kind\'s '
            f"CustomResourceDefinition to {where} (e2e creates it before the scheduler starts)"
        )


def check_expectations(placements: list[PodPlacement]) -> None:
    failed = [p for p in placements if not p.as_expected]
    if failed:
        first = failed[0]
        wanted = " or ".join(first.expected or ())
        raise OperationError(
            f"{len(failed)} pod(s) not where the scenario expects: {first.pod} is "
            f"{first.where}, expected {wanted}" + (f" ({first.reason})" if first.reason else "")
        )
