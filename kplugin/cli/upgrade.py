"""kplugin upgrade: move the project to another Kubernetes version; kplugin refresh: rewrite the
generated files at its own version (after an edit of the Args or the RBAC rules)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kplugin.cli import app
from kplugin.cli.changes import report
from kplugin.cli.options import DryRun, KeepEdited, ProjectPath, Template, json_option, k8s_option, load_project

if TYPE_CHECKING:
    from kplugin.model.project import Project
    from kplugin.model.versions import Target

EPILOG = """Examples:

  kplugin upgrade --k8s 1.37

  kplugin upgrade ./gpu-aware --k8s 1.33.13 --dry-run

  kplugin upgrade --k8s 1.28.15 --keep-edited
"""


@app.command(epilog=EPILOG)
def upgrade(
    path: ProjectPath = Path("."),
    k8s: Annotated[str | None, k8s_option(help="Target Kubernetes version: X.Y.Z, vX.Y.Z or X.Y.")] = None,
    keep_edited: KeepEdited = False,
    no_tidy: Annotated[bool, typer.Option("--no-tidy", help="Skip go mod tidy (go.sum not updated).")] = False,
    dry_run: DryRun = False,
    as_json: Annotated[bool, json_option(help="Print the result as one JSON object.")] = False,
    template: Template = None,
) -> None:
    """Move the project to another Kubernetes version, keeping the plugin code as it is."""
    from kplugin.core.errors import UsageError
    from kplugin.model.versions import resolve

    if k8s is None:
        raise UsageError("missing --k8s; e.g. kplugin upgrade --k8s 1.37 (kplugin versions lists them)")
    project = load_project(path, template, adopted=True)
    if project.layout is not None:
        _move(project, resolve(k8s), dry_run, as_json)
        return
    _run(project, resolve(k8s), keep_edited, not no_tidy, dry_run, as_json)


def _move(project: "Project", target: "Target", dry_run: bool, as_json: bool) -> None:
    """An adopted repository moved to ``target``: pins, code and configuration, reported."""
    from kplugin.adopt import move
    from kplugin.cli.console import note, out, say, status

    if target.version == project.version:
        say(f"nothing to change: {project.root.name} is at Kubernetes {target.version}")
        return
    doing = f"moving {project.root.name} from Kubernetes {project.version} to {target.version}"
    with status(f"{doing} (go mod tidy, go build ./...)…"):
        moved = move.move(project, target, dry_run)
    rewritten = {str(p): done for p, done in sorted(moved.rewritten.items())}
    if as_json:
        payload = {
            "from": str(moved.old.version), "to": str(moved.new.version), "dry_run": dry_run,
            "changed": [str(p) for p in moved.changed], "rewritten": rewritten,
            "migrated": [str(p) for p in moved.migrated], "notices": moved.notices,
        }  # fmt: skip
        out(json.dumps(payload, indent=2) + "\n")
        return
    if dry_run and moved.diff:
        out("".join(moved.diff))
    for path, done in rewritten.items():
        say(f"{path}: " + ", ".join(done))
    for notice in moved.notices:
        note(notice)
    for config in moved.migrated:
        say(f"{config}: kubescheduler.config.k8s.io/v1 (its apiVersion is not served by {moved.new.version.minor_key})")
    verb = "would change" if dry_run else "changed"
    say(
        f"Kubernetes {moved.old.version} → {moved.new.version}: {verb} {len(moved.changed)} file(s)"
        + ("" if dry_run else "; it builds (go build ./...); run its tests: go test ./...")
    )


REFRESH_EPILOG = """Examples:

  kplugin refresh                 # after editing config/rbac/rules.yaml or a plugin's Args

  kplugin refresh ./gpu-aware --dry-run
"""


@app.command(epilog=REFRESH_EPILOG)
def refresh(
    path: ProjectPath = Path("."),
    keep_edited: KeepEdited = False,
    dry_run: DryRun = False,
    as_json: Annotated[bool, json_option(help="Print the result as one JSON object.")] = False,
    template: Template = None,
) -> None:
    """Rewrite the generated files from the current Args and RBAC rules, at the project's own version."""
    project = load_project(path, template, adopted=True)
    if project.layout is not None:
        _refresh_adopted(project, dry_run, as_json)
        return
    _run(project, project.target, keep_edited, False, dry_run, as_json)


def _refresh_adopted(project: "Project", dry_run: bool, as_json: bool) -> None:
    """An adopted repository has no generated files: its kplugin.yaml is recorded again
    from its code and files (as kplugin adopt --force would), keeping what the file says
    of the project itself (its name, scheduler name and image), and what changed is shown."""
    import difflib

    from kplugin.adopt import record
    from kplugin.cli.console import out, say

    refreshed = record.refresh(project, dry_run)
    before, now = refreshed.before, refreshed.now
    changed = [record.PROJECT_FILE] if refreshed.changed else []
    if as_json:
        payload = {"from": str(project.version), "to": str(project.version), "dry_run": dry_run, "changed": changed}
        out(json.dumps(payload | {"kept_edited": [], "not_recreated": []}, indent=2) + "\n")
        return
    name = record.PROJECT_FILE
    out("".join(difflib.unified_diff(before.splitlines(True), now.splitlines(True), f"a/{name}", f"b/{name}")))
    if not changed:
        say(f"nothing to change: {name} records what the repository has")
    else:
        say(f"{name} {'would be' if dry_run else 'was'} recorded again from the repository's code and files")


def _run(project: "Project", target: "Target", keep_edited: bool, tidy: bool, dry_run: bool, as_json: bool) -> None:
    """An upgrade to ``target`` (the project's own version: a refresh), reported."""
    from kplugin.cli.console import out, say, status
    from kplugin.generate import upgrade

    prepared = upgrade.prepare(project, target, keep_edited=keep_edited, tidy=tidy, progress=say)
    same = target.version == project.version
    doing = (
        f"refreshing {project.root.name}'s generated files"
        if same
        else (f"upgrading {project.root.name} from Kubernetes {project.version} to {target.version}")
    )
    with status(f"{doing}…"):
        result = upgrade.upgrade(prepared, tidy=tidy, dry_run=dry_run)
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
        f"Kubernetes {result.old}" + ("" if same else f" → {result.new}"),
        result.changed,
        [c.path for c in result.kept],
        dry_run,
        () if same else result.not_recreated,  # a refresh would say it every run
        result.notices,
    )
    if not result.changed:
        say(
            "nothing to change: the generated files are up to date"
            if same
            else "nothing to change: the project is already generated for this version"
        )
