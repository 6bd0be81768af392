"""--kubeconfig: where an existing cluster is and how kplugin bench's load generator
authenticates there (the scheduler under test reads the same file itself).

Its current context's cluster (server, certificate-authority[-data],
insecure-skip-tls-verify) and user (token, tokenFile, client-certificate[-data] and
client-key[-data]) are read; a user that needs an exec or auth-provider plugin is
refused with a clear message, since running one is not kplugin's business.
"""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from typing import Any

from kplugin.bench.client import Endpoint
from kplugin.core import safefs, yamlio
from kplugin.core.errors import UsageError


def _named(items: Any, name: str, kind: str, where: str) -> dict[str, Any]:
    if not isinstance(items, list):
        raise UsageError(f"{where}: {kind}s must be a list")
    for item in items:
        if isinstance(item, dict) and item.get("name") == name:
            inner = item.get(kind.lower()) or {}
            if not isinstance(inner, dict):
                raise UsageError(f"{where}: {kind} {name!r} must be a mapping")
            return inner
    raise UsageError(f"{where}: the current context names {kind.lower()} {name!r}, which the file does not define")


def _file(value: Any, base: Path, key: str, where: str) -> Path:
    if not isinstance(value, str) or not value:
        raise UsageError(f"{where}: {key} must be a file path")
    path = Path(value)
    return path if path.is_absolute() else base / path


def endpoint(path: Path, secrets_dir: Path) -> Endpoint:
    """The Endpoint of ``path``'s current context. Certificates and keys given inline
    (-data) are written into ``secrets_dir`` (mode 0600), which the caller removes."""
    where = f"--kubeconfig {path}"
    document = yamlio.load_file(path, "--kubeconfig")
    if not isinstance(document, dict):
        raise UsageError(f"{where} is not a kubeconfig (a mapping with clusters, users and contexts)")
    context_name = document.get("current-context")
    if not isinstance(context_name, str) or not context_name:
        raise UsageError(f"{where} has no current-context; set one (kubectl config use-context NAME)")
    context = _named(document.get("contexts"), context_name, "Context", where)
    cluster = _named(document.get("clusters"), str(context.get("cluster")), "Cluster", where)
    user = _named(document.get("users"), str(context.get("user")), "User", where) if context.get("user") else {}
    base = path.parent.absolute()
    server = cluster.get("server")
    if not isinstance(server, str) or not server.startswith("https://"):
        raise UsageError(f"{where}: cluster server {server!r} is not an https:// URL")
    for plugin in ("exec", "auth-provider"):
        if user.get(plugin):
            raise UsageError(
                f"{where}: user {context.get('user')!r} authenticates through an {plugin} plugin, which kplugin "
                "bench does not run; use a kubeconfig with a token or a client certificate"
            )

    def inline(key: str, name: str) -> Path | None:
        if f"{key}-data" in source[key]:
            try:
                data = base64.b64decode(str(source[key][f"{key}-data"]), validate=True)
            except (binascii.Error, ValueError):
                raise UsageError(f"{where}: {key}-data is not base64") from None
            target = secrets_dir / name
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            return target
        if key in source[key]:
            return _file(source[key][key], base, key, where)
        return None

    source = {
        "certificate-authority": cluster,
        "client-certificate": user,
        "client-key": user,
    }
    token = user.get("token")
    if token is None and user.get("tokenFile"):
        token = safefs.read_text(_file(user["tokenFile"], base, "tokenFile", where), "token file").strip()
    if token is not None and not isinstance(token, str):
        raise UsageError(f"{where}: the user's token must be a string")
    cert = inline("client-certificate", "client.crt")
    key = inline("client-key", "client.key")
    if token is None and cert is None:
        raise UsageError(f"{where}: user {context.get('user')!r} has neither a token nor a client certificate")
    return Endpoint(
        server=server.rstrip("/"),
        token=token,
        ca_file=inline("certificate-authority", "ca.crt"),
        cert_file=cert,
        key_file=key,
        insecure=cluster.get("insecure-skip-tls-verify") is True,
    )
