"""kplugin e2e: the project's scheduler against a real local control plane."""

import json
from pathlib import Path
from typing import Annotated

import typer

from kplugin.cli import app


@app.command()
def e2e(
    path: Annotated[Path, typer.Argument(help="The project directory.")] = Path("."),
    scenario: Annotated[
        Path | None,
        typer.Option("--scenario", "-s", help="Scenario YAML (nodes, pods, expect). Default: 3 nodes, 3 pods."),
    ] = None,
    args_file: Annotated[
        Path | None, typer.Option("--args", help="Plugin args (YAML or JSON), as for render-config --args.")
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for every pod to be bound or unschedulable.")
    ] = 120.0,
    admin: Annotated[
        bool,
        typer.Option("--admin", help="Run the scheduler with an admin token instead of deploy/rbac.yaml's account."),
    ] = False,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the working directory (logs, configs).")] = False,
    verbosity: Annotated[int, typer.Option("--scheduler-v", help="kube-scheduler log level (-v).")] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="Print the placements as JSON.")] = False,
) -> None:
    """Run the project's scheduler against a real local control plane and a scenario of nodes and pods."""
    from kplugin import build
    from kplugin import e2e as core
    from kplugin.cli.console import note, out, say, status
    from kplugin.core.errors import UsageError
    from kplugin.e2e import controlplane
    from kplugin.model import project as projects

    project = projects.load(path)
    if not 1 <= timeout <= 3600:
        raise UsageError(f"--timeout {timeout:g}: must be from 1 to 3600 seconds")
    if not 0 <= verbosity <= 10:
        raise UsageError(f"--scheduler-v {verbosity}: must be from 0 to 10")
    inputs = core.prepare(project, scenario, args_file, admin, say)  # all checked before anything is built
    for notice in inputs.notices:
        note(notice)
    controlplane.etcd_binary()  # fail before building anything when etcd is missing
    with status(f"e2e: {project.name} on Kubernetes {project.version}…") as progress:
        progress("building the scheduler (go build, incremental)")
        built = build.build(build.BuildRequest(project=project, builder="local"), progress, ("local", "e2e"))
        scheduler = Path(built.binaries[0].path)
        core.check_config(inputs, scheduler)  # the scheduler's own verdict, before anything starts
        apiserver = controlplane.apiserver_binary(project, progress)
        options = core.Options(timeout=timeout, keep=keep, verbosity=verbosity)
        outcome = core.run(inputs, scheduler, apiserver, options, progress)
    if as_json:
        out(json.dumps(core.as_json(outcome), indent=2) + "\n")
    else:
        ours = {plugin.name for plugin in project.plugins}
        for p in outcome.placements:
            mark = "" if p.expected is None else ("ok" if p.as_expected else f"EXPECTED {p.expected}")
            out(f"{p.pod:24} {p.where:24} {mark}".rstrip() + "\n")
            if p.reason:
                out(f"    why: {p.reason}\n")
            if p.scores:
                shown = [
                    f"{s.node} {s.total}" + "".join(f" ({name} {v})" for name, v in s.plugins.items() if name in ours)
                    for s in p.scores
                ]
                out(f"    scores: {', '.join(shown)}\n")
    bound = sum(p.node is not None for p in outcome.placements)
    say(
        f"e2e: {bound}/{len(outcome.placements)} pod(s) bound by {outcome.scheduler_name} "
        f"(Kubernetes {outcome.kubernetes}, as {outcome.identity}) in {outcome.seconds}s"
        + (f"; logs kept in {outcome.work}" if outcome.work else "")
    )
    core.check(outcome)
