"""kplugin upgrade on an adopted repository: its code moved to another Kubernetes version,
not only its pins. In a stage beside the repository: every k8s.io requirement and replace
re-pinned (the whole staging replace set), the framework's renamed and moved names
rewritten where the code uses them (adopt.rewrite), configuration files in an apiVersion
the target minor no longer serves moved to kubescheduler.config.k8s.io/v1, go mod tidy,
then go build ./... . A compile error left is reported with its file and line, and where
kplugin knows it, the minor that changed it and what to write instead; then nothing is
changed. Otherwise the changed files move into place all or nothing (kplugin.yaml
recorded again from the moved code)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from kplugin.adopt import discover, gomod, record
from kplugin.core import golang, proc, safefs
from kplugin.core.errors import KpluginError, OperationError, UsageError
from kplugin.generate import gorewrite, stage, sync
from kplugin.model import layout
from kplugin.model.apichanges import renames
from kplugin.model.project import PROJECT_FILE, Project, load
from kplugin.model.spec import retag_image
from kplugin.model.versions import Target

_OLD_CONFIG = re.compile(
    r"^(?P<key>\s*-?\s*apiVersion:\s*[\"']?)kubescheduler\.config\.k8s\.io/(?P<version>v1beta\d+)", re.M
)
_REPLACE_LINE = re.compile(
    r"^(?P<head>[ \t]*(?:replace[ \t]+)?(?P<module>k8s\.io/[\w.-]+)[ \t]+=>[ \t]+(?P=module)[ \t]+)v[0-9][\w.+-]*",
    re.M,
)


@dataclass
class Moved:
    """What a move changed (or, with --dry-run, would change)."""

    old: Target
    new: Target
    changed: list[PurePosixPath] = field(default_factory=list)
    rewritten: dict[PurePosixPath, list[str]] = field(default_factory=dict)
    migrated: list[PurePosixPath] = field(default_factory=list)
    diff: list[str] = field(default_factory=list)  # with --dry-run: the unified diff of the text files
    notices: list[str] = field(default_factory=list)


def bump_replaces(root: Path, old: Target, new: Target) -> None:
    """go.mod's replace lines of k8s.io/kubernetes and the staging modules moved to the new
    version where they stand (in their block, with their comments); sync.repin then adds
    the ones missing and leaves these."""
    staging = set(old.release.staging_modules) | set(new.release.staging_modules)
    path = root / "go.mod"

    def bumped(m: re.Match[str]) -> str:
        module = m["module"]
        if module == "k8s.io/kubernetes":
            return f"{m['head']}{new.version.tag}"
        return f"{m['head']}{new.version.staging_tag}" if module in staging else m[0]

    text = _REPLACE_LINE.sub(bumped, path.read_text())
    # the staging modules the new version adds, into the block that replaces the others
    block = re.search(r"^replace \(\n(?P<body>(?:.*\n)*?)\)\n", text, re.M)
    if block is not None and _REPLACE_LINE.search(block["body"]):
        present = {m["module"] for m in _REPLACE_LINE.finditer(text)}
        added = "".join(
            f"\t{m} => {m} {new.version.staging_tag}\n" for m in new.release.staging_modules if m not in present
        )
        text = text[: block.end("body")] + added + text[block.end("body") :]
    path.write_text(text)


def migrate_configs(root: Path, project: Project, target: Target) -> list[PurePosixPath]:
    """The recorded configuration files whose apiVersion the target minor does not serve,
    moved to kubescheduler.config.k8s.io/v1 (the value edited in place: comments, order
    and layout stay)."""
    assert project.layout is not None
    served = set(layout.served(project.layout.configs, target))
    migrated = []
    for config in project.layout.configs:
        if config in served:
            continue
        data = safefs.read_project_file(root, config.path)  # a regular file of the repository, never a link
        if data is None:
            continue
        text = safefs.decode(data, "configuration file", root / config.path)
        new = _OLD_CONFIG.sub(lambda m: f"{m['key']}kubescheduler.config.k8s.io/v1", text)
        if new != text:
            safefs.check_writable_target(root, config.path).write_text(new)
            migrated.append(PurePosixPath(config.path))
    return migrated


def _foreign_pins(root: Path, project: Project, target: Target) -> list[str]:
    """A note for each dependency written against another Kubernetes minor: the replace
    set moves it to the target's, which it may not expect."""
    graph = proc.run(["go", "mod", "graph"], cwd=root, env=golang.toolchain_env(root), what="go mod graph")
    pins = gomod.foreign_pins(graph, project.module, target.release.staging_modules, target.version.minor)
    return [
        f"{pin}: the replace set makes it {target.version.staging_tag} (Kubernetes {target.version.minor_key}); "
        "check that it works there"
        for pin in pins
    ]


def _in_stage(project: Project, target: Target, moved: Moved, changes: stage.Changes) -> Callable[[Path], None]:
    def run(root: Path) -> None:
        bump_replaces(root, project.target, target)
        sync.repin(root, project.target, target, b"", adopted=True)
        rules = renames(project.target.facts, target.facts, project.target.release.key, target.release.key)
        moved.rewritten = gorewrite.apply(root, rules)
        moved.migrated = migrate_configs(root, project, target)
        moved.notices += golang.mod_tidy(root)
        moved.notices += _foreign_pins(root, project, target)
        gorewrite.compile_check(root, project.root.name, project.target, target)
        # recorded again as kplugin refresh does: the project's name, scheduler name and image kept
        again = discover.discover(root, project.name)._replace(root=project.root, scheduler_name=project.scheduler_name)
        image = retag_image(project.image, project.version, target.version)
        (root / PROJECT_FILE).write_text(record.text(again, image=image))
        changes.produced = tuple(sorted({*moved.rewritten, *moved.migrated}))

    return run


def _diff(dest: Path, staged: Path, paths: list[PurePosixPath]) -> list[str]:
    lines: list[str] = []
    for path in paths:
        if path.name == "go.sum":
            continue
        before = (dest / path).read_text(errors="replace").splitlines(keepends=True) if (dest / path).exists() else []
        after = (staged / path).read_text(errors="replace").splitlines(keepends=True)
        lines += difflib.unified_diff(before, after, f"a/{path}", f"b/{path}")
    return lines


def refuse_what_cannot_move(project: Project, target: Target) -> None:
    """A repository kplugin cannot move, said before anything runs: a fork of Kubernetes
    in its replace, or a vendor/ directory (go mod vendor is the repository's own step)."""
    replaced = gomod.read(project.root).replaces.get(gomod.KUBERNETES)
    if replaced is not None and replaced.path != gomod.KUBERNETES:
        raise UsageError(
            f"{project.root}/go.mod replaces {gomod.KUBERNETES} with {replaced.path} {replaced.version} (a fork): "
            f"kplugin moves Kubernetes' own releases, not a fork; move the fork to {target.version} yourself"
        )
    if (project.root / "vendor" / "modules.txt").exists():
        raise UsageError(
            f"{project.root}/vendor/: kplugin upgrade does not move a vendored repository yet; remove vendor/, "
            "upgrade, then run go mod vendor"
        )


def move(project: Project, target: Target, dry_run: bool = False) -> Moved:
    """Move the adopted repository to ``target``; with ``dry_run`` only say what would change."""
    refuse_what_cannot_move(project, target)
    moved = Moved(project.target, target)
    changes = stage.Changes()
    dest = stage.Destination(project.root, fresh=False)
    in_stage = _in_stage(project, target, moved, changes)
    if dry_run:
        try:
            with stage.staged(dest, changes, in_stage) as staged:
                moved.changed = stage.differences(dest, changes, staged)
                moved.diff = _diff(project.root, staged, moved.changed)
        except OSError as err:
            raise OperationError(f"staging {project.root}: {err.strerror or err}") from err
        return moved
    moved.changed = stage.apply(dest, changes, in_stage, what="upgrading")
    return moved


@contextmanager
def retargeted(project: Project, target: Target, notify: Callable[[str], None] = lambda _: None) -> Iterator[Project]:
    """A throw-away copy of the adopted repository moved to ``target`` as kplugin upgrade
    would move it (build --k8s, e2e --k8s); the repository is not touched. What the move
    says (a dependency that pins another minor, go mod tidy's notes) goes to ``notify``, as
    upgrade reports it. An error names the repository's files, not the copy's."""
    refuse_what_cannot_move(project, target)
    moved = Moved(project.target, target)
    changes = stage.Changes()
    dest = stage.Destination(project.root, fresh=False)
    with stage.staged(dest, changes, _in_stage(project, target, moved, changes)) as staged:
        for notice in moved.notices:
            notify(notice)
        try:
            yield load(staged, adopted=True)
        except KpluginError as err:
            raise err.relocated(staged, project.root) from None
