"""Verification of a built kube-scheduler: a static ELF for the requested architecture
that prints the pinned Kubernetes version."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kplugin.builder.platform import Platform, host_arch
from kplugin.core import digest, elf, proc
from kplugin.core.errors import OperationError
from kplugin.core.progress import Progress
from kplugin.model.project import Project


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


def verify(binary: Path, plat: Platform, project: Project, progress: Progress, dynamic: bool = False) -> Binary:
    """The built binary checked: an ELF for the platform, static (unless ``dynamic``: a
    build with cgo), that reports the pinned version where it can run here."""
    progress(f"verifying {binary.name} ({plat})")
    try:
        info = elf.inspect(binary)
    except elf.NotElf as err:
        raise OperationError(str(err)) from err
    if not info.static and not dynamic:
        raise OperationError(
            f"{binary} is dynamically linked (ELF interpreter or dynamic section); build with CGO_ENABLED=0"
        )
    if info.arch != plat.arch:
        raise OperationError(f"{binary} is for {info.arch}, not {plat.arch}")
    version = None
    if plat.arch == host_arch():
        command = [str(binary), *project.scheduler_arguments, "--version"]
        out = proc.run(command, what="kube-scheduler --version", timeout=60).strip()
        if out != f"Kubernetes {project.version.tag}":
            shown = " ".join([str(binary), *project.scheduler_arguments])
            raise OperationError(f"{shown} --version says {out!r}, expected 'Kubernetes {project.version.tag}'")
        version = out
    data = binary.read_bytes()
    return Binary(
        platform=str(plat),
        path=str(binary),
        size=len(data),
        sha256=digest.sha256_hex(data),
        arch=info.arch,
        static=info.static,
        go_version=info.go_version,
        version=version,
    )
