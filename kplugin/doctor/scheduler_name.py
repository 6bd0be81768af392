"""Check 3: one schedulerName in the configuration, the ConfigMap and the sample pod."""

from __future__ import annotations

from collections.abc import Iterator

from kplugin.core import yamlio
from kplugin.core.errors import UsageError
from kplugin.doctor.context import Context, line_of, plain, profiles
from kplugin.doctor.rules import Problem
from kplugin.model import manifests


def check_scheduler_names(ctx: Context) -> Iterator[Problem]:
    """3. schedulerName identical in the config, the ConfigMap, the chart and sample pods."""
    names: set[str] = set()
    for i, profile in enumerate(profiles(ctx)):
        at = line_of(profile, "schedulerName")
        given = ctx.string(
            profile.get("schedulerName"), ctx.config_path, at, f"profiles[{i}].schedulerName", "default-scheduler"
        )
        names.update([given] if given is not None else [])
    if not names:
        return
    root = ctx.project.root
    pod_file = root / "deploy/sample-pod.yaml"
    pod = ctx.load(pod_file)
    if pod is not None and not isinstance(pod, dict):
        ctx.mapping(pod, pod_file, None, "the sample pod")  # a finding
    elif isinstance(pod, dict):
        spec = ctx.mapping(pod.get("spec"), pod_file, line_of(pod, "spec"), "spec")
        name = ctx.string(
            spec.get("schedulerName"),
            pod_file,
            line_of(spec, "schedulerName"),
            "spec.schedulerName",
            "default-scheduler",
        )
        if name is not None and name not in names:
            yield Problem(
                "scheduler-name-mismatch",
                pod_file,
                line_of(spec, "schedulerName"),
                f"sample pod uses schedulerName {name!r}, the config has {', '.join(sorted(names))}",
            )
    cm_file = root / "deploy/configmap.yaml"
    cm = ctx.load(cm_file)
    if isinstance(cm, dict) and ctx.config_path.absolute() == (root / "deploy/scheduler-config.yaml").absolute():
        data = ctx.mapping(cm.get("data"), cm_file, line_of(cm, "data"), "data")
        embedded = data.get(manifests.CONFIG_FILE)
        try:
            differs = embedded is not None and yamlio.parse(str(embedded), "the ConfigMap's config") != plain(
                ctx.config
            )
        except UsageError as err:
            yield Problem("configmap-unreadable", cm_file, line_of(data, manifests.CONFIG_FILE), err.message)
            differs = False
        if differs:
            yield Problem(
                "configmap-stale",
                cm_file,
                line_of(data, manifests.CONFIG_FILE),
                "the ConfigMap's scheduler-config.yaml differs from deploy/scheduler-config.yaml",
            )
