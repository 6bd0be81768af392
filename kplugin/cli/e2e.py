"""kplugin e2e: the project's scheduler against a real local control plane."""

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kplugin.cli import app
from kplugin.cli.changes import RetargetTemplate, load_for_version

if TYPE_CHECKING:  # the command's modules load only when it runs
    from kplugin.e2e.run import ClusterFactory, Outcome
    from kplugin.kube.kubeconfig import Kubeconfig

EPILOG = """Examples:

  kplugin e2e gpu-aware --scenario examples/e2e-scenario.yaml --args examples/e2e-args.yaml

  kplugin e2e gpu-aware --scenario snapshot.json --compare default          # what-if

  kplugin e2e gpu-aware -s snapshot.json --compare default --reschedule app=web --k8s 1.37 --json

  kplugin e2e gpu-aware -s big.json --compare default --kubeconfig kwok.yaml   # an existing (kwok) cluster
"""


@app.command(epilog=EPILOG)
def e2e(
    path: Annotated[Path, typer.Argument(help="The project directory.")] = Path("."),
    scenario: Annotated[
        Path | None,
        typer.Option(
            "--scenario",
            "-s",
            help="Scenario YAML or JSON (nodes, pods, steps, expect), a kplugin snapshot, or a kubectl List. "
            "Default: 3 nodes, 3 pods.",
        ),
    ] = None,
    args_file: Annotated[
        Path | None, typer.Option("--args", help="Plugin args (YAML or JSON), as for render-config --args.")
    ] = None,
    compare: Annotated[
        str | None,
        typer.Option("--compare", help="Replay twice, with the project's profile and 'default', and show the diff."),
    ] = None,
    reschedule: Annotated[
        str | None,
        typer.Option("--reschedule", help="Label selector: bound pods it matches are scheduled again."),
    ] = None,
    k8s: Annotated[
        str | None,
        typer.Option("--k8s", help="Replay on another Kubernetes version (a retargeted copy is built)."),
    ] = None,
    weight: Annotated[
        list[str] | None, typer.Option("--weight", help="PLUGIN=N score weight (repeatable), as render-config.")
    ] = None,
    disable_default: Annotated[
        list[str] | None,
        typer.Option("--disable-default", help="Disable a default plugin in the project's profile (repeatable)."),
    ] = None,
    kubeconfig: Annotated[
        Path | None,
        typer.Option("--kubeconfig", help="Replay on this existing cluster (everything created is removed after)."),
    ] = None,
    context: Annotated[str | None, typer.Option("--context", help="The --kubeconfig context to use.")] = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout", help="Stop waiting for pods to be bound or unschedulable after this many idle seconds."
        ),
    ] = 120.0,
    admin: Annotated[
        bool,
        typer.Option("--admin", help="Run the scheduler with an admin token instead of deploy/rbac.yaml's account."),
    ] = False,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the working directory (logs, configs).")] = False,
    verbosity: Annotated[int, typer.Option("--scheduler-v", help="kube-scheduler log level (-v).")] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="Print the placements (or the diff) as JSON.")] = False,
    template: RetargetTemplate = None,
) -> None:
    """Run the project's scheduler against a real local control plane and a scenario of nodes and pods."""
    from contextlib import ExitStack

    from kplugin import build
    from kplugin import e2e as core
    from kplugin.cli.console import note, out, say
    from kplugin.cli.progress import Reporter
    from kplugin.core.errors import UsageError
    from kplugin.e2e import compare as diff
    from kplugin.e2e.run import (
        Inputs,
        check_expectations,
        check_rbac,
        local_clusters,
        outcome_of,
        rbac_documents,
        read_scenario,
    )
    from kplugin.e2e.run import (
        sessions as replays,
    )
    from kplugin.kube import controlplane, labelselector

    if not 1 <= timeout <= 3600:
        raise UsageError(f"--timeout {timeout:g}: must be from 1 to 3600 seconds")
    if not 0 <= verbosity <= 10:
        raise UsageError(f"--scheduler-v {verbosity}: must be from 0 to 10")
    if compare is not None and compare != "default":
        raise UsageError(f"--compare {compare[:60]!r}: the one profile to compare with is 'default'")
    if context is not None and kubeconfig is None:
        raise UsageError("--context picks a context of --kubeconfig; give --kubeconfig too")
    matcher = labelselector.parse(reschedule) if reschedule is not None else None
    cluster_config = None
    if kubeconfig is not None:
        from kplugin.kube import kubeconfig as kubeconfigs

        cluster_config = kubeconfigs.load(kubeconfig, context)
    project, target = load_for_version(path, template, k8s)
    # every input is read and checked before anything is built or started
    loaded = read_scenario(scenario, target.version.minor)
    if matcher is not None:
        loaded, count = loaded.rescheduled(matcher)
        if not count:
            note(f"--reschedule {reschedule}: no bound pod of the scenario matches")
    if cluster_config is not None:
        from kplugin.kube import apiclient, cluster
        from kplugin.kube import kubeconfig as kubeconfigs

        probe = apiclient.Client(kubeconfigs.endpoint(cluster_config))
        try:
            cluster.preflight(probe)  # reachable, authorized, no nodes of its own: before anything is built
        finally:
            probe.close()
    inputs = core.prepare(
        project,
        loaded,
        args_file,
        admin or cluster_config is not None,
        say,
        weights=tuple(weight or ()),
        disable_default=tuple(disable_default or ()),
    )
    for notice in inputs.notices:
        note(notice)
    if cluster_config is None:
        controlplane.etcd_binary()  # fail before building anything when etcd is missing
    labels = ("plugin", "default") if compare else ("plugin",)
    title = f"e2e: {project.name} on Kubernetes {target.version}" + (" (what-if: plugin vs default)" if compare else "")
    started = time.monotonic()
    with Reporter(title + "…") as reporter, ExitStack() as stack:
        built_from = project
        output = None
        if target.version != project.version:
            from kplugin.generate import upgrade

            reporter.step(f"retargeting a copy of {project.root.name} to Kubernetes {target.version} (go mod tidy)")
            built_from = stack.enter_context(upgrade.retargeted(project, target))
            output = project.root / "bin" / target.version.tag
            # the retargeted copy's deploy/rbac.yaml: what that version's scheduler reads
            rbac = None if inputs.rbac is None else rbac_documents(built_from)
            inputs = Inputs(built_from, inputs.scenario, inputs.config, rbac, inputs.notices)
        reporter.step("building the scheduler (go build, incremental)")
        request = build.BuildRequest(project=built_from, builder="local", output=output)
        built = build.build(request, reporter.step, ("local", "e2e"))
        scheduler = Path(built.binaries[0].path)
        core.check_config(inputs, scheduler)  # the scheduler's own verdict, before anything starts
        options = core.Options(timeout=timeout, keep=keep, verbosity=verbosity)
        if cluster_config is None:
            apiserver = controlplane.apiserver_binary(built_from, reporter.step)
            targets = local_clusters(apiserver, inputs.rbac, reporter.step)
        else:
            targets = _existing_clusters(cluster_config, reporter.step)
        sessions = list(replays(inputs, scheduler, targets, options, reporter, labels))
    kept = sessions[0][1]
    if compare:
        result = diff.compare(inputs, sessions[0][0], sessions[1][0], time.monotonic() - started)
        out(json.dumps(diff.as_json(result), indent=2) + "\n" if as_json else diff.text(result))
        say(
            f"e2e --compare default: {result.changed} difference(s) in {result.seconds}s"
            + (f"; logs kept in {kept}" if kept else "")
        )
        for session, _ in sessions:
            check_rbac(session.denied, session.identity)
        check_expectations(sessions[0][0].placements)
        return
    outcome = outcome_of(inputs, sessions[0][0], kept, time.monotonic() - started)
    if as_json:
        out(json.dumps(core.as_json(outcome), indent=2) + "\n")
    else:
        _table(outcome, out)
    bound = sum(p.node is not None for p in outcome.placements)
    say(
        f"e2e: {bound}/{len(outcome.placements)} pod(s) bound by {outcome.scheduler_name} "
        f"(Kubernetes {outcome.kubernetes}, as {outcome.identity}) in {outcome.seconds}s; "
        f"{outcome.created.objects:,} objects created at {outcome.created.per_second:,.0f} objects/s"
        + (f"; logs kept in {outcome.work}" if outcome.work else "")
    )
    core.check(outcome)


def _existing_clusters(cluster_config: "Kubeconfig", progress: Callable[[str], None]) -> "ClusterFactory":
    """A run's own Existing target (labels, namespaces) for each replay, on one cluster."""
    from kplugin.kube import apiclient, cluster
    from kplugin.kube import kubeconfig as kubeconfigs

    endpoint = kubeconfigs.endpoint(cluster_config)

    def make(work: Path, _label: str) -> cluster.Existing:
        return cluster.Existing(cluster_config, apiclient.Client(endpoint), work, progress)

    return make


def _table(outcome: "Outcome", out: Callable[[str], None]) -> None:
    """Each pod the scheduler placed (or not): where, why, every plugin's score per node."""
    from kplugin.e2e.compare import scores_line

    before = 0
    for p in outcome.placements:
        if p.bound_before and p.expected is None and p.preempted_by is None:
            before += 1
            continue
        mark = "" if p.expected is None else ("ok" if p.as_expected else f"EXPECTED {' or '.join(p.expected)}")
        out(f"{p.pod:24} {p.where:24} {mark}".rstrip() + "\n")
        if p.reason:
            out(f"    why: {p.reason}\n")
        if p.scores:
            out(f"    scores: {scores_line(p)}\n")
        if p.attempts > 1 or p.requeues:
            moved = ", ".join(f"{r.event} ({r.queue})" for r in p.requeues)
            out(f"    attempts: {p.attempts}" + (f"; requeued by: {moved}" if moved else "") + "\n")
    if before:
        out(f"({before} pod(s) bound already in the scenario, not shown)\n")
