"""What kplugin add plugin, add extension-point and upgrade share: the report of the
files they changed (their options: kplugin.cli.options)."""

from collections.abc import Sequence
from pathlib import PurePosixPath

from kplugin.cli.console import note, say


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
    if not_recreated:  # one line, whatever their number (refresh passes none: it says so every run)
        listed = ", ".join(str(p) for p in not_recreated[:4]) + (" …" if len(not_recreated) > 4 else "")
        note(f"{len(not_recreated)} file(s) of yours were deleted and are not re-created: {listed}")
