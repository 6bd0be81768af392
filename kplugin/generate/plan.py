"""The one place that writes files: a plan of (path, content) applied atomically."""

from __future__ import annotations

import enum
import errno
import os
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from kplugin.core import safefs
from kplugin.core.errors import KpluginError, OperationError, UsageError

EXECUTABLE_SUFFIXES = (".sh",)


class Change(enum.StrEnum):
    CREATE = "create"
    OVERWRITE = "overwrite"
    UNCHANGED = "unchanged"


@dataclass
class FilePlan:
    """Files to write under ``dest``, each path relative to it."""

    dest: Path
    files: dict[PurePosixPath, bytes] = field(default_factory=dict)
    # set by check_destination: the project directory does not exist yet (or is empty)
    _fresh: bool = True

    def add(self, path: str | PurePosixPath, content: str | bytes) -> None:
        key = PurePosixPath(path)
        if key in self.files:
            raise OperationError(f"two generated files claim {key}")
        self.files[key] = content.encode() if isinstance(content, str) else content

    def update(self, files: Mapping[PurePosixPath, bytes]) -> None:
        for path, content in files.items():
            self.add(path, content)

    def changes(self) -> list[tuple[PurePosixPath, Change]]:
        result = []
        for path in sorted(self.files):
            existing = self.dest / path
            mode = safefs.lstat_mode(existing)
            if mode is None:
                change = Change.CREATE
            elif stat.S_ISREG(mode) and _same(existing, self.files[path]):
                change = Change.UNCHANGED
            else:
                change = Change.OVERWRITE
            result.append((path, change))
        return result

    def check_destination(self, force: bool) -> None:
        """Every check before the first write: the destination is a real directory (or
        can be made one), not a non-empty one without --force, and with --force every
        file lands in a real directory inside it, where no directory, symlink, special
        or read-only file stands. Remembers whether the project directory is new."""
        for parent in [self.dest, *self.dest.parents]:
            if parent.exists() and not parent.is_dir():
                raise UsageError(f"output path {self.dest} is inside a file ({parent}); choose a directory")
            if parent.exists():
                break
        mode = safefs.lstat_mode(self.dest)
        if mode is not None and stat.S_ISLNK(mode):
            raise UsageError(f"{self.dest} is a symlink; kplugin generates only into a real directory")
        self._fresh = mode is None or not any(self.dest.iterdir())
        if not self._fresh and not force:
            raise UsageError(f"directory {self.dest} exists and is not empty; pass --force to write into it")
        if not self._fresh:
            for path in sorted(self.files):
                safefs.check_writable_target(self.dest, path)

    @contextmanager
    def staged(self) -> Iterator[Path]:
        """Write every file into a temporary directory beside ``dest`` and yield it.

        The caller may run tools in it (``go mod tidy``); ``commit`` then moves it into
        place. If anything fails (a signal included) the temporary directory is removed
        and ``dest`` is as it was.
        """
        parent = self.dest.parent
        created_parents = [p for p in [parent, *parent.parents] if not p.exists()]
        parent.mkdir(parents=True, exist_ok=True)
        stage = safefs.make_stage(parent, self.dest.name)
        try:
            for path, content in sorted(self.files.items()):
                target = stage / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
                if path.suffix in EXECUTABLE_SUFFIXES:
                    target.chmod(0o755 & ~safefs.current_umask())
            yield stage
        finally:
            shutil.rmtree(stage, ignore_errors=True)
            if safefs.lstat_mode(self.dest) is None:
                for p in created_parents:
                    with suppress(OSError):
                        p.rmdir()

    def commit(self, stage: Path) -> None:
        """Move a staged tree into place: one rename when the project directory is new
        (so of two runs racing for it exactly one wins), else file by file in a
        transaction that puts back what it moved if a later file fails."""
        if self._fresh:
            try:
                with suppress(FileNotFoundError):
                    if safefs.lstat_mode(self.dest) is not None:
                        self.dest.rmdir()  # empty, or another run filled it: then this fails
                os.rename(stage, self.dest)
            except OSError as err:
                if err.errno in {errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR}:
                    raise OperationError(
                        f"{self.dest} was created by someone else while kplugin was generating; nothing was written "
                        "(run again with --force to write into it)"
                    ) from None
                raise
            return
        with safefs.locked(self.dest, "writing"):
            for path in sorted(self.files):  # again, under the lock: the tree may have changed
                safefs.check_writable_target(self.dest, path)
            with safefs.transaction(self.dest, stage / ".kplugin-backup") as tx:
                for path in sorted(self.files):
                    tx.put(stage / path, path)

    def apply(self, force: bool, in_stage: Callable[[Path], None] | None = None) -> None:
        self.check_destination(force)
        with self.staged() as stage:
            if in_stage is not None:
                try:
                    in_stage(stage)
                except KpluginError as err:  # name the user's directory, not kplugin's staging copy
                    raise err.relocated(stage, self.dest) from None
            self.commit(stage)


def _same(path: Path, content: bytes) -> bool:
    try:
        return path.stat().st_size == len(content) and path.read_bytes() == content
    except OSError:
        return False
