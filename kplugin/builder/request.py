"""What a build is asked for and what it returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from kplugin.builder.platform import Platform
from kplugin.builder.verify import Binary
from kplugin.model.buildfacts import DEFAULT_BASE_IMAGE
from kplugin.model.project import Project


class BuilderName(StrEnum):
    """--builder: auto picks docker or local."""

    AUTO = "auto"
    DOCKER = "docker"
    LOCAL = "local"


@dataclass
class BuildResult:
    builder: str
    reason: str
    kubernetes: str
    binaries: list[Binary] = field(default_factory=list)
    image: str | None = None
    image_id: str | None = None
    image_user: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    pushed: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BuildRequest:
    project: Project
    builder: BuilderName = BuilderName.AUTO
    platforms: tuple[Platform, ...] = ()
    image: str | None = None
    go_image: str | None = None
    base_image: str = DEFAULT_BASE_IMAGE
    output: Path | None = None
    push: bool = False
    network: str | None = None
    log: Callable[[str], None] | None = None
    # CGO_ENABLED=1 (a dependency needs cgo): a dynamic binary, local builds only
    cgo: bool = False

    @property
    def tag(self) -> str:
        return self.image or self.project.image
