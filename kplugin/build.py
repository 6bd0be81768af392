"""Build a project's kube-scheduler: through Docker (BuildKit) or the local Go toolchain,
then verify the binary is static, for the right architecture, and the pinned version."""

from __future__ import annotations

import hashlib
import io
import os
import platform as host_platform
import re
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kplugin import elf, golang, proc, safefs
from kplugin.errors import OperationError, ToolError, UsageError
from kplugin.project import Project

Progress = Callable[[str], None]
BINARY_IN_IMAGE = "/usr/local/bin/kube-scheduler"
DEFAULT_BASE_IMAGE = "gcr.io/distroless/static:nonroot"
NONROOT_USER = "65532:65532"
LABEL_K8S = "io.kplugin.kubernetes-version"
_HOST_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


@dataclass(frozen=True)
class Platform:
    os: str
    arch: str

    def __str__(self) -> str:
        return f"{self.os}/{self.arch}"

    @property
    def slug(self) -> str:
        return f"{self.os}_{self.arch}"


def parse_platforms(value: str | None) -> tuple[Platform, ...]:
    if value is None:  # '' is a mistake, not the default
        return (Platform("linux", host_arch()),)
    platforms = []
    for item in value.split(","):
        parts = item.strip().split("/")
        if len(parts) != 2 or parts[0] != "linux" or parts[1] not in elf.MACHINES.values():
            raise UsageError(
                f"--platform {item.strip()!r} is not supported; use linux/ARCH with ARCH one of "
                f"{', '.join(sorted(set(elf.MACHINES.values())))}"
            )
        platforms.append(Platform(*parts))
    return tuple(dict.fromkeys(platforms))


def host_arch() -> str:
    return _HOST_ARCH.get(host_platform.machine(), host_platform.machine())


@dataclass
class Binary:
    platform: str
    path: str
    size: int
    sha256: str
    arch: str
    static: bool
    go_version: str | None
    version: str | None


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
    builder: str = "auto"
    platforms: tuple[Platform, ...] = ()
    image: str | None = None
    go_image: str | None = None
    base_image: str = DEFAULT_BASE_IMAGE
    output: Path | None = None
    push: bool = False
    network: str | None = None
    log: Callable[[str], None] | None = None

    @property
    def tag(self) -> str:
        return self.image or self.project.image


def ldflags(project: Project) -> str:
    v = project.version
    pkg = "k8s.io/component-base/version"
    return " ".join(
        [
            "-s -w",
            f"-X {pkg}.gitVersion={v.tag}",
            f"-X {pkg}.gitMajor={v.major}",
            f"-X {pkg}.gitMinor={v.minor}",
            f"-X {pkg}.gitTreeState=clean",
        ]
    )


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


def build(request: BuildRequest, progress: Progress, chosen: tuple[str, str] | None = None) -> BuildResult:
    """Build as requested; ``chosen`` is a (builder, reason) from choose_builder."""
    project = request.project
    builder, reason = chosen or choose_builder(request.builder)
    platforms = request.platforms or (Platform("linux", host_arch()),)
    result = BuildResult(builder=builder, reason=reason, kubernetes=project.version.tag)
    if builder == "local":
        _build_local(request, platforms, result, progress)
    else:
        _build_docker(request, platforms, result, progress)
    return result


# --- local -------------------------------------------------------------------------


def _go_version() -> tuple[int, int, str]:
    if proc.which("go") is None:
        raise OperationError("Go is not on PATH; install Go or use --builder docker")
    text = proc.run(["go", "env", "GOVERSION"], what="go env").strip()
    match = re.match(r"go(\d+)\.(\d+)", text)
    if not match:
        raise OperationError(f"cannot read the local Go version from {text!r}")
    return int(match[1]), int(match[2]), text


def _required_go(project: Project) -> tuple[int, int]:
    text = safefs.read_text(project.root / "go.mod", "go.mod")
    match = re.search(r"^go (\d+)\.(\d+)", text, re.M)
    needed = (int(match[1]), int(match[2])) if match else (1, 0)
    major, minor = (int(x) for x in project.target.release.go_directive.split(".")[:2])
    return max(needed, (major, minor))


def _build_local(
    request: BuildRequest, platforms: tuple[Platform, ...], result: BuildResult, progress: Progress
) -> None:
    project = request.project
    major, minor, text = _go_version()
    need = _required_go(project)
    if (major, minor) < need:
        raise OperationError(
            f"local Go {text} is older than go {need[0]}.{need[1]}, which Kubernetes "
            f"{project.version} needs; install a newer Go or use --builder docker"
        )
    out_root = request.output or project.root / "bin"
    for plat in platforms:
        out_dir = out_root if len(platforms) == 1 else out_root / plat.slug
        out_dir.mkdir(parents=True, exist_ok=True)
        binary = out_dir / "kube-scheduler"
        progress(f"go build ./cmd/scheduler for {plat} ({text})")
        env = {"CGO_ENABLED": "0", "GOOS": plat.os, "GOARCH": plat.arch}
        cmd = ["go", "build", "-trimpath", "-ldflags", ldflags(project), "-o", str(binary), "./cmd/scheduler"]
        try:
            output = proc.run(cmd, cwd=project.root, env=env, what="go build")
        except ToolError as err:
            raise golang.compile_failure(err) from err
        if request.log:
            request.log(output)
        result.binaries.append(verify(binary, plat, project, progress))


# --- verification --------------------------------------------------------------------


def verify(binary: Path, plat: Platform, project: Project, progress: Progress) -> Binary:
    progress(f"verifying {binary.name} ({plat})")
    try:
        info = elf.inspect(binary)
    except elf.NotElf as err:
        raise OperationError(str(err)) from err
    if not info.static:
        raise OperationError(
            f"{binary} is dynamically linked (ELF interpreter or dynamic section); build with CGO_ENABLED=0"
        )
    if info.arch != plat.arch:
        raise OperationError(f"{binary} is for {info.arch}, not {plat.arch}")
    version = None
    if plat.arch == host_arch():
        out = proc.run([str(binary), "--version"], what="kube-scheduler --version", timeout=60).strip()
        if out != f"Kubernetes {project.version.tag}":
            raise OperationError(f"{binary} --version says {out!r}, expected 'Kubernetes {project.version.tag}'")
        version = out
    data = binary.read_bytes()
    return Binary(
        platform=str(plat),
        path=str(binary),
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        arch=info.arch,
        static=info.static,
        go_version=info.go_version,
        version=version,
    )


# --- docker --------------------------------------------------------------------------


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


def _build_docker(
    request: BuildRequest, platforms: tuple[Platform, ...], result: BuildResult, progress: Progress
) -> None:
    import docker

    project = request.project
    if len(platforms) > 1:
        raise UsageError(
            "a multi-platform image needs docker buildx, which this engine does not have; "
            "build one --platform at a time, or use --builder local for one binary per platform"
        )
    (plat,) = platforms
    if not (project.root / "go.sum").is_file():
        raise UsageError(f"{project.root}/go.sum is missing; run 'go mod tidy' in the project first")
    labels = _labels(project)
    build_args = {
        "GO_IMAGE": request.go_image or f"golang:{project.target.release.go_image_tag}",
        "BASE_IMAGE": request.base_image,
        "K8S_VERSION": project.version.tag,
    }
    client = docker.from_env(timeout=600)
    try:
        cli = buildkit_cli()
        if cli is not None:
            _buildkit(cli, request, plat, build_args, labels, progress)
        else:
            result.reason += "; no docker CLI with BuildKit (buildx), so the legacy builder, without cache mounts"
            _legacy(client, request, plat, build_args, labels, progress)
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


def _buildkit(
    cli: str,
    request: BuildRequest,
    plat: Platform,
    build_args: dict[str, str],
    labels: dict[str, str],
    progress: Progress,
) -> None:
    cmd = [cli, "build", "--progress=plain", "--platform", str(plat), "-t", request.tag]
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


def _legacy(
    client: Any,
    request: BuildRequest,
    plat: Platform,
    build_args: dict[str, str],
    labels: dict[str, str],
    progress: Progress,
) -> None:
    from docker.errors import BuildError

    progress("docker build (legacy builder: no cache mounts, slower rebuilds)")
    project = request.project.name
    source = safefs.read_project_file(request.project.root, "Dockerfile")
    if source is None:
        raise OperationError(
            f"{request.project.root / 'Dockerfile'} is missing; restore it (kplugin upgrade writes it)"
        )
    dockerfile = dockerfile_without_buildkit(safefs.decode(source, "Dockerfile", request.project.root / "Dockerfile"))
    dockerfile = label_build_stage(dockerfile, project)
    with tempfile.TemporaryDirectory(prefix="kplugin-dockerfile-") as tmp:
        path = Path(tmp) / "Dockerfile"
        path.write_text(dockerfile)
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
        raise UsageError(f"--push: {tag!r} names no registry; tag it like registry.example.com/{tag}")
    progress(f"docker push {tag}")
    try:
        for chunk in client.images.push(repository, tag=version, stream=True, decode=True):
            if "error" in chunk:
                raise OperationError(f"docker push {tag} failed: {chunk['error']}")
    except DockerException as err:
        raise OperationError(f"docker push {tag} failed: {err}") from err
