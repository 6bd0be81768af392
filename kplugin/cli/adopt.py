"""kplugin adopt: make an existing scheduler-plugin repository a kplugin project."""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kplugin.cli import app
from kplugin.cli.options import DryRun, json_option

if TYPE_CHECKING:
    from kplugin.adopt.discover import Adoption

EPILOG = """Examples:

  kplugin adopt ~/src/my-scheduler --dry-run

  kplugin adopt ~/src/my-scheduler --with workflow

  kplugin build ~/src/my-scheduler
"""


@app.command(epilog=EPILOG)
def adopt(
    path: Annotated[Path, typer.Argument(help="The repository: the Go module's directory (its go.mod).")] = Path("."),
    name: Annotated[str | None, typer.Option("--name", help="Project name (default: the module's last part).")] = None,
    dry_run: DryRun = False,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing kplugin.yaml.")] = False,
    as_json: Annotated[bool, json_option(help="Print what was found as JSON.")] = False,
    with_: Annotated[str | None, typer.Option("--with", help="Also write where missing: chart,deploy,workflow")] = None,
) -> None:  # fmt: skip
    """Make an existing scheduler-plugin repository a kplugin project: read it, write kplugin.yaml."""
    from kplugin.adopt import discover, extras, record
    from kplugin.cli.console import note, out, say

    if not path.is_dir():
        from kplugin.core.errors import UsageError

        raise UsageError(f"{path} is not a directory; give the repository's directory (the one with go.mod)")
    parts = extras.parse(with_)
    adoption = discover.discover(path.resolve(), name)
    if as_json:
        out(json.dumps(_as_json(adoption, dry_run), indent=2, sort_keys=True) + "\n")
    else:
        _print(adoption)
    if dry_run:
        if not as_json:
            out("\n--- kplugin.yaml (not written: --dry-run)\n" + record.text(adoption))
        return
    added, kept = record.write(adoption, force, extras.files(adoption, parts))
    for existing in kept:
        note(f"{existing} exists: not written (--with writes only files that do not exist)")
    also = "".join(f", {p}" for p in added)
    say(f"Wrote {adoption.root / record.PROJECT_FILE}{also}; nothing else changed. Next: kplugin build {path}")


def _as_json(adoption: "Adoption", dry_run: bool) -> dict[str, object]:
    from kplugin.adopt import record

    return {
        "kpluginYaml": record.document(adoption),
        "missingReplaces": list(adoption.missing_replaces),
        "schedulerCommand": f"{adoption.command.file.path}:{adoption.command.line}",
        "unused": [{"what": u.what, "reason": u.reason} for u in adoption.unread],
        "written": not dry_run,
    }


def _print(adoption: "Adoption") -> None:
    from kplugin.cli.console import Column, Grid, out, print_grid

    command = adoption.command
    run = " ".join(["kube-scheduler" if not adoption.arguments else Path(str(adoption.main)).name, *adoption.arguments])
    out(
        f"{adoption.module}: Kubernetes {adoption.target.version}, scheduler built by {adoption.main_package} "
        f"({command.file.path}:{command.line}), run as '{run} --config ...'\n"
    )
    rows = tuple(
        (p.name, ",".join(p.points), p.args_type.rpartition("/")[2] if p.args_type else "-", f"{p.package}.{p.factory}")
        for p in adoption.plugins
    )
    print_grid(
        Grid(
            title="Plugins",
            columns=(Column("plugin"), Column("extension points"), Column("args"), Column("factory", detail=True)),
            rows=rows,
        )
    )
    found = adoption.files
    lines = [f"  {c.path} ({c.api_version}; {', '.join(c.scheduler_names) or 'no profile'})" for c in found.configs]
    lines = lines or ["  none"]
    for label, paths in (
        ("CRDs", found.crds), ("Dockerfiles", found.dockerfiles), ("Helm charts", found.charts),
        ("deploy manifests", found.manifests),
    ):  # fmt: skip
        lines.append(f"{label}: {', '.join(str(p) for p in paths) or 'none'}")
    lines.append(f"Makefile: {found.makefile or 'none'}")
    if adoption.missing_replaces:
        lines.append(
            f"go.mod: no replace for {len(adoption.missing_replaces)} staging module(s) "
            f"({', '.join(adoption.missing_replaces)}): a build fails once a dependency imports one; add "
            f"'replace M => M {adoption.target.version.staging_tag}' for each"
        )
    out("Configuration files:\n" + "\n".join(lines) + "\n")
    if adoption.unread:
        out("Not used:\n" + "".join(f"  {u.what}: {u.reason}\n" for u in adoption.unread))
