"""Seed the images a Docker build needs, offline (no registry can be reached here).

A Go builder image is imported from a root filesystem made of Debian's static busybox,
this machine's Go toolchain and its CA bundle. It is tagged with a test-only name and
passed as --go-image: user-facing defaults stay golang:<ver> and distroless.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

GO_IMAGE = "kplugin-test/go:local"
BASE_IMAGE = "scratch"


def _go_root(toolchain: str = "") -> Path:
    """This machine's Go, or the toolchain named (``go1.27.3``, fetched by the go command)."""
    env = {**os.environ, "GOTOOLCHAIN": toolchain} if toolchain else None
    out = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True, check=True, env=env)
    return Path(out.stdout.strip())


def _dir(tar: tarfile.TarFile, name: str, mode: int = 0o755) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = mode
    tar.addfile(info)


def _skip_heavy(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    parts = info.name.split("/")
    # the toolchain's own tests and docs are not needed to build
    if len(parts) > 3 and parts[3] in {"test", "doc", "api", "misc"}:
        return None
    return info


def seed_go_image(tag: str = GO_IMAGE, toolchain: str = "") -> str:
    """docker import the builder image unless it is there already; returns the tag. With
    ``toolchain`` the image holds that Go release instead of this machine's."""
    if subprocess.run(["docker", "image", "inspect", tag], capture_output=True, check=False).returncode == 0:
        return tag
    busybox = shutil.which("busybox") or "/bin/busybox"
    with tempfile.TemporaryDirectory() as tmp:
        rootfs = Path(tmp) / "rootfs.tar"
        with tarfile.open(rootfs, "w") as tar:
            for d in ["bin", "etc", "etc/ssl", "etc/ssl/certs", "root", "go", "src", "usr", "usr/local"]:
                _dir(tar, d)
            _dir(tar, "tmp", 0o1777)
            tar.add(busybox, "bin/busybox")
            for applet in ["sh", "ls", "cat", "mkdir", "rm", "cp", "env"]:
                link = tarfile.TarInfo(f"bin/{applet}")
                link.type = tarfile.SYMTYPE
                link.linkname = "busybox"
                tar.addfile(link)
            tar.add("/etc/ssl/certs/ca-certificates.crt", "etc/ssl/certs/ca-certificates.crt")
            passwd = b"root:x:0:0:root:/root:/bin/sh\n"
            info = tarfile.TarInfo("etc/passwd")
            info.size = len(passwd)
            tar.addfile(info, io.BytesIO(passwd))
            tar.add(str(_go_root(toolchain)), "usr/local/go", filter=_skip_heavy)
        changes = [
            "ENV PATH=/usr/local/go/bin:/bin",
            "ENV GOPATH=/go",
            "ENV HOME=/root",
            "WORKDIR /src",
        ]
        if os.environ.get("GOPROXY"):  # else Go's own default, as on this machine
            changes.append(f"ENV GOPROXY={os.environ['GOPROXY']}")
        cmd = ["docker", "import"]
        for change in changes:
            cmd += ["--change", change]
        subprocess.run([*cmd, str(rootfs), tag], check=True, capture_output=True)
    return tag


def seed_warm_go_image(project: Path, base: str = GO_IMAGE) -> str:
    """A builder image whose module and build caches already hold what the project's
    kube-scheduler needs, for a builder that has no cache mounts (the legacy builder): its
    test then compiles what changed, not all of Kubernetes. Made once per machine and
    go.sum (one full compile); an older one is removed. Returns the tag."""
    base_id = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Id}}", base], capture_output=True, text=True, check=True
    ).stdout.strip()
    key = hashlib.sha256(base_id.encode() + (project / "go.sum").read_bytes()).hexdigest()[:12]
    repository = "kplugin-test/go-warm"
    tag = f"{repository}:{key}"
    if subprocess.run(["docker", "image", "inspect", tag], capture_output=True, check=False).returncode == 0:
        return tag
    old = subprocess.run(
        ["docker", "images", "-q", repository], capture_output=True, text=True, check=True
    ).stdout.split()
    if old:
        subprocess.run(["docker", "rmi", "-f", *sorted(set(old))], capture_output=True, check=False)
    name = f"kplugin-warm-{os.getpid()}"
    compile_all = "go mod download && go build -o /tmp/kube-scheduler ./cmd/scheduler && rm /tmp/kube-scheduler"
    container = ["--name", name, "--network", "host", "-v", f"{project}:/src:ro", "-w", "/src"]
    env = ["-e", "CGO_ENABLED=0", "-e", "GOFLAGS=-trimpath"]
    try:
        subprocess.run(
            ["docker", "run", *container, *env, base, "sh", "-c", compile_all],
            capture_output=True,
            check=True,
        )
        subprocess.run(["docker", "commit", name, tag], capture_output=True, check=True)
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
    return tag
