"""GitHub Actions workflow commands: annotations beside the code, and log groups.

On GitHub Actions (``GITHUB_ACTIONS=true``) the runner reads every line a step prints,
on stdout and on stderr alike (actions/runner's ScriptHandler hands both streams to its
ActionCommandManager), for commands such as ``::error file=F,line=N,title=T::message``.
kplugin writes them to stderr, so that stdout's data (--json, rendered files) stays
clean; elsewhere it writes none. Escaping follows the runner's own (ActionCommand):
a message escapes ``%``, CR and LF; a property also ``:`` and ``,``.

Which file and line a message names is read here too, by pure functions: ``path:line``
or ``path:line:col`` (a compiler's line, ``kplugin add``'s method locations), or a path
followed by ``at line N`` (``column C``), as kplugin's YAML and JSON errors say it.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

LEVELS = ("error", "warning", "notice")
# doctor's severities (kplugin.doctor.rules) as annotation levels
SEVERITY_LEVELS = {"error": "error", "warning": "warning", "info": "notice"}
TITLE = "kplugin"


def active(environ: Mapping[str, str] | None = None) -> bool:
    """kplugin runs as a step of a GitHub Actions job."""
    return (os.environ if environ is None else environ).get("GITHUB_ACTIONS") == "true"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_path(path: str | Path, workspace: str | Path | None = None) -> str:
    """``path`` relative to the workspace (``workspace``, else GITHUB_WORKSPACE, else the
    current directory) when it is under it, as GitHub places annotations; else absolute
    (GitHub cannot place it beside the code, but the log names it whole)."""
    if workspace is None:
        workspace = os.environ.get("GITHUB_WORKSPACE") or os.getcwd()
    base = os.path.abspath(workspace)
    for candidate, root in ((os.path.abspath(path), base), (os.path.realpath(path), os.path.realpath(base))):
        if candidate == root or candidate.startswith(root.rstrip(os.sep) + os.sep):
            return Path(os.path.relpath(candidate, root)).as_posix()
    return os.path.abspath(path)


def annotation(
    level: str,
    message: str,
    file: str | Path | None = None,
    line: int | None = None,
    col: int | None = None,
    title: str | None = None,
) -> str:
    """One workflow command line (no newline): ``::error file=F,line=N,col=C,title=T::message``."""
    if level not in LEVELS:
        raise ValueError(f"annotation level {level!r}: one of {', '.join(LEVELS)}")
    properties = []
    if file is not None:
        properties.append(f"file={escape_property(workspace_path(file))}")
    if line is not None:
        properties.append(f"line={line}")
    if col is not None:
        properties.append(f"col={col}")
    if title is not None:
        properties.append(f"title={escape_property(title)}")
    head = f"{level} {','.join(properties)}" if properties else level
    return f"::{head}::{escape_data(message)}"


def emit(
    level: str,
    message: str,
    file: str | Path | None = None,
    line: int | None = None,
    col: int | None = None,
    title: str | None = None,
) -> None:
    """Write one annotation to stderr on GitHub Actions; elsewhere nothing."""
    if active():
        write([annotation(level, message, file, line, col, title)])


def write(commands: Iterable[str]) -> None:
    """Workflow command lines to stderr. They come in addition to what kplugin says
    anyway: a stderr that cannot take them changes nothing."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write("".join(f"{command}\n" for command in commands))
        stream.flush()
    except (OSError, ValueError):
        pass


def group(title: str) -> str:
    """The line that opens a collapsible group of log lines, up to ``endgroup()``'s."""
    return f"::group::{escape_data(title)}"


def endgroup() -> str:
    return "::endgroup::"


@dataclass(frozen=True)
class Location:
    """A file and line a text names; ``text`` is what it says there (for a
    ``path:line:col: text`` line, the part after the location; else the whole text)."""

    file: str
    line: int
    col: int | None
    text: str


# path:line or path:line:col, the path without spaces, quotes or brackets
_COLON = re.compile(r"(?<![^\s'\"(\[<])(?P<file>[^\s:'\"`()\[\]<>,;]+):(?P<line>\d+)(?::(?P<col>\d+))?(?!\w)")
# "<path> ... at line N" (", column C" / " column C"), as kplugin's YAML and JSON errors say it
_AT_LINE = re.compile(r"\bat line (?P<line>\d+)(?:,? column (?P<col>\d+))?")
_TRIM = "'\"`()[]<>,;:"


def locate(text: str, is_file: Callable[[str], bool] = os.path.isfile) -> Location | None:
    """The first existing file (``is_file``) and line that ``text`` names, or None."""
    for match in _COLON.finditer(text):
        if int(match["line"]) > 0 and is_file(match["file"]):
            col = int(match["col"]) if match["col"] else None
            rest = text[match.end() :]
            said = rest[2:].strip() if rest.startswith(": ") else text.strip()
            return Location(match["file"], int(match["line"]), col, said or text.strip())
    for match in _AT_LINE.finditer(text):
        before = [word.strip(_TRIM) for word in text[: match.start()].split()]
        named = next((word for word in reversed(before) if word and is_file(word)), None)
        if named is not None and int(match["line"]) > 0:
            col = int(match["col"]) if match["col"] else None
            return Location(named, int(match["line"]), col, text.strip())
    return None


def error_annotations(
    message: str, details: Iterable[str] = (), is_file: Callable[[str], bool] = os.path.isfile
) -> list[str]:
    """The ::error lines for a kplugin error: one for the message if it names a file and
    line, one for each detail line that does (a compiler's ``file.go:12:3: ...``)."""
    found = [located for text in (message, *details) if (located := locate(text, is_file)) is not None]
    return [annotation("error", at.text, at.file, at.line, at.col, TITLE) for at in found]
