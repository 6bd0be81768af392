"""Check 1, plugin names: valid, and identical in Name(), the config, the registry and
pluginConfig (rules plugin-names and disabled-all)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from kplugin.doctor.context import Context, line_of, plugin_configs, plugin_entries, profiles
from kplugin.doctor.rules import Problem
from kplugin.model.spec import IN_TREE_PLUGINS, NODE_REJECTIONS_PLUGIN, validate_plugin_name


def check_plugin_names(ctx: Context) -> Iterator[Problem]:
    """1. plugin names valid and identical in Name(), the config, the registry and pluginConfig."""
    project = ctx.project
    ours = {p.name for p in project.plugins}
    meta = project.root / "kplugin.yaml"
    imports = project.root / "cmd/scheduler/plugins.go"
    import_text = ctx.text(imports) or ""
    for plugin in project.plugins:
        try:
            validate_plugin_name(plugin.name)
        except Exception as err:
            yield Problem("plugin-name-invalid", meta, None, str(err))
        source = project.root / "pkg" / plugin.package
        found = None
        for go_file in sorted(source.glob("*.go")) if source.is_dir() and not source.is_symlink() else []:
            text = ctx.text(go_file) or ""
            match = re.search(r'^const Name = "([^"]*)"', text, re.M)
            if match:
                found = (go_file, match[1], text[: match.start()].count("\n") + 1)
        if found is None:
            yield Problem(
                "plugin-name-missing",
                source,
                None,
                f"no `const Name` found for plugin {plugin.name}",
                name=plugin.name,
                source=source,
            )
        elif found[1] != plugin.name:
            yield Problem(
                "plugin-name-mismatch",
                found[0],
                found[2],
                f"Name() is {found[1]!r} but kplugin.yaml and the config say {plugin.name!r}",
            )
        if f'"{project.module}/pkg/{plugin.package}"' not in import_text:
            yield Problem(
                "plugin-not-imported",
                imports,
                None,
                f"plugin package pkg/{plugin.package} is not imported",
                module=project.module,
                package=plugin.package,
                imports=ctx.rel(imports),
            )
    known = ours | IN_TREE_PLUGINS | {NODE_REJECTIONS_PLUGIN}  # cmd/scheduler registers kplugin's reporting plugin
    for i, profile in enumerate(profiles(ctx)):
        for point, kind, entry, entries, index in plugin_entries(ctx, profile):
            name = str(entry.get("name", ""))
            if name == "*" and kind == "disabled":
                yield Problem(
                    "disabled-all",
                    ctx.config_path,
                    line_of(entries, index),
                    f"profile {i}: {point}.disabled '*' turns off every default plugin at {point}",
                )
            elif name and name not in known:
                yield Problem(
                    "plugin-unregistered",
                    ctx.config_path,
                    line_of(entries, index),
                    f"plugin {name!r} at {point}.{kind} is not registered in this scheduler",
                    ours=", ".join(sorted(ours)),
                )
        for j, entry, configs in plugin_configs(ctx, profile):
            name = str(entry.get("name", ""))
            if name not in known:
                yield Problem(
                    "pluginconfig-unregistered",
                    ctx.config_path,
                    line_of(configs, j),
                    f"pluginConfig for {name!r}, which is not registered",
                    ours=", ".join(sorted(ours)),
                )
