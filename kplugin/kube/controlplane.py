"""A real, throw-away Kubernetes control plane as local processes: etcd, kube-apiserver
and a kube-scheduler, with no Docker, kind or kubelet (the scheduler only talks to the
API server, and binding a pod is an API call).

kube-apiserver is built from ``k8s.io/kubernetes/cmd/kube-apiserver`` at the project's
own pin (through a copy of its go.mod, so the project is not touched) and kept in
kplugin's cache per Kubernetes version. etcd comes from the machine (Debian's
``etcd-server``). Everything listens on free loopback ports, in a fresh working
directory; ``stop`` ends every process it started.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kplugin.core import cache, golang, proc, yamlio
from kplugin.core.errors import OperationError
from kplugin.core.progress import Progress
from kplugin.kube.apiclient import Client, Endpoint
from kplugin.kube.process import Process, free_ports
from kplugin.kube.scheduler import Scheduler
from kplugin.model.project import Project

READY_TIMEOUT = 90.0
_RBAC_PATHS = {
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
}


def etcd_binary() -> str:
    found = os.environ.get("KPLUGIN_ETCD") or proc.which("etcd")
    if not found:
        raise OperationError(
            "etcd not found on PATH (kplugin e2e runs it as the control plane's store); "
            "install it (Debian/Ubuntu: apt-get install etcd-server) or set KPLUGIN_ETCD"
        )
    return found


def apiserver_binary(project: Project, progress: Progress) -> Path:
    """kube-apiserver of the project's Kubernetes version, built once into kplugin's cache."""
    version = project.version.tag
    home = cache.directory("bin") or Path(tempfile.gettempdir()) / "kplugin-bin"
    home.mkdir(parents=True, exist_ok=True)
    binary = home / f"kube-apiserver-{version}"
    if binary.is_file():
        return binary
    with cache.exclusive(binary):  # another run building the same version: wait for it
        if not binary.is_file():
            _build_apiserver(project, binary, progress)
    return binary


def _build_apiserver(project: Project, binary: Path, progress: Progress) -> None:
    version = project.version.tag
    progress(f"building kube-apiserver {version} (once per version; several minutes on a cold Go cache)")
    with tempfile.TemporaryDirectory(prefix="kplugin-apiserver-") as tmp:
        # -modfile: resolve with a copy of the project's go.mod and go.sum, leaving both as they are
        modfile = Path(tmp) / "go.mod"
        shutil.copyfile(project.root / "go.mod", modfile)
        if (project.root / "go.sum").is_file():
            shutil.copyfile(project.root / "go.sum", Path(tmp) / "go.sum")
        _official_replaces(project, modfile)
        built = Path(tmp) / "kube-apiserver"
        cmd = ["go", "build", "-mod=mod", f"-modfile={modfile}", "-trimpath", "-o", str(built)]
        proc.run(
            [*cmd, "k8s.io/kubernetes/cmd/kube-apiserver"],
            cwd=project.root,
            env={"CGO_ENABLED": "0", "GOFLAGS": "", **golang.build_env(project.root)},
            what=f"go build kube-apiserver {version}",
        )
        staged = binary.with_name(f".{binary.name}.{os.getpid()}")
        shutil.move(built, staged)
        os.replace(staged, binary)


def _official_replaces(project: Project, modfile: Path) -> None:
    """kube-apiserver is built from Kubernetes' own release at the pin, whatever the
    project's go.mod replaces (an adopted repository's may lack staging modules the API
    server needs, k8s.io/externaljwt and k8s.io/endpointslice, or replace one with its
    own): the binary is cached by version alone and serves every project of it."""
    version = project.version
    edits = [f"-replace=k8s.io/kubernetes=k8s.io/kubernetes@{version.tag}"]
    edits += [f"-replace={m}={m}@{version.staging_tag}" for m in project.target.release.staging_modules]
    proc.run(["go", "mod", "edit", f"-modfile={modfile}", *edits], cwd=project.root, what="go mod edit")


class ControlPlane:
    """etcd and kube-apiserver in ``work``; ``scheduler`` adds a kube-scheduler. A context
    manager: leaving it stops every process."""

    def __init__(self, work: Path, apiserver: Path, progress: Progress, extra_args: Sequence[str] = ()) -> None:
        self.work = work
        self.apiserver = apiserver
        self.progress = progress
        self.extra_args = tuple(extra_args)
        self.processes: list[Process] = []
        self.token = secrets.token_hex(16)
        self.port = 0
        self.url = ""
        self.cafile = work / "certs" / "apiserver.crt"
        self.api: Client | None = None  # the admin's (system:masters)

    def __enter__(self) -> ControlPlane:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, name: str, cmd: Sequence[str]) -> Process:
        process = Process(name, cmd, self.work / f"{name}.log")
        self.processes.append(process)
        return process

    def start(self) -> None:
        etcd = etcd_binary()
        client, peer, self.port = free_ports(3)
        self.progress(f"starting etcd (127.0.0.1:{client}) and kube-apiserver (127.0.0.1:{self.port})")
        self._spawn(
            "etcd",
            [
                etcd,
                "--name=local",
                f"--data-dir={self.work / 'etcd'}",
                "--unsafe-no-fsync",
                f"--listen-client-urls=http://127.0.0.1:{client}",
                f"--advertise-client-urls=http://127.0.0.1:{client}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=local=http://127.0.0.1:{peer}",
            ],
        )
        key = self.work / "sa.key"
        proc.run(["openssl", "genrsa", "-out", str(key), "2048"], what="openssl genrsa (service-account key)")
        tokens = self.work / "tokens.csv"
        tokens.write_text(f"{self.token},admin,admin,system:masters\n")
        tokens.chmod(0o600)
        certs = self.work / "certs"
        self._spawn(
            "kube-apiserver",
            [
                str(self.apiserver),
                f"--etcd-servers=http://127.0.0.1:{client}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--cert-dir={certs}",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={key}",
                f"--service-account-signing-key-file={key}",
                f"--token-auth-file={tokens}",
                "--authorization-mode=RBAC",
                "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
                "--endpoint-reconciler-type=none",
                "--enable-priority-and-fairness=false",
                *self.extra_args,
            ],
        )
        self.url = f"https://127.0.0.1:{self.port}"
        self.api = Client(Endpoint(self.url, token=self.token, ca_file=str(self.cafile)))
        self._wait_ready()

    def _wait_ready(self) -> None:
        assert self.api is not None
        deadline = time.monotonic() + READY_TIMEOUT
        last = "no answer"
        while time.monotonic() < deadline:
            self.check()
            if self.cafile.is_file():
                try:
                    # ready, and the default namespace the scenario's pods go to is created
                    if self.api.request("GET", "/readyz", timeout=5) == "ok":
                        self.api.get("/api/v1/namespaces/default")
                        return
                except OperationError as err:
                    last = str(err)
            time.sleep(0.5)
        raise OperationError(
            f"kube-apiserver was not ready within {READY_TIMEOUT:.0f}s ({last}); the end of its log:",
            details=self.processes[-1].tail(),
        )

    def apply_rbac(self, documents: Sequence[dict[str, Any]]) -> tuple[str, str]:
        """Create the RBAC objects of a project's deploy/rbac.yaml; return a token of its
        ServiceAccount (TokenRequest API: no controller manager needed) and its user name."""
        assert self.api is not None
        account: tuple[str, str] | None = None
        for doc in documents:
            kind, meta = doc.get("kind"), doc.get("metadata") or {}
            namespace = meta.get("namespace", "default")
            if kind not in _RBAC_PATHS:
                raise OperationError(f"deploy/rbac.yaml: kind {kind!r} is not RBAC (expected {', '.join(_RBAC_PATHS)})")
            self.api.create(_RBAC_PATHS[kind].format(ns=namespace), doc)
            if kind == "ServiceAccount":
                account = (namespace, meta["name"])
        if account is None:
            raise OperationError("deploy/rbac.yaml has no ServiceAccount for the scheduler to run as")
        namespace, name = account
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        }
        issued = self.api.create(f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token", request)
        return str(issued["status"]["token"]), f"system:serviceaccount:{namespace}:{name}"

    def kubeconfig(self, token: str | None = None) -> Path:
        """A kubeconfig for the scheduler: ``token`` (a ServiceAccount's), else admin."""
        assert self.api is not None
        path = self.work / "kubeconfig"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "local", "cluster": {"server": self.url, "certificate-authority": str(self.cafile)}}],
            "users": [{"name": "scheduler", "user": {"token": token or self.token}}],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": "scheduler"}}],
            "current-context": "local",
        }
        path.write_text(yamlio.dump(config))
        path.chmod(0o600)
        return path

    def client(self, timeout: float = 30.0) -> Client:
        """A client of this API server with the admin token (system:masters): its own
        connections, the same TLS settings."""
        assert self.api is not None
        return Client(self.api.endpoint, timeout)

    def scheduler(
        self,
        binary: Path,
        config: Path,
        verbosity: int,
        vmodule: str = "schedule_one=10",
        extra_args: Sequence[str] = (),
        prefix: Sequence[str] = (),
    ) -> Scheduler:
        """A kube-scheduler of this control plane (stopped with it); schedule_one.go logs
        each plugin's score per node at V(10) (1.28 to 1.37 alike)."""
        log = self.work / "kube-scheduler.log"
        scheduler = Scheduler(binary, config, log, verbosity, vmodule=vmodule, extra_args=extra_args, prefix=prefix)
        self.processes.append(scheduler.process)
        return scheduler

    def check(self) -> None:
        for process in self.processes:
            process.check()

    def stop(self) -> None:
        if self.api is not None:
            self.api.close()
        for process in reversed(self.processes):
            process.stop()
        self.processes = []
