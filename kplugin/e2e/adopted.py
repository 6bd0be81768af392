"""kplugin e2e on a repository kplugin adopted: its own configuration and RBAC.

The run uses the repository's KubeSchedulerConfiguration (render-config's choice: the
first recorded file in an apiVersion the version serves) with one profile, the one the
repository names its scheduler with, leader election off and the run's own connection.
The scheduler runs as a ServiceAccount with kube-scheduler's own role plus what the
repository's RBAC manifests give its scheduler: the rules of every ClusterRole they define
and bind to the ServiceAccount their Deployment runs as (any ServiceAccount they bind,
when no Deployment names one). Each CRD the repository has must be listed and watched by
those rules, as a generated project's rules file must; else the run stops before
anything is built, with the rule to add (or --admin)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from kplugin.config import render
from kplugin.core import safefs, yamlio
from kplugin.core.errors import Setting, UsageError
from kplugin.kube import kinds
from kplugin.model import manifests, rbacrules
from kplugin.model.project import Project
from kplugin.model.versions import Target

_RBAC_API = "rbac.authorization.k8s.io/v1"


@dataclass(frozen=True)
class OwnConfig:
    """The repository's configuration as a run uses it (the fields e2e reads of a
    SchedulerConfig): its first profile, or the one named ``scheduler_names[0]`` when
    adopted, under the run's name."""

    body: dict[str, Any]
    scheduler_names: tuple[str, ...]
    api_version: str
    profile_index: int = 0
    percentage_of_nodes_to_score: int | None = None
    kubeconfig: str | None = None
    node_rejections: bool = False  # kplugin's reporting plugin is not in a repository's scheduler

    @property
    def scheduler_name(self) -> str:
        return self.scheduler_names[0]

    def document(self) -> dict[str, Any]:
        """The file's document with the run's one profile, no leader election, and the
        run's kubeconfig (the cluster sets its own)."""
        document = copy.deepcopy(self.body)
        profile = dict((document.get("profiles") or [{}])[self.profile_index])
        profile["schedulerName"] = self.scheduler_name
        document["profiles"] = [profile]
        document["leaderElection"] = {"leaderElect": False}
        document.pop("clientConnection", None)
        if self.kubeconfig:
            document["clientConnection"] = {"kubeconfig": self.kubeconfig}
        return document


def own_config(project: Project, target: Target) -> tuple[OwnConfig, tuple[str, ...]]:
    """The repository's configuration for a run, and what the run leaves out of it (notes)."""
    own = render.own_config(project, target)
    where = project.root / own.path
    body = yamlio.parse(own.text, f"configuration file {where}", path=where)
    if not isinstance(body, dict):
        raise UsageError(f"{where}: not a KubeSchedulerConfiguration mapping; fix it, or kplugin adopt {Setting.FORCE}")
    profiles = body.get("profiles") or [{}]
    if not isinstance(profiles, list) or not all(isinstance(p, dict) for p in profiles):
        raise UsageError(f"{where}: profiles must be a list of mappings")
    names = [str(p.get("schedulerName") or "default-scheduler") for p in profiles]
    index = names.index(project.scheduler_name) if project.scheduler_name in names else 0
    notes = [f"{own.path}: the first of {len(own.passed_over) + 1} configuration files"] if own.passed_over else []
    if len(profiles) > 1:
        left = ", ".join(n for i, n in enumerate(names) if i != index)
        notes.append(f"{own.path}: the run uses profile {names[index]}; {left} left out")
    if body.get("extenders"):
        notes.append(f"{own.path}: its extenders are called as configured; the run does not start them")
    percentage = body.get("percentageOfNodesToScore")
    config = OwnConfig(
        body=body,
        scheduler_names=(names[index],),
        api_version=str(body.get("apiVersion", "")).rpartition("/")[2],
        profile_index=index,
        percentage_of_nodes_to_score=percentage if isinstance(percentage, int) else None,
    )
    return config, tuple(notes)


def _documents(project: Project) -> list[tuple[str, dict[str, Any]]]:
    """Every mapping of the repository's recorded manifests, with its file."""
    assert project.layout is not None
    found = []
    for relative in project.layout.manifests:
        data = safefs.read_project_file(project.root, relative)
        if data is None:
            continue
        path = project.root / relative
        for document in yamlio.parse(
            safefs.decode(data, "manifest", path), f"manifest {path}", path=path, every_document=True
        ):
            if isinstance(document, dict):
                found.append((relative, document))
    return found


def _accounts(documents: list[tuple[str, dict[str, Any]]]) -> set[tuple[str, str]]:
    """The ServiceAccounts (namespace, name) the repository's scheduler Deployments run as."""
    accounts = set()
    for _, doc in documents:
        if doc.get("kind") != "Deployment":
            continue
        spec = ((doc.get("spec") or {}).get("template") or {}).get("spec") or {}
        name = spec.get("serviceAccountName")
        if isinstance(name, str) and name:
            accounts.add((str((doc.get("metadata") or {}).get("namespace") or "default"), name))
    return accounts


def manifest_rules(project: Project) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """The rules of the ClusterRoles the repository's manifests define and bind to its
    scheduler's ServiceAccount, and the files they came from."""
    documents = _documents(project)
    accounts = _accounts(documents)
    roles = {
        str((doc.get("metadata") or {}).get("name")): (relative, doc)
        for relative, doc in documents
        if doc.get("kind") == "ClusterRole" and str(doc.get("apiVersion")) == _RBAC_API
    }
    rules: list[dict[str, Any]] = []
    sources: list[str] = []
    for _, doc in documents:
        if doc.get("kind") != "ClusterRoleBinding":
            continue
        subjects = [s for s in doc.get("subjects") or [] if isinstance(s, dict) and s.get("kind") == "ServiceAccount"]
        bound = {(str(s.get("namespace") or "default"), str(s.get("name"))) for s in subjects}
        if not bound or (accounts and not bound & accounts):
            continue
        role = str((doc.get("roleRef") or {}).get("name"))
        if role in roles:
            relative, body = roles[role]
            for rule in body.get("rules") or []:
                if isinstance(rule, dict) and rule not in rules:
                    rules.append(_checked_rule(rule, f"{relative} (ClusterRole {role})"))
            sources.append(relative)
    return rules, tuple(dict.fromkeys(sources))


def _checked_rule(rule: dict[str, Any], where: str) -> dict[str, Any]:
    """A rule of the repository's, checked as a generated project's rules file is."""
    (parsed,) = rbacrules.parse([rule], where)
    return parsed.as_dict()


def rbac(project: Project) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """The RBAC objects the run's scheduler runs with (kube-scheduler's own role and the
    repository's rules), and a note naming where its rules came from."""
    version = project.target.version
    rules, sources = manifest_rules(project)
    granted = rules + manifests.scheduler_rules(version.major, version.minor)
    for definition in project.crd_definitions():
        for info in kinds.from_crd(definition.body)[:1]:
            if rbacrules.missing((rbacrules.watches(info.group, info.plural),), granted):
                given = ", ".join(sources) or "no ClusterRole bound to the scheduler's ServiceAccount"
                raise UsageError(
                    f"{definition.where} ({info.kind}): the repository's RBAC manifests ({given}) grant its scheduler "
                    f"no list and watch on {info.plural}.{info.group}, so an informer of it would never sync; add "
                    f"{{apiGroups: [{info.group}], resources: [{info.plural}], verbs: [get, list, watch]}} to its "
                    f"ClusterRole (or run with {Setting.ADMIN})"
                )
    name = project.name
    documents = manifests.rbac(f"kplugin-e2e-{name}"[:63], project.scheduler_name, granted)
    note = (
        f"the scheduler runs with kube-scheduler's own role and the rules of {', '.join(sources)}"
        if sources
        else "the scheduler runs with kube-scheduler's own role (no ClusterRole of the repository's manifests is "
        "bound to its scheduler)"
    )
    return documents, (note,)
