"""The one place that writes a project: a staging engine behind ``kplugin new``,
``upgrade``, ``add`` and ``build --k8s``.

Every change goes the same way: the destination is checked before the first write; a
staging directory is made beside it (same file system) holding the project as it will
be: a copy of the existing project, if any, with the changes applied; tools run there
(``go mod tidy``); then the result is moved into place. A new project directory is moved
with one rename (of two runs racing for it exactly one wins); an existing one is updated
file by file under a lock, in a transaction that puts back what it moved when a later
file fails. A failure anywhere, a signal included, removes the stage and leaves the
destination as it was. ``kplugin new`` is this engine applied to an empty project.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from kplugin.core import safefs
from kplugin.core.errors import KpluginError, OperationError, Setting, UsageError
from kplugin.model.project import EDITED_FILES

EXECUTABLE_SUFFIXES = (".sh",)
# Never copied into a stage: build output, VCS data, other stages.
_NOT_STAGED = {"bin", "dist", ".git", ".kplugin"}
# Files tools edit in the stage (go mod tidy): moved into place whenever they changed.
_TOOL_EDITED = tuple(PurePosixPath(p) for p in EDITED_FILES)


@dataclass
class Changes:
    """What to write into (and delete from) a project directory, paths relative to it."""

    writes: Mapping[PurePosixPath, bytes] = field(default_factory=dict)
    deletes: list[PurePosixPath] = field(default_factory=list)
    # files and directories tools write in the stage (code generators): every file there
    # that is new, changed or gone is moved into place too
    produced: tuple[PurePosixPath, ...] = ()


@dataclass(frozen=True)
class Destination:
    """A project directory and whether it is new (missing or empty)."""

    root: Path
    fresh: bool


def destination(root: Path, *, force: bool) -> Destination:
    """Where ``kplugin new`` writes, checked: a real directory (or one that can be made),
    not a non-empty one without --force."""
    for parent in [root, *root.parents]:
        if parent.exists() and not parent.is_dir():
            raise UsageError(f"output path {root} is inside a file ({parent}); choose a directory")
        if parent.exists():
            break
    mode = safefs.lstat_mode(root)
    if mode is not None and stat.S_ISLNK(mode):
        raise UsageError(f"{root} is a symlink; kplugin generates only into a real directory")
    fresh = mode is None or not any(root.iterdir())
    if not fresh and not force:
        raise UsageError(f"directory {root} exists and is not empty; pass {Setting.FORCE} to write into it")
    return Destination(root, fresh)


def check_targets(dest: Destination, changes: Changes) -> None:
    """Every destination of an existing project checked before the first write: inside
    it, in real directories, where no directory, symlink, special or read-only file stands."""
    if dest.fresh:
        return
    for path in sorted({*changes.writes, *_TOOL_EDITED, *changes.deletes}):
        safefs.check_writable_target(dest.root, path)
    # what tools produce is known only in the stage: each file is checked at the commit


@contextmanager
def staged(dest: Destination, changes: Changes, in_stage: Callable[[Path], object] | None = None) -> Iterator[Path]:
    """The project as it will be, in a stage beside it, after ``in_stage`` ran there (an
    error from it names the project, not the stage); removed afterwards."""
    check_targets(dest, changes)
    parent = dest.root.parent
    created_parents = [p for p in [parent, *parent.parents] if not p.exists()]
    parent.mkdir(parents=True, exist_ok=True)
    stage = safefs.make_stage(parent, dest.root.name)
    try:
        if not dest.fresh:
            _copy_project(dest.root, stage)
        _write(stage, changes)
        if in_stage is not None:
            try:
                in_stage(stage)
            except KpluginError as err:
                raise err.relocated(stage, dest.root) from None
        yield stage
    finally:
        safefs.remove_tree(stage)
        if safefs.lstat_mode(dest.root) is None:
            for p in created_parents:
                with suppress(OSError):
                    p.rmdir()


def _files_under(root: Path, path: PurePosixPath) -> set[PurePosixPath]:
    """``path`` if it is a regular file of ``root``, or the regular files in it (a
    directory, never followed through a symlink)."""
    top = root / path
    mode = safefs.lstat_mode(top)
    if mode is None or stat.S_ISLNK(mode):
        return set()
    if stat.S_ISREG(mode):
        return {path}
    found = set()
    for directory, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not (Path(directory) / d).is_symlink()]
        for name in files:
            full = Path(directory) / name
            if full.is_file() and not full.is_symlink():
                found.add(PurePosixPath(full.relative_to(root).as_posix()))
    return found


def _gone(dest: Destination, changes: Changes, stage: Path) -> set[PurePosixPath]:
    """The produced files the stage no longer has: deleted by the commit."""
    return {
        path
        for produced in changes.produced
        for path in _files_under(dest.root, produced) - _files_under(stage, produced)
    }


def differences(dest: Destination, changes: Changes, stage: Path) -> list[PurePosixPath]:
    """The paths whose bytes in ``stage`` differ from the project's, and those deleted:
    what a commit of the stage changes."""
    produced = {path for p in changes.produced for path in _files_under(stage, p)}
    changed = [
        path
        for path in sorted({*changes.writes, *_TOOL_EDITED, *produced})
        if (staged_bytes := safefs.read_project_file(stage, path)) is not None
        and staged_bytes != safefs.read_project_file(dest.root, path)
    ]
    return sorted({*changed, *changes.deletes, *_gone(dest, changes, stage)})


def commit(dest: Destination, changes: Changes, stage: Path) -> list[PurePosixPath]:
    """Move the stage's result into place; returns the paths that changed."""
    if dest.fresh:
        _move_new(dest.root, stage)
        return sorted({*changes.writes, *(p for p in _TOOL_EDITED if (dest.root / p).is_file())})
    check_targets(dest, changes)  # again, under the lock: the tree may have changed
    changed = differences(dest, changes, stage)
    deleted = {*changes.deletes, *_gone(dest, changes, stage)}
    for path in changed:
        if path not in deleted:
            safefs.check_writable_target(dest.root, path)
    with safefs.transaction(dest.root, stage / ".kplugin-backup") as tx:
        for path in changed:
            if path in deleted:
                tx.delete(path)
            else:
                tx.put(stage / path, path)
    for path in deleted:
        _remove_empty_parents(dest.root, path)
    return changed


def preview(
    dest: Destination, changes: Changes, in_stage: Callable[[Path], object] | None = None
) -> list[PurePosixPath]:
    """What ``apply`` would change, from the same stage, the project left as it is."""
    try:
        with staged(dest, changes, in_stage) as stage:
            return differences(dest, changes, stage)
    except OSError as err:
        raise OperationError(f"staging {dest.root}: {err.strerror or err}") from err


def apply(
    dest: Destination, changes: Changes, in_stage: Callable[[Path], object] | None = None, *, what: str = "writing"
) -> list[PurePosixPath]:
    """Stage, run ``in_stage``, commit: all or nothing. An existing project is locked
    meanwhile (``what`` kplugin is doing there: a second kplugin fails at once)."""
    try:
        with ExitStack() as stack:
            if not dest.fresh:
                check_targets(dest, changes)  # before the lock: a refusal needs no lock
                stack.enter_context(safefs.locked(dest.root, what))
            stage = stack.enter_context(staged(dest, changes, in_stage))
            return commit(dest, changes, stage)
    except OSError as err:
        raise OperationError(f"writing {dest.root}: {err.strerror or err}") from err


def _write(stage: Path, changes: Changes) -> None:
    for path, content in sorted(changes.writes.items()):
        target = stage / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        if path.suffix in EXECUTABLE_SUFFIXES:
            target.chmod(0o755 & ~safefs.current_umask())
    for path in changes.deletes:
        (stage / path).unlink(missing_ok=True)


def _move_new(root: Path, stage: Path) -> None:
    """One rename of the whole stage onto the (missing or empty) project directory."""
    try:
        with suppress(FileNotFoundError):
            if safefs.lstat_mode(root) is not None:
                root.rmdir()  # empty, or another run filled it: then this fails
        os.rename(stage, root)
    except OSError as err:
        if err.errno in {errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR}:
            raise OperationError(
                f"{root} was created by someone else while kplugin was generating; nothing was written "
                f"(run again with {Setting.FORCE} to write into it)"
            ) from None
        raise


def _copy_project(root: Path, stage: Path) -> None:
    """Copy the project's directories, regular files and symlinks (as links) into the
    stage; FIFOs, devices and sockets are left out (reading one would hang or never end).
    Without recursion: a tree deeper than Python's recursion limit is copied too. The
    first failure (a full disk) stops the copy with its OSError."""
    pending = [Path()]
    while pending:
        relative = pending.pop()
        with os.scandir(root / relative) as entries:
            names = sorted(entry.name for entry in entries)
        for name in names:
            if relative == Path() and (name in _NOT_STAGED or (name.startswith(".") and ".kplugin-" in name)):
                continue
            source, target = root / relative / name, stage / relative / name
            mode = safefs.lstat_mode(source)
            if mode is None:
                continue
            if stat.S_ISLNK(mode):
                os.symlink(os.readlink(source), target)
            elif stat.S_ISDIR(mode):
                target.mkdir()
                pending.append(relative / name)
            elif stat.S_ISREG(mode):
                shutil.copy2(source, target)


def _remove_empty_parents(root: Path, path: PurePosixPath) -> None:
    for parent in (root / path).parents:
        if parent == root or root not in parent.parents:
            return
        try:
            parent.rmdir()
        except OSError:
            return
