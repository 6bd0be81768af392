"""The RBAC a generated project's e2e run gives its scheduler: deploy/rbac.yaml as the user
has it, checked to cover what config/rbac/rules.yaml and the plugins' code read (an
adopted repository's comes from its own manifests: kplugin.e2e.adopted)."""

from __future__ import annotations

from typing import Any

from kplugin.core import safefs, yamlio
from kplugin.core.errors import Setting, UsageError
from kplugin.generate import plugincode
from kplugin.kube import kinds
from kplugin.model import manifests, rbacrules
from kplugin.model.project import Project

RBAC_FILE = "deploy/rbac.yaml"


def check_rules_cover(project: Project) -> None:
    """config/rbac/rules.yaml lets the scheduler list and watch every custom resource the
    plugins' code reads and every kind of config/crd/: else its informers never sync and
    the run would only find it out after building and starting everything (doctor's
    rbac-informer-unread and rbac-crd-unread, as one line and exit 2)."""
    granted = [r.as_dict() for r in rbacrules.load(project.root)]

    def refuse(where: str, group: str, plural: str) -> UsageError:
        rule = f"{{apiGroups: [{group}], resources: [{plural}], verbs: [get, list, watch]}}"
        return UsageError(
            f"{where} reads {plural}.{group}, and {rbacrules.RULES_FILE} grants no list and watch on it: add {rule} "
            f"to it and run kplugin refresh (or run with {Setting.ADMIN})"
        )

    for path, line, group, plural in plugincode.resources_read(project):
        if rbacrules.missing((rbacrules.watches(group, plural),), granted):
            raise refuse(f"{path.relative_to(project.root)}:{line}", group, plural)
    for definition in project.crd_definitions():
        for info in kinds.from_crd(definition.body)[:1]:  # one plural and group for all its versions
            if rbacrules.missing((rbacrules.watches(info.group, info.plural),), granted):
                raise refuse(f"{definition.where} ({info.kind})", info.group, info.plural)


def rbac_beyond(project: Project, documents: list[dict[str, Any]]) -> str | None:
    """What deploy/rbac.yaml's ClusterRole grants beyond what the scheduler of the
    project's version and config/rbac/rules.yaml ask for, as a notice (None: nothing)."""
    version = project.target.version
    wanted = rbacrules.merged(manifests.scheduler_rules(version.major, version.minor), rbacrules.load(project.root))
    extra = rbacrules.beyond(_cluster_role_rules(documents), wanted)
    if not extra:
        return None
    listed = ", ".join(extra[:3]) + (f" and {len(extra) - 3} more" if len(extra) > 3 else "")
    return (
        f"{RBAC_FILE} grants more than the scheduler and {rbacrules.RULES_FILE} ask for ({listed}): the run uses it "
        "as it is; kplugin refresh writes it from the file"
    )


def _cluster_role_rules(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for d in documents if d.get("kind") == "ClusterRole" for r in d.get("rules") or [] if isinstance(r, dict)]


def rbac_documents(project: Project) -> list[dict[str, Any]]:
    """The RBAC the project deploys with (deploy/rbac.yaml, as the user has it)."""
    path = project.root / RBAC_FILE
    data = safefs.read_project_file(project.root, RBAC_FILE)  # a regular file, never a link out of the project
    if data is None:
        raise UsageError(f"RBAC file {path}: no such file; restore it, or run with {Setting.ADMIN}")
    docs = yamlio.parse(safefs.decode(data, "RBAC file", path), f"RBAC file {path}", path=path, every_document=True)
    if not all(isinstance(d, dict) for d in docs):
        raise UsageError(f"{path}: every document must be a Kubernetes object")
    missing = rbacrules.missing(rbacrules.load(project.root), _cluster_role_rules(docs))
    if missing:  # the rules file was edited since deploy/ was written: the run would only find it forbidden
        raise UsageError(
            f"{path}: its ClusterRole misses {', '.join(missing[:3])}{' …' if len(missing) > 3 else ''} that "
            f"{rbacrules.RULES_FILE} asks for; run kplugin refresh (or run with {Setting.ADMIN})"
        )
    return list(docs)
