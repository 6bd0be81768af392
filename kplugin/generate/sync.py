"""Bring a project's generated files in line with a spec: the one mechanism behind
``kplugin upgrade``, ``kplugin add plugin`` and ``kplugin build --k8s`` (which builds
from a retargeted copy).

The spec is rendered in memory and each managed file is compared with the disk and with
the sha256 that kplugin.yaml recorded when kplugin last wrote it:

- the disk already holds the new content: nothing to do;
- the disk holds what kplugin wrote (or the file is missing): write the new content;
- anything else is a hand edit: a conflict. Nothing is written while there are
  conflicts, unless the caller keeps the edited files and takes the new versions
  beside them (``FILE.kplugin-new``).

User files (the plugin code, its tests, its args file, the README) are never rewritten,
and a missing one is not re-created (the user deleted it: the report says so), except
the files of what the command adds (a new plugin's package, an extension point's stub).
Every change is made in a staged copy of the project, where go.mod is re-pinned and
``go mod tidy`` runs; only then are the changed files moved into the project, so a
failure leaves it as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from kplugin.core import digest, golang, proc, safefs, yamlio
from kplugin.core.errors import OperationError, Setting, ToolError, UsageError
from kplugin.generate import scaffold, stage
from kplugin.model.project import EDITED_FILES, PROJECT_FILE, Project
from kplugin.model.spec import PluginSpec, ProjectSpec
from kplugin.model.versions import Target

NEW_SUFFIX = ".kplugin-new"


@dataclass(frozen=True)
class Conflict:
    path: PurePosixPath
    why: str


@dataclass(kw_only=True)
class Changed:
    """What a command that writes the project (upgrade, refresh, add ...) changed, the
    edited files it kept, the user files it did not re-create, and its notes."""

    changed: list[PurePosixPath] = field(default_factory=list)
    kept: list[Conflict] = field(default_factory=list)
    not_recreated: list[PurePosixPath] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


@dataclass
class Sync:
    """What bringing a project in line with a spec takes."""

    writes: dict[PurePosixPath, bytes] = field(default_factory=dict)
    deletes: list[PurePosixPath] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    # user files the user deleted: not re-created
    not_recreated: list[PurePosixPath] = field(default_factory=list)
    metadata: bytes = b""
    # go.mod as kplugin renders it for the spec: its replace block is what repin uses
    go_mod: bytes = b""
    # what tools write in the stage besides go.mod and go.sum (kplugin add api's generators)
    produced: tuple[PurePosixPath, ...] = ()

    def changes(self) -> stage.Changes:
        """What the stage engine writes: the files, kplugin.yaml, the deletions."""
        return stage.Changes(
            writes={**self.writes, PurePosixPath(PROJECT_FILE): self.metadata},
            deletes=self.deletes,
            produced=self.produced,
        )

    def conflict_message(self, action: str) -> str:
        first, others = self.conflicts[0], [str(c.path) for c in self.conflicts[1:]]
        more = ""
        if others:
            listed = ", ".join(others[:4]) + (f" and {len(others) - 4} more" if len(others) > 4 else "")
            more = f" (so {'was' if len(others) == 1 else 'were'} {listed})"
        return (
            f"{action}: {first.path} was {first.why}{more}; nothing was changed. Move your changes out of "
            f"generated files, or pass {Setting.KEEP_EDITED} to keep them and get the new versions as FILE{NEW_SUFFIX}"
        )


def _read(root: Path, path: PurePosixPath | str) -> bytes | None:
    """A project file as it is on disk, None when missing; anything but a regular file
    there (a directory, symlink, FIFO, device) or a path out of the project is refused."""
    return safefs.read_project_file(root, path)


def render_spec(
    project: Project, spec: ProjectSpec, progress: Callable[[str], None] = lambda _: None
) -> tuple[dict[PurePosixPath, bytes], list[str]]:
    """Every file of ``spec`` rendered for ``project``, with the pluginConfig args its
    plugins' Go code gives (their args files, defaulted by their own decoders; the sample
    defaults for plugins this command adds), and notes for the user."""
    from kplugin.generate import argsinfo

    def generated(plugin: PluginSpec) -> dict[str, Any] | None:
        return argsinfo.unchanged_sample_defaults(project.root, plugin, project.args_digests.get(plugin.name))

    try:
        resolved = argsinfo.resolve(project, generated_defaults=generated, progress=progress)
    except OperationError as err:  # the code does not build: keep to what kplugin knows
        resolved = argsinfo.resolve(project, generated_defaults=generated, run_go=False)
        resolved.notices.append(f"the plugins' Args were not read from the Go code ({err.message})")
    wanted = {p.name for p in spec.plugins}
    args = {name: values for name, values in resolved.args.items() if name in wanted}
    existing = {p.name for p in project.plugins}
    added = replace(spec, plugins=tuple(p for p in spec.plugins if p.name not in existing))
    args.update(scaffold.generated_args(added))
    return scaffold.render_project(spec, project.root, args).files, resolved.notices


def plan(
    project: Project,
    spec: ProjectSpec,
    *,
    keep_edited: bool = False,
    force: bool = False,
    rendered: dict[PurePosixPath, bytes] | None = None,
    create: tuple[PurePosixPath, ...] = (),
) -> Sync:
    """Compare the rendering of ``spec`` (``rendered``, when the caller has it) with the
    project on disk. ``force`` overwrites edited files (only ever used on a throw-away
    copy); ``create`` are the user files (or directories of them) the caller adds."""
    recorded = project.generated
    if not recorded:
        raise UsageError(
            f"{project.root / PROJECT_FILE} records no generated files: the project was made by an earlier "
            "kplugin, whose files this one cannot tell from yours; generate a new project with kplugin new and move "
            "your pkg/ code into it"
        )
    go_mod = _read(project.root, "go.mod")
    if go_mod is not None:
        safefs.decode(go_mod, "go.mod", project.root / "go.mod")
    if rendered is None:
        rendered = scaffold.render_project(spec, project.root).files
    sync = Sync(go_mod=rendered[PurePosixPath("go.mod")])
    generated: dict[str, str] = {}
    for path, content in sorted(rendered.items()):
        if str(path) in EDITED_FILES:
            continue
        disk = _read(project.root, path)
        if scaffold.is_user_file(path, spec.template):
            # a project that moves to a fork gets the fork's own user files (never over one on disk)
            adopted = spec.template is not None and not project.fork and not scaffold.is_user_file(path)
            if disk is None and (adopted or any(path == new or new in path.parents for new in create)):
                sync.writes[path] = content
            elif disk is None:
                sync.not_recreated.append(path)
            continue
        generated[str(path)] = digest.sha256_hex(content)
        if disk == content:
            continue
        if disk is not None and recorded.get(str(path)) == digest.sha256_hex(content):
            continue  # kplugin would write what it wrote before: a hand edit there stands
        if disk is None or force or recorded.get(str(path)) == digest.sha256_hex(disk):
            sync.writes[path] = content
        elif keep_edited:
            sync.conflicts.append(Conflict(path, "edited by hand; kept, the new version is beside it"))
            sync.writes[PurePosixPath(f"{path}{NEW_SUFFIX}")] = content
        else:
            why = "edited by hand since kplugin generated it" if str(path) in recorded else "not generated by kplugin"
            sync.conflicts.append(Conflict(path, why))
    for name in sorted(recorded):
        path = PurePosixPath(name)
        if path in rendered:
            continue
        disk = _read(project.root, path)
        if disk is None:
            continue
        if force or recorded[name] == digest.sha256_hex(disk):
            sync.deletes.append(path)
        elif not keep_edited:
            sync.conflicts.append(Conflict(path, "edited by hand, and the new version has no such file"))
    sync.metadata = yamlio.dump(scaffold.project_metadata(spec, generated, rendered)).encode()
    return sync


# --- go.mod --------------------------------------------------------------------------


def _directive_key(text: str) -> tuple[int, ...]:
    """A go directive ("1.22.0") as numbers, for comparing two directives."""
    return tuple(int(x) for x in re.findall(r"\d+", text))


_KUBERNETES = "k8s.io/kubernetes"
# kplugin's own replace block in go.mod, comment included (see the go.mod template).
_REPLACE_BLOCK = re.compile(r"^// k8s\.io/kubernetes requires its staging modules.*?^\)\n", re.M | re.S)


def repin(module_dir: Path, old: Target, new: Target, rendered_go_mod: bytes, *, adopted: bool = False) -> None:
    """Move go.mod from ``old`` to ``new``: the go directive, k8s.io/kubernetes and a
    replace for every staging module of the new release (kplugin's replace block is
    swapped for the one in ``rendered_go_mod``). The k8s.io and sigs.k8s.io
    requirements and every indirect one are dropped for ``go mod tidy`` to recompute:
    kept, the newer ones would win a downgrade (minimal version selection keeps the
    highest). The user's own requirements and replaces stay. In an ``adopted`` repository
    only k8s.io/kubernetes and the staging modules are dropped (its other requirements,
    sigs.k8s.io's included, are its own choice), and its toolchain line stays unless the
    new version needs one."""
    if proc.which("go") is None:
        raise OperationError("Go is not on PATH; kplugin needs it to re-pin go.mod (install Go 1.22 or newer)")
    go_mod = module_dir / "go.mod"
    block = _REPLACE_BLOCK.search(rendered_go_mod.decode())
    text = safefs.read_text(go_mod, "go.mod")
    kept_block = block is not None and _REPLACE_BLOCK.search(text) is not None
    if kept_block:
        assert block is not None
        go_mod.write_text(_REPLACE_BLOCK.sub(lambda _: block[0], text, count=1))
    try:
        current = json.loads(_go(module_dir, "go mod edit -json", "mod", "edit", "-json"))
    except ValueError:  # go printed something else with it (a toolchain download, a warning)
        raise OperationError(f"go mod edit -json in {module_dir} printed no JSON; run it there to see why") from None
    if not isinstance(current, dict):
        raise OperationError(f"go mod edit -json in {module_dir} printed no JSON object")
    edits = []
    go_line = str(current.get("Go") or "")
    wanted = new.release.go_directive
    if go_line == old.release.go_directive or _directive_key(go_line) < _directive_key(wanted):
        edits.append(f"-go={wanted}")
    staging = set(old.release.staging_modules) | set(new.release.staging_modules)
    for require in current.get("Require") or []:
        path = str(require["Path"])
        if adopted and (path not in staging or path == _KUBERNETES):
            continue  # its own; k8s.io/kubernetes is moved where it stands (-require below)
        if require.get("Indirect") or path.startswith(("k8s.io/", "sigs.k8s.io/")):
            edits.append(f"-droprequire={path}")
    edits.append(f"-require=k8s.io/kubernetes@{new.version.tag}")
    # the Go the new version needs: its toolchain line and godebug, or none
    if not adopted or new.release.toolchain:
        edits.append(f"-toolchain={new.release.toolchain or 'none'}")
    if old.release.godebug and old.release.godebug != new.release.godebug:
        edits.append(f"-dropgodebug={old.release.godebug.split('=')[0]}")
    if new.release.godebug:
        edits.append(f"-godebug={new.release.godebug}")
    if not kept_block:  # the user rewrote the block: re-pin replace by replace
        pinned = {m: new.version.staging_tag for m in new.release.staging_modules} | {_KUBERNETES: new.version.tag}
        kept = set()
        for replace in current.get("Replace") or []:
            old_path, to = str(replace["Old"]["Path"]), replace["New"]
            if (to.get("Path"), to.get("Version")) == (old_path, pinned.get(old_path)):
                kept.add(old_path)  # at the new version already: left where it stands
            elif old_path in staging or (not adopted and old_path.startswith("k8s.io/") and to.get("Version")):
                edits.append(f"-dropreplace={old_path}")  # an adopted repository's other k8s.io pins are its own
        edits += [f"-replace={m}={m}@{new.version.staging_tag}" for m in new.release.staging_modules if m not in kept]
    _go(module_dir, "go mod edit", "mod", "edit", *edits)


def _go(module_dir: Path, what: str, *args: str) -> str:
    """A go command in the module; a failure is one line with go's own last line."""
    try:
        return proc.run(["go", *args], cwd=module_dir, what=what, env=golang.toolchain_env(module_dir))
    except ToolError as err:
        raise OperationError(golang.explain_go_failure(err)) from err


# --- staging -------------------------------------------------------------------------


def _destination(project: Project) -> stage.Destination:
    return stage.Destination(project.root, fresh=False)


@contextmanager
def staged(project: Project, sync: Sync, go_mod: Callable[[Path], object] | None) -> Iterator[Path]:
    """A copy of the project with the sync applied and go.mod re-pinned (``go_mod``,
    e.g. repin and then go mod tidy); removed afterwards. The project is not touched."""
    with stage.staged(_destination(project), sync.changes(), go_mod) as where:
        yield where


def apply(project: Project, sync: Sync, go_mod: Callable[[Path], object] | None = None) -> list[PurePosixPath]:
    """Apply ``sync`` (which must have no conflicts, or only kept ones) through a stage,
    under a lock on the project (a second kplugin updating it fails at once); returns
    the paths that changed."""
    return stage.apply(_destination(project), sync.changes(), go_mod, what="updating the project")


def preview(project: Project, sync: Sync, go_mod: Callable[[Path], object] | None = None) -> list[PurePosixPath]:
    """The paths ``apply`` would change (the same stage, ``go_mod`` included), the
    project left as it is: a dry run that lists exactly what the real run changes."""
    return stage.preview(_destination(project), sync.changes(), go_mod)
