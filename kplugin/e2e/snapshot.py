"""``kplugin snapshot``: a real cluster's scheduling state as a scenario.

Everything the scheduler's plugins read is listed through the API, page by page: nodes,
pods in every namespace (bound and pending), namespaces, PriorityClasses, and where the
cluster serves them PodDisruptionBudgets, PersistentVolumes and Claims, StorageClasses,
CSINodes and CSIDrivers, CSIStorageCapacities, RuntimeClasses, the DRA objects
(DeviceClasses, ResourceSlices, ResourceClaims of resource.k8s.io/v1), and the
workload-aware scheduling API's Workloads and PodGroups at the newest version served
(kinds.GATED: a cluster that does not turn that API on serves none, and its scheduler
reads none, so they are not "unread" there). Each object
becomes a scenario entry (kplugin.e2e.entries: status, managedFields, uids and
resourceVersions dropped), and the scenario is written as JSON with one entry per line,
each section sorted by name: the same cluster gives the same bytes.

``anonymize`` applies kplugin.e2e.anonymize's table to every entry: each field kept,
hashed through one keyed hash (HMAC-SHA256), renamed by position or dropped, so that
every reference still matches (see that module). The key is ``salt``, by default the uid
of the cluster's kube-system namespace: the same cluster gives the same names, which
nobody without access to the cluster can reverse by guessing. The header records the
kinds the snapshot could not read (``unread``), so a replay can say what it lacks.

``custom`` adds a project's own kinds (its config/crd/): each CRD as the cluster has it,
and every object of its kind, kept whole (kplugin.e2e.entries). They cannot be
anonymized: kplugin does not know which of their fields name the cluster.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kplugin.core.errors import OperationError, Setting
from kplugin.e2e import entries
from kplugin.e2e.anonymizer import Anonymizer
from kplugin.kube import kinds
from kplugin.kube.apiclient import ApiError, Client

Counter = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Request:
    namespaces: tuple[str, ...] = ()  # () : every namespace
    anonymize: bool = False
    salt: str | None = None
    keep_labels: tuple[str, ...] = ()
    anonymize_drivers: bool = False  # hash driver, provisioner and extended resource names too
    # a project's own kinds (from its config/crd/): (CRD name, the kind at its first served version)
    custom: tuple[tuple[str, kinds.KindInfo], ...] = ()


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


SECTIONS = ("namespaces", "priorityClasses", "nodes", "pods", "objects")
UNREAD = "unread"  # the header's key: the kinds the snapshot could not read, and why


def unread_text(unread: dict[str, str]) -> str:
    """ "csinodes (forbidden), deviceclasses (not served)": sorted, one string (a
    scenario's source holds strings, numbers and booleans)."""
    return ", ".join(f"{plural} ({why})" for plural, why in sorted(unread.items()))


def unread_note(source: dict[str, Any]) -> str | None:
    """What a replay of a snapshot lacks, from its header, or None."""
    unread = source.get(UNREAD)
    if not isinstance(unread, str) or not unread:
        return None
    return f"the snapshot could not read {unread[:500]}: the replay has none of those objects"


def take(client: Client, request: Request, write: Callable[[bytes], object], progress: Counter) -> Result:
    """Read the cluster through ``client`` and ``write`` the scenario (see the module
    docstring). Reading everything comes first; nothing is written if it fails."""
    started = time.monotonic()
    version = client.get("/version")
    result = Result(kubernetes=str(version.get("gitVersion", "")))
    served = _served(client)
    salt = request.salt
    if request.anonymize and salt is None:
        try:
            salt = str(client.get("/api/v1/namespaces/kube-system")["metadata"]["uid"])
        except (ApiError, KeyError) as err:
            raise OperationError(
                f"{Setting.ANONYMIZE}: cannot read the kube-system namespace's uid for a key ({err}); "
                f"give {Setting.SALT}"
            ) from None
    anonymizer = Anonymizer(salt or "", request.keep_labels, request.anonymize_drivers) if request.anonymize else None
    wanted = set(request.namespaces)
    lines: dict[str, list[tuple[tuple[Any, ...], str]]] = {s: [] for s in SECTIONS}
    bound_nodes: list[tuple[str, str]] = []  # (pod's key, its node), checked at the end

    def paths(info: kinds.KindInfo) -> list[str]:
        if not info.namespaced or not wanted:
            return [info.path()]
        return [info.path(ns) for ns in sorted(wanted)]

    def add(obj: dict[str, Any]) -> None:
        section, entry = entries.entry_of(obj)
        if entry is None:
            return
        if anonymizer is not None:
            if section == "pods":
                anonymizer.pod_object(obj)  # its ephemeral claims, named after it, come later
            entry = anonymizer.entry(section, entry)
        meta = entry.get("metadata") if section == "objects" else entry
        assert isinstance(meta, dict)
        rank = 0
        if section == "objects":
            known = kinds.known(entry["apiVersion"], entry["kind"])
            rank = known.rank if known is not None else kinds.CUSTOM_RANK
        key = (rank, str(meta.get("namespace") or ""), str(meta.get("name")))
        lines[section].append((key, _line(entry)))
        if section == "pods" and entry.get("nodeName"):
            bound_nodes.append((f"{entry.get('namespace')}/{entry.get('name')}", str(entry["nodeName"])))

    if request.custom and anonymizer is not None:
        raise OperationError(f"{Setting.ANONYMIZE} cannot anonymize a project's own kinds: leave out {Setting.PROJECT}")
    for name, _ in request.custom:  # the CRDs as the cluster serves them
        try:
            add(
                {
                    "kind": kinds.CRD.kind,
                    "apiVersion": kinds.CRD.api_version,
                    **client.get(f"{kinds.CRD.path()}/{name}"),
                }
            )
        except ApiError as err:
            if err.status not in (403, 404):
                raise
            result.unread[name] = "forbidden" if err.status == 403 else "not served"
    listed = [kinds.CORE["Namespace"], kinds.CORE["PriorityClass"], kinds.CORE["Node"], kinds.CORE["Pod"], *kinds.KINDS]
    newest: dict[str, kinds.KindInfo] = {}  # the pod-group API: its newest version served, if any
    for info in kinds.GATED:
        if info.api_version in served:
            newest.setdefault(info.kind, info)
    listed += newest.values()
    listed += [info for name, info in request.custom if name not in result.unread]
    for info in listed:
        what = info.plural
        if info.api_version not in served:
            result.unread[info.plural] = "not served"
            if info.group == "resource.k8s.io":
                others = sorted(v for v in served if v.startswith("resource.k8s.io/"))
                note = (
                    f"DRA objects left out: the cluster serves {', '.join(others)}, kplugin reads "
                    "resource.k8s.io/v1 (Kubernetes 1.34 and later)"
                )
                if others and note not in result.notes:  # once, not once per DRA kind
                    result.notes.append(note)
            continue
        count = 0
        for path in paths(info) if info.kind != "Namespace" else [info.path()]:
            try:
                for obj in client.list_pages(path):
                    obj.setdefault("kind", info.kind)
                    obj.setdefault("apiVersion", info.api_version)
                    if info.kind == "Namespace" and wanted and (obj.get("metadata") or {}).get("name") not in wanted:
                        continue
                    add(obj)
                    count += 1
                    if count % 500 == 0:
                        progress(what, count, count)
            except ApiError as err:
                if err.status in (403, 404) and info.kind not in kinds.CORE:
                    result.notes.append(f"{info.plural} left out: {err}")
                    result.unread[info.plural] = "forbidden" if err.status == 403 else "not served"
                    break
                raise
        progress(what, count, count)
    nodes = {json.loads(line)["name"] for _, line in lines["nodes"]}
    orphans = {pod for pod, node in bound_nodes if node not in nodes}
    if orphans:
        result.notes.append(f"{len(orphans)} pod(s) bound to nodes that no longer exist left out")
        lines["pods"] = [(key, line) for key, line in lines["pods"] if f"{key[1]}/{key[2]}" not in orphans]
    source: dict[str, Any] = {"kubernetes": result.kubernetes, "anonymized": request.anonymize}
    if wanted:
        shown = sorted(anonymizer.namespace(n) for n in wanted) if anonymizer is not None else sorted(wanted)
        source["namespaces"] = ",".join(shown)
    if request.anonymize_drivers:
        source["anonymizedDrivers"] = True
    if result.unread:
        source[UNREAD] = unread_text(result.unread)
    written = 0

    def emit(text: str) -> None:
        nonlocal written
        data = text.encode()
        written += len(data)
        write(data)

    emit('{"source":' + _line(source))
    for section in SECTIONS:
        rows = sorted(lines[section])
        result.counts[section] = len(rows)
        emit(f',\n"{section}":[')
        for i, (_, line) in enumerate(rows):
            emit(("\n" if i == 0 else ",\n") + line)
        emit("\n]" if rows else "]")
        lines[section] = []  # let go of what is written
    emit("}\n")
    result.bytes = written
    result.seconds = round(time.monotonic() - started, 1)
    return result
