"""kplugin bench: what the project's plugins cost the scheduler at cluster scale."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kplugin.cli import app
from kplugin.cli.options import Keep, ProjectPath, RetargetTemplate, json_option, k8s_option, load_for_version

if TYPE_CHECKING:  # the command's modules load only when it runs
    from kplugin.bench.outcome import BenchOutcome
    from kplugin.bench.plan import Settings
    from kplugin.bench.results import Thresholds

EPILOG = """Examples:

  kplugin bench                                  # basic (SchedulingBasic), 5,000 nodes

  kplugin bench --workload plugin --nodes 1000 --repeat 3 --report bench.html

  kplugin bench --nodes 200 --pods 200 --json --threshold 0.9     # in CI

  kplugin bench --nodes 1000 --cpu-profile profiles --report bench.html   # where the CPU goes

  kplugin bench --workload perf.yaml --case SchedulingBasic/500Nodes

  kplugin bench --kubeconfig kwok.kubeconfig --nodes 5000          # an existing (kwok) cluster
"""

REPORT_SUFFIXES = (".html", ".htm", ".svg")


def _check_report(report: Path | None) -> Path | None:
    from kplugin.core import safefs
    from kplugin.core.errors import UsageError

    if report is None:
        return None
    if report.suffix.lower() not in REPORT_SUFFIXES:
        raise UsageError(
            f"--report {report}: write .html (the pictures and the tables) or .svg (the pictures); "
            f"{report.suffix or 'no suffix'} is not one of them"
        )
    return safefs.output_target(report, "--report", force=True)


Workload = Annotated[
    str,
    typer.Option(
        "--workload",
        "-w",
        help="basic (scheduler_perf's SchedulingBasic), plugin (nodes and pods shaped by the project's args), "
        "mixed (affinity and topology spread), gang (scheduler_perf's GangScheduling, 1.37 on), "
        "or a scheduler_perf performance-config YAML file.",
    ),
]
Case = Annotated[str | None, typer.Option("--case", help="TestCase/workload to run, when the file has several.")]
Nodes = Annotated[int | None, typer.Option("--nodes", help="Nodes (the workload's own count by default).")]
Pods = Annotated[
    int | None,
    typer.Option("--pods", help="Pods measured; the workload's other pod counts keep their proportion to them."),
]
K8s = Annotated[
    str | None,
    k8s_option(help="Kubernetes version (default: the project's); another one uses a retargeted copy."),
]
Repeat = Annotated[int, typer.Option("--repeat", help="Pairs of runs (baseline and project, interleaved).")]
Json = Annotated[bool, json_option(help="Print scheduler_perf's DataItems JSON.")]
Threshold = Annotated[
    list[str] | None,
    typer.Option(
        "--threshold",
        help="Exit 1 when project/baseline throughput is below this ratio (0.9 or throughput=0.9), or when "
        "project/baseline scheduler CPU per pod is above it (cpu=1.2). Repeatable.",
    ),
]
Report = Annotated[Path | None, typer.Option("--report", help="Write a report with pictures: FILE.html or FILE.svg.")]
CpuProfile = Annotated[
    Path | None,
    typer.Option(
        "--cpu-profile",
        help="Record the scheduler's CPU profiles (pprof) in the measured phases into DIR (new or empty): print "
        "the project's share of the CPU, and draw flame graphs in an .html --report.",
        metavar="DIR",
    ),
]
KubeconfigFile = Annotated[
    Path | None,
    typer.Option("--kubeconfig", help="Run against this existing cluster instead of a local control plane."),
]
Context = Annotated[
    str | None, typer.Option("--context", help="With --kubeconfig: this context (default: its current-context).")
]
AllowExistingPods = Annotated[
    bool,
    typer.Option(
        "--allow-existing-pods",
        help="With --kubeconfig: run even if pods there use the project's schedulerName (they may be bound "
        "by the benchmark's scheduler).",
    ),
]
SchedulerQps = Annotated[float, typer.Option("--scheduler-qps", help="The scheduler's client QPS.")]
SchedulerBurst = Annotated[int, typer.Option("--scheduler-burst", help="The scheduler's client burst.")]
ClientQps = Annotated[float, typer.Option("--client-qps", help="The load generator's QPS.")]
ClientBurst = Annotated[int, typer.Option("--client-burst", help="The load generator's burst.")]
Workers = Annotated[int, typer.Option("--workers", help="The load generator's parallel requests.")]
Timeout = Annotated[float, typer.Option("--timeout", help="Seconds without a pod bound before a run is given up.")]


@app.command(epilog=EPILOG)
def bench(
    path: ProjectPath = Path("."),
    workload: Workload = "basic",
    case: Case = None,
    nodes: Nodes = None,
    pods: Pods = None,
    k8s: K8s = None,
    repeat: Repeat = 1,
    as_json: Json = False,
    threshold: Threshold = None,
    report: Report = None,
    cpu_profile: CpuProfile = None,
    kubeconfig: KubeconfigFile = None,
    context: Context = None,
    allow_existing_pods: AllowExistingPods = False,
    scheduler_qps: SchedulerQps = 5000.0,
    scheduler_burst: SchedulerBurst = 5000,
    client_qps: ClientQps = 5000.0,
    client_burst: ClientBurst = 5000,
    workers: Workers = 30,
    timeout: Timeout = 120.0,
    keep: Keep = False,
    template: RetargetTemplate = None,
) -> None:
    """Measure what the project's plugins cost the scheduler: throughput, latency, CPU, against a baseline."""
    from kplugin.bench import job
    from kplugin.bench.plan import Settings
    from kplugin.cli.progress import Reporter
    from kplugin.core import safefs

    profiles_to = None if cpu_profile is None else safefs.output_directory(cpu_profile, "--cpu-profile")
    settings = Settings(
        repeat=repeat,
        scheduler_qps=scheduler_qps,
        scheduler_burst=scheduler_burst,
        client_qps=client_qps,
        client_burst=client_burst,
        workers=workers,
        stall_timeout=timeout,
        keep=keep,
        cpu_profiles=profiles_to,
    )
    thresholds = _thresholds(threshold or [])
    _check_options(settings, kubeconfig, context)
    report_target = _check_report(report)
    pinned, target = load_for_version(path, template, k8s, adopted=True)
    request = job.Request(
        pinned, target, workload, case, nodes, pods, kubeconfig, context, allow_existing_pods, settings
    )
    with Reporter(f"bench: {pinned.name} on Kubernetes {target.version}…") as reporter:
        outcome = job.run(request, reporter)
    _print(outcome, as_json, thresholds, report, report_target)


def _thresholds(values: list[str]) -> Thresholds:
    """--threshold 0.9 / throughput=0.9 / cpu=1.2, each gate at most once."""
    from kplugin.bench.results import Thresholds
    from kplugin.core.errors import UsageError

    given: dict[str, float] = {}
    for value in values:
        name, _, number = value.rpartition("=")
        name = name.strip().lower() or "throughput"
        if name not in ("throughput", "cpu"):
            raise UsageError(f"--threshold {value}: give RATIO, throughput=RATIO or cpu=RATIO")
        try:
            ratio = float(number)
        except ValueError:
            raise UsageError(f"--threshold {value}: {number!r} is not a number; e.g. 0.9 or cpu=1.2") from None
        if not (0 < ratio <= 100):
            raise UsageError(f"--threshold {value}: give a ratio above 0, e.g. 0.9 or cpu=1.2")
        if name in given:
            raise UsageError(f"--threshold {value}: the {name} threshold is given twice")
        given[name] = ratio
    return Thresholds(throughput=given.get("throughput"), cpu=given.get("cpu"))


def _check_options(settings: Settings, kubeconfig: Path | None, context: str | None) -> None:
    from kplugin.core.errors import UsageError

    if not 1 <= settings.repeat <= 20:
        raise UsageError(f"--repeat {settings.repeat}: must be from 1 to 20")
    for option, value in (("--scheduler-qps", settings.scheduler_qps), ("--client-qps", settings.client_qps)):
        if not 1 <= value <= 1_000_000:
            raise UsageError(f"{option} {value:g}: must be from 1 to 1000000")
    for option, number in (("--scheduler-burst", settings.scheduler_burst), ("--client-burst", settings.client_burst)):
        if not 1 <= number <= 1_000_000:
            raise UsageError(f"{option} {number}: must be from 1 to 1000000")
    if not 1 <= settings.workers <= 500:
        raise UsageError(f"--workers {settings.workers}: must be from 1 to 500")
    if not 5 <= settings.stall_timeout <= 3600:
        raise UsageError(f"--timeout {settings.stall_timeout:g}: must be from 5 to 3600 seconds")
    if context is not None and kubeconfig is None:
        raise UsageError("--context picks a context of --kubeconfig; give --kubeconfig too")


def _print(
    outcome: BenchOutcome, as_json: bool, thresholds: Thresholds, report: Path | None, report_target: Path | None
) -> None:
    from kplugin.bench import results
    from kplugin.cli.console import note, out, say
    from kplugin.core.errors import OperationError

    ratio = results.throughput_ratio(outcome)
    if report_target is not None:
        from kplugin.bench import report as reports
        from kplugin.core import safefs

        safefs.write_atomic(report_target, reports.render(outcome, report_target.suffix.lower()).encode())
    if as_json:
        out(json.dumps(results.as_json(outcome, thresholds), indent=2, sort_keys=True, allow_nan=False) + "\n")
    else:
        _tables(outcome)
    for line in results.harness_lines(outcome):
        say(f"  {line}")
    for notice in outcome.notices:
        note(notice)
    if outcome.cpu_profiles:
        import shlex

        from kplugin.bench.plan import BASELINE, PROJECT

        files = {p.kind: shlex.quote(str(p.path)) for p in outcome.cpu_profiles}
        where = outcome.cpu_profiles[0].path.parent
        compare = (
            f"; compare them with: go tool pprof -http=localhost:0 -diff_base {files[BASELINE]} {files[PROJECT]}"
            if BASELINE in files and PROJECT in files
            else ""
        )
        say(f"  CPU profiles written to {where}{compare}")
    say(
        f"bench: throughput ratio project/baseline {ratio:.2f}, scheduler CPU per pod ratio "
        f"{results.cpu_ratio(outcome):.2f} in {outcome.seconds:.0f}s"
        + (f"; report written to {report}" if report is not None else "")
        + (f"; work directory kept: {outcome.work}" if outcome.work else "")
    )
    sys.stdout.flush()
    failures = thresholds.failures(outcome)
    if failures:
        raise OperationError(f"--threshold: {'; '.join(failures)}")


def _tables(outcome: BenchOutcome) -> None:
    from kplugin.bench import results
    from kplugin.cli.console import Column, Grid, print_grid

    figures = (Column(""), Column("baseline", right=True), Column("project", right=True), Column("ratio", right=True))
    title = f"{outcome.workload.title} on Kubernetes {outcome.kubernetes}"
    print_grid(Grid(title, figures, tuple(tuple(row) for row in results.rows(outcome))))
    plugin_rows = results.plugin_rows(outcome)
    if plugin_rows:
        names = ("plugin", "extension point", "calls", "p50", "p90", "p99")
        columns = tuple(Column(n, right=n not in ("plugin", "extension point")) for n in names)
        title = "the project's plugins, sampled cycles (µs)"
        print_grid(Grid(title, columns, tuple(tuple(row) for row in plugin_rows)))
    profile_rows = results.profile_rows(outcome)
    if profile_rows:
        columns = (Column(""), Column("baseline", right=True), Column("project", right=True))
        title = "where the scheduler's CPU went (pprof, measured phases)"
        print_grid(Grid(title, columns, tuple(tuple(row) for row in profile_rows)))
