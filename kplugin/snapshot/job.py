"""``kplugin snapshot``: a real cluster's scheduling state as a scenario.

Everything the scheduler's plugins read is listed through the API, page by page: nodes,
pods in every namespace (bound and pending), namespaces, PriorityClasses, and where the
cluster serves them PodDisruptionBudgets, PersistentVolumes and Claims, StorageClasses,
CSINodes and CSIDrivers, CSIStorageCapacities, RuntimeClasses, the DRA objects
(DeviceClasses, ResourceSlices, ResourceClaims of resource.k8s.io/v1), and the
workload-aware scheduling API's Workloads and PodGroups at the newest version served
(kinds.GATED: a cluster that does not turn that API on serves none, and its scheduler
reads none, so they are not "unread" there). Each object
becomes a scenario entry (kplugin.scenario.entries: status, managedFields, uids and
resourceVersions dropped), and the scenario is written as JSON with one entry per line,
each section sorted by name: the same cluster gives the same bytes.

``anonymize`` applies kplugin.snapshot.anonymize's table to every entry: each field kept,
hashed through one keyed hash (HMAC-SHA256), renamed by position or dropped, so that
every reference still matches (see that module). The key is ``salt``, by default the uid
of the cluster's kube-system namespace: the same cluster gives the same names, which
nobody without access to the cluster can reverse by guessing. The header records the
kinds the snapshot could not read (``unread``), so a replay can say what it lacks.

``custom`` adds a project's own kinds (its config/crd/): each CRD as the cluster has it,
and every object of its kind, kept whole (kplugin.scenario.entries). They cannot be
anonymized: kplugin does not know which of their fields name the cluster.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kplugin.core.errors import OperationError, Setting
from kplugin.kube import kinds
from kplugin.kube import kubeconfig as kubeconfigs
from kplugin.kube.apiclient import ApiError, Client
from kplugin.model.project import Project
from kplugin.scenario import entries
from kplugin.scenario.entries import Section
from kplugin.scenario.source import UNREAD, unread_text
from kplugin.snapshot.anonymizer import Anonymizer

Counter = Callable[[str, int, int], None]
CustomKinds = tuple[tuple[str, kinds.KindInfo], ...]  # a project's own kinds: (CRD name, its kind)


@dataclass(frozen=True)
class Request:
    namespaces: tuple[str, ...] = ()  # () : every namespace
    anonymize: bool = False
    salt: str | None = None
    keep_labels: tuple[str, ...] = ()
    anonymize_drivers: bool = False  # hash driver, provisioner and extended resource names too
    # a project's own kinds (from its config/crd/): (CRD name, the kind at its first served version)
    custom: CustomKinds = ()


@dataclass(frozen=True)
class Cluster:
    """The cluster a snapshot reads: its API server, and the kubeconfig context that names it."""

    client: Client
    server: str
    context: str


@contextmanager
def connect(kubeconfig: Path, context: str | None) -> Iterator[Cluster]:
    """The cluster of ``kubeconfig``'s ``context`` (its current one by default); the
    connection is closed when the context ends."""
    config = kubeconfigs.load(kubeconfig, context)
    client = Client(kubeconfigs.endpoint(config), timeout=60)
    try:
        yield Cluster(client, config.server, config.context)
    finally:
        client.close()


def project_kinds(project: Project) -> CustomKinds:
    """A project's own kinds (config/crd/, or an adopted repository's recorded files):
    each CRD's name and its kind at the first version it serves."""
    return tuple((d.name, served[0]) for d in project.crd_definitions() if (served := kinds.from_crd(d.body)))


@dataclass
class Result:
    kubernetes: str
    counts: dict[str, int] = field(default_factory=dict)  # section -> entries written
    notes: list[str] = field(default_factory=list)
    unread: dict[str, str] = field(default_factory=dict)  # plural -> why not (forbidden, not served)
    seconds: float = 0.0
    bytes: int = 0


# --- reading the cluster -------------------------------------------------------------------


def _served(client: Client) -> set[str]:
    """The group/versions the API server serves ("v1", "policy/v1", ...)."""
    found = {"v1"}
    groups = client.get("/apis")
    for group in groups.get("groups") or []:
        for version in group.get("versions") or []:
            found.add(str(version.get("groupVersion")))
    return found


def _line(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def take(client: Client, request: Request, write: Callable[[bytes], object], progress: Counter) -> Result:
    """Read the cluster through ``client`` and ``write`` the scenario (see the module
    docstring). Reading everything comes first; nothing is written if it fails."""
    started = time.monotonic()
    version = client.get("/version")
    result = Result(kubernetes=str(version.get("gitVersion", "")))
    if request.custom and request.anonymize:
        raise OperationError(f"{Setting.ANONYMIZE} cannot anonymize a project's own kinds: leave out {Setting.PROJECT}")
    reading = _Reading(client, request, result, _anonymizer(client, request))
    reading.custom_definitions()
    for info in reading.listed(_served(client)):
        reading.kind(info, progress)
    reading.drop_orphans()
    result.bytes = reading.write(write)
    result.seconds = round(time.monotonic() - started, 1)
    return result


def _anonymizer(client: Client, request: Request) -> Anonymizer | None:
    """--anonymize's, keyed by --salt or by the kube-system namespace's uid."""
    if not request.anonymize:
        return None
    salt = request.salt
    if salt is None:
        try:
            salt = str(client.get("/api/v1/namespaces/kube-system")["metadata"]["uid"])
        except (ApiError, KeyError) as err:
            raise OperationError(
                f"{Setting.ANONYMIZE}: cannot read the kube-system namespace's uid for a key ({err}); "
                f"give {Setting.SALT}"
            ) from None
    return Anonymizer(salt, request.keep_labels, request.anonymize_drivers)


class _Reading:
    """One snapshot's reading: every object read becomes a line of its section (sorted
    when written), the pods bound to nodes remembered until the nodes are known."""

    def __init__(self, client: Client, request: Request, result: Result, anonymizer: Anonymizer | None) -> None:
        self.client = client
        self.request = request
        self.result = result
        self.anonymizer = anonymizer
        self.wanted = set(request.namespaces)
        self.lines: dict[Section, list[tuple[tuple[Any, ...], str]]] = {s: [] for s in Section}
        self.bound_nodes: list[tuple[str, str]] = []  # (pod's key, its node), checked at the end

    def paths(self, info: kinds.KindInfo) -> list[str]:
        if info.kind == "Namespace" or not info.namespaced or not self.wanted:
            return [info.path()]
        return [info.path(ns) for ns in sorted(self.wanted)]

    def add(self, obj: dict[str, Any]) -> None:
        section, entry = entries.entry_of(obj)
        if entry is None:
            return
        if self.anonymizer is not None:
            if section is Section.PODS:
                self.anonymizer.pod_object(obj)  # its ephemeral claims, named after it, come later
            entry = self.anonymizer.entry(section, entry)
        meta = entry.get("metadata") if section is Section.OBJECTS else entry
        assert isinstance(meta, dict)
        rank = 0
        if section is Section.OBJECTS:
            known = kinds.known(entry["apiVersion"], entry["kind"])
            rank = known.rank if known is not None else kinds.CUSTOM_RANK
        key = (rank, str(meta.get("namespace") or ""), str(meta.get("name")))
        self.lines[section].append((key, _line(entry)))
        if section is Section.PODS and entry.get("nodeName"):
            self.bound_nodes.append((f"{entry.get('namespace')}/{entry.get('name')}", str(entry["nodeName"])))

    def custom_definitions(self) -> None:
        """The project's CRDs (--project), as the cluster serves them."""
        for name, _ in self.request.custom:
            try:
                self.add(
                    {
                        "kind": kinds.CRD.kind,
                        "apiVersion": kinds.CRD.api_version,
                        **self.client.get(f"{kinds.CRD.path()}/{name}"),
                    }
                )
            except ApiError as err:
                if err.status not in (403, 404):
                    raise
                self.result.unread[name] = "forbidden" if err.status == 403 else "not served"

    def listed(self, served: set[str]) -> list[kinds.KindInfo]:
        """The kinds to read, in order; those the cluster does not serve are noted unread."""
        listed = [kinds.CORE["Namespace"], kinds.CORE["PriorityClass"], kinds.CORE["Node"], kinds.CORE["Pod"]]
        listed += kinds.KINDS
        newest: dict[str, kinds.KindInfo] = {}  # the pod-group API: its newest version served, if any
        for info in kinds.GATED:
            if info.api_version in served:
                newest.setdefault(info.kind, info)
        listed += newest.values()
        listed += [info for name, info in self.request.custom if name not in self.result.unread]
        found = []
        for info in listed:
            if info.api_version in served:
                found.append(info)
                continue
            self.result.unread[info.plural] = "not served"
            if info.group == "resource.k8s.io":
                others = sorted(v for v in served if v.startswith("resource.k8s.io/"))
                note = (
                    f"DRA objects left out: the cluster serves {', '.join(others)}, kplugin reads "
                    "resource.k8s.io/v1 (Kubernetes 1.34 and later)"
                )
                if others and note not in self.result.notes:  # once, not once per DRA kind
                    self.result.notes.append(note)
        return found

    def kind(self, info: kinds.KindInfo, progress: Counter) -> None:
        """Every object of a kind (of the namespaces asked for), page by page."""
        count = 0
        for path in self.paths(info):
            try:
                for obj in self.client.list_pages(path):
                    obj.setdefault("kind", info.kind)
                    obj.setdefault("apiVersion", info.api_version)
                    name = (obj.get("metadata") or {}).get("name")
                    if info.kind == "Namespace" and self.wanted and name not in self.wanted:
                        continue
                    self.add(obj)
                    count += 1
                    if count % 500 == 0:
                        progress(info.plural, count, count)
            except ApiError as err:
                if err.status in (403, 404) and info.kind not in kinds.CORE:
                    self.result.notes.append(f"{info.plural} left out: {err}")
                    self.result.unread[info.plural] = "forbidden" if err.status == 403 else "not served"
                    break
                raise
        progress(info.plural, count, count)

    def drop_orphans(self) -> None:
        """Pods bound to nodes that are gone by now (a node deleted while listing)."""
        nodes = {json.loads(line)["name"] for _, line in self.lines[Section.NODES]}
        orphans = {pod for pod, node in self.bound_nodes if node not in nodes}
        if orphans:
            self.result.notes.append(f"{len(orphans)} pod(s) bound to nodes that no longer exist left out")
            self.lines[Section.PODS] = [
                (k, line) for k, line in self.lines[Section.PODS] if f"{k[1]}/{k[2]}" not in orphans
            ]

    def source(self) -> dict[str, Any]:
        """The scenario's source: the cluster's version, what was anonymized and left out."""
        source: dict[str, Any] = {"kubernetes": self.result.kubernetes, "anonymized": self.request.anonymize}
        if self.wanted:
            anonymizer = self.anonymizer
            shown = sorted(anonymizer.namespace(n) for n in self.wanted) if anonymizer else sorted(self.wanted)
            source["namespaces"] = ",".join(shown)
        if self.request.anonymize_drivers:
            source["anonymizedDrivers"] = True
        if self.result.unread:
            source[UNREAD] = unread_text(self.result.unread)
        return source

    def write(self, write: Callable[[bytes], object]) -> int:
        """The scenario, section by section in sorted order; the bytes written."""
        written = 0

        def emit(text: str) -> None:
            nonlocal written
            data = text.encode()
            written += len(data)
            write(data)

        emit('{"source":' + _line(self.source()))
        for section in Section:
            rows = sorted(self.lines[section])
            self.result.counts[section] = len(rows)
            emit(f',\n"{section}":[')
            for i, (_, line) in enumerate(rows):
                emit(("\n" if i == 0 else ",\n") + line)
            emit("\n]" if rows else "]")
            self.lines[section] = []  # let go of what is written
        emit("}\n")
        return written
