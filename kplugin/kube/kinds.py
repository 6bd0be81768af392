"""The kinds of objects a scenario holds besides nodes and pods: what the scheduler's
plugins read (PodDisruptionBudgets for preemption; volumes, storage classes and CSI
nodes for the volume plugins; RuntimeClasses for pod overhead; the DRA objects), where
the API serves each, from which minor it is served by default, and the order a replay
creates them in. Namespaces and PriorityClasses are part of the scenario format itself.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KindInfo:
    api_version: str
    kind: str
    plural: str
    namespaced: bool
    since: int  # the first minor (1.<since>) that serves it by default
    rank: int  # creation order: what others refer to comes first
    status: tuple[str, ...] = ()  # status fields a replay sets (through /status), kept by snapshots

    def path(self, namespace: str | None = None) -> str:
        root = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        # a namespaced kind without a namespace: its objects in every namespace
        return root + (f"/namespaces/{namespace}" if self.namespaced and namespace else "") + f"/{self.plural}"

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]


KINDS = (
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
BY_KIND = {k.kind: k for k in KINDS}
# what the scenario format has keys of its own for
CORE = {
    "Node": KindInfo("v1", "Node", "nodes", False, 0, 5),
    "Pod": KindInfo("v1", "Pod", "pods", True, 0, 50),
    "Namespace": KindInfo("v1", "Namespace", "namespaces", False, 0, 0),
    "PriorityClass": KindInfo("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", False, 14, 1),
}
ALL = {**CORE, **BY_KIND}
ACCEPTED = ", ".join(sorted(ALL))


def served_problem(info: KindInfo, api_version: str, minor: int) -> str | None:
    """Why Kubernetes 1.<minor> does not serve ``api_version``/kind by default, or None."""
    if api_version != info.api_version:
        return (
            f"{api_version} {info.kind} is not what kplugin replays: write it as {info.api_version} "
            f"(served from Kubernetes 1.{info.since})"
        )
    if minor < info.since:
        return f"{info.api_version} {info.kind} is not served by Kubernetes 1.{minor} (only from 1.{info.since})"
    return None
