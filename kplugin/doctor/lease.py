"""Check 4: the leader-election lease is not the default scheduler's."""

from __future__ import annotations

from collections.abc import Iterator

from kplugin.core import yamlio
from kplugin.doctor.context import Context, line_of
from kplugin.doctor.rules import Problem
from kplugin.model.schedconfig import DEFAULT_LEASE


def check_lease(ctx: Context) -> Iterator[Problem]:
    """4. the leader-election lease is not the default scheduler's."""
    config = ctx.config
    if not isinstance(config, dict):
        return
    election = ctx.mapping(
        config.get("leaderElection"), ctx.config_path, line_of(config, "leaderElection"), "leaderElection"
    )
    elect = election.get("leaderElect", True)
    if not isinstance(elect, bool):
        yield Problem(
            "leader-elect-type",
            ctx.config_path,
            line_of(election, "leaderElect"),
            f"leaderElection.leaderElect must be true or false, not {yamlio.describe(elect)}",
        )
        return
    if elect is False:
        return
    name, namespace = (
        ctx.string(election.get(key), ctx.config_path, line_of(election, key), f"leaderElection.{key}", default)
        for key, default in (("resourceName", DEFAULT_LEASE), ("resourceNamespace", "kube-system"))
    )
    if name == DEFAULT_LEASE and namespace == "kube-system":
        yield Problem(
            "default-lease",
            ctx.config_path,
            line_of(election, "resourceName") or line_of(config, "leaderElection"),
            "leader election uses the default scheduler's lease kube-system/kube-scheduler",
            name=ctx.project.scheduler_name,
        )
