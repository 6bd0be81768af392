"""What kplugin add plugin and kplugin upgrade share: the --keep-edited option and the
report of the files they changed."""

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Annotated

import typer

from kplugin.cli.console import note, say

KeepEdited = Annotated[
    bool,
    typer.Option("--keep-edited", help="Leave hand-edited generated files as they are; write FILE.kplugin-new."),
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show what would change; change nothing.")]


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
