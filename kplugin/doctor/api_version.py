"""Check 2: the configuration's apiVersion is one the target kube-scheduler serves."""

from __future__ import annotations

from collections.abc import Iterator

from kplugin.doctor.context import Context, line_of
from kplugin.doctor.rules import Problem
from kplugin.model.schedconfig import CONFIG_GROUP


def check_api_version(ctx: Context) -> Iterator[Problem]:
    """2. config apiVersion served by the target kube-scheduler."""
    config = ctx.config
    if not isinstance(config, dict):
        yield Problem("config-missing", ctx.config_path, None, "no scheduler configuration")
        return
    api = str(config.get("apiVersion", ""))
    group, _, version = api.partition("/")
    served = ctx.target.release.config_api_versions
    if group != CONFIG_GROUP or version not in served:
        yield Problem(
            "api-version",
            ctx.config_path,
            line_of(config, "apiVersion"),
            f"apiVersion {api!r} is not served by kube-scheduler {ctx.target.version}",
            served=", ".join(f"{CONFIG_GROUP}/{v}" for v in served),
            config_group=CONFIG_GROUP,
        )
