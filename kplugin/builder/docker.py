"""The Docker builders: the project's multi-stage Dockerfile through BuildKit (a docker
CLI that has it) or, without one, the SDK's legacy builder; then the binary is taken out
of the image and verified."""

from __future__ import annotations

import io
import os
import re
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from kplugin.builder.platform import Platform
from kplugin.builder.request import BuildRequest, BuildResult
from kplugin.builder.verify import verify
from kplugin.core import golang, proc, safefs
from kplugin.core.errors import OperationError, Setting, ToolError, UsageError
from kplugin.core.progress import Progress
from kplugin.model.buildfacts import BINARY_IN_IMAGE, LABEL_K8S, NONROOT_USER, BuildFacts
from kplugin.model.project import Project


def docker_problem() -> str | None:
    """None when a Docker daemon answers, else why not, in a few words."""
    try:
        import docker
        from docker.errors import DockerException
    except ImportError:
        return "the docker Python package is not installed"
    where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    if where.startswith("unix://"):
        # Probe the socket first: the SDK leaks a socket when the connect fails.
        import socket

        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(5)
            try:
                probe.connect(where.removeprefix("unix://"))
            except OSError as err:
                return f"{where}: {err.strerror or err}"
    try:
        client = docker.from_env(timeout=5)
    except DockerException as err:
        return f"{where}: {_root_cause(err)}"
    try:
        client.ping()
    except DockerException as err:
        return f"{where}: {_root_cause(err)}"
    finally:
        client.close()
    return None


def _root_cause(err: BaseException) -> str:
    """The innermost OS-level reason (e.g. 'No such file or directory') of a chain."""
    seen: BaseException | None = err
    reason = str(err)
    while seen is not None:
        for arg in getattr(seen, "args", ()):
            if isinstance(arg, OSError) and arg.strerror:
                return arg.strerror
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror
        seen = seen.__cause__ or seen.__context__
    return reason[:160]


def _labels(project: Project) -> dict[str, str]:
    revision = "unknown"
    if (project.root / ".git").exists() and proc.which("git"):
        with suppress(OperationError):
            revision = proc.run(["git", "rev-parse", "HEAD"], cwd=project.root, what="git rev-parse").strip()
    return {
        "org.opencontainers.image.title": project.name,
        "org.opencontainers.image.source": project.module,
        "org.opencontainers.image.revision": revision,
        "org.opencontainers.image.version": project.version.tag,
        LABEL_K8S: project.version.tag,
    }


class DockerBuilder:
    """Builds the image with ``backend`` (BuildKit or legacy), checks it runs as the
    non-root user, takes the binary out and verifies it; pushes on request."""

    name = "docker"

    def __init__(self, backend: BuildKitBackend | LegacyBackend) -> None:
        self.backend = backend

    def build(
        self, request: BuildRequest, platforms: tuple[Platform, ...], result: BuildResult, progress: Progress
    ) -> None:
        import docker

        project = request.project
        if len(platforms) > 1:
            raise UsageError(
                "a multi-platform image needs docker buildx, which this engine does not have; "
                f"build one {Setting.PLATFORM} at a time, or use {Setting.BUILDER} local for one binary per platform"
            )
        (plat,) = platforms
        if not (project.root / "go.sum").is_file():
            raise UsageError(f"{project.root}/go.sum is missing; run 'go mod tidy' in the project first")
        labels = _labels(project)
        build_args = {
            "GO_IMAGE": request.go_image or BuildFacts.of(project).go_image,
            "BASE_IMAGE": request.base_image,
            "K8S_VERSION": project.version.tag,
        }
        client = docker.from_env(timeout=600)
        try:
            if isinstance(self.backend, LegacyBackend):
                result.reason += "; no docker CLI with BuildKit (buildx), so the legacy builder, without cache mounts"
            if project.layout is not None:  # kplugin's own Dockerfile; the repository's are its own
                from kplugin.builder import owndockerfile

                with owndockerfile.written(project) as dockerfile:
                    self.backend.build(client, request, plat, build_args, labels, progress, dockerfile)
            else:
                self.backend.build(client, request, plat, build_args, labels, progress)
            image = client.images.get(request.tag)
            result.image = request.tag
            result.image_id = image.id
            result.image_user = image.attrs.get("Config", {}).get("User")
            result.labels = dict(image.attrs.get("Config", {}).get("Labels") or {})
            if result.image_user not in {NONROOT_USER, "65532"}:
                raise OperationError(f"image {request.tag} runs as {result.image_user!r}, not {NONROOT_USER}")
            with _extracted(client, request.tag, request.output) as binary:
                result.binaries.append(verify(binary, plat, project, progress))
            if request.push:
                _push(client, request.tag, progress)
                result.pushed = True
        finally:
            client.close()


def _docker_clis() -> list[str]:
    found = []
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(directory or ".") / "docker"
        if candidate.is_file() and os.access(candidate, os.X_OK) and str(candidate.resolve()) not in found:
            found.append(str(candidate.resolve()))
    return found


def buildkit_cli() -> str | None:
    """A docker CLI on PATH that builds with BuildKit: one with the buildx plugin, or a
    pre-23 one whose built-in BuildKit DOCKER_BUILDKIT=1 turns on. The first in PATH order."""
    for cli in _docker_clis():
        if proc.probe([cli, "buildx", "version"], timeout=30).returncode == 0:
            return cli
        version = proc.probe([cli, "--version"], timeout=30).stdout
        match = re.search(r"version (\d+)\.", version)
        if match and int(match[1]) < 23:
            return cli
    return None


class BuildKitBackend:
    """docker build through a CLI with BuildKit: cache mounts make rebuilds incremental."""

    def __init__(self, cli: str) -> None:
        self.cli = cli

    def build(
        self,
        _client: Any,
        request: BuildRequest,
        plat: Platform,
        build_args: dict[str, str],
        labels: dict[str, str],
        progress: Progress,
        dockerfile: Path | None = None,
    ) -> None:
        """``dockerfile``: another than the project's (an adopted repository's: kplugin's own)."""
        cmd = [self.cli, "build", "--progress=plain", "--platform", str(plat), "-t", request.tag]
        if dockerfile is not None:
            cmd += ["-f", str(dockerfile)]
        for key, value in sorted(build_args.items()):
            cmd += ["--build-arg", f"{key}={value}"]
        for key, value in sorted(labels.items()):
            cmd += ["--label", f"{key}={value}"]
        if request.network:
            cmd += ["--network", request.network]
        cmd.append(str(request.project.root))
        progress("docker build (BuildKit)")

        def on_line(line: str) -> None:
            if request.log:
                request.log(line)
            step = re.match(r"#\d+ \[([^\]]+)\] (.*)", line)
            if step:
                progress(f"docker build: [{step[1]}] {step[2][:80]}")

        try:
            proc.stream(cmd, on_line, env={"DOCKER_BUILDKIT": "1"}, what="docker build")
        except ToolError as err:
            raise golang.compile_failure(err) from err


def dockerfile_without_buildkit(text: str) -> str:
    """The same Dockerfile for the legacy builder: no cache mounts, no --platform."""
    text = re.sub(r"--mount=\S+\s+", "", text)
    return text.replace("--platform=$BUILDPLATFORM ", "")


# The legacy builder keeps a multi-stage build's earlier stages as untagged images
# (about 2 GB for the Go stage, a new one per changed build): kplugin labels that stage
# and removes it after each build. BuildKit keeps no such images.
BUILD_STAGE_LABEL = "io.kplugin.build-stage-of"


def label_build_stage(text: str, project: str) -> str:
    """The Dockerfile with a label on its build stage naming the project."""
    return re.sub(
        r"^(FROM\s.*\sAS\s+build)\s*$",
        lambda m: f"{m[1]}\nLABEL {BUILD_STAGE_LABEL}={project}",
        text,
        count=1,
        flags=re.M | re.I,
    )


class LegacyBackend:
    """The SDK's classic builder: the same Dockerfile without cache mounts; it removes the
    Go build stage it would otherwise leave behind as an untagged image."""

    def build(
        self,
        client: Any,
        request: BuildRequest,
        plat: Platform,
        build_args: dict[str, str],
        labels: dict[str, str],
        progress: Progress,
        dockerfile: Path | None = None,
    ) -> None:
        """``dockerfile``: another than the project's (an adopted repository's: kplugin's own)."""
        from docker.errors import BuildError

        progress("docker build (legacy builder: no cache mounts, slower rebuilds)")
        project = request.project.name
        source = (
            dockerfile.read_bytes()
            if dockerfile is not None
            else safefs.read_project_file(request.project.root, "Dockerfile")
        )
        if source is None:
            raise OperationError(
                f"{request.project.root / 'Dockerfile'} is missing; restore it (kplugin upgrade writes it)"
            )
        text = dockerfile_without_buildkit(safefs.decode(source, "Dockerfile", request.project.root / "Dockerfile"))
        text = label_build_stage(text, project)
        with tempfile.TemporaryDirectory(prefix="kplugin-dockerfile-") as tmp:
            path = Path(tmp) / "Dockerfile"
            path.write_text(text)
            try:
                _, logs = client.images.build(
                    path=str(request.project.root),
                    dockerfile=str(path),
                    tag=request.tag,
                    buildargs={**build_args, "TARGETOS": plat.os, "TARGETARCH": plat.arch},
                    labels=labels,
                    network_mode=request.network,
                    rm=True,
                    forcerm=True,
                )
            except BuildError as err:
                text = "\n".join(str(chunk.get("stream", chunk.get("error", ""))) for chunk in err.build_log)
                raise golang.compile_failure(ToolError(["docker", "build"], 1, text, "docker build failed")) from err
            finally:
                client.images.prune(filters={"dangling": True, "label": f"{BUILD_STAGE_LABEL}={project}"})
        if request.log:
            for chunk in logs:
                if "stream" in chunk:
                    request.log(str(chunk["stream"]).rstrip())


@contextmanager
def _extracted(client: Any, tag: str, output: Path | None) -> Iterator[Path]:
    container = client.containers.create(tag)
    tmp = Path(tempfile.mkdtemp(prefix="kplugin-binary-"))
    try:
        stream, _ = container.get_archive(BINARY_IN_IMAGE)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.getmember("kube-scheduler")
            extracted = tar.extractfile(member)
            assert extracted is not None
            binary = tmp / "kube-scheduler"
            binary.write_bytes(extracted.read())
            binary.chmod(0o755)
        if output is not None:
            output.mkdir(parents=True, exist_ok=True)
            kept = output / "kube-scheduler"
            shutil.copy2(binary, kept)
            binary = kept
        yield binary
    finally:
        container.remove(force=True)
        shutil.rmtree(tmp, ignore_errors=True)


def _push(client: Any, tag: str, progress: Progress) -> None:
    from docker.errors import DockerException

    repository, _, version = tag.rpartition(":")
    if "/" not in repository:
        raise UsageError(f"{Setting.PUSH}: {tag!r} names no registry; tag it like registry.example.com/{tag}")
    progress(f"docker push {tag}")
    try:
        for chunk in client.images.push(repository, tag=version, stream=True, decode=True):
            if "error" in chunk:
                raise OperationError(f"docker push {tag} failed: {chunk['error']}")
    except DockerException as err:
        raise OperationError(f"docker push {tag} failed: {err}") from err
