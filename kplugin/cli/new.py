"""kplugin new: generate a plugin project."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kplugin.cli import app
from kplugin.cli.options import k8s_option
from kplugin.model import points

if TYPE_CHECKING:
    from kplugin.model.versions import Target

EPILOG = """Examples:

  kplugin new gpu-aware --k8s 1.28.3

  kplugin new gpu-aware --k8s 1.28 --module example.com/gpu-scheduler --plugin GpuAware
  --extension-points prefilter,filter,score

  kplugin new gpu-aware --dry-run

  kplugin new gpu-aware --k8s 1.33 --api native
"""

POINTS_HELP = f"Comma-separated: {points.words()}. Default: {points.default_words()}."
API_HELP = (
    "layer: plugin code written against the generated internal/fw package, the same on every Kubernetes version "
    "(kplugin upgrade moves it between minors). native: straight against this minor's framework API."
)


Name = Annotated[
    str | None,
    typer.Argument(help="Project name (DNS-1123 label): the directory, Deployment, chart and image name."),
]
K8s = Annotated[
    str | None,
    k8s_option(help="Kubernetes version: X.Y.Z, vX.Y.Z or X.Y. Default: newest supported."),
]
Module = Annotated[str | None, typer.Option(help="Go module path. Default: example.com/NAME.")]
Plugin = Annotated[str | None, typer.Option(help="Plugin name (PascalCase). Default: from NAME.")]
ExtensionPoints = Annotated[str | None, typer.Option("--extension-points", help=POINTS_HELP)]
SchedulerName = Annotated[
    str | None,
    typer.Option("--scheduler-name", help="schedulerName pods use, also the lease name. Default: NAME."),
]
Api = Annotated[str, typer.Option("--api", help=API_HELP)]
Image = Annotated[
    str | None,
    typer.Option(
        "--image",
        help="Image reference with a tag, for kplugin build, the Deployment and the chart. "
        "Default: NAME:0.1.0-k8sVERSION.",
    ),
]
Template = Annotated[
    Path | None,
    typer.Option(
        "--template",
        help="A fork of kplugin's project template (a directory or .zip, cookiecutter format) to render "
        "instead: a team's house style. Default: kplugin's own.",
    ),
]
OutputDir = Annotated[
    Path, typer.Option("--output-dir", "-o", help="Parent directory of the new project directory NAME.")
]
Force = Annotated[bool, typer.Option("--force", help="Write into an existing non-empty directory.")]
NoTidy = Annotated[bool, typer.Option("--no-tidy", help="Skip go mod tidy (no go.sum, no network).")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show what would be written; write nothing.")]


@app.command(epilog=EPILOG)
def new(
    name: Name = None,
    k8s: K8s = None,
    module: Module = None,
    plugin: Plugin = None,
    extension_points: ExtensionPoints = None,
    scheduler_name: SchedulerName = None,
    api: Api = "layer",
    image: Image = None,
    template: Template = None,
    output_dir: OutputDir = Path("."),
    force: Force = False,
    no_tidy: NoTidy = False,
    dry_run: DryRun = False,
) -> None:
    """Generate a complete scheduler plugin project."""
    from kplugin.cli.console import note, say
    from kplugin.generate import scaffold
    from kplugin.model import versions
    from kplugin.model.spec import ProjectSpec

    if name is None:
        name, module, extension_points = _ask(module, extension_points)
    target = versions.resolve(k8s) if k8s is not None else versions.default_target()
    spec = ProjectSpec.create(
        name,
        target,
        module=module,
        plugin=plugin,
        extension_points=extension_points,
        scheduler_name=scheduler_name,
        api=api,
        image=image,
    )
    if template is not None:
        import dataclasses

        from kplugin.generate.templating import fork

        spec = dataclasses.replace(spec, template=fork(template))
    dest = output_dir / name
    _say_version(target)
    result = scaffold.new_project(spec, dest, force=force, dry_run=dry_run, tidy=None if no_tidy or dry_run else _tidy)
    if dry_run:
        for path, change in result.changes:
            say(f"  {change.value:9} {dest / path}")
        say(f"dry run: {len(result.changes)} files, nothing written")
        return
    for notice in result.notices:
        note(notice)
    if no_tidy:
        note(f"--no-tidy: go.sum not written; run 'go mod tidy' in {dest}")
    plugin_spec = spec.plugins[0]
    say(
        f"Created {dest} ({len(result.changes)} files): plugin {plugin_spec.name} "
        f"({', '.join(plugin_spec.extension_points)}) for Kubernetes {target.version}"
    )
    say(f"Next: cd {dest} && make test && make build")


def _ask(module: str | None, extension_points: str | None) -> tuple[str, str, str]:
    """NAME left out: asked for on a terminal (with the module and the extension points)."""
    from kplugin.cli.console import interactive
    from kplugin.core.errors import UsageError

    if not interactive():
        raise UsageError("missing project NAME; e.g. kplugin new gpu-aware")
    name: str = typer.prompt("Project name")
    module = module or typer.prompt("Go module", default=f"example.com/{name}")
    extension_points = extension_points or typer.prompt("Extension points", default=points.default_words())
    return name, module, extension_points


def _say_version(target: "Target") -> None:
    from kplugin.cli.console import say

    if target.patch_was_implied:
        say(f"Kubernetes {target.requested} → {target.version} (newest catalogued patch)")
    if target.beyond_catalog:
        say(
            f"Kubernetes {target.version} is newer than the catalog knows "
            f"({target.release.newest}); go mod tidy will tell whether it exists"
        )


def _tidy(stage: Path) -> list[str]:
    from kplugin.cli.console import status
    from kplugin.core import golang

    with status("go mod tidy (downloads modules from the Go module proxy)…"):
        return golang.mod_tidy(stage)
