"""kplugin versions: the support matrix."""

import json
from typing import Annotated, Any

import typer

from kplugin.cli import app


@app.command()
def versions(
    as_json: Annotated[bool, typer.Option("--json", help="Print the matrix as JSON.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Include catalogued minors without templates yet.")] = False,
) -> None:
    """The Kubernetes versions kplugin generates for."""
    from kplugin.cli.console import out, print_table
    from kplugin.model import versions as catalog

    releases = sorted(catalog.catalog().values(), key=lambda r: r.newest.minor)
    if not all_:
        releases = [r for r in releases if r.supported]
    rows: list[dict[str, Any]] = [
        {
            "minor": r.key,
            "newest_patch": str(r.newest),
            "go_directive": r.go_directive,
            "go_version": r.go_version,
            "config_api_versions": list(r.config_api_versions),
            "staging_modules": len(r.staging_modules),
            "supported": r.supported,
            "api_changes": list(r.api_changes),
        }
        for r in releases
    ]
    if as_json:
        out(json.dumps(rows, indent=2) + "\n")
        return
    from rich.table import Table

    table = Table(
        "minor", "newest patch", "go directive", "Go", "config APIs", "staging", "supported", "plugin API changes"
    )
    for row in rows:
        table.add_row(
            row["minor"],
            row["newest_patch"],
            row["go_directive"],
            row["go_version"],
            ", ".join(row["config_api_versions"]),
            str(row["staging_modules"]),
            "yes" if row["supported"] else "not yet",
            "; ".join(row["api_changes"]) or "-",
        )
    print_table(table)
