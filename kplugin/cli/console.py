"""Output for people, always on stderr so stdout stays for data (--json, rendered files).

On a terminal it goes through Rich (colour, spinners). Elsewhere — CI logs, pipes — it
is plain text, which also spares the Rich import on the hot path.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from kplugin.cli import state

_MARKUP = re.compile(r"\[/?[a-z ]*\]")


def _is_tty() -> bool:
    return sys.stderr.isatty()


@cache
def _rich() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def say(text: str) -> None:
    """One line for the user; ``text`` may carry Rich markup such as [yellow]note:[/]."""
    if _is_tty():
        _rich().print(text)
    else:
        sys.stderr.write(_MARKUP.sub("", text) + "\n")


def out(text: str) -> None:
    """Data for stdout (a rendered file, --json). A closed stdout or a full disk is a
    failed operation; a reader that went away (a closed pipe) ends kplugin quietly."""
    from kplugin.core.errors import OperationError

    stream = sys.stdout
    if stream is None or state.stdout_closed:
        raise OperationError("stdout is closed; redirect it to a file (or use -o FILE where the command has it)")
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        raise state.QuietExit(1) from None
    except OSError as err:
        raise OperationError(f"writing to stdout: {err.strerror or err}") from None


def print_table(table: Any) -> None:
    """A Rich table on stdout (through ``out``): ASCII borders where stdout cannot
    encode box drawing characters, colours only on a terminal."""
    import io
    import shutil

    from rich import box
    from rich.console import Console

    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    if not encoding.startswith("utf"):
        table.box = box.ASCII
    tty = sys.stdout is not None and not state.stdout_closed and sys.stdout.isatty()
    buffer = io.StringIO()
    width = shutil.get_terminal_size((120, 24)).columns if tty else 120
    Console(file=buffer, force_terminal=tty, width=width, highlight=False).print(table)
    out(buffer.getvalue())


def note(text: str) -> None:
    """A note; the settings a library note names are spelled as flags."""
    from kplugin.cli.flags import render

    say(f"[yellow]note:[/] {render(text)}")


@contextmanager
def status(text: str) -> Iterator[Callable[[str], None]]:
    """A spinner on a terminal; one line per step elsewhere. Yields an update function."""
    if _is_tty():
        with _rich().status(text) as live:
            yield lambda step: live.update(step)
    else:
        say(text)
        last: list[str] = []

        def update(step: str) -> None:
            # a step that only changed its elapsed time is not worth a new log line
            key = step.rsplit(" (", 1)[0]
            if not last or last[-1] != key:
                last.append(key)
                say(step)

        yield update


def interactive() -> bool:
    """Prompts only on a terminal, never in CI."""
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        return False
    return sys.stdin.isatty() and sys.stderr.isatty()
