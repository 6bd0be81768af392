"""``kplugin e2e``: the project's scheduler against a real control plane and a scenario
of nodes and pods; where each pod landed, and why the others did not. The pods carry
the project's schedulerName, so only the plugin's scheduler places them."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kplugin.config import render
from kplugin.core import safefs, yamlio
from kplugin.core.errors import OperationError, UsageError
from kplugin.e2e.controlplane import ControlPlane, Progress
from kplugin.e2e.logs import NodeScore, denied_requests, scores_from_log
from kplugin.e2e.scenario import DEFAULT_SCENARIO, NAMESPACE, PENDING, Scenario, load_scenario
from kplugin.model.project import Project
from kplugin.model.schedconfig import SchedulerConfig


@dataclass(frozen=True)
class Placement:
    pod: str
    node: str | None  # None: still pending
    reason: str  # why it is pending (the scheduler's own message), or ""
    expected: str | None = None
    scores: tuple[NodeScore, ...] = ()  # empty where one node was feasible (no scoring)

    @property
    def where(self) -> str:
        return self.node or PENDING

    @property
    def as_expected(self) -> bool:
        return self.expected is None or self.expected == self.where


@dataclass
class Outcome:
    kubernetes: str
    scheduler_name: str
    placements: list[Placement]
    seconds: float
    work: Path | None = None  # kept with --keep: logs, configs
    identity: str = "admin"
    denied: list[str] = field(default_factory=list)  # "verb resource.group" RBAC refused the scheduler

    @property
    def failed(self) -> list[Placement]:
        return [p for p in self.placements if not p.as_expected]


RBAC_FILE = "deploy/rbac.yaml"


def rbac_documents(project: Project) -> list[dict[str, Any]]:
    """The RBAC the project deploys with (deploy/rbac.yaml, as the user has it)."""
    path = project.root / RBAC_FILE
    data = safefs.read_project_file(project.root, RBAC_FILE)  # a regular file, never a link out of the project
    if data is None:
        raise UsageError(f"RBAC file {path}: no such file; restore it, or run with --admin")
    docs = yamlio.parse(safefs.decode(data, "RBAC file", path), f"RBAC file {path}", every_document=True)
    if not all(isinstance(d, dict) for d in docs):
        raise UsageError(f"{path}: every document must be a Kubernetes object")
    return list(docs)


@dataclass(frozen=True)
class Options:
    timeout: float = 120.0
    keep: bool = False
    verbosity: int = 2


@dataclass(frozen=True)
class Inputs:
    """Everything a run needs from the user, read and checked before anything is built."""

    project: Project
    scenario: Scenario
    config: SchedulerConfig  # render-config's, for a single test scheduler (kubeconfig set per run)
    rbac: list[dict[str, Any]] | None  # deploy/rbac.yaml's objects; None: run with an admin token
    notices: tuple[str, ...] = ()  # e.g. args not checked by the plugins' Go code


def prepare(
    project: Project,
    scenario: Path | None,
    args_file: Path | None,
    admin: bool,
    progress: Progress = lambda _: None,
) -> Inputs:
    """Read and check everything the run needs from the user: the scenario first (cheap),
    then the RBAC, then the configuration (whose args the plugins' Go code decodes)."""
    loaded = DEFAULT_SCENARIO if scenario is None else load_scenario(scenario)
    rbac = None if admin else rbac_documents(project)
    request = render.RenderRequest(
        project=project,
        target=project.target,
        leader_elect=False,
        percentage_of_nodes_to_score=100,
        args_file=args_file,
    )
    config = render.build_config(request, progress)
    return Inputs(project=project, scenario=loaded, config=config, rbac=rbac, notices=tuple(request.notices))


def check_config(inputs: Inputs, scheduler: Path) -> None:
    """The configuration the run uses, loaded by the project's own scheduler binary
    (--write-config-to: it builds every profile and exits): its own error, in one line,
    before the control plane starts."""
    document = replace(inputs.config, kubeconfig="/dev/null").document()
    accepted, message = render.validate(scheduler, yamlio.dump(document), "the e2e configuration")
    if not accepted:
        raise OperationError(f"kube-scheduler {inputs.project.version} rejects the e2e configuration: {message}")


def _placement(pod: dict[str, Any]) -> tuple[str | None, str, bool]:
    """(node, reason, decided) of a pod as the API server has it."""
    node = pod.get("spec", {}).get("nodeName")
    if node:
        return node, "", True
    for condition in pod.get("status", {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return None, str(condition.get("message") or condition.get("reason") or ""), True
    return None, "", False


def run(inputs: Inputs, scheduler: Path, apiserver: Path, options: Options, progress: Progress) -> Outcome:
    """Start the control plane and the project's scheduler, create the scenario and wait
    until every pod is bound or reported unschedulable (or the timeout)."""
    project, scenario = inputs.project, inputs.scenario
    work = Path(tempfile.mkdtemp(prefix=f"kplugin-e2e-{project.name}-"))
    identity = "admin"
    started = time.monotonic()
    placements: dict[str, tuple[str | None, str]] = {}
    try:
        with ControlPlane(work, apiserver, progress) as plane:
            assert plane.api is not None
            token = None
            if inputs.rbac is not None:
                token, identity = plane.apply_rbac(inputs.rbac)
            config = work / "scheduler-config.yaml"
            document = replace(inputs.config, kubeconfig=str(plane.kubeconfig(token))).document()
            config.write_text(yamlio.dump(document))
            progress(f"creating {len(scenario.nodes)} node(s), starting {scheduler}")
            for node_spec in scenario.nodes:
                plane.api.create("/api/v1/nodes", node_spec.manifest())
            plane.scheduler(scheduler, config, options.verbosity)
            progress(f"creating {len(scenario.pods)} pod(s) for schedulerName {project.scheduler_name}")
            for pod_spec in scenario.pods:
                plane.api.create(f"/api/v1/namespaces/{NAMESPACE}/pods", pod_spec.manifest(project.scheduler_name))
            deadline = time.monotonic() + options.timeout
            wanted = {p.name for p in scenario.pods}
            while True:
                plane.check()
                listed = plane.api.get(f"/api/v1/namespaces/{NAMESPACE}/pods")
                decided = {}
                for item in listed.get("items", []):
                    name = item["metadata"]["name"]
                    node, reason, done = _placement(item)
                    placements[name] = (node, reason)
                    if done:
                        decided[name] = node
                if wanted <= decided.keys() or time.monotonic() > deadline:
                    break
                time.sleep(0.25)
        log = (work / "kube-scheduler.log").read_text(errors="replace")
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
    scores = scores_from_log(log)
    result = []
    for pod in scenario.pods:
        node, reason = placements.get(pod.name, (None, ""))
        if node is None and not reason:
            reason = (
                f"no scheduling attempt reported within {options.timeout:.0f}s: held back by a PreEnqueue "
                f"plugin, or not for schedulerName {project.scheduler_name}"
            )
        result.append(Placement(pod.name, node, reason, scenario.expect.get(pod.name), scores.get(pod.name, ())))
    return Outcome(
        kubernetes=str(project.version),
        scheduler_name=project.scheduler_name,
        placements=result,
        seconds=round(time.monotonic() - started, 1),
        work=work if options.keep else None,
        identity=identity,
        denied=denied_requests(log),
    )


def as_json(outcome: Outcome) -> dict[str, Any]:
    return {
        "kubernetes": outcome.kubernetes,
        "schedulerName": outcome.scheduler_name,
        "seconds": outcome.seconds,
        "ok": not outcome.failed,
        "work": str(outcome.work) if outcome.work else None,
        "identity": outcome.identity,
        "denied": outcome.denied,
        "pods": [
            {
                "pod": p.pod,
                "node": p.node,
                "reason": p.reason,
                "expected": p.expected,
                "ok": p.as_expected,
                "scores": [{"node": s.node, "total": s.total, "plugins": s.plugins} for s in p.scores],
            }
            for p in outcome.placements
        ],
    }


def check(outcome: Outcome) -> None:
    """An error if RBAC refused the scheduler anything, or a pod is not where the
    scenario expects it."""
    if outcome.denied:
        raise OperationError(
            f"{RBAC_FILE} does not let the scheduler ({outcome.identity}) "
            f"{', '.join(outcome.denied)}: add the rules (kplugin upgrade regenerates the file), "
            "or run with --admin"
        )
    if outcome.failed:
        first = outcome.failed[0]
        raise OperationError(
            f"{len(outcome.failed)} pod(s) not where the scenario expects: {first.pod} is "
            f"{first.where}, expected {first.expected}" + (f" ({first.reason})" if first.reason else "")
        )
