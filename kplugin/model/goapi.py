"""How the scheduling framework API is spelled in Go for one Kubernetes minor.

Templates never hard-code ``framework.NodeInfo``: they write ``{{ T.NodeInfo }}``.
With the compatibility layer (``--api layer``, the default) every name is spelled through
the project's generated ``internal/fw`` package, so the plugin's own files are the same
text on every minor. With ``--api native`` the names are spelled as that minor's framework
spells them (``*framework.NodeInfo`` up to 1.33, ``fwk.NodeInfo`` from 1.34). ``internal/fw``
itself is written with the native spellings, which is what makes its aliases exact.

Every difference between minors that shows in a spelling is derived here from the
catalog's shape data, so a new minor is a catalog entry, not a template edit.
"""

from __future__ import annotations

import enum

from kplugin.model.apifacts import ApiFacts, PodGroups, PostFilterArg, PreBindPreFlight, QueuedInfo
from kplugin.model.points import POINTS


class ApiMode(enum.StrEnum):
    """How a project's plugin code meets the framework: through the generated internal/fw
    layer (the same source on every minor) or straight against one minor's API."""

    LAYER = "layer"
    NATIVE = "native"


LAYER, NATIVE = ApiMode.LAYER, ApiMode.NATIVE
API_MODES = tuple(ApiMode)

# Data types: in `fwk` from 1.34, where cycle state, node and pod info became interfaces.
_DATA_TYPES = (
    "Status",
    "Code",
    "StateData",
    "StateKey",
    "ClusterEvent",
    "ClusterEventWithHint",
    "ActionType",
    "QueueingHint",
    "QueueingHintFn",
)
_DATA_VALUES = (
    "Success",
    "Error",
    "Unschedulable",
    "UnschedulableAndUnresolvable",
    "Wait",
    "Skip",
    "NewStatus",
    "AsStatus",
    "Add",
    "Delete",
    "Update",
    "All",
    "UpdateNodeLabel",
    "UpdateNodeAllocatable",
    "Node",
    "Pod",
    "Queue",
    "QueueSkip",
)
# Plugin-facing types: in `fwk` from 1.35 (1.34 left them in `framework`).
_PLUGIN_TYPES = (
    "Handle",
    "Plugin",
    "PreFilterResult",
    "PreFilterExtensions",
    "ScoreExtensions",
    "NodeScoreList",
    "NodeScore",
    "PostFilterResult",
    # the interfaces of the points every minor has, as model.points declares them
    *(row.interface for row in POINTS.values() if row.first is None),
    # a pod held by Permit's Wait (Handle.GetWaitingPod, IterateOverWaitingPods)
    "WaitingPod",
)


def _interfaces_since(minor: str) -> tuple[str, ...]:
    """The Go interfaces of the points ``minor`` added, as model.points declares them."""
    return tuple(row.interface for row in POINTS.values() if row.first == minor)


# The pod-group cycle's types (fwk, 1.36 on): spelled only for minors that have them.
_POD_GROUP_TYPES = (
    "PodGroupInfo",
    "PodGroupCycleState",
    "Placement",
    "GeneratePlacementsResult",
    "PodGroupAssignments",
    "PlacementScore",
    "PlacementScoreExtensions",
    *_interfaces_since("1.36"),  # PlacementGeneratePlugin, PlacementScorePlugin
)
# The pod-group points later minors added, and the types their signatures spell: only from
# the minor whose pod-group API (the catalog's pod_groups fact) came with them.
_LATER_POD_GROUP_TYPES: dict[PodGroups, tuple[str, ...]] = {
    # PodGroupPostFilter (1.37 on)
    PodGroups.V1BETA1: (
        *_interfaces_since("1.37"),
        "PodGroupPostFilterResult",
        "PodGroupSchedulingFunc",
        "NominatingInfo",
    ),
    # PlacementFeasible (1.38 on)
    PodGroups.GENERIC: (*_interfaces_since("1.38"), "PlacementProgress"),
}
# Data types whose name changed between minors without a catalog fact of their own: each is
# tied to the fact that changed in the same minor (both read in that minor's sources), as
# name -> (fact, {the fact's value: the type's name}). A fact value without a name fails
# loudly (KeyError) instead of spelling a type the minor does not have.
_RENAMED: dict[str, tuple[str, dict[object, str]]] = {
    # ClusterEvent.Resource: `type GVK string` up to 1.31 (framework/types.go), `type
    # EventResource string` from 1.32, the minor PostFilter got a NodeToStatusReader
    "EventResource": ("postfilter_arg", {PostFilterArg.MAP: "GVK", PostFilterArg.READER: "EventResource"}),
}
# PreQueueingHints' types (fwk, 1.37 on): spelled only for minors that have them; the
# layer has them on every minor (its own struct before 1.37, where NativeEvents drops them).
_PRE_HINT_TYPES = ("PreQueueingHintResult", "PreQueueingHintFn")
# What k8s.io/kubernetes/pkg/scheduler/framework keeps on every minor (concrete types, the
# reserved state key), which gang and quota plugins use.
_FRAMEWORK_ALWAYS = ("PodsToActivate", "PodsToActivateKey", "Resource", "NewResource")
# Listers the generated test harness implements: where the plugin types are.
_LISTER_TYPES = ("SharedLister", "NodeInfoLister", "StorageInfoLister")
# Helpers the stable surface offers instead of fields that became getters in 1.34.
HELPERS = (
    "PodsOn",
    "PodOf",
    "Allocatable",
    "Requested",
    "LookupNode",
    "ListNodes",
    "QueuedPriority",
    "QueuedSince",
    "QueuedPod",
    "PodRequests",
    "NodeChange",
    "PodChange",
    "PodGroupPods",
)
# What only the layer offers (internal/fw writes their bodies for the minor itself; native
# code spells the framework's own fields and types).
LAYER_HELPERS = ("CustomResource", "InitialAttempt", "AllPods", "PendingPods")


def native_names(facts: ApiFacts) -> dict[str, str]:
    """Every name of the stable surface as this minor's framework spells it."""
    data_pkg = "fwk" if facts.data_in_fwk else "framework"
    plugin_pkg = "fwk" if facts.plugins_in_fwk else "framework"
    names = {name: f"{data_pkg}.{name}" for name in (*_DATA_TYPES, *_DATA_VALUES)}
    names.update({name: f"{plugin_pkg}.{name}" for name in (*_PLUGIN_TYPES, *_LISTER_TYPES)})
    pointer = "*framework." if data_pkg == "framework" else "fwk."
    names["CycleState"] = f"{pointer}CycleState"
    names["NodeInfo"] = f"{pointer}NodeInfo"
    names["PodInfo"] = f"{pointer}PodInfo"
    names["QueuedInfo"] = {
        QueuedInfo.STRUCT: "*framework.QueuedPodInfo",
        QueuedInfo.POD: "fwk.QueuedPodInfo",
        QueuedInfo.ENTITY: "fwk.QueuedEntityInfo",
    }[facts.queued_info]
    score = "MaxScore" if facts.max_score == "MaxScore" else "MaxNodeScore"
    names["MaxNodeScore"] = f"{plugin_pkg}.{score}"
    names["MinNodeScore"] = f"{plugin_pkg}.{score.replace('Max', 'Min')}"
    postfilter = "NodeToStatusMap" if facts.postfilter_arg is PostFilterArg.MAP else "NodeToStatusReader"
    names["NodeToStatusReader"] = f"{plugin_pkg}.{postfilter}"
    for name, (fact, spellings) in _RENAMED.items():
        names[name] = f"{data_pkg}.{spellings[getattr(facts, fact)]}"
    if not facts.hint_error:  # 1.28: QueueAfterBackoff, not yet Queue
        names["Queue"] = f"{data_pkg}.QueueAfterBackoff"
    if facts.sign_pod:
        names["SignFragment"] = "fwk.SignFragment"
        names["SignPlugin"] = "fwk.SignPlugin"
    if facts.pre_hints:  # ClusterEventWithHint.PreQueueingHintFn (1.37 on)
        names.update({name: f"fwk.{name}" for name in _PRE_HINT_TYPES})
    if facts.prebind_preflight is PreBindPreFlight.RESULT:
        names["PreBindPreFlightResult"] = "fwk.PreBindPreFlightResult"
    if facts.pod_groups is not PodGroups.NONE:
        names.update({name: f"fwk.{name}" for name in _POD_GROUP_TYPES})
        # what ScorePlacement gets: its group's cycle state (1.36), a placement's (1.37 on)
        state = "PodGroupCycleState" if facts.pod_groups is PodGroups.V1ALPHA2 else "PlacementCycleState"
        names["PlacementState"] = f"fwk.{state}"
        levels = list(PodGroups)
        for since, later in _LATER_POD_GROUP_TYPES.items():
            if levels.index(facts.pod_groups) >= levels.index(since):
                names.update({name: f"fwk.{name}" for name in later})
    # k8s.io/kubernetes/pkg/scheduler/framework's own on every minor (gang plugins use them)
    names.update({name: f"framework.{name}" for name in _FRAMEWORK_ALWAYS})
    # Native code calls package-local helpers (rendered into plugin.go with native bodies).
    names.update({helper: helper[0].lower() + helper[1:] for helper in HELPERS})
    return names


def layer_names() -> dict[str, str]:
    """Every name of the stable surface spelled through the generated internal/fw package."""
    every = (
        *_DATA_TYPES,
        *_DATA_VALUES,
        *_PLUGIN_TYPES,
        *HELPERS,
        *LAYER_HELPERS,
        *_RENAMED,
        "CycleState",
        "NodeInfo",
        "PodInfo",
        "QueuedInfo",
        "MaxNodeScore",
        "MinNodeScore",
        "NodeToStatusReader",
        "PreBindPreFlightResult",
        "SignFragment",
        "SignPlugin",
        *_POD_GROUP_TYPES,
        *(name for later in _LATER_POD_GROUP_TYPES.values() for name in later),
        "PlacementState",
        *_PRE_HINT_TYPES,
        *_FRAMEWORK_ALWAYS,
        "SharedLister",
    )
    return {name: f"fw.{name}" for name in every}


def names(facts: ApiFacts, mode: str) -> dict[str, str]:
    return layer_names() if mode == LAYER else native_names(facts)
