"""The local builder: the machine's Go toolchain, CGO_ENABLED=0, -trimpath."""

from __future__ import annotations

import re

from kplugin.builder.platform import Platform
from kplugin.builder.request import BuildRequest, BuildResult
from kplugin.builder.verify import verify
from kplugin.core import golang, proc, safefs
from kplugin.core.errors import OperationError, Setting, ToolError
from kplugin.core.progress import Progress
from kplugin.model.buildfacts import BuildFacts
from kplugin.model.project import Project


def local_go_version(env: dict[str, str] | None = None) -> tuple[int, int, str]:
    """The Go that builds: (major, minor, go1.X.Y), the machine's or the toolchain ``env``
    selects."""
    if proc.which("go") is None:
        raise OperationError(f"Go is not on PATH; install Go or use {Setting.BUILDER} docker")
    text = proc.run(["go", "env", "GOVERSION"], what="go env", env=env).strip()
    match = re.match(r"go(\d+)\.(\d+)", text)
    if not match:
        raise OperationError(f"cannot read the local Go version from {text!r}")
    return int(match[1]), int(match[2]), text


def required_go_version(project: Project) -> tuple[int, int]:
    """The oldest Go the project builds with: its go.mod's go line, at least Kubernetes'."""
    text = safefs.read_text(project.root / "go.mod", "go.mod")
    match = re.search(r"^go (\d+)\.(\d+)", text, re.M)
    needed = (int(match[1]), int(match[2])) if match else (1, 0)
    major, minor = (int(x) for x in project.target.release.go_directive.split(".")[:2])
    return max(needed, (major, minor))


def _needs_cgo(project: Project, needs: list[str], err: ToolError) -> OperationError:
    more = f" (and {', '.join(needs[1:])})" if len(needs) > 1 else ""
    return OperationError(
        f"go build {project.main_package} with CGO_ENABLED=0 fails: {needs[0]}{more} needs cgo (its files that "
        f'import "C" are left out without it); build with {Setting.CGO} for a dynamic binary that needs the '
        "C libraries at run time",
        details=golang.compile_failure(err).details,
    )


class LocalBuilder:
    name = "local"

    def build(
        self, request: BuildRequest, platforms: tuple[Platform, ...], result: BuildResult, progress: Progress
    ) -> None:
        project = request.project
        toolchain = golang.toolchain_env(project.root)
        major, minor, text = local_go_version(toolchain)
        need = required_go_version(project)
        if (major, minor) < need:
            raise OperationError(
                f"local Go {text} is older than go {need[0]}.{need[1]}, which Kubernetes "
                f"{project.version} needs; install a newer Go or use {Setting.BUILDER} docker"
            )
        out_root = request.output or project.bin_dir
        ldflags = BuildFacts.of(project).ldflags
        for plat in platforms:
            out_dir = out_root if len(platforms) == 1 else out_root / plat.slug
            out_dir.mkdir(parents=True, exist_ok=True)
            binary = out_dir / "kube-scheduler"
            progress(f"go build {project.main_package} for {plat} ({text})")
            cgo = "1" if request.cgo else "0"
            env = {"CGO_ENABLED": cgo, "GOOS": plat.os, "GOARCH": plat.arch, **golang.compile_env(), **toolchain}
            cmd = ["go", "build", "-trimpath", "-ldflags", ldflags, "-o", str(binary), project.main_package]
            try:
                output = proc.run(cmd, cwd=project.root, env=env, what="go build")
            except ToolError as err:
                failed = err.output or ""
                needs = (
                    [] if request.cgo else golang.cgo_packages(project.root, project.main_package, failed, toolchain)
                )
                if needs:
                    raise _needs_cgo(project, needs, err) from err
                raise golang.compile_failure(err) from err
            if request.log:
                request.log(output)
            result.binaries.append(verify(binary, plat, project, progress, dynamic=request.cgo))
