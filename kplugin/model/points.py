"""The Scheduling Framework's extension points as kplugin knows them: one table, POINTS,
from which every consumer derives what it needs (spec's validation, the CLI's help, the
configuration's keys, the methods ``add extension-point`` and doctor look for in code,
bench's metric labels, the template's variables and sections).

Adding a point is a member of ExtensionPoint, its row in POINTS and its template
section (``templates/project/templates/sections/<section>.jinja``);
tests/unit/model/test_extension_points.py walks the table against every consumer.

Imported at start-up (the CLI's help, render-config): standard library only, and
NamedTuples, which are cheap to define (see kplugin.model.versions).
"""

from __future__ import annotations

import enum
from typing import NamedTuple

Minor = tuple[int, int]  # (1, 34)


class ExtensionPoint(enum.StrEnum):
    """Scheduling Framework extension points kplugin can generate, in cycle order (the
    rows of POINTS, in the same order): a pod's, then a pod group's.

    ``enqueueextensions`` is not an extension point of the configuration but an optional
    interface (EventsToRegister) that tells the scheduler when to retry rejected pods.
    """

    PRE_ENQUEUE = "preenqueue"
    QUEUE_SORT = "queuesort"
    PRE_FILTER = "prefilter"
    FILTER = "filter"
    POST_FILTER = "postfilter"
    PRE_SCORE = "prescore"
    SCORE = "score"
    RESERVE = "reserve"
    PERMIT = "permit"
    PRE_BIND = "prebind"
    BIND = "bind"
    POST_BIND = "postbind"
    # a pod group's cycle (workload-aware scheduling, 1.36 on)
    PLACEMENT_GENERATE = "placementgenerate"
    PLACEMENT_FEASIBLE = "placementfeasible"
    PLACEMENT_SCORE = "placementscore"
    POD_GROUP_POST_FILTER = "podgrouppostfilter"
    ENQUEUE_EXTENSIONS = "enqueueextensions"

    @property
    def row(self) -> Point:
        return POINTS[self]

    @property
    def config_name(self) -> str | None:
        """The key under ``profiles[].plugins`` in KubeSchedulerConfiguration (None for
        EnqueueExtensions, which has no key of its own)."""
        return POINTS[self].config

    @property
    def go_name(self) -> str:
        """The extension point as the framework's test helpers name it: QueueSort, ..."""
        return POINTS[self].interface.removesuffix("Plugin")

    @property
    def interface(self) -> str:
        """The Go interface a plugin implements for it: FilterPlugin, EnqueueExtensions, ..."""
        return POINTS[self].interface


class Method(NamedTuple):
    """A method of a point's Go interface, with the minors that have it."""

    name: str
    first: str | None = None  # the first minor whose interface has it; None: all kplugin supports
    last: str | None = None  # the last minor that has it; None: still there


class Point(NamedTuple):
    """What kplugin knows of one extension point."""

    # the key under profiles[].plugins of KubeSchedulerConfiguration (None: no key of its own)
    config: str | None
    # the Go interface a plugin implements for it (framework or, from 1.35, fwk)
    interface: str
    # the interface's methods (beyond Plugin's Name), the one that shows a plugin
    # implements the point first
    methods: tuple[Method, ...]
    # the extension_point labels the scheduler records plugin_execution_duration_seconds
    # under for it (kplugin bench), in the order it runs them
    metrics: tuple[str, ...]
    # what it does, in a line
    help: str
    # its template section, templates/project/templates/sections/<section>.jinja, and the
    # files that section has a part of (a macro each; stub_go and stub_test_go are what
    # kplugin add extension-point writes, so every point has them)
    section: str
    parts: tuple[str, ...]
    # the section that tests it in plugin_test.go where its own does not
    tested_in: str | None = None
    # the first and last minor that have it (None: every minor kplugin supports; still there)
    first: str | None = None
    last: str | None = None
    # the configuration gives the plugin a weight here (the framework refuses none)
    weighted: bool = False
    # the feature gates without which the scheduler never calls a plugin here (off by
    # default in every minor that has them)
    gates: tuple[str, ...] = ()
    # kplugin new's default points
    default: bool = False
    # the sample plugin reads its Args (a label and a resource) here
    sample_args: bool = False
    # the sample plugin reads the pod's demand of the resource here; keeps it in CycleState
    # for the rest of the cycle here (worked out once per cycle: see the demand section)
    demand: bool = False
    state: bool = False
    # it rejects pods, and the scheduler retries them on the events EventsToRegister names
    rejects: bool = False
    # a plugin here must sign pods (SignPod) for the scheduler to batch them (1.35 on)
    signs: bool = False
    # what the framework calls on the interfaces the methods hand out (ScoreExtensions'
    # NormalizeScore, ...): with the methods, the names a CPU profile's frames have here
    calls: tuple[str, ...] = ()


_STUBS = ("stub_go", "stub_test_go")
# The scheduler runs a pod group's cycle with GenericWorkload on, and generates and scores
# placements only with TopologyAwareWorkloadScheduling on too (podGroupSchedulingAlgorithm
# in pkg/scheduler of 1.36 to 1.38; both gates off by default there).
GENERIC_WORKLOAD = "GenericWorkload"  # the PodGroup API and the pod-group cycle
GATES_PLACEMENT = (GENERIC_WORKLOAD, "TopologyAwareWorkloadScheduling")
# gang scheduling's own gate in the minors that have one (ApiFacts.gang_gate: 1.35-1.36);
# from 1.37 GenericWorkload alone adds the in-tree GangScheduling plugin
GANG_SCHEDULING = "GangScheduling"
# The minors whose kube_features.go knows each gate kplugin turns on (first, last; None:
# still there): a gate a minor does not know stops its kube-scheduler at start
# ("unrecognized feature gate"), as a Deployment kept from an older minor may carry.
GATE_MINORS: dict[str, tuple[str, str | None]] = {
    GENERIC_WORKLOAD: ("1.35", None),
    "TopologyAwareWorkloadScheduling": ("1.36", None),
    GANG_SCHEDULING: ("1.35", "1.36"),
    "SchedulerPreQueueingHints": ("1.37", None),
}


def gate_known(gate: str, minor: tuple[int, int]) -> bool:
    """Whether a minor's components know a gate kplugin manages (one it does not manage:
    assumed known, kube-scheduler says otherwise)."""
    if gate not in GATE_MINORS:
        return True
    first, last = GATE_MINORS[gate]
    return parse_minor(first) <= minor and (last is None or minor <= parse_minor(last))


_OWN = ("plugin_go", "plugin_test_go")

_E = ExtensionPoint
POINTS: dict[ExtensionPoint, Point] = {
    _E.PRE_ENQUEUE: Point(
        config="preEnqueue",
        interface="PreEnqueuePlugin",
        methods=(Method("PreEnqueue"),),
        metrics=("PreEnqueue",),
        help="keep a pod out of the scheduling queue until it may be scheduled",
        section="preenqueue",
        parts=(*_OWN, *_STUBS),
        rejects=True,
    ),
    _E.QUEUE_SORT: Point(
        config="queueSort",
        interface="QueueSortPlugin",
        methods=(Method("Less"),),
        metrics=("QueueSort",),
        help="order the pods waiting in the queue",
        section="queuesort",
        parts=(*_OWN, *_STUBS),
    ),
    _E.PRE_FILTER: Point(
        config="preFilter",
        interface="PreFilterPlugin",
        methods=(Method("PreFilter"), Method("PreFilterExtensions")),
        calls=("AddPod", "RemovePod"),
        metrics=("PreFilter", "PreFilterExtensionAddPod", "PreFilterExtensionRemovePod"),
        help="check the pod and compute what Filter needs, once per cycle",
        section="prefilter",
        parts=(*_OWN, "adapter_go", *_STUBS),
        sample_args=True,
        default=True,
        demand=True,
        state=True,
        rejects=True,
        signs=True,
    ),
    _E.FILTER: Point(
        config="filter",
        interface="FilterPlugin",
        methods=(Method("Filter"),),
        metrics=("Filter",),
        help="rule out the nodes that cannot run the pod",
        section="filter",
        parts=(*_OWN, *_STUBS),
        default=True,
        sample_args=True,
        demand=True,
        state=True,
        rejects=True,
        signs=True,
    ),
    _E.POST_FILTER: Point(
        config="postFilter",
        interface="PostFilterPlugin",
        methods=(Method("PostFilter"),),
        metrics=("PostFilter",),
        help="make a pod no node fits schedulable (preemption)",
        section="postfilter",
        parts=(*_OWN, "adapter_go", *_STUBS),
    ),
    _E.PRE_SCORE: Point(
        config="preScore",
        interface="PreScorePlugin",
        methods=(Method("PreScore"),),
        metrics=("PreScore",),
        help="compute what Score needs, once per cycle",
        section="prescore",
        parts=(*_OWN, "adapter_go", *_STUBS),
        sample_args=True,
        default=True,
        demand=True,
        state=True,
        signs=True,
    ),
    _E.SCORE: Point(
        config="score",
        interface="ScorePlugin",
        methods=(Method("Score"), Method("ScoreExtensions")),
        calls=("NormalizeScore",),
        metrics=("Score", "ScoreExtensionNormalize"),
        help="rank the feasible nodes",
        section="score",
        parts=(*_OWN, "adapter_go", *_STUBS),
        default=True,
        sample_args=True,
        demand=True,
        state=True,
        signs=True,
        weighted=True,
    ),
    _E.RESERVE: Point(
        config="reserve",
        interface="ReservePlugin",
        methods=(Method("Reserve"), Method("Unreserve")),
        metrics=("Reserve", "Unreserve"),
        help="hold resources for the pod on its node, and release them if it fails",
        section="reserve",
        parts=("plugin_go", *_STUBS),
        tested_in="bindingcycle",
        rejects=True,
    ),
    _E.PERMIT: Point(
        config="permit",
        interface="PermitPlugin",
        methods=(Method("Permit"),),
        metrics=("Permit",),
        help="approve, deny or delay the pod's binding",
        section="permit",
        parts=("plugin_go", *_STUBS),
        tested_in="bindingcycle",
        sample_args=True,
        rejects=True,
    ),
    _E.PRE_BIND: Point(
        config="preBind",
        interface="PreBindPlugin",
        methods=(Method("PreBindPreFlight", first="1.34"), Method("PreBind")),
        metrics=("PreBindPreFlight", "PreBind"),
        help="prepare the node before the pod is bound",
        section="prebind",
        parts=("plugin_go", "adapter_go", *_STUBS),
        tested_in="bindingcycle",
        sample_args=True,
        demand=True,
    ),
    _E.BIND: Point(
        config="bind",
        interface="BindPlugin",
        methods=(Method("Bind"),),
        metrics=("Bind",),
        help="bind the pod to its node",
        section="bind",
        parts=("plugin_go", *_STUBS),
        tested_in="bindingcycle",
    ),
    _E.POST_BIND: Point(
        config="postBind",
        interface="PostBindPlugin",
        methods=(Method("PostBind"),),
        metrics=("PostBind",),
        help="learn that the pod was bound",
        section="postbind",
        parts=("plugin_go", *_STUBS),
        tested_in="bindingcycle",
    ),
    _E.PLACEMENT_GENERATE: Point(
        config="placementGenerate",
        interface="PlacementGeneratePlugin",
        methods=(Method("GeneratePlacements"),),
        metrics=("PlacementGenerate",),
        help="split the nodes into the placements a pod group may take",
        section="placementgenerate",
        parts=(*_OWN, *_STUBS),
        first="1.36",
        gates=GATES_PLACEMENT,
    ),
    _E.PLACEMENT_FEASIBLE: Point(
        config="placementFeasible",
        interface="PlacementFeasiblePlugin",
        methods=(Method("PlacementFeasible"),),
        metrics=("PlacementFeasible",),
        help="decide, pod by pod, whether a placement can still take the pod group",
        section="placementfeasible",
        parts=(*_OWN, *_STUBS),
        first="1.38",
        gates=(GENERIC_WORKLOAD,),
    ),
    _E.PLACEMENT_SCORE: Point(
        config="placementScore",
        interface="PlacementScorePlugin",
        methods=(Method("ScorePlacement"), Method("PlacementScoreExtensions")),
        calls=("NormalizePlacementScore",),
        metrics=("PlacementScore", "PlacementScoreExtensionNormalize"),
        help="rank the placements a pod group fits",
        section="placementscore",
        parts=(*_OWN, *_STUBS),
        first="1.36",
        weighted=True,
        gates=GATES_PLACEMENT,
    ),
    _E.POD_GROUP_POST_FILTER: Point(
        config="podGroupPostFilter",
        interface="PodGroupPostFilterPlugin",
        methods=(Method("PodGroupPostFilter"),),
        metrics=("PodGroupPostFilter",),
        help="make a pod group no placement fits schedulable (group preemption), or say why not",
        section="podgrouppostfilter",
        parts=(*_OWN, *_STUBS),
        first="1.37",
        gates=(GENERIC_WORKLOAD,),
    ),
    _E.ENQUEUE_EXTENSIONS: Point(
        config=None,
        interface="EnqueueExtensions",
        methods=(Method("EventsToRegister"),),
        metrics=(),
        help="name the events on which the scheduler retries the pods the plugin rejected",
        section="enqueueextensions",
        parts=(*_OWN, "adapter_go", *_STUBS),
    ),
}
if tuple(POINTS) != tuple(ExtensionPoint):  # pragma: no cover - a row missing or out of order
    raise AssertionError("kplugin.model.points: POINTS must have a row per ExtensionPoint, in its order")


def where(flag: str) -> tuple[ExtensionPoint, ...]:
    """The points whose row has ``flag`` (a bool field of Point) set, in cycle order."""
    return tuple(p for p, row in POINTS.items() if getattr(row, flag))


def words() -> str:
    """Every point as the command line spells it: 'preenqueue, queuesort, ...'."""
    return ", ".join(ExtensionPoint)


def available_words(minor: Minor) -> str:
    """Every point the minor has, as --extension-points takes them: 'preenqueue,...'."""
    return ",".join(p for p in ExtensionPoint if available(p, minor))


def default_words() -> str:
    """kplugin new's default points as the command line spells them: 'prefilter,filter,prescore,score'."""
    return ",".join(where("default"))


def parse_minor(minor: str) -> Minor:
    major, _, rest = minor.partition(".")
    return int(major), int(rest)


def _within(first: str | None, last: str | None, minor: Minor) -> bool:
    return (first is None or parse_minor(first) <= minor) and (last is None or minor <= parse_minor(last))


def available(point: ExtensionPoint, minor: Minor) -> bool:
    """The point exists in this Kubernetes minor."""
    row = POINTS[point]
    return _within(row.first, row.last, minor)


def span(point: ExtensionPoint) -> str:
    """The minors that have the point: '1.36 and later'."""
    row = POINTS[point]
    if row.first and row.last:
        return f"{row.first} to {row.last}"
    if row.first or row.last:
        return f"{row.first} and later" if row.first else f"{row.last} and earlier"
    return "every version"


def methods(point: ExtensionPoint, minor: Minor) -> tuple[str, ...]:
    """The methods of the point's interface in this minor."""
    return tuple(m.name for m in POINTS[point].methods if _within(m.first, m.last, minor))


def method(point: ExtensionPoint) -> str:
    """The method that shows a plugin's code implements the point (on every minor)."""
    return next(m.name for m in POINTS[point].methods if m.first is None and m.last is None)


def metric_labels() -> tuple[str, ...]:
    """plugin_execution_duration_seconds' extension_point labels, in the order a
    scheduling cycle records them."""
    return tuple(label for row in POINTS.values() for label in row.metrics)


def template_flags() -> dict[str, bool]:
    """The template's variable per point (cookiecutter.json): true for the default points."""
    return {str(p): row.default for p, row in POINTS.items()}


def gates(chosen: tuple[ExtensionPoint, ...]) -> tuple[str, ...]:
    """The feature gates the scheduler needs on for plugins at these points, sorted."""
    return tuple(sorted({gate for p in chosen for gate in POINTS[p].gates}))


def minor_gates(gates: tuple[str, ...], gang_gate: bool) -> tuple[str, ...]:
    """The gates as a minor needs them, sorted: where gang scheduling has a gate of its own
    (``gang_gate``), GenericWorkload brings it, so that a PodGroup's gang policy holds its
    pods as it does from 1.37 (without it a 1.36 scheduler places a gang's pods as they
    come, a group of whichever are queued)."""
    extra = {GANG_SCHEDULING} if gang_gate and GENERIC_WORKLOAD in gates else set()
    return tuple(sorted({*gates, *extra}))
