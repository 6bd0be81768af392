"""An adopted repository's KubeSchedulerConfiguration as a run uses it (kplugin e2e and
bench): the first recorded file in an apiVersion the version serves, with one profile
(the one the repository names its scheduler with), leader election off, no extenders,
and the run's own connection; for bench's baseline, the same profile with the
repository's plugins left out."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from kplugin.config import render
from kplugin.core.errors import UsageError
from kplugin.model import layout
from kplugin.model.project import Project
from kplugin.model.versions import Target


@dataclass(frozen=True)
class OwnConfig:
    """The repository's configuration as a run uses it (the fields e2e reads of a
    SchedulerConfig): its first profile, or the one named ``scheduler_names[0]`` when
    adopted, under the run's name."""

    body: dict[str, Any]
    scheduler_names: tuple[str, ...]
    api_version: str
    profile_index: int = 0
    percentage_of_nodes_to_score: int | None = None
    kubeconfig: str | None = None
    node_rejections: bool = False  # kplugin's reporting plugin is not in a repository's scheduler
    left_out: tuple[str, ...] = ()  # plugins taken out of the profile (bench's baseline)

    @property
    def scheduler_name(self) -> str:
        return self.scheduler_names[0]

    def document(self) -> dict[str, Any]:
        """The file's document with the run's one profile, no leader election, and the
        run's kubeconfig (the cluster sets its own)."""
        document = copy.deepcopy(self.body)
        profile = dict((document.get("profiles") or [{}])[self.profile_index])
        profile["schedulerName"] = self.scheduler_name
        if self.left_out:
            profile = _without(profile, set(self.left_out))
        document["profiles"] = [profile]
        document.pop("extenders", None)  # services of the repository's cluster, not started by a run
        document["leaderElection"] = {"leaderElect": False}
        document.pop("clientConnection", None)
        if self.kubeconfig:
            document["clientConnection"] = {"kubeconfig": self.kubeconfig}
        return document

    @property
    def args(self) -> dict[str, dict[str, Any]]:
        """The profile's pluginConfig args, by plugin name."""
        profile = (self.body.get("profiles") or [{}])[self.profile_index]
        entries = profile.get("pluginConfig") or []
        return {
            str(e["name"]): dict(e.get("args") or {})
            for e in entries
            if isinstance(e, dict) and "name" in e and isinstance(e.get("args") or {}, dict)
        }


_ONE_OF = ("queueSort", "bind", "multiPoint")
_DEFAULTS_OF_ONE = {"PrioritySort", "DefaultBinder", "*"}  # QueueSort's and Bind's defaults, and every default


def _without(profile: dict[str, Any], names: set[str]) -> dict[str, Any]:
    """``profile`` with the plugins ``names`` taken out of every extension point and of
    pluginConfig. QueueSort and Bind take one plugin: where one of the repository's
    replaced kube-scheduler's (PrioritySort or DefaultBinder disabled, at its point or at
    multiPoint, or every default with '*'), that disabling goes with it. A shape kplugin
    does not read is left for the scheduler to judge."""
    given = profile.get("plugins") or {}
    if not isinstance(given, dict) or not all(isinstance(v, dict) for v in given.values()):
        return profile
    removed = {
        point
        for point, lists in given.items()
        if any(isinstance(e, dict) and e.get("name") in names for e in lists.get("enabled") or [])
    }
    plugins = {}
    for point, lists in given.items():
        enabled = [e for e in lists.get("enabled") or [] if not (isinstance(e, dict) and e.get("name") in names)]
        disabled = list(lists.get("disabled") or [])
        if removed and point in _ONE_OF:
            disabled = [e for e in disabled if not (isinstance(e, dict) and e.get("name") in _DEFAULTS_OF_ONE)]
        kept = ({"enabled": enabled} if enabled else {}) | ({"disabled": disabled} if disabled else {})
        if kept:
            plugins[point] = kept
    config = [e for e in profile.get("pluginConfig") or [] if not (isinstance(e, dict) and e.get("name") in names)]
    stripped = {k: v for k, v in profile.items() if k not in ("plugins", "pluginConfig")}
    return stripped | ({"plugins": plugins} if plugins else {}) | ({"pluginConfig": config} if config else {})


def own_config(project: Project, target: Target) -> tuple[OwnConfig, tuple[str, ...]]:
    """The repository's configuration for a run, and what the run leaves out of it (notes)."""
    own = render.own_config(project, target)
    where = project.root / own.path
    body = layout.scheduler_configuration(own.text, where)
    if body is None:
        raise UsageError(f"{where}: no KubeSchedulerConfiguration in it; fix it, then kplugin refresh")
    profiles = body.get("profiles") or [{}]
    if not isinstance(profiles, list) or not all(isinstance(p, dict) for p in profiles):
        raise UsageError(f"{where}: profiles must be a list of mappings")
    names = [str(p.get("schedulerName") or "default-scheduler") for p in profiles]
    index = names.index(project.scheduler_name) if project.scheduler_name in names else 0
    notes = [f"{own.path}: the first of {len(own.passed_over) + 1} configuration files"] if own.passed_over else []
    if len(profiles) > 1:
        left = ", ".join(n for i, n in enumerate(names) if i != index)
        notes.append(f"{own.path}: the run uses profile {names[index]}; {left} left out")
    if body.get("extenders"):
        notes.append(f"{own.path}: its extenders are left out (the run does not start them)")
    percentage = body.get("percentageOfNodesToScore")
    config = OwnConfig(
        body=body,
        scheduler_names=(names[index],),
        api_version=str(body.get("apiVersion", "")).rpartition("/")[2],
        profile_index=index,
        percentage_of_nodes_to_score=percentage if isinstance(percentage, int) else None,
    )
    return config, tuple(notes)
