"""kplugin add: add to an existing project (plugin)."""

from pathlib import Path
from typing import Annotated

import typer

from kplugin.cli import app
from kplugin.cli.changes import report
from kplugin.cli.options import DryRun, KeepEdited, Template, load_project
from kplugin.model import points

add_app = typer.Typer(
    name="add",
    help="Add to an existing project: a plugin, an extension point of a plugin, or a kind of its own API.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(add_app, name="add")

# the options both subcommands take besides KeepEdited, DryRun and Template
ProjectDir = Annotated[Path, typer.Option("--project", "-p", help="The project directory.")]
NoTidy = Annotated[bool, typer.Option("--no-tidy", help="Skip go mod tidy.")]

EPILOG = """Examples:

  kplugin add plugin NetworkAware --extension-points prefilter,filter,score

  kplugin add plugin CostScore --project ./gpu-aware --dry-run
"""


@add_app.command("plugin", epilog=EPILOG)
def plugin(
    name: Annotated[str, typer.Argument(help="Plugin name (PascalCase); its package is pkg/<lower-case name>.")],
    project_dir: ProjectDir = Path("."),
    extension_points: Annotated[
        str | None,
        typer.Option("--extension-points", help=f"As for kplugin new. Default: {points.default_words()}."),
    ] = None,
    keep_edited: KeepEdited = False,
    no_tidy: NoTidy = False,
    dry_run: DryRun = False,
    template: Template = None,
) -> None:
    """Add a plugin package to the project and register it."""
    from kplugin.cli.console import say
    from kplugin.generate import addplugin

    project = load_project(project_dir, template)
    result = addplugin.add_plugin(
        project, name, extension_points, keep_edited=keep_edited, tidy=not no_tidy, dry_run=dry_run, progress=say
    )
    plugin = result.plugin
    headline = f"Plugin {plugin.name} ({', '.join(plugin.extension_points)}) in pkg/{plugin.package}"
    report(headline, result.changed, [c.path for c in result.kept], dry_run, result.not_recreated, result.notices)


POINT_EPILOG = """Examples:

  kplugin add extension-point GpuAware reserve

  kplugin add extension-point GpuAware prescore,permit --project ./gpu-aware --dry-run
"""


@add_app.command("extension-point", epilog=POINT_EPILOG)
def extension_point(
    plugin: Annotated[str, typer.Argument(help="The plugin (its name in kplugin.yaml).")],
    points: Annotated[str, typer.Argument(help="Extension point(s) to add, comma-separated: reserve, permit, ...")],
    project_dir: ProjectDir = Path("."),
    keep_edited: KeepEdited = False,
    no_tidy: NoTidy = False,
    dry_run: DryRun = False,
    template: Template = None,
) -> None:
    """Add an extension point to a plugin: its adapter, the configuration and a stub."""
    from kplugin.cli.console import note, say
    from kplugin.generate import addplugin

    project = load_project(project_dir, template)
    result = addplugin.add_extension_points(
        project, plugin, points, keep_edited=keep_edited, tidy=not no_tidy, dry_run=dry_run, progress=say
    )
    for point, where in result.found_in_code.items():
        note(f"{point}: the code already has it ({where}); no stub written")
    updated = result.plugin
    headline = f"Plugin {updated.name} at {', '.join(updated.extension_points)}"
    report(headline, result.changed, [c.path for c in result.kept], dry_run, result.not_recreated, result.notices)


API_EPILOG = """Examples:

  kplugin add api Quota --group quota.example.com --version v1alpha1

  kplugin add api Placement --group topology.example.com --version v1beta1 --cluster-scoped --plugin RackAware
"""


@add_app.command("api", epilog=API_EPILOG)
def api(
    kind: Annotated[str, typer.Argument(help="The kind (PascalCase), e.g. Quota.")],
    group: Annotated[str, typer.Option("--group", help="Its API group, a domain of yours: quota.example.com.")],
    version: Annotated[str, typer.Option("--version", help="Its API version: v1alpha1, v1beta1, v1, ...")],
    plural: Annotated[
        str | None, typer.Option("--plural", help="Its resource name. Default: the kind's plural, lower case.")
    ] = None,
    cluster_scoped: Annotated[
        bool, typer.Option("--cluster-scoped", help="Objects of no namespace (default: namespaced).")
    ] = False,
    plugin: Annotated[
        str | None, typer.Option("--plugin", help="The plugin that reads it. Default: the project's only plugin.")
    ] = None,
    project_dir: ProjectDir = Path("."),
    no_generate: Annotated[
        bool, typer.Option("--no-generate", help="Skip the code generators (run make generate later).")
    ] = False,
    keep_edited: KeepEdited = False,
    no_tidy: NoTidy = False,
    dry_run: DryRun = False,
    template: Template = None,
) -> None:
    """Add a kind of the project's own API: Go types, clientset, informers, CRD, RBAC rule."""
    from kplugin.cli.console import say
    from kplugin.generate import addapi
    from kplugin.model import apitypes

    new = apitypes.create(kind, group, version, plural, cluster_scoped=cluster_scoped)
    project = load_project(project_dir, template)
    result = addapi.add_api(
        project,
        new,
        plugin,
        keep_edited=keep_edited,
        run_generators=not no_generate,
        tidy=not no_tidy,
        dry_run=dry_run,
        progress=say,
    )
    headline = f"{new.kind} ({new.crd_name}, {new.scope.lower()}) in {new.directory}, read by {result.plugin.name}"
    report(headline, result.changed, [c.path for c in result.kept], dry_run, result.not_recreated, result.notices)
