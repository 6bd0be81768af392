"""kplugin render-config: the project's KubeSchedulerConfiguration for a version."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from kplugin.cli import app

EPILOG = """Examples:

  kplugin render-config --k8s 1.28.3 -o scheduler-config.yaml

  kplugin render-config --weight GpuAware=3 --args args.yaml --validate

  kplugin render-config --format configmap --scheduler-name gpu-a --scheduler-name gpu-b

  kplugin render-config --merge /etc/kubernetes/scheduler-config.yaml
"""


@app.command("render-config", epilog=EPILOG)
def render_config(
    path: Annotated[Path, typer.Argument(help="The project directory.")] = Path("."),
    k8s: Annotated[str | None, typer.Option("--k8s", help="Target Kubernetes version. Default: the project's.")] = None,
    api_version: Annotated[
        str | None, typer.Option("--api-version", help="Config API version (v1; v1beta3 only where served).")
    ] = None,
    scheduler_name: Annotated[
        list[str] | None, typer.Option("--scheduler-name", help="One profile per name (repeatable).")
    ] = None,
    multipoint: Annotated[bool, typer.Option("--multipoint", help="Enable plugins under multiPoint.")] = False,
    weight: Annotated[list[str] | None, typer.Option("--weight", help="PLUGIN=N score weight (repeatable).")] = None,
    args_file: Annotated[Path | None, typer.Option("--args", help="pluginConfig args, YAML or JSON.")] = None,
    leader_elect: Annotated[str, typer.Option("--leader-elect", help="true or false (single replicas).")] = "true",
    disable_default: Annotated[
        list[str] | None, typer.Option("--disable-default", help="Disable a default plugin ('*': all; debugging).")
    ] = None,
    percentage: Annotated[
        int | None, typer.Option("--percentage-of-nodes-to-score", help="0-100; unset: the scheduler's default.")
    ] = None,
    kubeconfig: Annotated[str | None, typer.Option("--kubeconfig", help="clientConnection.kubeconfig.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="config, configmap or helm-values.")] = "config",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --output file.")] = False,
    merge: Annotated[Path | None, typer.Option("--merge", help="Update this config file in place.")] = None,
    validate: Annotated[bool, typer.Option("--validate", help="Prove it with the project's kube-scheduler.")] = False,
    binary: Annotated[Path | None, typer.Option("--binary", help="kube-scheduler for --validate.")] = None,
) -> None:
    """Render the KubeSchedulerConfiguration for the project and a Kubernetes version."""
    from kplugin.cli.console import note, say
    from kplugin.errors import UsageError

    if leader_elect.lower() not in {"true", "false"}:
        raise UsageError(f"--leader-elect {leader_elect!r}: use true or false")
    if merge is not None and fmt != "config":
        raise UsageError("--merge updates a KubeSchedulerConfiguration file: use it with --format config")
    if output is not None:
        if not output.parent.is_dir():
            raise UsageError(f"--output {output}: directory {output.parent} does not exist")
        if output.exists() and not force:
            raise UsageError(f"--output {output} exists; pass --force to overwrite it")
    if "*" in (disable_default or []):
        note("--disable-default '*' turns off every default plugin: for debugging, not production")

    def emit(text: str) -> None:
        if output is not None:
            from kplugin.plan import write_file

            write_file(output, text)
            say(f"wrote {output}")
        else:
            sys.stdout.write(text)

    # Without --validate and --merge the output is a pure function of the inputs: a
    # result rendered before is served from kplugin's cache (no project or YAML work).
    inputs = None
    if not validate and merge is None:
        options = [k8s, api_version, scheduler_name, multipoint, weight, leader_elect, disable_default, percentage]
        inputs = _inputs(path, args_file, [*options, kubeconfig, fmt])
        if inputs is not None:
            from kplugin import cache

            hit = cache.read("render-config", *inputs)
            if hit is not None:
                emit(hit.decode())
                return

    from kplugin import project as projects
    from kplugin import render
    from kplugin.errors import OperationError
    from kplugin.versions import resolve

    if fmt not in render.FORMATS:  # an invalid format is never in the cache: checked here
        raise UsageError(f"--format {fmt!r}: choose from {', '.join(render.FORMATS)}")
    project = projects.load(path)
    target = resolve(k8s, need_templates=False) if k8s else project.target
    request = render.RenderRequest(
        project=project,
        target=target,
        api_version=api_version,
        scheduler_names=tuple(scheduler_name or ()),
        multipoint=multipoint,
        weights=tuple(weight or ()),
        args_file=args_file,
        leader_elect=leader_elect.lower() == "true",
        disable_default=tuple(disable_default or ()),
        percentage_of_nodes_to_score=percentage,
        kubeconfig=kubeconfig,
    )
    config = render.build_config(request)
    text = render.merge(merge, config) if merge is not None else render.render(config, project, fmt)
    if validate:
        scheduler = binary or project.root / "bin" / "kube-scheduler"
        if binary is None and not scheduler.is_file():
            from kplugin import build

            say(f"--validate: building {scheduler} with the local Go toolchain")
            build.build(build.BuildRequest(project=project, builder="local"), lambda step: None)
        config_text = render.render(config, project, "config") if fmt != "config" else text
        accepted, message = render.validate(scheduler, config_text)
        if not accepted:
            raise OperationError(f"kube-scheduler {project.version} rejects the configuration: {message}")
        say(f"validated: {scheduler} accepts the configuration")
    if merge is not None:
        from kplugin.plan import write_file

        write_file(merge, text)
        say(f"merged into {merge}")
        return
    if inputs is not None:
        from kplugin import cache

        cache.write("render-config", text.encode(), *inputs)
    emit(text)


def _inputs(project: Path, args_file: Path | None, options: list[object]) -> tuple[bytes, bytes, str] | None:
    """Everything a render depends on: kplugin.yaml and --args by content, and the
    options; None when a file cannot be read (the normal path then reports it)."""
    try:
        args = args_file.read_bytes() if args_file else b""
        return (project / "kplugin.yaml").read_bytes(), args, repr(options)
    except OSError:
        return None
