"""Which parts a generated plugin is made of, and in which order.

Each part lives in one template file, ``templates/project/templates/sections/<part>.jinja``,
with a macro per file it contributes to: ``plugin_go`` (the user's plugin.go),
``plugin_test_go`` (its tests), ``adapter_go`` (zz_generated.adapter.go, --api layer),
``stub_go`` and ``stub_test_go`` (what kplugin add extension-point writes). The files
themselves are loops over the parts listed here, so that which parts appear, for which
extension points, API mode and Kubernetes minor, is decided in one place: this data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kplugin.model.apifacts import ApiFacts, PreBindPreFlight, PreScoreNodes, ScoreNodeArg
from kplugin.model.goapi import NATIVE, ApiMode
from kplugin.model.points import POINTS, where
from kplugin.model.spec import SIGNING_POINTS, ExtensionPoint, PluginSpec

E = ExtensionPoint


@dataclass(frozen=True)
class Shape:
    """What decides a plugin's parts."""

    plugin: PluginSpec
    facts: ApiFacts
    api: ApiMode

    def has(self, *points: ExtensionPoint) -> bool:
        return any(self.plugin.has(p) for p in points)

    @property
    def native(self) -> bool:
        return self.api == NATIVE

    @property
    def uses_state(self) -> bool:
        """The pod's demand is kept in CycleState (PreFilter, Filter, PreScore or Score)."""
        return self.has(*where("state"))

    @property
    def uses_demand(self) -> bool:
        """Some point reads the pod's demand of the configured resource."""
        return self.has(*where("demand"))

    @property
    def signs(self) -> bool:
        """The plugin signs pods (SignPod): it is at a point whose plugins must all sign for
        batching, and it is written through internal/fw or for a minor that has SignPod."""
        return self.has(*SIGNING_POINTS) and (not self.native or self.facts.sign_pod)

    @property
    def lists_nodes(self) -> bool:
        """The adapter passes PreFilter the snapshot's nodes (before 1.34)."""
        return self.plugin.has(E.PRE_FILTER) and not self.facts.prefilter_nodes

    @property
    def converts_nodes(self) -> bool:
        """The adapter turns PreScore's []*v1.Node into NodeInfos (before 1.30)."""
        return self.plugin.has(E.PRE_SCORE) and self.facts.prescore_nodes is PreScoreNodes.NODES

    @property
    def looks_up_node(self) -> bool:
        """The adapter looks the node up by name for Score (before 1.33)."""
        return self.plugin.has(E.SCORE) and self.facts.score_node_arg is ScoreNodeArg.NODE_NAME


Rule = Callable[[Shape], bool]


def point(p: ExtensionPoint, rule: Rule | None = None) -> tuple[str, Rule]:
    """The point's own section (the table's), where the plugin has the point (or where
    ``rule`` holds)."""
    return POINTS[p].section, rule or (lambda s: s.plugin.has(p))


def tested_in(section: str) -> Rule:
    """A shared test section: where the plugin has a point the table tests there."""
    return lambda s: s.has(*(p for p, row in POINTS.items() if row.tested_in == section))


# plugin.go, in order: the extension points' methods, and the shared parts where they
# first serve
PLUGIN_GO: tuple[tuple[str, Rule], ...] = (
    point(E.PRE_ENQUEUE),
    point(E.QUEUE_SORT),
    ("state", lambda s: s.uses_state),
    point(E.PRE_FILTER),
    ("demand", lambda s: s.uses_state),
    ("free", lambda s: s.uses_demand),
    point(E.FILTER),
    point(E.POST_FILTER),
    point(E.PRE_SCORE),
    point(E.SCORE),
    point(E.RESERVE),
    point(E.PERMIT),
    point(E.PRE_BIND),
    point(E.BIND),
    point(E.POST_BIND),
    point(E.PLACEMENT_GENERATE),
    point(E.PLACEMENT_FEASIBLE),
    point(E.PLACEMENT_SCORE),
    point(E.POD_GROUP_POST_FILTER),
    point(E.ENQUEUE_EXTENSIONS),
    ("sign", lambda s: s.signs),
    # the hints of EventsToRegister count requests too
    ("podrequest", lambda s: s.uses_demand or (s.plugin.has(E.ENQUEUE_EXTENSIONS) and s.plugin.args)),
    ("nativehelpers", lambda s: s.native),
)
PLUGIN_TEST_GO: tuple[tuple[str, Rule], ...] = (
    ("args", lambda s: s.plugin.args),
    point(E.PRE_ENQUEUE),
    point(E.FILTER),
    point(E.PRE_FILTER),
    point(E.POST_FILTER),
    point(E.PRE_SCORE),
    point(E.SCORE),
    ("demand", lambda s: s.has(E.FILTER, E.SCORE)),
    ("bindingcycle", tested_in("bindingcycle")),
    point(E.QUEUE_SORT),
    point(E.PLACEMENT_GENERATE),
    point(E.PLACEMENT_FEASIBLE),
    point(E.PLACEMENT_SCORE),
    point(E.POD_GROUP_POST_FILTER),
    point(E.ENQUEUE_EXTENSIONS),
    ("sign", lambda s: s.signs),
)
# the adapter translates only where the minor's interfaces differ from internal/fw's
ADAPTER_GO: tuple[tuple[str, Rule], ...] = (
    point(E.PRE_FILTER, lambda s: s.lists_nodes),
    point(E.POST_FILTER),
    point(E.PRE_SCORE, lambda s: s.converts_nodes),
    point(E.SCORE, lambda s: s.looks_up_node),
    point(E.PRE_BIND, lambda s: s.plugin.has(E.PRE_BIND) and s.facts.prebind_preflight is not PreBindPreFlight.RESULT),
    # the events' hints are internal/fw's own type, converted for the minor (fw.NativeEvents)
    point(E.ENQUEUE_EXTENSIONS),
    ("sign", lambda s: s.signs and s.facts.sign_pod),
)


def native_helpers(shape: Shape) -> list[str]:
    """The helpers a --api native plugin.go carries itself (internal/fw has them for the layer)."""
    helpers = []
    if shape.uses_demand:
        helpers += ["Allocatable", "Requested", "PodRequests"]
    if shape.plugin.has(E.QUEUE_SORT):
        helpers += ["QueuedPriority", "QueuedSince"]
    if shape.plugin.has(E.POST_FILTER):
        helpers += ["ListNodes"]
    if shape.has(E.PERMIT, E.PRE_BIND) or shape.looks_up_node:
        helpers += ["LookupNode"]
    if shape.plugin.has(E.ENQUEUE_EXTENSIONS):
        helpers += ["NodeChange", "PodChange"]
    if shape.has(E.PLACEMENT_GENERATE, E.POD_GROUP_POST_FILTER):
        helpers += ["PodGroupPods"]
    if (shape.plugin.has(E.ENQUEUE_EXTENSIONS) and shape.plugin.args) and not shape.uses_demand:
        helpers += ["PodRequests"]
    return helpers


def plugin_parts(plugin: PluginSpec, facts: ApiFacts, api: ApiMode) -> dict[str, Any]:
    """The template context that says which parts the plugin's files are made of."""
    shape = Shape(plugin, facts, api)
    files = (("plugin_go", PLUGIN_GO), ("plugin_test_go", PLUGIN_TEST_GO), ("adapter_go", ADAPTER_GO))
    return {
        "_uses_state": shape.uses_state,
        "_uses_demand": shape.uses_demand,
        "_lists_nodes": shape.lists_nodes,
        "_converts_nodes": shape.converts_nodes,
        "_looks_up_node": shape.looks_up_node,
        "_adapter_handle": shape.lists_nodes or shape.converts_nodes or shape.looks_up_node,
        "_native_helpers": native_helpers(shape),
        "_sections": {name: [part for part, rule in rules if rule(shape)] for name, rules in files},
    }
