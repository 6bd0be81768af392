"""kplugin upgrade: move the project to another Kubernetes version."""

import json
from pathlib import Path
from typing import Annotated

import typer

from kplugin.cli import app
from kplugin.cli.changes import report
from kplugin.cli.options import DryRun, KeepEdited, ProjectPath, Template, load_project

EPILOG = """Examples:

  kplugin upgrade --k8s 1.37

  kplugin upgrade ./gpu-aware --k8s 1.33.13 --dry-run

  kplugin upgrade --k8s 1.28.15 --keep-edited
"""


@app.command(epilog=EPILOG)
def upgrade(
    path: ProjectPath = Path("."),
    k8s: Annotated[str | None, typer.Option("--k8s", help="Target Kubernetes version: X.Y.Z, vX.Y.Z or X.Y.")] = None,
    keep_edited: KeepEdited = False,
    no_tidy: Annotated[bool, typer.Option("--no-tidy", help="Skip go mod tidy (go.sum not updated).")] = False,
    dry_run: DryRun = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as one JSON object.")] = False,
    template: Template = None,
) -> None:
    """Move the project to another Kubernetes version, keeping the plugin code as it is."""
    from kplugin.cli.console import out, say, status
    from kplugin.core.errors import UsageError
    from kplugin.generate import upgrade
    from kplugin.model.versions import resolve

    if k8s is None:
        raise UsageError("missing --k8s; e.g. kplugin upgrade --k8s 1.37 (kplugin versions lists them)")
    project = load_project(path, template)
    target = resolve(k8s)
    prepared = upgrade.prepare(project, target, keep_edited=keep_edited, progress=say)
    with status(f"upgrading {project.root.name} from Kubernetes {project.version} to {target.version}…"):
        result = upgrade.upgrade(prepared, tidy=not no_tidy, dry_run=dry_run)
    if as_json:
        payload = {
            "from": str(result.old),
            "to": str(result.new),
            "dry_run": dry_run,
            "changed": [str(p) for p in result.changed],
            "kept_edited": [str(c.path) for c in result.kept],
            "not_recreated": [str(p) for p in result.not_recreated],
        }
        out(json.dumps(payload, indent=2) + "\n")
        return
    report(
        f"Kubernetes {result.old} → {result.new}",
        result.changed,
        [c.path for c in result.kept],
        dry_run,
        result.not_recreated,
        result.notices,
    )
    if not result.changed:
        say("nothing to change: the project is already generated for this version")
