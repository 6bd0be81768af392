"""Build a project's kube-scheduler: through Docker (BuildKit, or the SDK's legacy
builder) or the local Go toolchain, then verify the binary is static, for the right
architecture, and the pinned version. Each backend is a Builder."""

from __future__ import annotations

from typing import Protocol

from kplugin.build.docker import (
    BuildKitBackend,
    DockerBuilder,
    LegacyBackend,
    buildkit_cli,
    docker_problem,
    dockerfile_without_buildkit,
    label_build_stage,
)
from kplugin.build.local import LocalBuilder
from kplugin.build.platform import Platform, host_arch, parse_platforms
from kplugin.build.request import BuildRequest, BuildResult
from kplugin.build.verify import Binary
from kplugin.core.errors import OperationError, UsageError
from kplugin.core.progress import Progress
from kplugin.model.buildfacts import BuildFacts

__all__ = [
    "Binary",
    "BuildFacts",
    "BuildRequest",
    "BuildResult",
    "Builder",
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


def choose_builder(requested: str) -> tuple[str, str]:
    if requested not in {"auto", "docker", "local"}:
        raise UsageError(f"--builder {requested!r} is not one of auto, docker, local")
    if requested == "local":
        return "local", "--builder local"
    problem = docker_problem()
    if requested == "docker":
        if problem:
            raise OperationError(f"Docker daemon not reachable ({problem}); use --builder local to build with Go")
        return "docker", "--builder docker"
    if problem:
        return "local", f"no Docker daemon answered ({problem})"
    return "docker", "a Docker daemon answered"


def builder_for(name: str) -> Builder:
    """The Builder called ``name`` (local or docker; docker through BuildKit when a docker
    CLI with it is on PATH, else the SDK's legacy builder)."""
    if name == "local":
        return LocalBuilder()
    cli = buildkit_cli()
    return DockerBuilder(BuildKitBackend(cli) if cli is not None else LegacyBackend())


def build(request: BuildRequest, progress: Progress, chosen: tuple[str, str] | None = None) -> BuildResult:
    """Build as requested; ``chosen`` is a (builder, reason) from choose_builder."""
    project = request.project
    name, reason = chosen or choose_builder(request.builder)
    platforms = request.platforms or (Platform("linux", host_arch()),)
    result = BuildResult(builder=name, reason=reason, kubernetes=project.version.tag)
    builder_for(name).build(request, platforms, result, progress)
    return result
