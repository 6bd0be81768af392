"""KubeSchedulerConfiguration for a project: the one rendering behind deploy/, the Helm
chart's values and ``kplugin render-config``."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from kplugin.model.spec import NODE_REJECTIONS_PLUGIN, ExtensionPoint, PluginSpec

CONFIG_GROUP = "kubescheduler.config.k8s.io"
LEASE_NAMESPACE = "kube-system"
DEFAULT_QUEUE_SORT = "PrioritySort"
DEFAULT_BINDER = "DefaultBinder"
# the default profile's generator with TopologyAwareWorkloadScheduling on (1.36 on)
DEFAULT_PLACEMENT_GENERATOR = "TopologyPlacementGenerator"
# the default profile's preemption, a PodGroupPostFilter plugin too (1.37 on)
DEFAULT_PREEMPTION = "DefaultPreemption"
DEFAULT_LEASE = "kube-scheduler"
MAX_WEIGHT = 2**31 - 1


@dataclass(frozen=True)
class SchedulerConfig:
    """Inputs of one rendered configuration: one profile per scheduler name."""

    scheduler_names: tuple[str, ...]
    plugins: tuple[PluginSpec, ...]
    api_version: str = "v1"
    leader_elect: bool = True
    weights: dict[str, int] = field(default_factory=dict)
    args: dict[str, dict[str, Any]] = field(default_factory=dict)
    multipoint: bool = False
    disable_default: tuple[str, ...] = ()
    percentage_of_nodes_to_score: int | None = None
    kubeconfig: str | None = None
    # kplugin's reporting plugin, first at PostFilter (kplugin e2e: the project's binary has it)
    node_rejections: bool = False

    @property
    def scheduler_name(self) -> str:
        """The first profile's name, which also names the lease."""
        return self.scheduler_names[0]

    def plugins_section(self) -> dict[str, Any]:
        plugins: dict[str, Any] = {}
        # Exactly one QueueSort plugin may be enabled; the first Bind plugin that does not
        # Skip binds, and defaults come first: ours replace PrioritySort and DefaultBinder.
        replaced = {
            point: default
            for point, default in (
                (ExtensionPoint.QUEUE_SORT, DEFAULT_QUEUE_SORT),
                (ExtensionPoint.BIND, DEFAULT_BINDER),
                # 1.36 and 1.37 take one generator (1.38 would intersect them): ours only
                (ExtensionPoint.PLACEMENT_GENERATE, DEFAULT_PLACEMENT_GENERATOR),
            )
            if any(p.has(point) for p in self.plugins)
        }
        # Defaults kept, but after ours. The framework runs a multiPoint default before the
        # plugins enabled at the point alone (expandMultiPointPlugins, 1.37 and 1.38), and at
        # PodGroupPostFilter 1.37's DefaultPreemption returns UnschedulableAndUnresolvable
        # when it finds no victims, which ends the chain: ours would never run. Disabled
        # there and enabled again after ours, it runs after them. (1.38's returns
        # Unschedulable there; its DynamicResources, another default at the point, still
        # runs first.)
        after = {
            point: default
            for point, default in ((ExtensionPoint.POD_GROUP_POST_FILTER, DEFAULT_PREEMPTION),)
            if any(p.has(point) for p in self.plugins) and default not in self.disable_default
        }
        if self.multipoint:
            enabled = []
            for plugin in self.plugins:
                entry: dict[str, Any] = {"name": plugin.name}
                if plugin.weighted:
                    entry["weight"] = self.weights.get(plugin.name, 1)
                enabled.append(entry)
            plugins["multiPoint"] = {"enabled": enabled}
            for point, default in replaced.items():
                plugins[str(point.config_name)] = {"disabled": [{"name": default}]}
            for point, default in after.items():
                ours = [{"name": p.name} for p in self.plugins if p.has(point)]
                plugins[str(point.config_name)] = {
                    "enabled": [*ours, {"name": default}],
                    "disabled": [{"name": default}],
                }
        else:
            for point in ExtensionPoint:
                if point.config_name is None:
                    continue
                enabled = []
                for plugin in self.plugins:
                    if plugin.has(point):
                        entry = {"name": plugin.name}
                        if point.row.weighted:
                            entry["weight"] = self.weights.get(plugin.name, 1)
                        enabled.append(entry)
                if enabled:
                    plugins[point.config_name] = {"enabled": enabled}
                    if point in replaced:
                        plugins[point.config_name]["disabled"] = [{"name": replaced[point]}]
                    if point in after:
                        enabled.append({"name": after[point]})
                        plugins[point.config_name]["disabled"] = [{"name": after[point]}]
        if self.disable_default:
            multi = plugins.setdefault("multiPoint", {})
            multi["disabled"] = [{"name": name} for name in self.disable_default]
        if self.node_rejections:
            # enabled in multiPoint and at the point itself, it is an override, which the
            # framework runs before the multiPoint plugins and the point's own
            # (expandMultiPointPlugins, 1.28-1.38): it reports even where preemption, after
            # it, nominates a node
            for section in ("multiPoint", str(ExtensionPoint.POST_FILTER.config_name)):
                enabled = plugins.setdefault(section, {}).setdefault("enabled", [])
                enabled.insert(0, {"name": NODE_REJECTIONS_PLUGIN})
        return plugins

    def plugin_config(self) -> list[dict[str, Any]]:
        # fresh copies: a document shares no objects, so YAML writes no anchors
        return [
            {"name": plugin.name, "args": copy.deepcopy(self.args[plugin.name])}
            for plugin in self.plugins
            if plugin.name in self.args
        ]

    def profile(self, scheduler_name: str) -> dict[str, Any]:
        profile: dict[str, Any] = {"schedulerName": scheduler_name, "plugins": self.plugins_section()}
        plugin_config = self.plugin_config()
        if plugin_config:
            profile["pluginConfig"] = plugin_config
        return profile

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "apiVersion": f"{CONFIG_GROUP}/{self.api_version}",
            "kind": "KubeSchedulerConfiguration",
        }
        if self.kubeconfig:
            doc["clientConnection"] = {"kubeconfig": self.kubeconfig}
        doc["leaderElection"] = (
            {
                "leaderElect": True,
                "resourceName": self.scheduler_name,
                "resourceNamespace": LEASE_NAMESPACE,
            }
            if self.leader_elect
            else {"leaderElect": False}
        )
        if self.percentage_of_nodes_to_score is not None:
            doc["percentageOfNodesToScore"] = self.percentage_of_nodes_to_score
        doc["profiles"] = [self.profile(name) for name in self.scheduler_names]
        return doc
