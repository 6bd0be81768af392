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
from collections.abc import Sequence
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


def seed_go_image(tag: str = GO_IMAGE, toolchain: str = "", cache: Sequence[Path] = ()) -> str:
    """docker import the builder image unless it is there already; returns the tag. With
    ``toolchain`` the image holds that Go release instead of this machine's; with
    ``cache``, these files of this machine's Go build cache, as its GOCACHE."""
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
            if cache:
                for d in ["warm", "warm/build", *sorted({f"warm/build/{f.parent.name}" for f in cache})]:
                    _dir(tar, d)
                for f in cache:
                    tar.add(str(f), f"warm/build/{f.parent.name}/{f.name}")
        changes = [
            "ENV PATH=/usr/local/go/bin:/bin",
            "ENV GOPATH=/go",
            "ENV HOME=/root",
            "WORKDIR /src",
        ]
        if cache:
            changes.append(f"ENV GOCACHE={WARM_CACHE}")
        if os.environ.get("GOPROXY"):  # else Go's own default, as on this machine
            changes.append(f"ENV GOPROXY={os.environ['GOPROXY']}")
        cmd = ["docker", "import"]
        for change in changes:
            cmd += ["--change", change]
        subprocess.run([*cmd, str(rootfs), tag], check=True, capture_output=True)
    return tag


WARM_CACHE = "/warm/build"


def build_cache_files(project: Path) -> list[Path]:
    """The files of this machine's Go build cache that a build of the project's
    kube-scheduler reads (CGO_ENABLED=0, -trimpath, as its Dockerfile builds): each
    package's compiled output (``go list -export``, which compiles what is missing) and
    the entries that map an action to it."""
    env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=mod -trimpath"}
    listed = subprocess.run(
        ["go", "list", "-export", "-deps", "-f", "{{.Export}}", "./cmd/scheduler"],
        cwd=project, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    outputs = {Path(line) for line in listed.split()}
    wanted = {path.name.removesuffix("-d") for path in outputs}
    root = Path(subprocess.run(["go", "env", "GOCACHE"], capture_output=True, text=True, check=True).stdout.strip())
    actions = []
    for entry in root.glob("??/*-a"):
        fields = entry.read_text(errors="replace").split()  # v1 <action id> <output id> <size> <time>
        if len(fields) > 2 and fields[2] in wanted:
            actions.append(entry)
    return sorted(outputs) + sorted(actions)


def seed_warm_go_image(project: Path) -> str:
    """A builder image whose build cache already holds what the project's kube-scheduler
    compiles to: the entries of this machine's Go cache that a build of it reads (the test
    run compiled them for its own builds, with the same Go, flags and sources; -trimpath
    keeps paths out of the cache's keys). Its Docker builds then link, instead of
    compiling all of Kubernetes a second and a third time. Made once per Go and go.sum;
    an older one is removed. Returns the tag."""
    version = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True, check=True).stdout
    key = hashlib.sha256(version.encode() + (project / "go.sum").read_bytes()).hexdigest()[:12]
    repository = "kplugin-test/go-warm"
    tag = f"{repository}:{key}"
    if subprocess.run(["docker", "image", "inspect", tag], capture_output=True, check=False).returncode == 0:
        return tag
    old = subprocess.run(
        ["docker", "images", "-q", repository], capture_output=True, text=True, check=True
    ).stdout.split()
    if old:
        subprocess.run(["docker", "rmi", "-f", *sorted(set(old))], capture_output=True, check=False)
    return seed_go_image(tag, cache=build_cache_files(project))
