"""kplugin doctor: check a project, its config and its binary for production mistakes."""

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kplugin.cli import app
from kplugin.cli.options import ProjectPath, json_option, k8s_option

if TYPE_CHECKING:
    from kplugin.doctor import Finding


@app.command()
def doctor(
    path: ProjectPath = Path("."),
    config: Annotated[Path | None, typer.Option("--config", help="Scheduler config. Default: deploy/'s.")] = None,
    binary: Annotated[Path | None, typer.Option("--binary", help="kube-scheduler. Default: bin/'s, if built.")] = None,
    k8s: Annotated[str | None, k8s_option(help="Target version. Default: the project's.")] = None,
    as_json: Annotated[bool, json_option(help="Print the findings as JSON.")] = False,
    list_rules: Annotated[
        bool, typer.Option("--list-rules", help="List every rule (id, check, severity, why, fix) and exit.")
    ] = False,
) -> None:
    """Find what silently breaks scheduler plugins in production. Exit 1 on any error."""
    from dataclasses import replace

    from kplugin import doctor
    from kplugin.cli.console import say
    from kplugin.cli.flags import render
    from kplugin.model import project as projects
    from kplugin.model.versions import resolve

    if list_rules:
        _print_rules(as_json)
        return
    project = projects.load(path, adopted=True)
    if project.layout is not None and config is not None:
        from kplugin.core.errors import UsageError

        raise UsageError("--config: doctor reads every configuration file an adopted repository has; leave it out")
    if config is not None:
        from kplugin.core import safefs

        safefs.read_bytes(config, "--config")  # a regular file kplugin can read, or exit 2
    if binary is not None:
        from kplugin.config.render import check_binary

        check_binary(binary)
    target = resolve(k8s, need_templates=False) if k8s is not None else project.target
    # the settings the library's text names, spelled as flags
    if project.layout is not None:
        from kplugin.doctor import adopted

        found = adopted.run(project, target, binary)
    else:
        found = doctor.run(project, target, config, binary)
    findings = [replace(f, what=render(f.what), why=render(f.why), fix=render(f.fix)) for f in found]
    errors = sum(f.severity == doctor.ERROR for f in findings)
    _print_findings(findings, as_json)
    _annotate(findings, project.root, [p for p in (config, binary) if p is not None])
    warnings = sum(f.severity == doctor.WARNING for f in findings)
    notes = len(findings) - errors - warnings
    say(
        f"doctor: {errors} error(s), {warnings} warning(s)"
        + (f", {notes} note(s)" if notes else "")
        + f" for Kubernetes {target.version}"
    )
    if errors:
        raise typer.Exit(1)


def _print_rules(as_json: bool) -> None:
    from dataclasses import replace

    from kplugin import doctor
    from kplugin.cli.console import out
    from kplugin.cli.flags import render

    # the settings the rules name, spelled as flags
    rules = [replace(r, why=render(r.why), fix=render(r.fix)) for r in doctor.list_rules()]
    if as_json:
        out(json.dumps([{"id": r.id, "check": r.check, "severity": r.severity, "why": r.why, "fix": r.fix}
                        for r in rules], indent=2) + "\n")  # fmt: skip
    else:
        out("".join(f"{r.id:28} {r.severity:8} [{r.check}]\n  why: {r.why}\n  fix: {r.fix}\n" for r in rules))


def _print_findings(findings: "list[Finding]", as_json: bool) -> None:
    from kplugin import doctor
    from kplugin.cli.console import out, print_table

    if as_json:
        out(json.dumps(doctor.as_json(findings), indent=2) + "\n")
    elif sys.stdout is not None and sys.stdout.isatty() and findings:
        from rich.table import Table

        table = Table("severity", "rule", "where", "what / why / fix", show_lines=True)
        for f in findings:
            colour = {doctor.ERROR: "red", doctor.WARNING: "yellow"}.get(f.severity, "blue")
            table.add_row(f"[{colour}]{f.severity}[/]", f.rule, f.where, f"{f.what}\nwhy: {f.why}\nfix: {f.fix}")
        print_table(table)
    else:  # one block per finding: its line whole (as a compiler's, for grep), why and fix wrapped
        from kplugin.cli.console import width, wrapped

        columns = width()
        lines = []
        for f in findings:
            lines.append(f"{f.where}: {f.severity}: [{f.rule}] {f.what}")
            lines += wrapped(f"why: {f.why}", columns) + wrapped(f"fix: {f.fix}", columns)
        out("".join(f"{line}\n" for line in lines))


def _annotate(findings: "list[Finding]", root: Path, given: list[Path]) -> None:
    """On GitHub Actions, each finding also as an annotation at its file and line."""
    from kplugin.cli import github

    if not github.active():
        return
    github.write(
        github.annotation(
            github.SEVERITY_LEVELS.get(f.severity, "notice"),
            f"{f.what}\nwhy: {f.why}\nfix: {f.fix}",
            _finding_path(f.file, root, given),
            f.line,
            title=f.rule,
        )
        for f in findings
        if f.file
    )


def _finding_path(file: str, root: Path, given: list[Path]) -> Path:
    """Where a finding's file is: doctor names a project file from the project's root,
    and a --config or --binary outside the project as the option gave it."""
    if Path(file).is_absolute() or file in {str(p) for p in given}:
        return Path(file)
    return root / file
