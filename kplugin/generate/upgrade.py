"""``kplugin upgrade``: move a project to another Kubernetes version without touching
the user's code, and the retargeted copy ``kplugin build --k8s`` builds from."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from kplugin.core import golang
from kplugin.core.errors import KpluginError, OperationError, Setting, UsageError
from kplugin.generate import codegen, scaffold, sync
from kplugin.model.goapi import NATIVE
from kplugin.model.project import Project, load
from kplugin.model.spec import ProjectSpec
from kplugin.model.versions import KubeVersion, Target


@dataclass(kw_only=True)
class UpgradeResult(sync.Changed):
    old: KubeVersion
    new: KubeVersion


def check_user_code(project: Project, spec: ProjectSpec, after: dict[PurePosixPath, bytes]) -> None:
    """The user's files must not depend on the version. With the compatibility layer they
    never do; a --api native project can move only where its framework API is the same.
    ``after`` is the rendering of ``spec``."""
    if project.api != NATIVE:
        return
    before = scaffold.render_project(project.spec(), project.root).files
    differing = sorted(p for p in before if scaffold.is_user_file(p, spec.template) and before[p] != after.get(p))
    if differing:
        raise UsageError(
            f"{Setting.K8S} {spec.target.version}: this project's plugin code is written against the framework API of "
            f"Kubernetes {project.target.release.key} ({Setting.API} native), and {spec.target.release.key}'s differs "
            f"({differing[0]} would change); upgrade within {project.target.release.key}, or move the plugin "
            f"to a project made with {Setting.API} layer"
        )


def _go_mod(project: Project, spec: ProjectSpec, plan: sync.Sync, tidy: bool) -> Callable[[Path], None]:
    """What runs in the stage after the files are written: go.mod re-pinned, the code
    generators where the project's generated client code is not the target's (codegen),
    go mod tidy. The generators' output is committed with the rest (plan.produced)."""
    target = spec.target
    if spec.apis:
        plan.produced = codegen.produced(spec)

    def go_mod(stage: Path) -> None:
        if target.version != project.target.version:  # the same version: go.mod is pinned already
            sync.repin(stage, project.target, target, plan.go_mod)
        if codegen.stale(stage, spec):
            codegen.run(stage, spec)
        if tidy:
            golang.mod_tidy(stage)

    return go_mod


@dataclass
class Prepared:
    """An upgrade that passed every check and is ready to run."""

    project: Project
    spec: ProjectSpec
    plan: sync.Sync
    notices: list[str] = field(default_factory=list)

    @property
    def target(self) -> Target:
        return self.spec.target


def prepare(
    project: Project, target: Target, *, keep_edited: bool = False, progress: Callable[[str], None] = lambda _: None
) -> Prepared:
    """Every check, before anything runs: the user's code can move, and no generated
    file that needs rewriting was edited by hand (unless edits are kept)."""
    spec = project.spec(target)
    rendered, notices = sync.render_spec(project, spec, progress)
    check_user_code(project, spec, rendered)
    plan = sync.plan(project, spec, keep_edited=keep_edited, rendered=rendered)
    if plan.conflicts and not keep_edited:
        raise OperationError(plan.conflict_message(f"kplugin upgrade to {target.version}"))
    return Prepared(project, spec, plan, notices)


def upgrade(prepared: Prepared, *, tidy: bool = True, dry_run: bool = False) -> UpgradeResult:
    """Re-pin go.mod, rewrite the version-specific generated files, tidy, and update
    kplugin.yaml, through a staged copy (a failure changes nothing)."""
    project, target, plan = prepared.project, prepared.target, prepared.plan
    result = UpgradeResult(
        old=project.version,
        new=target.version,
        kept=plan.conflicts,
        notices=list(prepared.notices),
        not_recreated=list(plan.not_recreated),
    )
    go_mod = _go_mod(project, prepared.spec, plan, tidy)
    if dry_run:  # the real run's stage, not committed: the same list of changes
        result.changed = sync.preview(project, plan, go_mod)
        return result
    result.changed = sync.apply(project, plan, go_mod)
    if not tidy and target.version != project.version:  # the same version: go.mod is not re-pinned
        result.notices.append(f"{Setting.NO_TIDY}: go.sum is not updated; run 'go mod tidy' in {project.root}")
    return result


@contextmanager
def retargeted(project: Project, target: Target) -> Iterator[Project]:
    """A throw-away copy of the project moved to ``target`` (generated files rewritten,
    go.mod re-pinned and tidied); the project itself is not touched. A project made from
    a fork of the template is rendered through it (Project.spec)."""
    spec = project.spec(target)
    rendered, _ = sync.render_spec(project, spec)
    check_user_code(project, spec, rendered)
    plan = sync.plan(project, spec, force=True, rendered=rendered)
    with sync.staged(project, plan, _go_mod(project, spec, plan, tidy=True)) as stage:
        try:
            yield load(stage)
        except KpluginError as err:  # e.g. go build's errors: the project's files, not the removed copy's
            raise err.relocated(stage, project.root) from None
