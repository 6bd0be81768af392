"""kplugin e2e on a repository kplugin adopted: its own configuration and RBAC.

The run uses the repository's KubeSchedulerConfiguration (render-config's choice: the
first recorded file in an apiVersion the version serves) with one profile, the one the
repository names its scheduler with, leader election off and the run's own connection.
The scheduler runs as a ServiceAccount with kube-scheduler's own role plus what the
repository's RBAC manifests give its scheduler: the rules of every ClusterRole they define
and bind to the ServiceAccount their scheduler Deployment runs as (a Deployment whose
container is given --config; any ServiceAccount they bind, when there is none). Each CRD
the repository has must be listed and watched by those rules, as a generated project's
rules file must; else the run stops before anything is built, with the rule to add (or
--admin). A wildcard counts; rules of non-resource URLs are left out; extenders too."""

from __future__ import annotations

from typing import Any

from kplugin.config.own import OwnConfig, own_config
from kplugin.core.errors import Setting, UsageError
from kplugin.kube import kinds
from kplugin.model import manifests, ownrbac, rbacrules
from kplugin.model.project import Project

__all__ = ["OwnConfig", "own_config", "rbac"]

_RBAC_API = "rbac.authorization.k8s.io/v1"


def rbac(project: Project) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """The RBAC objects the run's scheduler runs with (kube-scheduler's own role and the
    repository's rules), and a note naming where its rules came from."""
    version = project.target.version
    assert project.layout is not None
    rules, sources = ownrbac.manifest_rules(project.root, project.layout.manifests)
    granted = rules + manifests.scheduler_rules(version.major, version.minor)
    for definition in project.crd_definitions():
        for info in kinds.from_crd(definition.body)[:1]:
            if rbacrules.missing((rbacrules.watches(info.group, info.plural),), granted):
                given = ", ".join(sources) or "no ClusterRole bound to the scheduler's ServiceAccount"
                raise UsageError(
                    f"{definition.where} ({info.kind}): the repository's RBAC manifests ({given}) grant its scheduler "
                    f"no list and watch on {info.plural}.{info.group}, so an informer of it would never sync; add "
                    f"{{apiGroups: [{info.group}], resources: [{info.plural}], verbs: [get, list, watch]}} to a "
                    f"ClusterRole bound to its ServiceAccount (or run with {Setting.ADMIN})"
                )
    documents = manifests.rbac(f"kplugin-e2e-{project.name}"[:63].rstrip("-"), project.scheduler_name, granted)
    note = (
        f"the scheduler runs with kube-scheduler's own role and the rules of {', '.join(sources)}"
        if sources
        else "the scheduler runs with kube-scheduler's own role (no ClusterRole of the repository's manifests is "
        "bound to its scheduler)"
    )
    return documents, (note,)
