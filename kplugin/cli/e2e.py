"""kplugin e2e: the project's scheduler against a real local control plane."""

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kplugin.cli import app
from kplugin.cli.options import (
    FeatureGates,
    Keep,
    ProjectPath,
    RetargetTemplate,
    json_option,
    k8s_option,
    load_for_version,
    refuse_shaping,
)

if TYPE_CHECKING:  # the command's modules load only when it runs
    from kplugin.e2e.job import Result
    from kplugin.e2e.replay import Session
    from kplugin.e2e.report import ScoreView, Suite
    from kplugin.e2e.run import Inputs, Outcome

EPILOG = """Examples:

  kplugin e2e gpu-aware --scenario examples/e2e-scenario.yaml --args examples/e2e-args.yaml

  kplugin e2e gpu-aware --scenario snapshot.json --compare default          # what-if

  kplugin e2e gpu-aware -s snapshot.json --compare default --reschedule app=web --k8s 1.37 --json

  kplugin e2e gpu-aware -s big.json --compare default --kubeconfig kwok.yaml   # an existing (kwok) cluster

  kplugin e2e gpu-aware -s scenario.yaml --junit e2e.xml --scores all   # a test report for CI

  kplugin e2e gpu-aware -s snapshot.json --compare default --report whatif.html   # a page to open
"""


class Compare(StrEnum):
    """--compare: the profile the project's is compared with."""

    DEFAULT = "default"

    @classmethod
    def parse(cls, value: str) -> "Compare":
        from kplugin.core.errors import UsageError

        if value != cls.DEFAULT:
            raise UsageError(f"--compare {value[:60]!r}: the one profile to compare with is 'default'")
        return cls.DEFAULT


@dataclass(frozen=True)
class Scores:
    """--scores: the nodes whose scores each pod shows in the text report, best first:
    the best ``top`` (None: all; 0: none)."""

    top: int | None

    @classmethod
    def parse(cls, value: str) -> "Scores":
        from kplugin.core.errors import UsageError
        from kplugin.e2e.report import TOP_NODES

        if value in ("all", "none"):
            return cls(None if value == "all" else 0)
        if re.fullmatch(r"[0-9]+", value) and int(value) > 0:
            return cls(int(value))
        raise UsageError(
            f"--scores {value[:60]!r}: give all, none or a positive number of nodes (the default is {TOP_NODES})"
        )


ScenarioFile = Annotated[
    Path | None,
    typer.Option(
        "--scenario",
        "-s",
        help="Scenario YAML or JSON (nodes, pods, steps, expect), a kplugin snapshot, or a kubectl List. "
        "Default: 3 nodes, 3 pods.",
    ),
]
ArgsFile = Annotated[
    Path | None, typer.Option("--args", help="Plugin args (YAML or JSON), as for render-config --args.")
]
CompareWith = Annotated[
    Compare | None,
    typer.Option(
        "--compare",
        parser=Compare.parse,
        metavar="TEXT",
        help="Replay twice, with the project's profile and 'default', and show the diff.",
    ),
]
Reschedule = Annotated[
    str | None, typer.Option("--reschedule", help="Label selector: bound pods it matches are scheduled again.")
]
K8s = Annotated[str | None, k8s_option(help="Replay on another Kubernetes version (a retargeted copy is built).")]
Weights = Annotated[
    list[str] | None, typer.Option("--weight", help="PLUGIN=N score weight (repeatable), as render-config.")
]
DisableDefault = Annotated[
    list[str] | None,
    typer.Option("--disable-default", help="Disable a default plugin in the project's profile (repeatable)."),
]
KubeconfigFile = Annotated[
    Path | None,
    typer.Option("--kubeconfig", help="Replay on this existing cluster (everything created is removed after)."),
]
Context = Annotated[str | None, typer.Option("--context", help="The --kubeconfig context to use.")]
Timeout = Annotated[
    float,
    typer.Option("--timeout", help="Stop waiting for pods to be bound or unschedulable after this many idle seconds."),
]
Admin = Annotated[
    bool,
    typer.Option("--admin", help="Run the scheduler with an admin token instead of deploy/rbac.yaml's account."),
]
Verbosity = Annotated[int, typer.Option("--scheduler-v", help="kube-scheduler log level (-v).")]
Json = Annotated[bool, json_option(help="Print the placements (or the diff) as JSON.")]
ScoresShown = Annotated[
    Scores | None,
    typer.Option(
        "--scores",
        parser=Scores.parse,
        metavar="all|none|N",
        help="The nodes whose scores each pod shows in the text report, best first: the best N, all or none. "
        "Default: 5.",
    ),
]
Junit = Annotated[
    Path | None,
    typer.Option(
        "--junit",
        help="Also write a JUnit XML report: a test case per expectation of the scenario (with --compare, "
        "a test suite per profile).",
    ),
]
HtmlReport = Annotated[
    Path | None,
    typer.Option(
        "--report",
        help="Also write an HTML report, one self-contained file: the summary, each pod's scores per node and "
        "plugin as a heatmap, its attempts and requeues (with --compare, the differences side by side).",
        metavar="FILE.html",
    ),
]
Force = Annotated[bool, typer.Option("--force", help="Overwrite an existing --junit or --report file.")]


@app.command(epilog=EPILOG)
def e2e(
    path: ProjectPath = Path("."),
    scenario: ScenarioFile = None,
    args_file: ArgsFile = None,
    compare: CompareWith = None,
    reschedule: Reschedule = None,
    k8s: K8s = None,
    weight: Weights = None,
    disable_default: DisableDefault = None,
    kubeconfig: KubeconfigFile = None,
    context: Context = None,
    timeout: Timeout = 120.0,
    admin: Admin = False,
    keep: Keep = False,
    verbosity: Verbosity = 2,
    as_json: Json = False,
    scores: ScoresShown = None,
    junit: Junit = None,
    html: HtmlReport = None,
    force: Force = False,
    template: RetargetTemplate = None,
    feature_gates: FeatureGates = None,
) -> None:
    """Run the project's scheduler against a real local control plane and a scenario of nodes and pods."""
    from kplugin.cli.progress import Reporter
    from kplugin.e2e import job
    from kplugin.e2e.run import Options
    from kplugin.model.manifests import gate_settings

    _check_options(timeout, verbosity, kubeconfig, context)
    gates = gate_settings(feature_gates)
    report = _Report(
        _view(scores), _junit_target(junit, force), str(scenario or "the default scenario"), _html_target(html, force)
    )
    pinned, target = load_for_version(path, template, k8s, adopted=True)
    if pinned.layout is not None:
        refuse_shaping((("--args", args_file), ("--weight", weight), ("--disable-default", disable_default)))
    request = job.Request(
        project=pinned,
        target=target,
        scenario=scenario,
        reschedule=reschedule,
        kubeconfig=kubeconfig,
        context=context,
        args_file=args_file,
        admin=admin,
        weights=tuple(weight or ()),
        disable_default=tuple(disable_default or ()),
        feature_gates=gates,
        compare=compare is not None,
        options=Options(timeout=timeout, keep=keep, verbosity=verbosity),
    )
    title = f"e2e: {pinned.name} on Kubernetes {target.version}" + (" (what-if: plugin vs default)" if compare else "")
    with Reporter(title + "…") as reporter:
        result = job.run(request, reporter)
    if compare:
        _print_comparison(result, as_json, report)
    else:
        outcome = result.outcome()
        _print_outcome(outcome, as_json, report, _suite(report, result.inputs, result.sessions[0][0]), pinned.name)


def _check_options(timeout: float, verbosity: int, kubeconfig: Path | None, context: str | None) -> None:
    from kplugin.core.errors import UsageError

    if not 1 <= timeout <= 3600:
        raise UsageError(f"--timeout {timeout:g}: must be from 1 to 3600 seconds")
    if not 0 <= verbosity <= 10:
        raise UsageError(f"--scheduler-v {verbosity}: must be from 0 to 10")
    if context is not None and kubeconfig is None:
        raise UsageError("--context picks a context of --kubeconfig; give --kubeconfig too")


@dataclass(frozen=True)
class _Report:
    """How the run is reported besides stdout: the text's scores (--scores), the JUnit
    file (--junit, checked before the run) and the scenario's name in it."""

    view: "ScoreView"
    junit: Path | None
    scenario: str
    html: Path | None = None  # --report, checked before the run


def _view(scores: Scores | None) -> "ScoreView":
    """The scores each pod shows (--scores), laid out within the width of the output
    ($COLUMNS, else the terminal's, else 80)."""
    import shutil

    from kplugin.e2e.report import TOP_NODES, ScoreView

    top = TOP_NODES if scores is None else scores.top
    return ScoreView(top=top, width=shutil.get_terminal_size((80, 24)).columns, more="--scores all")


def _junit_target(junit: Path | None, force: bool) -> Path | None:
    """Where --junit writes: its directory exists, it is no directory, and it is
    overwritten only with --force (as -o of other commands)."""
    from kplugin.core import safefs

    return safefs.output_target(junit, "--junit", force=force) if junit is not None else None


def _html_target(html: Path | None, force: bool) -> Path | None:
    """Where --report writes: an .html file, as --junit's are checked."""
    from kplugin.core import safefs
    from kplugin.core.errors import UsageError

    if html is None:
        return None
    if html.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"--report {html}: the report is HTML; name it FILE.html")
    return safefs.output_target(html, "--report", force=force)


def _named(report: _Report) -> str:
    """The scenario as a page's title names it: its file's name (no directory of the machine)."""
    return Path(report.scenario).name if report.scenario.endswith((".yaml", ".yml", ".json")) else report.scenario


def _write_html(report: _Report, document: dict[str, Any], compare: bool, title: str) -> None:
    from kplugin.cli.console import say
    from kplugin.core import safefs
    from kplugin.e2e import htmlreport

    if report.html is not None:
        page = htmlreport.render(document, compare=compare, title=title).encode()
        safefs.write_atomic(report.html, page)
        say(f"e2e: report written to {report.html} ({len(page) / 1024:,.0f} KiB)")


def _write_junit(report: _Report, suites: "list[Suite]") -> None:
    from kplugin.cli.console import say
    from kplugin.core import safefs
    from kplugin.e2e.report import junit_xml

    if report.junit is not None:
        safefs.write_atomic(report.junit, junit_xml(suites, report.view))
        say(f"e2e: JUnit report written to {report.junit}")


def _suite(report: _Report, inputs: "Inputs", session: "Session", label: str = "") -> "Suite":
    """A replay's test suite: its expectations, enforced for the project's profile only."""
    from kplugin.e2e.report import Suite
    from kplugin.e2e.session import ProfileLabel

    properties = {"kubernetes": str(inputs.project.version), "scenario": report.scenario}
    properties |= {"profile": session.profile, "schedulerName": session.scheduler_name}
    name = f"e2e {inputs.project.name}: {report.scenario}" + (f" ({label} profile)" if label else "")
    enforced = session.profile == ProfileLabel.PLUGIN
    return Suite(name, session.placements, session.scheduling_seconds, properties, enforced=enforced)


def _print_comparison(run_result: "Result", as_json: bool, report: _Report) -> None:
    from kplugin.cli.console import out, say
    from kplugin.e2e import compare, run

    inputs, sessions = run_result.inputs, run_result.sessions
    kept = sessions[0][1]
    result = compare.compare(inputs, sessions[0][0], sessions[1][0], run_result.seconds)
    document = compare.as_json(result)
    out(json.dumps(document, indent=2) + "\n" if as_json else compare.text(result, report.view))
    _write_html(report, document, True, f"kplugin e2e: {inputs.project.name}, {_named(report)}, what-if")
    say(
        f"e2e --compare default: {result.changed} difference(s) in {result.seconds}s"
        + (f"; logs kept in {kept}" if kept else "")
    )
    _write_junit(report, [_suite(report, inputs, session, session.profile) for session, _ in sessions])
    for session, _ in sessions:
        run.check_ready(session.denied, session.unserved, session.identity, inputs.project.layout is not None)
    run.check_expectations(sessions[0][0].placements)


def _print_outcome(outcome: "Outcome", as_json: bool, report: _Report, suite: "Suite", project: str) -> None:
    from kplugin.cli.console import out, say
    from kplugin.e2e import run
    from kplugin.e2e.groups import group_line
    from kplugin.e2e.report import placements_text

    document = run.as_json(outcome)
    if as_json:
        out(json.dumps(document, indent=2) + "\n")
    else:
        out(placements_text(outcome.placements, report.view))
    _write_html(report, document, False, f"kplugin e2e: {project}, {_named(report)}")
    for group in outcome.groups:
        say(group_line(group))
    if (narrowed := run.narrowed_line(outcome.narrowed)) is not None:
        say(narrowed)
    bound = sum(p.node is not None for p in outcome.placements)
    say(
        f"e2e: {bound}/{len(outcome.placements)} pod(s) bound by {outcome.scheduler_name} "
        f"(Kubernetes {outcome.kubernetes}, as {outcome.identity}) in {outcome.seconds}s; "
        f"{outcome.created.objects:,} objects created at {outcome.created.per_second:,.0f} objects/s"
        + (f"; logs kept in {outcome.work}" if outcome.work else "")
    )
    _write_junit(report, [suite])
    run.check(outcome)
