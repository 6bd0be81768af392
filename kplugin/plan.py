"""The one place that writes files: a plan of (path, content) applied atomically."""

from __future__ import annotations

import enum
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from kplugin.errors import OperationError, UsageError

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
            if not existing.exists():
                change = Change.CREATE
            elif existing.is_file() and existing.read_bytes() == self.files[path]:
                change = Change.UNCHANGED
            else:
                change = Change.OVERWRITE
            result.append((path, change))
        return result

    def check_destination(self, force: bool) -> None:
        """Refuse to write into a file, or into a non-empty directory without --force."""
        for parent in [self.dest, *self.dest.parents]:
            if parent.exists() and not parent.is_dir():
                raise UsageError(f"output path {self.dest} is inside a file ({parent}); choose a directory")
            if parent.exists():
                break
        if self.dest.is_dir() and any(self.dest.iterdir()) and not force:
            raise UsageError(f"directory {self.dest} exists and is not empty; pass --force to write into it")
        if force:
            for path in self.files:
                for part in [*reversed((self.dest / path).parents), self.dest / path]:
                    if part == self.dest or self.dest not in part.parents:
                        continue
                    if part != self.dest / path and part.exists() and not part.is_dir():
                        raise UsageError(f"{part} is a file where the project needs a directory")

    @contextmanager
    def staged(self) -> Iterator[Path]:
        """Write every file into a temporary directory beside ``dest`` and yield it.

        The caller may run tools in it (``go mod tidy``); ``commit`` then moves it into
        place. If anything fails the temporary directory is removed and ``dest`` is as
        it was.
        """
        parent = self.dest.parent
        created_parents = [p for p in [parent, *parent.parents] if not p.exists()]
        parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{self.dest.name}.kplugin-", dir=parent))
        try:
            for path, content in sorted(self.files.items()):
                target = stage / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
                if path.suffix in EXECUTABLE_SUFFIXES:
                    target.chmod(0o755)
            yield stage
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            for p in created_parents:
                with suppress(OSError):
                    p.rmdir()
            raise

    def commit(self, stage: Path) -> None:
        """Move a staged tree into place: a rename when ``dest`` is new, else file by file."""
        if not self.dest.exists() or (self.dest.is_dir() and not any(self.dest.iterdir())):
            if self.dest.exists():
                self.dest.rmdir()
            os.replace(stage, self.dest)
            return
        for source in sorted(p for p in stage.rglob("*") if p.is_file()):
            target = self.dest / source.relative_to(stage)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
        shutil.rmtree(stage, ignore_errors=True)

    def apply(self, force: bool, in_stage: Callable[[Path], None] | None = None) -> None:
        self.check_destination(force)
        with self.staged() as stage:
            if in_stage is not None:
                in_stage(stage)
            self.commit(stage)


def write_file(path: Path, content: str) -> None:
    """Replace one file atomically (temp file in the same directory, then rename)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(content)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
