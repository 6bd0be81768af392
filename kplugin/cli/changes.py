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

KeepEdited = Annotated[
    bool,
    typer.Option("--keep-edited", help="Leave hand-edited generated files as they are; write FILE.kplugin-new."),
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show what would change; change nothing.")]
Template = Annotated[
    Path | None,
    typer.Option(
        "--template",
        help="The fork of kplugin's project template the project was made from (kplugin new --template), a "
        "directory or .zip. Needed, and only then, when its kplugin.yaml says template: fork.",
    ),
]


def load_project(path: Path, template: Path | None) -> "Project":
    """The project at ``path``, rendered through the fork ``template`` (checked first)
    where it was made from one."""
    from kplugin.generate.templating import fork
    from kplugin.model import project as projects

    project = projects.load(path)
    return project.with_template(fork(template) if template is not None else None)


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
