"""KubeSchedulerConfiguration for a project: the one rendering behind deploy/, the Helm
chart's values and ``kplugin render-config``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplugin.spec import ExtensionPoint, PluginSpec

CONFIG_GROUP = "kubescheduler.config.k8s.io"
LEASE_NAMESPACE = "kube-system"
DEFAULT_QUEUE_SORT = "PrioritySort"


@dataclass(frozen=True)
class SchedulerConfig:
    """Inputs of one rendered configuration."""

    scheduler_name: str
    plugins: tuple[PluginSpec, ...]
    api_version: str = "v1"
    leader_elect: bool = True
    weights: dict[str, int] = field(default_factory=dict)
    args: dict[str, dict[str, Any]] = field(default_factory=dict)
    kubeconfig: str | None = None

    def document(self) -> dict[str, Any]:
        plugins: dict[str, Any] = {}
        for point in ExtensionPoint:
            enabled = []
            for plugin in self.plugins:
                if plugin.has(point):
                    entry: dict[str, Any] = {"name": plugin.name}
                    if point is ExtensionPoint.SCORE:
                        entry["weight"] = self.weights.get(plugin.name, 1)
                    enabled.append(entry)
            if enabled:
                plugins[point.config_name] = {"enabled": enabled}
                if point is ExtensionPoint.QUEUE_SORT:
                    # Exactly one QueueSort plugin may be enabled.
                    plugins[point.config_name]["disabled"] = [{"name": DEFAULT_QUEUE_SORT}]
        profile: dict[str, Any] = {"schedulerName": self.scheduler_name, "plugins": plugins}
        plugin_config = [
            {"name": plugin.name, "args": self.args[plugin.name]} for plugin in self.plugins if plugin.name in self.args
        ]
        if plugin_config:
            profile["pluginConfig"] = plugin_config
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
        doc["profiles"] = [profile]
        return doc
