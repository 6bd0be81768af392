"""kplugin render-config: the project's KubeSchedulerConfiguration for a version."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kplugin.cli import app
from kplugin.cli.options import Force, Output, ProjectPath, k8s_option, refuse_shaping

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kplugin.config.render import Format as Shape
    from kplugin.model.project import Project
    from kplugin.model.versions import Target

EPILOG = """Examples:

  kplugin render-config --k8s 1.28.3 -o scheduler-config.yaml

  kplugin render-config --weight GpuAware=3 --args args.yaml --validate

  kplugin render-config --format configmap --scheduler-name gpu-a --scheduler-name gpu-b

  kplugin render-config --merge /etc/kubernetes/scheduler-config.yaml
"""


K8s = Annotated[str | None, k8s_option(help="Target Kubernetes version. Default: the project's.")]
ApiVersion = Annotated[
    str | None, typer.Option("--api-version", help="Config API version (v1; v1beta3 only where served).")
]
SchedulerNames = Annotated[
    list[str] | None, typer.Option("--scheduler-name", help="One profile per name (repeatable).")
]
Multipoint = Annotated[bool, typer.Option("--multipoint", help="Enable plugins under multiPoint.")]
Weights = Annotated[list[str] | None, typer.Option("--weight", help="PLUGIN=N score weight (repeatable).")]
ArgsFile = Annotated[Path | None, typer.Option("--args", help="pluginConfig args, YAML or JSON.")]
LeaderElect = Annotated[str, typer.Option("--leader-elect", help="true or false (single replicas).")]
DisableDefault = Annotated[
    list[str] | None, typer.Option("--disable-default", help="Disable a default plugin ('*': all; debugging).")
]
Percentage = Annotated[
    int | None, typer.Option("--percentage-of-nodes-to-score", help="0-100; unset: the scheduler's default.")
]
KubeconfigPath = Annotated[str | None, typer.Option("--kubeconfig", help="clientConnection.kubeconfig.")]
Format = Annotated[str, typer.Option("--format", help="config, configmap or helm-values.")]
Merge = Annotated[Path | None, typer.Option("--merge", help="Update this config file in place.")]
Validate = Annotated[bool, typer.Option("--validate", help="Prove it with the project's kube-scheduler.")]
Binary = Annotated[Path | None, typer.Option("--binary", help="kube-scheduler for --validate.")]


@app.command("render-config", epilog=EPILOG)
def render_config(
    path: ProjectPath = Path("."),
    k8s: K8s = None,
    api_version: ApiVersion = None,
    scheduler_name: SchedulerNames = None,
    multipoint: Multipoint = False,
    weight: Weights = None,
    args_file: ArgsFile = None,
    leader_elect: LeaderElect = "true",
    disable_default: DisableDefault = None,
    percentage: Percentage = None,
    kubeconfig: KubeconfigPath = None,
    fmt: Format = "config",
    output: Output = None,
    force: Force = False,
    merge: Merge = None,
    validate: Validate = False,
    binary: Binary = None,
) -> None:
    """Render the KubeSchedulerConfiguration for the project and a Kubernetes version."""
    options = dict(locals())  # as given: an adopted repository refuses the ones that shape a rendering
    from kplugin.cli.console import note, say
    from kplugin.config import render
    from kplugin.model import project as projects
    from kplugin.model.versions import resolve

    destination, shape = _destination(leader_elect, fmt, output, force, merge)
    checked_binary = render.check_binary(binary) if binary is not None else None
    if "*" in (disable_default or []):
        note("--disable-default '*' turns off every default plugin: for debugging, not production")
    project = projects.load(path, adopted=True)
    target = resolve(k8s, need_templates=False) if k8s is not None else project.target
    if project.layout is not None:  # its own configuration
        return _adopted(project, target, options, destination, validate, checked_binary, output)
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
    config, notices = render.compose_config(request, say)
    for notice in notices:
        note(notice)
    text = render.merge(merge, config) if merge is not None else render.render(config, project, shape)
    if validate:
        config_text = text if shape is render.Format.CONFIG else render.render(config, project, render.Format.CONFIG)
        _validate(project, checked_binary, config_text, str(output or merge or "the rendered configuration"))
    _deliver(
        text, destination, f"{'merged into' if merge is not None and output is None else 'wrote'} {output or merge}"
    )


def _deliver(text: str, destination: Path | None, said: str) -> None:
    """The configuration on stdout, or written where -o or --merge say (and ``said``)."""
    from kplugin.cli.console import out, say
    from kplugin.core import safefs

    if destination is None:
        out(text)
        return
    safefs.write_atomic(destination, text.encode())
    say(said)


# the options that shape a rendered configuration, by the parameter that holds each
_SHAPING = {
    "--api-version": "api_version", "--scheduler-name": "scheduler_name", "--multipoint": "multipoint",
    "--weight": "weight", "--args": "args_file", "--leader-elect": "leader_elect",
    "--disable-default": "disable_default", "--percentage-of-nodes-to-score": "percentage",
    "--kubeconfig": "kubeconfig", "--format": "fmt", "--merge": "merge",
}  # fmt: skip


def _adopted(
    project: "Project",
    target: "Target",
    options: "Mapping[str, object]",
    destination: Path | None,
    validate: bool,
    checked_binary: Path | None,
    output: Path | None,
) -> None:
    """An adopted repository's configuration is its own: the first recorded file in an
    apiVersion the target serves, printed (or written to -o) as it is, and with --validate
    loaded by the repository's scheduler (started with the recorded arguments)."""
    from kplugin.cli.console import note
    from kplugin.config import render

    defaults = {"leader_elect": "true", "fmt": "config", "multipoint": False}
    refuse_shaping((flag, options[name]) for flag, name in _SHAPING.items()
                   if name not in defaults or str(options[name]).lower() != str(defaults[name]).lower())  # fmt: skip
    own = render.own_config(project, target)
    if own.passed_over:
        note(f"{own.path}: the first of {len(own.passed_over) + 1} configuration files ({', '.join(own.passed_over)})")
    if validate:
        _validate(project, checked_binary, own.text, own.path)
    _deliver(own.text, destination, f"wrote {output}")


def _destination(
    leader_elect: str, fmt: str, output: Path | None, force: bool, merge: Path | None
) -> "tuple[Path | None, Shape]":
    """The options checked, the format (an enum from here on), and where the result goes,
    checked before anything is rendered: -o (a symlink is followed and kept; a directory,
    device or FIFO is refused), else --merge's file in place, else stdout (None)."""
    from kplugin.config import render
    from kplugin.core import safefs
    from kplugin.core.errors import Setting, UsageError, parse_choice

    if leader_elect.lower() not in {"true", "false"}:
        raise UsageError(f"--leader-elect {leader_elect!r}: use true or false")
    shape = parse_choice(render.Format, fmt, Setting.FORMAT)
    if shape is not render.Format.CONFIG and merge is not None:
        raise UsageError("--merge updates a KubeSchedulerConfiguration file: use it with --format config")
    if output is not None:
        return safefs.output_target(output, "--output", force=force), shape
    if merge is not None:
        return safefs.output_target(merge, "--merge", force=True, must_exist=True), shape
    return None, shape


def _validate(project: "Project", checked_binary: Path | None, config_text: str, shown: str) -> None:
    """--validate: the configuration loaded by --binary, else the project's bin/kube-scheduler
    (built with the local Go toolchain when it is not there)."""
    from kplugin.cli.console import say
    from kplugin.config import render
    from kplugin.core.errors import OperationError

    scheduler = checked_binary or project.bin_dir / "kube-scheduler"
    if checked_binary is None and not scheduler.is_file():
        from kplugin import builder as build

        say(f"--validate: building {scheduler} with the local Go toolchain")
        build.build(build.BuildRequest(project=project, builder=build.BuilderName.LOCAL), lambda step: None)
    # an adopted repository's plugin may wait for an API server in its factory: no verdict then
    patience = render.ADOPTED_PATIENCE if project.layout is not None else render.PATIENCE
    accepted, message = render.validate(scheduler, config_text, shown, prefix=project.scheduler_arguments,
                                        patience=patience)  # fmt: skip
    if accepted is None:
        raise OperationError(f"{message}; kplugin e2e loads it against a real control plane")
    if not accepted:
        raise OperationError(f"kube-scheduler {project.version} rejects the configuration: {message}")
    say(f"validated: {scheduler} accepts the configuration")
