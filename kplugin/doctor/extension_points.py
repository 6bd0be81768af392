"""Check 11: the extension points kplugin.yaml lists are those the code implements and
the configuration enables."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from kplugin.core.errors import UsageError
from kplugin.doctor.context import Context, line_of, plugin_entries, profiles
from kplugin.doctor.rules import Problem
from kplugin.model import points
from kplugin.model.spec import ExtensionPoint, point_word


def check_extension_points(ctx: Context) -> Iterator[Problem]:
    """11. the extension points in kplugin.yaml are those the code implements and the
    configuration enables (kplugin generates the adapter and config from kplugin.yaml)."""
    from kplugin.generate.addplugin import methods_in_code

    meta = ctx.project.root / "kplugin.yaml"
    by_config: dict[str, dict[str, int | None]] = {}  # plugin -> enabled point -> its entry's line
    for profile in profiles(ctx):
        for point, kind, entry, entries, i in plugin_entries(ctx, profile):
            if kind == "enabled":
                by_config.setdefault(str(entry.get("name", "")), {}).setdefault(point, line_of(entries, i))
    for plugin in ctx.project.plugins:
        try:
            in_code = methods_in_code(ctx.project, plugin)
        except UsageError as err:
            yield Problem("code-unreadable", ctx.project.root / "pkg" / plugin.package, None, err.message)
            continue
        minor = (ctx.project.version.major, ctx.project.version.minor)
        for point, where in sorted(in_code.items()):
            file, _, line = where.rpartition(":")
            if not points.available(point, minor):
                yield Problem(
                    "point-not-in-version",
                    ctx.project.root / file,
                    int(line),
                    f"{plugin.name} implements {points.method(point)}, but Kubernetes {ctx.project.version} "
                    f"has no {point} extension point",
                    since=points.span(point),
                )
            elif not plugin.has(point):
                yield Problem(
                    "point-not-listed",
                    ctx.project.root / file,
                    int(line),
                    f"{plugin.name} implements {point.go_name} in its code, but kplugin.yaml does not list {point}",
                    plugin_name=plugin.name,
                    point=point,
                )
        for point in plugin.extension_points:
            if point not in in_code:
                yield Problem(
                    "point-not-implemented",
                    meta,
                    _listed_line(ctx, meta, plugin.name, point),
                    f"kplugin.yaml lists {point} for {plugin.name}, but pkg/{plugin.package} has no "
                    f"{point.go_name} method on {plugin.name}",
                    point=point,
                )
        enabled = by_config.get(plugin.name)
        if enabled is None or "multiPoint" in enabled:  # multiPoint: every point the plugin implements
            continue
        for config_point in sorted(enabled):
            configured = next((p for p in ExtensionPoint if p.config_name == config_point), None)
            if configured is not None and not plugin.has(configured):
                yield Problem(
                    "point-not-enabled-in-code",
                    ctx.config_path,
                    enabled[config_point],
                    f"the configuration enables {plugin.name} at {config_point}, which kplugin.yaml does not list",
                    plugin_name=plugin.name,
                    point=configured,
                )
        for point in plugin.extension_points:
            if point.config_name and point.config_name not in enabled:
                yield Problem(
                    "point-not-enabled",
                    ctx.config_path,
                    None,
                    f"{plugin.name} implements {point.go_name}, but the configuration does not enable it there",
                )


def _listed_line(ctx: Context, meta: Path, plugin: str, point: str) -> int | None:
    """The line of kplugin.yaml that lists ``point`` for ``plugin`` (kplugin.yaml was
    validated on load: only its line numbers are read here)."""
    doc = ctx.load(meta)
    plugins = doc.get("plugins") if isinstance(doc, dict) else None
    for entry in plugins if isinstance(plugins, list) else []:
        points = entry.get("extensionPoints") if isinstance(entry, dict) and entry.get("name") == plugin else None
        for i, item in enumerate(points if isinstance(points, list) else []):
            if isinstance(item, str) and point_word(item) == point:  # Filter, pre-filter: as kplugin.yaml reads them
                return line_of(points, i)
    return None
