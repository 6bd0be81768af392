"""``kplugin e2e``: the project's scheduler against a real control plane and a scenario
of nodes and pods; where each pod landed, and why the others did not.

A scenario is YAML::

    nodes:
    - name: gpu-1
      labels: {example.com/gpu: "true"}
      capacity: {cpu: "8", memory: 32Gi, pods: "110"}   # these are the defaults
    pods:
    - name: train-1
      requests: {cpu: "2"}
      labels: {app: train}
      nodeSelector: {}
    expect:                # optional: pod -> node, or "pending"
      train-1: gpu-1

Every value is checked before anything starts; the pods carry the project's
schedulerName, so only the plugin's scheduler places them.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kplugin import names, render, safefs, yamlio
from kplugin.controlplane import ControlPlane, Progress
from kplugin.errors import OperationError, UsageError
from kplugin.project import Project
from kplugin.schedconfig import SchedulerConfig

PENDING = "pending"
NAMESPACE = "default"
OVERCOMMITABLE = frozenset({"cpu", "memory", "ephemeral-storage"})
DEFAULT_CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110"}


@dataclass(frozen=True)
class Node:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    capacity: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_CAPACITY))

    def manifest(self) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": self.name, "labels": dict(self.labels)},
            "status": {"capacity": dict(self.capacity), "allocatable": dict(self.capacity)},
        }


@dataclass(frozen=True)
class Pod:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    requests: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)

    def manifest(self, scheduler_name: str) -> dict[str, Any]:
        container: dict[str, Any] = {"name": "main", "image": "registry.k8s.io/pause:3.9"}
        if self.requests:
            container["resources"] = {"requests": dict(self.requests)}
            # extended resources and hugepages cannot be overcommitted: limits must equal requests
            fixed = {k: v for k, v in self.requests.items() if k not in OVERCOMMITABLE}
            if fixed:
                container["resources"]["limits"] = fixed
        spec: dict[str, Any] = {
            "schedulerName": scheduler_name,
            "terminationGracePeriodSeconds": 0,
            "containers": [container],
        }
        if self.node_selector:
            spec["nodeSelector"] = dict(self.node_selector)
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": self.name,
                "namespace": NAMESPACE,
                "labels": dict(self.labels),
                "annotations": dict(self.annotations),
            },
            "spec": spec,
        }


@dataclass(frozen=True)
class Scenario:
    nodes: tuple[Node, ...]
    pods: tuple[Pod, ...]
    expect: dict[str, str] = field(default_factory=dict)


DEFAULT_SCENARIO = Scenario(
    nodes=tuple(Node(f"node-{i}") for i in (1, 2, 3)),
    pods=tuple(Pod(f"pod-{i}", requests={"cpu": "1"}) for i in (1, 2, 3)),
)


class _Reader:
    """Reads one scenario file; every problem names the file and the key."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, problem: str) -> UsageError:
        return UsageError(f"{self.path}: {where}: {problem}")

    def mapping(self, value: Any, where: str, allowed: set[str] | None = None) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(where, f"must be a mapping, not {type(value).__name__}")
        if allowed is not None:
            unknown = sorted(str(k) for k in value if k not in allowed)
            if unknown:
                raise self.fail(where, f"unknown key {unknown[0]!r} (known: {', '.join(sorted(allowed))})")
        return value

    def name(self, value: Any, where: str) -> str:
        if names.dns1123_subdomain_problem(value):
            raise self.fail(where, f"{_shown(value)} is not a DNS-1123 name (lowercase letters, digits, '-' and '.')")
        return str(value)

    def _entries(self, value: Any, where: str, key_kind: str, checked: Callable[[Any, str], str]) -> dict[str, str]:
        """A mapping whose keys are qualified names (labels, annotations and resource
        names alike) and whose values ``checked`` returns as strings."""
        out: dict[str, str] = {}
        for key, raw in self.mapping(value, where).items():
            if names.qualified_name_problem(key):
                raise self.fail(where, f"{_shown(key)} is not {key_kind}")
            out[key] = checked(raw, f"{where}.{key}")
        return dict(sorted(out.items()))

    def labels(self, value: Any, where: str) -> dict[str, str]:
        def label(raw: Any, at: str) -> str:
            text = _scalar(raw)
            if text is None or names.label_value_problem(text):
                raise self.fail(at, f'{_shown(raw)} is not a label value (quote it: "true")')
            return text

        return self._entries(value, where, "a label key (e.g. example.com/gpu)", label)

    def annotations(self, value: Any, where: str) -> dict[str, str]:
        def annotation(raw: Any, at: str) -> str:
            if not isinstance(raw, str):
                raise self.fail(at, f'{_shown(raw)} is not a string (quote it: "true")')
            return raw

        return self._entries(value, where, "an annotation key (e.g. example.com/hold)", annotation)

    def quantities(self, value: Any, where: str) -> dict[str, str]:
        def quantity(raw: Any, at: str) -> str:
            text = _scalar(raw)
            if text is None or names.quantity_problem(text):
                raise self.fail(at, f"{_shown(raw)} is not a quantity (e.g. 2, 500m, 4Gi)")
            return text

        return self._entries(value, where, "a resource name (e.g. cpu, memory, example.com/gpu)", quantity)

    def items(self, value: Any, where: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(where, "must be a list")
        return value


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return None  # YAML's true/false: a label value must be the string "true"
    if isinstance(value, int) and abs(value) < 10**18:
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value == value and abs(value) < 1e18:
        return str(value)
    return None


def _shown(value: Any) -> str:
    """A value as an error message shows it: repr, cut short."""
    text = (
        repr(value)
        if not isinstance(value, int) or abs(value) < 10**30
        else f"<an integer of {len(str(value))} digits>"
    )
    return text if len(text) <= 80 else text[:77] + "..."


def load_scenario(path: Path) -> Scenario:
    """Read and check a scenario file (see the module docstring)."""
    raw = yamlio.load_file(path, "--scenario", limit=safefs.LARGE_FILE)
    reader = _Reader(path)
    top = reader.mapping(raw, "the document", {"nodes", "pods", "expect"})
    nodes: list[Node] = []
    for i, item in enumerate(reader.items(top.get("nodes"), "nodes")):
        where = f"nodes[{i}]"
        entry = reader.mapping(item, where, {"name", "labels", "capacity"})
        capacity = {**DEFAULT_CAPACITY, **reader.quantities(entry.get("capacity"), f"{where}.capacity")}
        nodes.append(
            Node(
                name=reader.name(entry.get("name"), f"{where}.name"),
                labels=reader.labels(entry.get("labels"), f"{where}.labels"),
                capacity=dict(sorted(capacity.items())),
            )
        )
    pods: list[Pod] = []
    for i, item in enumerate(reader.items(top.get("pods"), "pods")):
        where = f"pods[{i}]"
        entry = reader.mapping(item, where, {"name", "labels", "annotations", "requests", "nodeSelector"})
        pods.append(
            Pod(
                name=reader.name(entry.get("name"), f"{where}.name"),
                labels=reader.labels(entry.get("labels"), f"{where}.labels"),
                annotations=reader.annotations(entry.get("annotations"), f"{where}.annotations"),
                requests=reader.quantities(entry.get("requests"), f"{where}.requests"),
                node_selector=reader.labels(entry.get("nodeSelector"), f"{where}.nodeSelector"),
            )
        )
    if not nodes or not pods:
        raise reader.fail("nodes, pods", "a scenario needs at least one node and one pod")
    for kind, given in (("node", [n.name for n in nodes]), ("pod", [p.name for p in pods])):
        twice = sorted(name for name, count in Counter(given).items() if count > 1)  # linear: 10^5 nodes happen
        if twice:
            raise reader.fail(f"{kind}s", f"{kind} {twice[0]!r} is named twice")
    expect: dict[str, str] = {}
    known_nodes, known_pods = {n.name for n in nodes}, {p.name for p in pods}
    for pod, node in reader.mapping(top.get("expect"), "expect").items():
        if not isinstance(pod, str) or pod not in known_pods:
            raise reader.fail("expect", f"{_shown(pod)} is not a pod of this scenario")
        if not isinstance(node, str):
            raise reader.fail(f"expect.{pod}", f"{_shown(node)} must be a node name or {PENDING!r}")
        if node != PENDING and node not in known_nodes:
            raise reader.fail(f"expect.{pod}", f"{_shown(node)} is neither a node of this scenario nor {PENDING!r}")
        expect[pod] = node
    return Scenario(tuple(nodes), tuple(pods), expect)


@dataclass(frozen=True)
class NodeScore:
    """One node's score for a pod: each Score plugin's weighted score and their sum."""

    node: str
    total: int
    plugins: dict[str, int]


# kube-scheduler's schedule_one.go logs these at V(10), unchanged from 1.28 to 1.37
_SCORE_LINE = re.compile(
    r'"(?P<what>Plugin scored node for pod|Calculated node\'s final score for pod)" '
    r'pod="(?P<pod>[^"]+)"(?: plugin="(?P<plugin>[^"]+)")? node="(?P<node>[^"]+)" score=(?P<score>-?[0-9]+)'
)


# what the API server says when RBAC denies a request, as client-go logs it
_FORBIDDEN = re.compile(
    r'User \\?"(?P<user>[^"\\]+)\\?" cannot (?P<verb>[a-z]+) resource \\?"(?P<resource>[^"\\]+)\\?"'
    r'(?: in API group \\?"(?P<group>[^"\\]*)\\?")?'
)


def scores_from_log(text: str, namespace: str = NAMESPACE) -> dict[str, tuple[NodeScore, ...]]:
    """Per pod, each node's scores in the pod's last scheduling attempt, best first."""
    plugins: dict[str, dict[str, dict[str, int]]] = {}
    totals: dict[str, dict[str, int]] = {}
    for match in _SCORE_LINE.finditer(text):
        ns, _, pod = match["pod"].partition("/")
        if ns != namespace:
            continue
        score = int(match["score"])
        if match["plugin"] is not None:
            if pod in totals:  # a new attempt: forget the previous one
                del totals[pod]
                plugins.pop(pod, None)
            plugins.setdefault(pod, {}).setdefault(match["node"], {})[match["plugin"]] = score
        else:
            totals.setdefault(pod, {})[match["node"]] = score
    result = {}
    for pod, by_node in totals.items():
        by_plugin = plugins.get(pod, {})
        scored = [NodeScore(n, total, dict(sorted(by_plugin.get(n, {}).items()))) for n, total in by_node.items()]
        result[pod] = tuple(sorted(scored, key=lambda s: (-s.total, s.node)))
    return result


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


def denied_requests(log: str) -> list[str]:
    """What the API server refused the scheduler, from its log: sorted "verb resource.group"."""
    found = set()
    for match in _FORBIDDEN.finditer(log):
        group = match["group"] or ""
        found.add(f"{match['verb']} {match['resource']}" + (f".{group}" if group else ""))
    return sorted(found)


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
