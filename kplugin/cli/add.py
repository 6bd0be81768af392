"""kplugin add: add to an existing project (plugin)."""

from pathlib import Path
from typing import Annotated

import typer

from kplugin.cli import app

add_app = typer.Typer(
    name="add",
    help="Add to an existing project: kplugin add plugin NAME.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(add_app, name="add")

EPILOG = """Examples:

  kplugin add plugin NetworkAware --extension-points prefilter,filter,score

  kplugin add plugin CostScore --project ./gpu-aware --dry-run
"""


@add_app.command("plugin", epilog=EPILOG)
def plugin(
    name: Annotated[str, typer.Argument(help="Plugin name (PascalCase); its package is pkg/<lower-case name>.")],
    project_dir: Annotated[Path, typer.Option("--project", "-p", help="The project directory.")] = Path("."),
    extension_points: Annotated[
        str | None,
        typer.Option("--extension-points", help="As for kplugin new. Default: filter,score."),
    ] = None,
    keep_edited: Annotated[
        bool,
        typer.Option("--keep-edited", help="Leave hand-edited generated files as they are; write FILE.kplugin-new."),
    ] = False,
    no_tidy: Annotated[bool, typer.Option("--no-tidy", help="Skip go mod tidy.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would change; change nothing.")] = False,
) -> None:
    """Add a plugin package to the project and register it."""
    from kplugin import addplugin
    from kplugin import project as projects
    from kplugin.cli.console import note, say

    project = projects.load(project_dir)
    result = addplugin.add_plugin(
        project, name, extension_points, keep_edited=keep_edited, tidy=not no_tidy, dry_run=dry_run
    )
    verb = "would change" if dry_run else "changed"
    say(
        f"Plugin {result.plugin.name} ({', '.join(result.plugin.extension_points)}) in pkg/{result.plugin.package}: "
        f"{len(result.changed)} file(s) {verb}"
    )
    for changed in result.changed:
        say(f"  {changed}")
    for kept in result.kept:
        note(f"{kept.path} was edited by hand and kept; the new version is {kept.path}.kplugin-new")
