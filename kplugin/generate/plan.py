"""A rendered project: (path, content) pairs, and what writing them would change (the
stage engine, ``generate.stage``, writes them)."""

from __future__ import annotations

import enum
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from kplugin.core import safefs
from kplugin.core.errors import OperationError


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
            mode = safefs.lstat_mode(existing)
            if mode is None:
                change = Change.CREATE
            elif stat.S_ISREG(mode) and _same(existing, self.files[path]):
                change = Change.UNCHANGED
            else:
                change = Change.OVERWRITE
            result.append((path, change))
        return result


def _same(path: Path, content: bytes) -> bool:
    try:
        return path.stat().st_size == len(content) and path.read_bytes() == content
    except OSError:
        return False
