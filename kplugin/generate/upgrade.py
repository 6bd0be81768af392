"""``kplugin upgrade``: move a project to another Kubernetes version without touching
the user's code, and the retargeted copy ``kplugin build --k8s`` builds from."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from kplugin.core import golang
from kplugin.core.errors import KpluginError, OperationError, Setting, UsageError
from kplugin.generate import codegen, gorewrite, scaffold, sync
from kplugin.model.apichanges import renames
from kplugin.model.goapi import NATIVE
from kplugin.model.project import Project, load
from kplugin.model.spec import ProjectSpec
from kplugin.model.versions import KubeVersion, Target


@dataclass(kw_only=True)
class UpgradeResult(sync.Changed):
    old: KubeVersion
    new: KubeVersion


def user_code_moves(project: Project, spec: ProjectSpec, after: dict[PurePosixPath, bytes], tidy: bool) -> bool:
    """Whether the user's own Go files must move with the version. With the compatibility
    layer they never do; a --api native project's do where the two minors' framework APIs
    differ: the move rewrites them mechanically (gorewrite) and compiles the result, which
    needs go mod tidy. ``after`` is the rendering of ``spec``."""
    if project.api != NATIVE:
        return False
    before = scaffold.render_project(project.spec(), project.root).files
    differing = sorted(p for p in before if scaffold.is_user_file(p, spec.template) and before[p] != after.get(p))
    if differing and not tidy:
        raise UsageError(
            f"{Setting.NO_TIDY}: this project's plugin code is written against the framework API of Kubernetes "
            f"{project.target.release.key} ({Setting.API} native) and {spec.target.release.key}'s differs "
            f"({differing[0]}); kplugin rewrites it and checks the result by compiling it, which needs go mod tidy: "
            f"leave {Setting.NO_TIDY} out"
        )
    return bool(differing)


def _go_mod(
    project: Project, spec: ProjectSpec, plan: sync.Sync, tidy: bool, moves: bool = False
) -> Callable[[Path], None]:
    """What runs in the stage after the files are written: go.mod re-pinned, the code
    generators where the project's generated client code is not the target's (codegen),
    go mod tidy. The generators' output is committed with the rest (plan.produced). With
    ``moves`` (a native project's own code across minors) the project's Go files are
    rewritten for the target's framework API and the result must compile."""
    target = spec.target
    if spec.apis:
        plan.produced = codegen.produced(spec)
    own: tuple[PurePosixPath, ...] = ()
    if moves:  # the user's Go files (not the ones rendered for the target): committed where rewritten
        own = tuple(p for p in gorewrite.go_files(project.root) if p not in plan.writes)
        plan.produced = (*plan.produced, *own)

    def go_mod(stage: Path) -> None:
        if target.version != project.target.version:  # the same version: go.mod is pinned already
            sync.repin(stage, project.target, target, plan.go_mod)
        if moves:
            old = project.target
            gorewrite.apply(stage, renames(old.facts, target.facts, old.release.key, target.release.key), own)
        if codegen.stale(stage, spec):
            codegen.run(stage, spec)
        if tidy:
            golang.mod_tidy(stage)
        if moves:
            gorewrite.compile_check(stage, project.root.name, project.target, target)

    return go_mod


@dataclass
class Prepared:
    """An upgrade that passed every check and is ready to run."""

    project: Project
    spec: ProjectSpec
    plan: sync.Sync
    notices: list[str] = field(default_factory=list)
    moves: bool = False  # the user's own code moves too (a native project across minors)

    @property
    def target(self) -> Target:
        return self.spec.target


def prepare(
    project: Project,
    target: Target,
    *,
    keep_edited: bool = False,
    tidy: bool = True,
    progress: Callable[[str], None] = lambda _: None,
) -> Prepared:
    """Every check, before anything runs: the user's code can move, and no generated
    file that needs rewriting was edited by hand (unless edits are kept)."""
    spec = project.spec(target)
    rendered, notices = sync.render_spec(project, spec, progress)
    moves = user_code_moves(project, spec, rendered, tidy)
    plan = sync.plan(project, spec, keep_edited=keep_edited, rendered=rendered)
    if plan.conflicts and not keep_edited:
        raise OperationError(plan.conflict_message(f"kplugin upgrade to {target.version}"))
    return Prepared(project, spec, plan, notices, moves)


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
    go_mod = _go_mod(project, prepared.spec, plan, tidy, prepared.moves)
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
    moves = user_code_moves(project, spec, rendered, tidy=True)
    plan = sync.plan(project, spec, force=True, rendered=rendered)
    with sync.staged(project, plan, _go_mod(project, spec, plan, tidy=True, moves=moves)) as stage:
        try:
            yield load(stage)
        except KpluginError as err:  # e.g. go build's errors: the project's files, not the removed copy's
            raise err.relocated(stage, project.root) from None
