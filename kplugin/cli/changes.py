"""What kplugin add plugin, add extension-point and upgrade share: the --keep-edited and
--template options, loading the project with its template, and the report of the files
they changed."""

from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated

import typer

from kplugin.cli.console import note, say

if TYPE_CHECKING:
    from kplugin.model.project import Project
    from kplugin.model.versions import Target

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


def load_project(path: Path, template: Path | None, *, renders: bool = True) -> "Project":
    """The project at ``path``, with the fork ``template`` (checked first) to render it
    through. A project made from a fork needs it when the command ``renders`` the
    template (upgrade, add; build, e2e and bench for --k8s)."""
    from kplugin.generate.templating import fork
    from kplugin.model import project as projects

    project = projects.load(path)
    if template is None and not renders:
        return project
    return project.with_template(fork(template) if template is not None else None)


def load_for_version(path: Path, template: Path | None, k8s: str | None) -> "tuple[Project, Target]":
    """The project and the version build, e2e and bench work on: the project's, or --k8s
    through a retargeted copy, which renders the template (a project made from a fork
    needs --template then: refused here, before anything is built)."""
    from kplugin.model.versions import resolve

    project = load_project(path, template, renders=False)
    target = resolve(k8s) if k8s is not None else project.target
    if target.version != project.version:
        project = project.with_template(project.template)
    return project, target


def report(
    headline: str,
    changed: Sequence[PurePosixPath],
    kept: Sequence[PurePosixPath],
    dry_run: bool,
    not_recreated: Sequence[PurePosixPath] = (),
    notices: Sequence[str] = (),
) -> None:
    for notice in notices:
        note(notice)
    say(f"{headline}: {len(changed)} file(s) {'would change' if dry_run else 'changed'}")
    for path in changed:
        say(f"  {path}")
    for path in kept:
        note(f"{path} was edited by hand and kept; the new version is {path}.kplugin-new")
    for path in not_recreated:
        note(f"{path} is yours and was deleted: not re-created")
