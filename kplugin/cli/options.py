"""Options more than one command declares (each declared once, here), and the project
that the project directory, --template and --k8s name."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from collections.abc import Iterable

    from kplugin.model.project import Project
    from kplugin.model.versions import Target

ProjectPath = Annotated[Path, typer.Argument(help="The project directory.")]
KeepEdited = Annotated[
    bool,
    typer.Option("--keep-edited", help="Leave hand-edited generated files as they are; write FILE.kplugin-new."),
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show what would change; change nothing.")]
Template = Annotated[
    Path | None,
    typer.Option(
        "--template",
        help="The fork of kplugin's project template to render (a directory or .zip): needed for a project made "
        "from one (its kplugin.yaml says template: fork); for another, it moves the project to the fork.",
    ),
]
# build, e2e and bench render the template only for --k8s (a retargeted copy)
RetargetTemplate = Annotated[
    Path | None,
    typer.Option(
        "--template",
        help="With --k8s, for a project made from a fork of kplugin's project template (template: fork): the "
        "fork (a directory or .zip), which the retargeted copy is rendered from.",
    ),
]
Keep = Annotated[bool, typer.Option("--keep", help="Keep the working directory (logs, configs).")]
FeatureGates = Annotated[
    list[str] | None,
    typer.Option(
        "--feature-gates",
        help="kube-scheduler feature gates, NAME=true|false (comma-separated or repeated), set after the gates "
        "the plugins need (e.g. SchedulerPreQueueingHints=false to replay without PreQueueingHints).",
    ),
]
Output = Annotated[Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")]
Force = Annotated[bool, typer.Option("--force", help="Overwrite an existing --output file.")]


def load_project(path: Path, template: Path | None, adopted: bool = False) -> "Project":
    """The project at ``path``, to be rendered through the fork ``template`` (checked
    first) where one is given. A project made from a fork is refused without it where
    its template is rendered (Project.spec)."""
    from kplugin.generate.templating import fork
    from kplugin.model import project as projects

    project = projects.load(path, adopted)
    return project if template is None else project._replace(template=fork(template))


def load_for_version(
    path: Path, template: Path | None, k8s: str | None, adopted: bool = False
) -> "tuple[Project, Target]":
    """The project and the version build, e2e and bench work on: the project's, or --k8s
    (a retargeted copy, rendered from the template)."""
    from kplugin.model.versions import resolve

    project = load_project(path, template, adopted)
    return project, resolve(k8s) if k8s is not None else project.target


def refuse_shaping(given: "Iterable[tuple[str, object]]") -> None:
    """An adopted repository's configuration is its own: the first of the options that
    shape kplugin's configuration given (a value not None, not empty) is refused."""
    from kplugin.core.errors import UsageError

    flags = [flag for flag, value in given if value not in (None, [], ())]
    if flags:
        raise UsageError(
            f"{flags[0]}: an adopted repository's configuration is its own (render-config shows it); change that "
            "file, or leave the option out"
        )


def k8s_option(help: str) -> Any:
    """--k8s, spelled here once; each command says what the version is for."""
    return typer.Option("--k8s", help=help)


def json_option(help: str) -> Any:
    """--json, spelled here once; each command says what it prints."""
    return typer.Option("--json", help=help)
