"""The kinds of objects a scenario holds besides nodes and pods: what the scheduler's
plugins read (PodDisruptionBudgets for preemption; volumes, storage classes and CSI
nodes for the volume plugins; RuntimeClasses for pod overhead; the DRA objects), where
the API serves each, from which minor it is served by default, and the order a replay
creates them in. Namespaces and PriorityClasses are part of the scenario format itself.

Any other kind is *custom*: a plugin's own API (a PodGroup, an ElasticQuota) or a
built-in kind kplugin has no row for (a Deployment). Its plural and scope come from a
CustomResourceDefinition the scenario or the project holds (``from_crd``), or else from
the API server's discovery when a replay creates it (kplugin.kube.discovery).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kplugin.core import names


@dataclass(frozen=True)
class KindInfo:
    api_version: str
    kind: str
    plural: str
    namespaced: bool
    since: int  # the first minor (1.<since>) that serves it by default
    rank: int  # creation order: what others refer to comes first
    status: tuple[str, ...] = ()  # status fields a replay sets (through /status), kept by snapshots
    custom: bool = False  # not in kplugin's table: plural and scope from a CRD or discovery
    status_subresource: bool = False  # a custom kind whose status is set through /status

    @property
    def resolved(self) -> bool:
        """Plural and scope are known (a custom kind before discovery has no plural)."""
        return bool(self.plural)

    def path(self, namespace: str | None = None) -> str:
        root = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        # a namespaced kind without a namespace: its objects in every namespace
        return root + (f"/namespaces/{namespace}" if self.namespaced and namespace else "") + f"/{self.plural}"

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]


CRD = KindInfo("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False, 16, 2)
CUSTOM_RANK = 40  # after the CRDs (2) and the built-in kinds (10-36), before the pods (50)
KINDS = (  # what the scheduler's own plugins read; a snapshot lists these
    KindInfo("node.k8s.io/v1", "RuntimeClass", "runtimeclasses", False, 20, 10),
    KindInfo("storage.k8s.io/v1", "StorageClass", "storageclasses", False, 6, 11),
    KindInfo("storage.k8s.io/v1", "CSIDriver", "csidrivers", False, 18, 12),
    KindInfo("storage.k8s.io/v1", "CSINode", "csinodes", False, 17, 13),
    KindInfo("resource.k8s.io/v1", "DeviceClass", "deviceclasses", False, 34, 14),
    KindInfo("v1", "PersistentVolume", "persistentvolumes", False, 0, 20),
    KindInfo("resource.k8s.io/v1", "ResourceSlice", "resourceslices", False, 34, 21),
    KindInfo("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, 0, 30),
    KindInfo("storage.k8s.io/v1", "CSIStorageCapacity", "csistoragecapacities", True, 24, 31),
    KindInfo("resource.k8s.io/v1", "ResourceClaim", "resourceclaims", True, 34, 32, ("allocation",)),
    KindInfo(
        "policy/v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        True,
        21,
        33,
        ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"),
    ),
)
# The workload-aware scheduling API (scheduling.k8s.io Workload and PodGroup): off unless
# kube-apiserver turns it on (the GenericWorkload gate and its runtime-config), at a version
# that changes with the minor: v1alpha2 in 1.36, v1beta1 from 1.37 (the scheduler reads
# the PodGroups; a PodGroup names its Workload). A snapshot reads the newest version the
# cluster serves, and nothing where it serves none (the scheduler then reads none either).
# A scenario's pod groups are checked against the minor by kplugin.scenario.format.
GATED = (
    KindInfo("scheduling.k8s.io/v1beta1", "Workload", "workloads", True, 37, 35),
    KindInfo("scheduling.k8s.io/v1alpha2", "Workload", "workloads", True, 36, 35),
    KindInfo("scheduling.k8s.io/v1beta1", "PodGroup", "podgroups", True, 37, 36),
    KindInfo("scheduling.k8s.io/v1alpha2", "PodGroup", "podgroups", True, 36, 36),
)
BY_KIND = {k.kind: k for k in (*KINDS, CRD)}
# what the scenario format has keys of its own for
CORE = {
    "Node": KindInfo("v1", "Node", "nodes", False, 0, 5),
    "Pod": KindInfo("v1", "Pod", "pods", True, 0, 50),
    "Namespace": KindInfo("v1", "Namespace", "namespaces", False, 0, 0),
    "PriorityClass": KindInfo("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", False, 14, 1),
}
ALL = {**CORE, **BY_KIND}
ACCEPTED = ", ".join(sorted(ALL))
# a kind's name as the API's schema has it (CamelCase), and a version of an API group
KIND_NAME = re.compile(r"[A-Z][A-Za-z0-9]{0,62}")
VERSION_NAME = re.compile(r"v[1-9][0-9]*(?:(?:alpha|beta)[1-9][0-9]*)?")
# what a CRD's plural and group may be (a DNS label; a DNS subdomain with a dot): they go into URLs
PLURAL_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", re.ASCII)
_GROUP = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+", re.ASCII)


def is_api_version(value: object) -> bool:
    """Whether ``value`` has the shape of an apiVersion: VERSION, or GROUP/VERSION with
    a DNS subdomain for the group."""
    if not isinstance(value, str):
        return False
    group, _, version = value.rpartition("/")
    return VERSION_NAME.fullmatch(version) is not None and (not group or names.dns1123_subdomain_problem(group) is None)


def gated(api_version: object, kind: object) -> KindInfo | None:
    """The GATED row of ``api_version``/``kind``, or None."""
    return next((k for k in GATED if k.api_version == api_version and k.kind == kind), None)


def known(api_version: object, kind: object) -> KindInfo | None:
    """kplugin's row of an object's kind (the pod-group API's by its version), or None
    for a custom kind."""
    return BY_KIND.get(str(kind)) or gated(api_version, kind)


def custom(api_version: str, kind: str) -> KindInfo:
    """A kind kplugin has no row for, before its plural and scope are known."""
    return KindInfo(api_version, kind, "", False, 0, CUSTOM_RANK, custom=True)


def from_crd(crd: dict[str, Any]) -> list[KindInfo]:
    """The kinds a CustomResourceDefinition serves, one per served version (a CRD the
    API server would refuse gives what can be read of it; the server says the rest)."""
    spec = crd.get("spec") if isinstance(crd.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    names = spec.get("names") if isinstance(spec.get("names"), dict) else {}
    assert isinstance(names, dict)
    group, kind, plural = spec.get("group"), names.get("kind"), names.get("plural")
    if not (isinstance(group, str) and isinstance(kind, str) and isinstance(plural, str)):
        return []
    if not (PLURAL_NAME.fullmatch(plural) and _GROUP.fullmatch(group) and KIND_NAME.fullmatch(kind)):
        return []  # names the API server refuses: it says why when the CRD is created
    found = []
    for version in spec.get("versions") or []:
        if not isinstance(version, dict) or not isinstance(version.get("name"), str) or not version.get("served"):
            continue
        if not VERSION_NAME.fullmatch(version["name"]):
            continue
        subresources = version.get("subresources") if isinstance(version.get("subresources"), dict) else {}
        assert isinstance(subresources, dict)
        found.append(
            KindInfo(
                f"{group}/{version['name']}",
                kind,
                plural,
                spec.get("scope") == "Namespaced",
                0,
                CUSTOM_RANK,
                custom=True,
                status_subresource="status" in subresources,
            )
        )
    return found


def served_problem(info: KindInfo, api_version: str, minor: int) -> str | None:
    """Why Kubernetes 1.<minor> does not serve ``api_version``/kind by default, or None
    (a custom kind: the API server's discovery says, when a replay creates it)."""
    if info.custom:
        return None
    if api_version != info.api_version:
        return (
            f"{api_version} {info.kind} is not what kplugin replays: write it as {info.api_version} "
            f"(served from Kubernetes 1.{info.since})"
        )
    if minor < info.since:
        return f"{info.api_version} {info.kind} is not served by Kubernetes 1.{minor} (only from 1.{info.since})"
    return None
