"""A kubeconfig file read into an Endpoint: the chosen context's server, its CA, and its
credentials (a token, a token file, a client certificate, or an exec plugin such as
cloud providers' ``get-token``). What kplugin cannot do (auth-provider plugins, basic
auth, proxies) is refused by name. A bad file is exit 2; a cluster that cannot be
reached or refuses the credentials is exit 1 (see apiclient)."""

from __future__ import annotations

import base64
import binascii
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kplugin.core import proc, safefs, yamlio
from kplugin.core.errors import OperationError, Setting, UsageError
from kplugin.kube.apiclient import Endpoint


@dataclass(frozen=True)
class Kubeconfig:
    path: Path
    context: str
    document: dict[str, Any]  # the file, as read
    cluster: dict[str, Any]
    user: dict[str, Any]

    @property
    def server(self) -> str:
        return str(self.cluster["server"])

    def narrowed(self) -> dict[str, Any]:
        """The file with only the chosen context (current), its cluster and its user:
        what a scheduler started by kplugin gets (its configuration cannot pick a
        context). Relative file names are made absolute."""
        contexts = [c for c in self.document.get("contexts") or [] if isinstance(c, dict)]
        chosen = next(c for c in contexts if c.get("name") == self.context)
        spec = chosen.get("context") or {}

        def absolute(section: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
            out = dict(section)
            for key in keys:
                if isinstance(out.get(key), str) and not os.path.isabs(out[key]):
                    out[key] = str(self.path.parent / out[key])
            return out

        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": spec.get("cluster"), "cluster": absolute(self.cluster, ("certificate-authority",))}],
            "users": [
                {
                    "name": spec.get("user"),
                    "user": absolute(self.user, ("client-certificate", "client-key", "tokenFile")),
                }
            ],
            "contexts": [chosen],
            "current-context": self.context,
        }

    def write_narrowed(self, path: Path) -> Path:
        """``narrowed()`` into ``path``, readable by its owner only (it may hold
        credentials): the kubeconfig a scheduler kplugin starts is given."""
        _private(path, yamlio.dump(self.narrowed()).encode())
        return path


def load(path: Path, context: str | None = None, option: str = Setting.KUBECONFIG) -> Kubeconfig:
    """Read a kubeconfig and pick ``context`` (default: its current-context)."""
    where = f"{option} {path}"
    document = yamlio.load_file(path, option)
    if not isinstance(document, dict):
        raise UsageError(f"{where}: not a kubeconfig (a mapping with clusters, users and contexts)")

    def named(section: str, name: Any, key: str) -> dict[str, Any]:
        entries = document.get(section) or []
        if not isinstance(entries, list):
            raise UsageError(f"{where}: {section} must be a list")
        for entry in entries:
            if isinstance(entry, dict) and entry.get("name") == name:
                value = entry.get(key) or {}
                if not isinstance(value, dict):
                    raise UsageError(f"{where}: {section} {name!r}: {key} must be a mapping")
                return value
        raise UsageError(f"{where}: no {section[:-1]} named {name!r}")

    chosen = context if context is not None else document.get("current-context")
    if not chosen:
        raise UsageError(f"{where}: no current-context; choose one with {Setting.CONTEXT}")
    if not isinstance(chosen, str):
        raise UsageError(f"{where}: current-context must be a string")
    spec = named("contexts", chosen, "context")
    cluster = named("clusters", spec.get("cluster"), "cluster")
    user = named("users", spec.get("user"), "user") if spec.get("user") else {}
    server = cluster.get("server")
    if not isinstance(server, str) or not server.startswith(("https://", "http://")):
        raise UsageError(f"{where}: cluster {spec.get('cluster')!r} has no https:// server")
    if cluster.get("proxy-url"):
        raise UsageError(f"{where}: cluster {spec.get('cluster')!r} goes through proxy-url, which kplugin does not")
    for unsupported in ("auth-provider", "username", "password"):
        if user.get(unsupported):
            raise UsageError(
                f"{where}: user {spec.get('user')!r} authenticates with {unsupported}, which kplugin does not "
                "support; use a token, a client certificate or an exec plugin"
            )
    return Kubeconfig(path, chosen, document, cluster, user)


def _data(value: Any, where: str) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        raise UsageError(f"{where} is not base64") from None


def _private(path: Path, data: bytes) -> None:
    """``data`` into a new file only its owner can read (0600 from the start)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _exec_credential(config: Kubeconfig, spec: dict[str, Any]) -> dict[str, Any]:
    """Run the exec plugin (client.authentication.k8s.io) and return its status."""
    command = spec.get("command")
    if not isinstance(command, str) or not command:
        raise UsageError(f"{Setting.KUBECONFIG} {config.path}: user's exec has no command")
    args = [str(a) for a in spec.get("args") or []]
    env = {str(e.get("name")): str(e.get("value")) for e in spec.get("env") or [] if isinstance(e, dict)}
    api_version = str(spec.get("apiVersion") or "client.authentication.k8s.io/v1")
    info = {"apiVersion": api_version, "kind": "ExecCredential", "spec": {"interactive": False}}
    env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
    output = proc.run(
        [command, *args], env=env, what=f"the kubeconfig's exec plugin {command}", timeout=120, merge=False
    )
    try:
        status = json.loads(output).get("status") or {}
    except (ValueError, AttributeError):
        raise OperationError(f"the kubeconfig's exec plugin {command} did not print an ExecCredential") from None
    if not isinstance(status, dict):
        raise OperationError(f"the kubeconfig's exec plugin {command} printed no status")
    return status


def endpoint(config: Kubeconfig) -> Endpoint:
    """The Endpoint of the chosen context, its TLS settings loaded (inline certificates
    and keys pass through a private temporary directory: Python's TLS reads files)."""
    where = f"{Setting.KUBECONFIG} {config.path}"
    cluster, user = config.cluster, config.user
    with tempfile.TemporaryDirectory(prefix="kplugin-kubeconfig-") as tmp:
        os.chmod(tmp, 0o700)

        def local(key_file: str, key_data: str, section: dict[str, Any], name: str) -> str | None:
            if section.get(key_data):
                path = Path(tmp) / name
                _private(path, _data(section[key_data], f"{where}: {key_data}"))
                return str(path)
            if section.get(key_file):
                path = Path(str(section[key_file]))
                path = path if path.is_absolute() else config.path.parent / path
                safefs.read_bytes(path, f"{where}: {key_file}")  # exists, a regular file, bounded
                return str(path)
            return None

        token = user.get("token")
        if not token and user.get("tokenFile"):
            token_path = Path(str(user["tokenFile"]))
            token_path = token_path if token_path.is_absolute() else config.path.parent / token_path
            token = safefs.read_text(token_path, f"{where}: tokenFile").strip()
        cert = local("client-certificate", "client-certificate-data", user, "client.crt")
        key = local("client-key", "client-key-data", user, "client.key")
        if isinstance(user.get("exec"), dict):
            status = _exec_credential(config, user["exec"])
            token = status.get("token") or token
            if status.get("clientCertificateData") and status.get("clientKeyData"):
                cert_path, key_path = Path(tmp) / "exec.crt", Path(tmp) / "exec.key"
                _private(cert_path, str(status["clientCertificateData"]).encode())
                _private(key_path, str(status["clientKeyData"]).encode())
                cert, key = str(cert_path), str(key_path)
        ca_data = None
        if cluster.get("certificate-authority-data"):
            ca_data = _data(cluster["certificate-authority-data"], f"{where}: certificate-authority-data")
        ca_file = local("certificate-authority", "-", cluster, "ca.crt")
        found = Endpoint(
            server=config.server,
            token=str(token) if token else None,
            ca_file=ca_file,
            ca_data=ca_data,
            cert_file=cert,
            key_file=key,
            insecure=bool(cluster.get("insecure-skip-tls-verify")),
            shown=f"context {config.context} of {config.path}",
        )
        if found.server.startswith("https://"):
            found.ssl_context()
        return found
