"""kplugin versions: the support matrix."""

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kplugin.cli import app
from kplugin.cli.options import json_option

if TYPE_CHECKING:
    from kplugin.cli.console import Grid
    from kplugin.model.versions import MinorRelease

# What the scheduling queue does with plugins' QueueingHintFns by default, per fact.
HINTS = {
    "off": "ignored (gate SchedulerQueueingHints off): a rejected pod is retried on every event "
    "its rejectors registered, and at the latest after 5 minutes",
    "beta-on": "used (gate SchedulerQueueingHints beta, on by default; off: retried on every registered event)",
    "ga": "used (SchedulerQueueingHints GA, locked on)",
    "always": "used (the gate is gone)",
}
# What the scheduling queue does with plugins' PreQueueingHintFns by default, per fact.
PRE_HINTS = {
    "alpha-off": "ClusterEventWithHint.PreQueueingHintFn exists; called only with the gate "
    "SchedulerPreQueueingHints on (alpha, off by default: kplugin e2e and bench turn it on for a plugin "
    "that names one, doctor says so)",
    "beta-on": "called by default (gate SchedulerPreQueueingHints beta, on): each event's PreQueueingHints "
    "name the rejected pods its QueueingHints are asked about",
}


@app.command()
def versions(
    as_json: Annotated[bool, json_option(help="Print the matrix as JSON.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Include catalogued minors without templates yet.")] = False,
) -> None:
    """The Kubernetes versions kplugin generates for."""
    from kplugin.cli.console import out, print_grid
    from kplugin.model import versions as catalog

    releases = sorted(catalog.catalog().values(), key=lambda r: r.newest.minor)
    if not all_:
        releases = [r for r in releases if r.supported]
    rows = [_row(r) for r in releases]
    if as_json:
        out(json.dumps(rows, indent=2) + "\n")
        return
    print_grid(_grid(rows, all_))


def _row(r: "MinorRelease") -> dict[str, Any]:
    """A minor's line of the matrix (the JSON object; the table shows the same)."""
    return {
        "minor": r.key,
        "newest_patch": str(r.newest),
        # a minor without a release yet: its newest pre-release, pinned only explicitly
        "prerelease": not r.released,
        "toolchain": r.toolchain,
        "go_directive": r.go_directive,
        "go_version": r.go_version,
        "config_api_versions": list(r.config_api_versions),
        "staging_modules": len(r.staging_modules),
        "supported": r.supported,
        "api_changes": list(r.api_changes),
        # whether the scheduling queue consults QueueingHints by default, and what it
        # does otherwise; whether Filter/Score plugins can keep batching on (SignPod)
        "queueing_hints": str(r.facts.queueing_hints),
        "queueing_hints_note": HINTS[r.facts.queueing_hints] + _early_patches(r.key, r.facts.hints_on_through_patch),
        "queueing_hints_early_patches": _early_range(r.key, r.facts.hints_on_through_patch),
        "sign_pod": r.facts.sign_pod,
        # whether ClusterEventWithHint has PreQueueingHintFn, and whether the queue calls it by default
        "pre_queueing_hints": str(r.facts.pre_queueing_hints),
    }


def _grid(rows: list[dict[str, Any]], all_: bool) -> "Grid":
    """The matrix as a Grid: short columns a log's 80 columns hold, the long free text
    (plugin API changes, the early patches' QueueingHints) as detail lines."""
    from kplugin.cli.console import Column, Grid

    # the staging modules' count only with --all: an 80-column log holds the rest beside
    # a pre-release's longer version
    names = ["minor", "newest", "Go", "go.mod", "config APIs"]
    names += ["staging", "supported"] if all_ else []
    columns = [Column(n, right=n == "staging") for n in names]
    columns += [Column("QHints"), Column("PreQHints"), Column("SignPod"), Column("note", detail=True)]
    columns += [Column("plugin API changes", detail=True)]
    table = []
    for row in rows:
        early = row["queueing_hints_early_patches"]
        values = [row["minor"], row["newest_patch"], row["go_version"], row["go_directive"]]
        values += [", ".join(row["config_api_versions"])]
        values += [str(row["staging_modules"]), "yes" if row["supported"] else "not yet"] if all_ else []
        pre = row["pre_queueing_hints"]
        values += [row["queueing_hints"], "-" if pre == "none" else pre, "yes" if row["sign_pod"] else "-"]
        values += [f"QueueingHints on by default in {early}" if early else ""]
        values += ["; ".join(row["api_changes"]) or "-"]
        table.append(tuple(values))
    legend = tuple(f"QHints (QueueingHints) {fact}: {text}" for fact, text in HINTS.items())
    legend += tuple(f"PreQHints (PreQueueingHints) {fact}: {text}" for fact, text in PRE_HINTS.items())
    early = [row for row in rows if row["prerelease"]]
    legend += tuple(
        f"{row['newest_patch']} is a pre-release: --k8s {row['minor']} waits for its release; pin "
        f"--k8s {row['newest_patch']} to use it"
        + (
            f" (it needs Go {row['go_directive']}: kplugin selects {row['toolchain']} on an older Go)"
            if row["toolchain"]
            else ""
        )
        for row in early
    )
    return Grid("Kubernetes versions kplugin generates for", tuple(columns), tuple(table), legend)


def _early_range(minor: str, through: int) -> str:
    """The minor's first patches, where they used hints by default and its newest do not."""
    return f"{minor}.0-{minor}.{through}" if through >= 0 else ""


def _early_patches(minor: str, through: int) -> str:
    if through < 0:
        return ""
    return f"; used by default in {_early_range(minor, through)} (beta, on), off from {minor}.{through + 1}"
