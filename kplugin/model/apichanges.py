"""What the framework API changed between minors, as data next to the catalog's API facts
(goapi, from the catalog's shape data): the names that moved between the framework's two
packages or were renamed (derived, minor by minor), and what was removed or deprecated
with what to write instead. doctor reads native code with them; kplugin upgrade rewrites
an adopted repository's code with the mechanical ones (``renames``) and explains a
compile error with the others."""

from __future__ import annotations

import itertools
import re
from functools import cache
from typing import NamedTuple

from kplugin.core.errors import Setting
from kplugin.model import goapi
from kplugin.model.apifacts import ApiFacts
from kplugin.model.points import parse_minor
from kplugin.model.versions import supported_releases

_MOVED_FIX = f"these moved to k8s.io/kube-scheduler/framework (fwk); or move the plugin to {Setting.API} layer"


@cache
def framework_moves() -> tuple[tuple[str, str, str, str], ...]:
    """What moved from k8s.io/kubernetes/pkg/scheduler/framework to
    k8s.io/kube-scheduler/framework, minor by minor: the names --api native code of one
    minor spells framework.X and of the next fwk.X (goapi.native_names, from the catalog's
    facts: 1.34 the data types, 1.35 the plugin interfaces and Handle), with the rest of
    what those minors moved (MOVED_TO_FWK), as API_CHANGES rows."""
    releases = sorted(supported_releases(), key=lambda r: r.newest.minor)
    rows = []
    for before, after in itertools.pairwise(releases):
        old, new = goapi.native_names(before.facts), goapi.native_names(after.facts)
        moved = sorted(
            {
                spelled.split(".", 1)[1]
                for name, was in old.items()
                if (spelled := was.lstrip("*")).startswith("framework.")
                and new.get(name, "").lstrip("*") == "fwk." + spelled.split(".", 1)[1]
            }
            | set(MOVED_TO_FWK.get(after.key, ()))
        )
        if moved:
            rows.append((rf"\bframework\.(?:{'|'.join(moved)})\b", after.key, "api-removed", _MOVED_FIX))
    return tuple(rows)


# What the framework removed or deprecated, as --api native code would spell it (layer
# code goes through internal/fw, which kplugin keeps current): pattern, minor from which
# it applies, rule, what to write instead. The moves to fwk are derived (framework_moves).
API_CHANGES: tuple[tuple[str, str, str, str], ...] = (
    (r"\b(?:framework|fwk)\.(?:QueueAfterBackoff|QueueImmediately)\b", "1.29", "api-removed",
     "return Queue (and an error) from QueueingHintFn"),
    (r"\bframework\.GVK\b", "1.32", "api-removed", "it is framework.EventResource from 1.32 (fwk's from 1.34)"),
    (r"\bframework\.NodeToStatusMap\b", "1.35", "api-removed",
     "NodeToStatusMap is gone from 1.35: PostFilter gets an fwk.NodeToStatusReader (its Get and NodesForStatusCode)"),
    (r"\b(?:framework|fwk)\.(?:MaxNodeScore|MinNodeScore)\b", "1.36", "api-deprecated", "use MaxScore and MinScore"),
    # 1.38 (read in k8s.io/kube-scheduler v0.38.0-beta.0 framework/ and k8s.io/kubernetes
    # v1.38.0-beta.0 pkg/scheduler, pkg/features, diffed against 1.37.2)
    (r"\bNominatedPodsForNode\(\s*(?!logger\b|klog\.)", "1.38", "api-removed",
     "NominatedPodsForNode takes the logger first from 1.38: NominatedPodsForNode(logger, nodeName)"),
    (r"\bGetPodGroupSchedulingCycle\(", "1.38", "api-removed", "it is GetPodGroupCycleState from 1.38"),
    (r"\bGetUnscheduledPods\(", "1.38", "api-removed", "it is GetAllUnscheduledPods from 1.38"),
    (r"\bfwk\.MustParseEntityKey\b", "1.38", "api-removed", "PodGroupInfo.GetKey returns an EntityKey from 1.38"),
    (r"\bframework\.(?:PlacementFeasiblePlugin|PlacementProgress)\b", "1.38", "api-removed",
     "it moved to k8s.io/kube-scheduler/framework (fwk) in 1.38"),
    (r"\bfeatures\.(?:PodGroupPreemptionPolicy|DynamicResourceAllocation|InPlacePodVerticalScaling|"
     r"MatchLabelKeysInPodAffinity|PodSchedulingReadiness)\b", "1.38", "api-removed",
     "the feature gate is gone from 1.38 (GA and locked, or removed): drop the check"),
    (r"\bEnable(?:DynamicResourceAllocation|InPlacePodVerticalScaling|PodGroupPreemptionPolicy)\b", "1.38",
     "api-removed", "feature.Features has no such field from 1.38: the feature is always on"),
)  # fmt: skip


# the framework's two packages, by the name native code spells them with
PACKAGES = {
    "framework": "k8s.io/kubernetes/pkg/scheduler/framework",
    "fwk": "k8s.io/kube-scheduler/framework",
}
_SPELLED = re.compile(r"(?P<pointer>\*?)(?P<package>framework|fwk)\.(?P<name>\w+)")


class Rename(NamedTuple):
    """A name of the framework that one minor spells one way and another minor another:
    a move between its packages, a rename, a pointer that became an interface."""

    concept: str  # goapi's name for it
    old_package: str  # import path
    old_name: str
    old_pointer: bool
    new_package: str
    new_name: str
    new_pointer: bool


# The exported names k8s.io/kubernetes/pkg/scheduler/framework gave up to
# k8s.io/kube-scheduler/framework, by the minor that moved them (read in the sources:
# k8s.io/kubernetes v1.33.13, v1.34.12 and v1.36.5 pkg/scheduler/framework against
# k8s.io/kube-scheduler v0.33.13, v0.34.12 and v0.35.7 framework; in 1.34 CycleState,
# NodeInfo, PodInfo and QueuedPodInfo became interfaces of fwk, which goapi spells, while
# framework kept the structs). goapi knows the ones kplugin's templates spell; a
# repository of its own spells more (its mocks of Handle, its extenders, its listers).
MOVED_TO_FWK: dict[str, tuple[str, ...]] = {
    "1.34": (
        "ActionType", "Add", "AffinityTerm", "All", "AsStatus", "CSIDriver", "CSINode", "CSIStorageCapacity",
        "ClusterEvent", "ClusterEventWithHint", "Code", "DefaultBindAllHostIP", "Delete", "DeviceClass", "ErrNotFound",
        "Error", "EventResource", "HostPortInfo", "ImageStateSummary", "NewProtocolPort", "NewStatus", "Node",
        "Pending", "PersistentVolume", "PersistentVolumeClaim", "Pod", "ProtocolPort", "Queue", "QueueSkip",
        "QueueingHint", "QueueingHintFn", "ResourceClaim", "ResourceSlice", "Skip", "StateData", "StateKey", "Status",
        "StorageClass", "Success", "Unschedulable", "UnschedulableAndUnresolvable", "Update", "UpdateNodeAllocatable",
        "UpdateNodeAnnotation", "UpdateNodeCondition", "UpdateNodeLabel", "UpdateNodeTaint",
        "UpdatePodGeneratedResourceClaim", "UpdatePodLabel", "UpdatePodScaleDown", "UpdatePodSchedulingGatesEliminated",
        "UpdatePodToleration", "VolumeAttachment", "Wait", "WeightedAffinityTerm", "WildCard",
    ),
    "1.35": (
        "APICacher", "APICallImplementations", "BindPlugin", "DeviceClassLister", "EnqueueExtensions", "Extender",
        "FilterPlugin", "GetAffinityTerms", "GetPodAffinityTerms", "GetPodAntiAffinityTerms", "Handle", "LessFunc",
        "MaxNodeScore", "MaxTotalScore", "MinNodeScore", "ModeNoop", "ModeOverride", "NodeInfoLister",
        "NodePluginScores", "NodeScore", "NodeScoreList", "NodeToStatusReader", "NominatingInfo", "NominatingMode",
        "PermitPlugin", "Plugin", "PluginScore", "PluginsRunner", "PodActivator", "PodNominator", "PostBindPlugin",
        "PostFilterPlugin", "PostFilterResult", "PreBindPlugin", "PreEnqueuePlugin", "PreFilterExtensions",
        "PreFilterPlugin", "PreFilterResult", "PreScorePlugin", "QueueSortPlugin", "ReservePlugin",
        "ResourceClaimTracker", "ResourceSliceLister", "ScoreExtensions", "ScorePlugin", "SharedDRAManager",
        "SharedLister", "StorageInfoLister", "WaitingPod",
    ),
}  # fmt: skip


def _moves(old: ApiFacts, new: ApiFacts, old_minor: str, new_minor: str) -> list[Rename]:
    """MOVED_TO_FWK's names for a move that crosses their minor (either way)."""
    framework, fwk = PACKAGES["framework"], PACKAGES["fwk"]
    found = []
    for minor, moved in MOVED_TO_FWK.items():
        up = parse_minor(old_minor) < parse_minor(minor) <= parse_minor(new_minor)
        down = parse_minor(new_minor) < parse_minor(minor) <= parse_minor(old_minor)
        for name in moved if up or down else ():
            a, b = (framework, fwk) if up else (fwk, framework)
            found.append(Rename(name, a, name, False, b, name, False))
    return found


def renames(old: ApiFacts, new: ApiFacts, old_minor: str = "", new_minor: str = "") -> tuple[Rename, ...]:
    """What changes in the spelling of the framework's names from the minor of ``old`` to
    that of ``new`` (either way), derived from goapi.native_names: what kplugin upgrade
    rewrites mechanically in an adopted repository's code, with the moves MOVED_TO_FWK
    lists for the minors crossed (``old_minor``, ``new_minor``). One rule per old name,
    goapi's first; sorted by old spelling."""
    before, after = goapi.native_names(old), goapi.native_names(new)
    found = []
    for concept, was in before.items():
        now = after.get(concept)
        if now is None or now == was:
            continue
        a, b = _SPELLED.fullmatch(was), _SPELLED.fullmatch(now)
        if a is None or b is None:
            continue
        found.append(
            Rename(
                concept, PACKAGES[a["package"]], a["name"], bool(a["pointer"]),
                PACKAGES[b["package"]], b["name"], bool(b["pointer"]),
            )
        )  # fmt: skip
    if old_minor and new_minor:
        spelled = {(r.old_package, r.old_name) for r in found}
        found += [r for r in _moves(old, new, old_minor, new_minor) if (r.old_package, r.old_name) not in spelled]
    return tuple(sorted(set(found), key=lambda r: (r.old_package, r.old_name, r.concept)))


def crossed(old: str, new: str) -> list[tuple[str, str]]:
    """The catalog's API changes of each minor a move from ``old`` to ``new`` (minor keys)
    crosses, either way: (minor, change), in minor order."""
    low, high = sorted((old, new), key=parse_minor)
    return [
        (r.key, change)
        for r in sorted(supported_releases(), key=lambda r: parse_minor(r.key))
        if parse_minor(low) < parse_minor(r.key) <= parse_minor(high)
        for change in r.api_changes
    ]
