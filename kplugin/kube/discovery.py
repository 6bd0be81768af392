"""What an API server serves: a kind's resource (plural, scope, status subresource) read
from its discovery documents, and CustomResourceDefinitions waited for until the server
serves them (Established). A replay uses it to create objects of any kind."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from kplugin.core.errors import OperationError
from kplugin.kube import kinds
from kplugin.kube.apiclient import ApiError, Client

ESTABLISHED_SECONDS = 60.0  # a CRD is served within a second or two; 60 s means it never will be
DISCOVERY_SECONDS = 10.0  # an Established CRD's group can lag a moment in discovery


def group_path(api_version: str) -> str:
    return "/api/v1" if api_version == "v1" else f"/apis/{api_version}"


class Resolver:
    """Plural, scope and status subresource of the kinds an API server serves, read once
    per group version."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._resources: dict[str, list[dict[str, Any]]] = {}

    def _group(self, api_version: str, fresh: bool) -> list[dict[str, Any]]:
        if fresh or api_version not in self._resources:
            try:
                document = self.client.get(group_path(api_version))
            except ApiError as err:
                if err.status != 404:
                    raise
                document = {}
            resources = document.get("resources") if isinstance(document, dict) else None
            self._resources[api_version] = [r for r in resources or [] if isinstance(r, dict)]
        return self._resources[api_version]

    def serves(self, api_version: str, resource: str) -> bool:
        """The server serves ``resource`` at ``api_version`` (a group version it does not
        serve at all serves nothing)."""
        return any(r.get("name") == resource for r in self._group(api_version, fresh=False))

    def find(self, info: kinds.KindInfo, wait: float = DISCOVERY_SECONDS) -> kinds.KindInfo | None:
        """``info`` with the server's plural and scope, or None when the server does not
        serve that kind at that version (after ``wait`` seconds of asking again)."""
        if info.resolved:
            return info
        deadline = time.monotonic() + wait
        fresh = False
        while True:
            resources = self._group(info.api_version, fresh)
            names = {str(r.get("name")) for r in resources}
            for resource in resources:
                name = str(resource.get("name", ""))
                if resource.get("kind") == info.kind and kinds.PLURAL_NAME.fullmatch(name):  # not a subresource
                    return replace(
                        info,
                        plural=name,
                        namespaced=bool(resource.get("namespaced")),
                        status_subresource=f"{name}/status" in names,
                    )
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.5)
            fresh = True


def wait_established(client: Client, names: list[str], timeout: float = ESTABLISHED_SECONDS) -> None:
    """Wait until each CustomResourceDefinition (by name) is Established: its kind is
    served. A CRD whose names the server refused (NamesAccepted False) fails at once."""
    deadline = time.monotonic() + timeout
    for name in names:
        path = f"{kinds.CRD.path()}/{name}"
        while True:
            conditions = {
                str(c.get("type")): c
                for c in ((client.get(path).get("status") or {}).get("conditions") or [])
                if isinstance(c, dict)
            }
            if (conditions.get("Established") or {}).get("status") == "True":
                break
            refused = conditions.get("NamesAccepted") or {}
            if refused.get("status") == "False":
                raise OperationError(
                    f"CustomResourceDefinition {name}: the API server refused its names: {refused.get('message', '')}"
                )
            if time.monotonic() >= deadline:
                raise OperationError(
                    f"CustomResourceDefinition {name} was not Established within {timeout:.0f}s "
                    f"({client.endpoint.name} does not serve its kind)"
                )
            time.sleep(0.2)
