"""Build a project's kube-scheduler: through Docker (BuildKit, or the SDK's legacy
builder) or the local Go toolchain, then verify the binary is static, for the right
architecture, and the pinned version. Each backend is a Builder."""

from __future__ import annotations

from typing import NamedTuple, Protocol

from kplugin.builder.docker import (
    BuildKitBackend,
    DockerBuilder,
    LegacyBackend,
    buildkit_cli,
    docker_problem,
    dockerfile_without_buildkit,
    label_build_stage,
)
from kplugin.builder.local import LocalBuilder
from kplugin.builder.platform import Platform, host_arch, parse_platforms
from kplugin.builder.request import BuilderName, BuildRequest, BuildResult
from kplugin.builder.verify import Binary
from kplugin.core.errors import OperationError, Setting
from kplugin.core.progress import Progress
from kplugin.model.buildfacts import BuildFacts

__all__ = [
    "Binary",
    "BuildFacts",
    "BuildRequest",
    "BuildResult",
    "Builder",
    "BuilderName",
    "Choice",
    "Platform",
    "build",
    "choose_builder",
    "dockerfile_without_buildkit",
    "host_arch",
    "label_build_stage",
    "parse_platforms",
]


class Builder(Protocol):
    """One way of building: it fills ``result`` with the verified binaries (and image)."""

    name: str

    def build(
        self, request: BuildRequest, platforms: tuple[Platform, ...], result: BuildResult, progress: Progress
    ) -> None: ...


class Choice(NamedTuple):
    """The builder a build uses and why (shown as 'building with local (--builder local)'); the
    reason names settings as placeholders (kplugin.core.errors.render spells them)."""

    builder: BuilderName
    reason: str


def choose_builder(requested: BuilderName) -> Choice:
    if requested == BuilderName.LOCAL:
        return Choice(BuilderName.LOCAL, f"{Setting.BUILDER} local")
    problem = docker_problem()
    if requested == BuilderName.DOCKER:
        if problem:
            raise OperationError(
                f"Docker daemon not reachable ({problem}); use {Setting.BUILDER} local to build with Go"
            )
        return Choice(BuilderName.DOCKER, f"{Setting.BUILDER} docker")
    if problem:
        return Choice(BuilderName.LOCAL, f"no Docker daemon answered ({problem})")
    return Choice(BuilderName.DOCKER, "a Docker daemon answered")


def builder_for(name: BuilderName) -> Builder:
    """The Builder called ``name`` (local or docker; docker through BuildKit when a docker
    CLI with it is on PATH, else the SDK's legacy builder)."""
    if name == BuilderName.LOCAL:
        return LocalBuilder()
    cli = buildkit_cli()
    return DockerBuilder(BuildKitBackend(cli) if cli is not None else LegacyBackend())


def build(request: BuildRequest, progress: Progress, chosen: Choice | None = None) -> BuildResult:
    """Build as requested; ``chosen`` is the builder (and why) from choose_builder."""
    project = request.project
    name, reason = chosen or choose_builder(request.builder)
    platforms = request.platforms or (Platform("linux", host_arch()),)
    result = BuildResult(builder=name.value, reason=reason, kubernetes=project.version.tag)
    builder_for(name).build(request, platforms, result, progress)
    return result
