"""What changes in the scheduling framework's API from one Kubernetes minor to the next,
as typed facts: one frozen ApiFacts per minor, read from the catalog (where
kplugin.maintainer.catalog's FACTS timeline writes them, each checked against that
minor's sources). Everything that differs between minors is decided from these."""

from __future__ import annotations

import enum
from typing import Any, NamedTuple


class FwkSplit(enum.StrEnum):
    """Where the framework's types live: all in k8s.io/kubernetes/pkg/scheduler/framework
    (up to 1.33), data types in k8s.io/kube-scheduler/framework (1.34), plugin
    interfaces too (1.35 on)."""

    NONE = "none"
    TYPES = "types"
    PLUGINS = "plugins"


class PreScoreNodes(enum.StrEnum):
    NODES = "nodes"  # []*v1.Node
    NODE_INFOS = "nodeinfos"


class PostFilterArg(enum.StrEnum):
    MAP = "map"  # NodeToStatusMap
    READER = "reader"  # NodeToStatusReader


class ScoreNodeArg(enum.StrEnum):
    NODE_NAME = "nodeName"
    NODE_INFO = "nodeInfo"


class PreBindPreFlight(enum.StrEnum):
    NONE = "none"
    STATUS = "status"  # returns *Status
    RESULT = "result"  # returns (*PreBindPreFlightResult, *Status)


class QueuedInfo(enum.StrEnum):
    STRUCT = "struct"  # *framework.QueuedPodInfo
    POD = "pod"  # fwk.QueuedPodInfo (interface)
    ENTITY = "entity"  # fwk.QueuedEntityInfo (pods or pod groups)


class PodRequests(enum.StrEnum):
    KUBERNETES = "kubernetes"  # k8s.io/kubernetes/pkg/api/v1/resource
    COMPONENT_HELPERS = "component-helpers"  # k8s.io/component-helpers/resource


class DeepcopyFlags(enum.StrEnum):
    GENGO = "gengo"  # --input-dirs, --output-base, -O
    GENGO_V2 = "gengo-v2"  # --output-file and package patterns


class QueueingHints(enum.StrEnum):
    """Whether the scheduling queue consults plugins' QueueingHintFns by default
    (feature gate SchedulerQueueingHints, read from each minor's kube_features.go)."""

    OFF = "off"  # hints ignored: a rejected pod is retried on every registered event
    BETA_ON = "beta-on"  # on by default, can be turned off
    GA = "ga"  # locked on (1.34-1.36)
    ALWAYS = "always"  # gate removed (1.37)


class PreQueueingHints(enum.StrEnum):
    """Whether the scheduling queue calls plugins' PreQueueingHintFns (feature gate
    SchedulerPreQueueingHints, read from each minor's kube_features.go): once per event,
    before any QueueingHint, to name the rejected pods the event concerns."""

    NONE = "none"  # no such field in ClusterEventWithHint (up to 1.36)
    ALPHA_OFF = "alpha-off"  # the field exists; the gate is alpha and off by default (1.37)
    BETA_ON = "beta-on"  # on by default (1.38)


class PodGroups(enum.StrEnum):
    """The pod-group cycle's API (workload-aware scheduling): the PlacementGenerate and
    PlacementScore points, and how a PodGroupInfo is made (read in each minor's
    k8s.io/kube-scheduler/framework and pkg/scheduler/framework)."""

    NONE = "none"  # no pod-group cycle (up to 1.35)
    # 1.36: ScorePlacement gets the PodGroupCycleState; the in-tree PodGroupInfo is
    # {Namespace, Name, UnscheduledPods}; PodGroups are scheduling.k8s.io/v1alpha2
    V1ALPHA2 = "v1alpha2"
    # 1.37: ScorePlacement gets a PlacementCycleState (SetPodGroupSchedulingCycle links it
    # to its group's); PodGroupInfo carries the v1beta1 PodGroup, which its pods need
    V1BETA1 = "v1beta1"
    # 1.38: PodGroupInfo embeds fwk.GenericPodGroup; GetAllUnscheduledPods,
    # SetPodGroupCycleState
    GENERIC = "generic"


class ApiFacts(NamedTuple):
    """The framework API of one Kubernetes minor, as the templates need it (a NamedTuple:
    see kplugin.model.versions for why)."""

    templates: bool
    factory_ctx: bool
    testing_import: str
    prescore_nodes: PreScoreNodes
    prefilter_results: int
    events_ctx: bool
    postfilter_arg: PostFilterArg
    status_plugin: str  # the Status method naming its plugin: FailedPlugin (1.28), Plugin
    # NewFramework needs WithWaitingPods (1.31 on), or Permit's Wait and the waiting pods fail
    waiting_pods_option: bool
    score_node_arg: ScoreNodeArg
    fwk_split: FwkSplit
    prefilter_nodes: bool
    prebind_preflight: PreBindPreFlight
    queued_info: QueuedInfo
    max_score: str
    permit_results: int
    pod_requests: PodRequests
    deepcopy_tool: str
    # the code-generator that writes a project's clientset, listers and informers ("": the
    # minor's own), and its flags
    clients_tool: str
    clients_flags: DeepcopyFlags
    # QueueingHintFn returns (QueueingHint, error) and the hints are Queue/QueueSkip (1.29
    # on); 1.28's returns a QueueingHint only, with QueueAfterBackoff/QueueImmediately
    hint_error: bool
    queueing_hints: QueueingHints  # at the minor's newest patches (see at_patch)
    # the last patch that had the gate on by default where queueing_hints is off (1.28.4),
    # or -1
    hints_on_through_patch: int
    # fwk.SignPlugin (SignPod, KEP-5598 opportunistic batching) exists (1.35 on)
    sign_pod: bool
    # the pod-group cycle's API: PlacementGenerate and PlacementScore (1.36 on)
    pod_groups: PodGroups
    # gang scheduling has a gate of its own, GangScheduling (1.35-1.36, off by default);
    # from 1.37 GenericWorkload turns it on
    gang_gate: bool
    # ClusterEventWithHint.PreQueueingHintFn, and whether the queue calls it by default
    pre_queueing_hints: PreQueueingHints

    @classmethod
    def from_catalog(cls, entry: dict[str, Any]) -> ApiFacts:
        """The facts of a catalog entry; every field must be there (the catalog script
        writes them all for every minor)."""
        values = {}
        for name, annotation in cls.__annotations__.items():
            spelled = getattr(annotation, "__forward_arg__", annotation)  # a string under PEP 563
            kind = spelled if isinstance(spelled, type) else _TYPES[str(spelled)]
            values[name] = kind(entry[name])
        return cls(**values)

    def as_context(self) -> dict[str, Any]:
        """Plain values, for template contexts (cookiecutter's JSON-able context)."""
        return {name: (str(value) if isinstance(value, enum.Enum) else value) for name, value in self._asdict().items()}

    @property
    def data_in_fwk(self) -> bool:
        """Status, CycleState, NodeInfo... are k8s.io/kube-scheduler/framework's."""
        return self.fwk_split is not FwkSplit.NONE

    @property
    def plugins_in_fwk(self) -> bool:
        """Plugin interfaces, Handle, NodeScoreList... are k8s.io/kube-scheduler/framework's."""
        return self.fwk_split is FwkSplit.PLUGINS

    def at_patch(self, patch: int) -> ApiFacts:
        """The facts of one patch of the minor: the catalog's are its newest patch's, and
        one differs in earlier patches (the queue's hints were on in 1.28.0-1.28.4)."""
        if self.queueing_hints is QueueingHints.OFF and patch <= self.hints_on_through_patch:
            return self._replace(queueing_hints=QueueingHints.BETA_ON)
        return self

    @property
    def hints_on_by_default(self) -> bool:
        return self.queueing_hints is not QueueingHints.OFF

    @property
    def pre_hints(self) -> bool:
        """ClusterEventWithHint has PreQueueingHintFn (1.37 on)."""
        return self.pre_queueing_hints is not PreQueueingHints.NONE

    @property
    def pre_hints_gate(self) -> str | None:
        """The feature gate the scheduler needs on to call PreQueueingHintFns, where it is
        off by default (1.37); None where they are called by default or do not exist."""
        return PRE_QUEUEING_HINTS_GATE if self.pre_queueing_hints is PreQueueingHints.ALPHA_OFF else None


_TYPES: dict[str, Any] = {
    "bool": bool,
    "int": int,
    "str": str,
    "PreScoreNodes": PreScoreNodes,
    "PostFilterArg": PostFilterArg,
    "ScoreNodeArg": ScoreNodeArg,
    "FwkSplit": FwkSplit,
    "PreBindPreFlight": PreBindPreFlight,
    "QueuedInfo": QueuedInfo,
    "PodRequests": PodRequests,
    "DeepcopyFlags": DeepcopyFlags,
    "QueueingHints": QueueingHints,
    "PodGroups": PodGroups,
    "PreQueueingHints": PreQueueingHints,
}

# the gate of PreQueueingHintFns (pkg/features/kube_features.go, 1.37 on)
PRE_QUEUEING_HINTS_GATE = "SchedulerPreQueueingHints"


# the group of the workload-aware scheduling API (PodGroup, Workload)
SCHEDULING_GROUP = "scheduling.k8s.io"


def pod_group_api(facts: ApiFacts) -> str | None:
    """The API version that serves PodGroups in the minor (off unless kube-apiserver turns
    it on): scheduling.k8s.io/v1alpha2 in 1.36, v1beta1 from 1.37; None before 1.36
    (storage_scheduling.go and controlplane/instance.go of each minor)."""
    if facts.pod_groups is PodGroups.NONE:
        return None
    return f"{SCHEDULING_GROUP}/{'v1alpha2' if facts.pod_groups is PodGroups.V1ALPHA2 else 'v1beta1'}"
