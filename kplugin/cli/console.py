"""Output for people, always on stderr so stdout stays for data (--json, rendered files).

On a terminal it goes through Rich (colour, spinners). Elsewhere — CI logs, pipes — it
is plain text, which also spares the Rich import on the hot path.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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
        # reported once, here: what is left in the stream's buffer goes nowhere, so the
        # flush at exit does not fail (and report) a second time
        state.silence_stdout()
        raise OperationError(f"writing to stdout: {err.strerror or err}") from None


def print_table(table: Any) -> None:
    """A Rich table on stdout (through ``out``): ASCII borders where stdout cannot
    encode box drawing characters, colours only on a terminal."""
    import io

    from rich import box
    from rich.console import Console

    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    if not encoding.startswith("utf"):
        table.box = box.ASCII
    tty = _stdout_tty()
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=tty, width=width(), highlight=False).print(table)
    out(buffer.getvalue())


def _stdout_tty() -> bool:
    return sys.stdout is not None and not state.stdout_closed and sys.stdout.isatty()


def width() -> int:
    """The width output is laid out for: the terminal's, else ``COLUMNS``, else 80."""
    import shutil

    return max(20, shutil.get_terminal_size((80, 24)).columns)


@dataclass(frozen=True)
class Column:
    name: str
    right: bool = False  # numbers
    detail: bool = False  # long free text: in logs a line of its own under the table


@dataclass(frozen=True)
class Grid:
    """A table's content, laid out by ``print_grid`` for where it goes."""

    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()  # under the table (a legend)


def print_grid(grid: Grid) -> None:
    """On a terminal, a Rich table. Elsewhere (CI logs, pipes) plain text in which
    nothing is cut: a table of the short columns if it fits the width, each row's
    detail columns wrapped at word boundaries under it; one block per row otherwise."""
    if _stdout_tty():
        from rich.table import Table

        table = Table(title=grid.title or None, caption="\n".join(grid.notes) or None)
        for column in grid.columns:
            table.add_column(column.name, justify="right" if column.right else "left")
        for row in grid.rows:
            table.add_row(*row)
        print_table(table)
        return
    out(plain_grid(grid, width()))


def plain_grid(grid: Grid, columns: int) -> str:
    """``grid`` as plain text at most ``columns`` wide, but for words longer than that."""
    short = [i for i, c in enumerate(grid.columns) if not c.detail]
    sizes = {i: max(len(grid.columns[i].name), *(len(row[i]) for row in grid.rows)) for i in short}
    lines = [grid.title] if grid.title else []
    if sum(sizes.values()) + 2 * (len(short) - 1) > columns:
        for row in grid.rows:  # one block per row: the first value, then "name: value" lines
            lines += ["", row[0]]
            for i in range(1, len(row)):
                if row[i]:
                    lines += wrapped(f"{grid.columns[i].name}: {row[i]}", columns)
        return "\n".join([*lines, *_notes(grid, columns)]) + "\n"

    def cells(values: list[str]) -> str:
        laid = [
            value.rjust(sizes[i]) if grid.columns[i].right else value.ljust(sizes[i])
            for value, i in zip(values, short, strict=True)
        ]
        return "  ".join(laid).rstrip()

    lines.append(cells([grid.columns[i].name for i in short]))
    lines.append(cells(["-" * sizes[i] for i in short]))
    lines += [cells([row[i] for i in short]) for row in grid.rows]
    details = []
    for row in grid.rows:
        for i, column in enumerate(grid.columns):
            if column.detail and row[i] not in ("", "-"):
                details += wrapped(f"{row[0]} {column.name}: {row[i]}", columns, indent=0)
    lines += ["", *details] if details else []
    return "\n".join([*lines, *_notes(grid, columns)]) + "\n"


def _notes(grid: Grid, columns: int) -> list[str]:
    lines = [""] if grid.notes else []
    for text in grid.notes:
        lines += wrapped(text, columns, indent=0)
    return lines


def wrapped(text: str, columns: int, indent: int = 2) -> list[str]:
    """``text`` wrapped at word boundaries (a word longer than a line stays whole)."""
    import textwrap

    return textwrap.wrap(
        text,
        width=columns,
        initial_indent=" " * indent,
        subsequent_indent=" " * (indent + 4),
        break_long_words=False,
        break_on_hyphens=False,
    )


def note(text: str) -> None:
    """A note; the settings a library note names are spelled as flags."""
    from kplugin.cli.flags import render

    say(f"[yellow]note:[/] {render(text)}")


def elapsed(seconds: float) -> str:
    """12s, 2m05s, 1h02m."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole // 60 % 60:02d}m"


def heartbeat_seconds() -> float:
    """How often a step that goes on is said to go on, in logs (KPLUGIN_HEARTBEAT, 30s)."""
    try:
        return max(0.1, float(os.environ.get("KPLUGIN_HEARTBEAT", "30")))
    except ValueError:
        return 30.0


class Steps:
    """The steps of one long operation, each with its own elapsed time. On a terminal the
    step at hand is ``show``n (a spinner) and each finished step stays as one line with
    its time; in logs a step's start and end are lines of their own, a step that goes on
    says so every ``heartbeat_seconds()`` (no spinner), and on GitHub Actions each step
    is a collapsible group."""

    def __init__(self, show: Callable[[str], None] | None = None, line: Callable[[str], None] | None = None) -> None:
        self._show = show  # the live display's update, on a terminal
        self._line = line or say
        self._lock = threading.Lock()
        self._current = ""
        self._since = 0.0
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        from kplugin.cli import github  # only for long operations: not on the start-up path

        self._github = github
        self._grouped = show is None and github.active()

    def step(self, text: str) -> None:
        with self._lock:
            if text == self._current:
                return
            self._finish()
            self._current, self._since = text, time.monotonic()
            if self._show is not None:
                self._show(text)
                return
            self._line(self._github.group(text) if self._grouped else f"  {text} …")
            if self._beat is None:
                self._beat = threading.Thread(target=self._heartbeat, daemon=True)
                self._beat.start()

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            self._finish()
            self._current = ""

    def _finish(self) -> None:
        if not self._current:
            return
        took = elapsed(time.monotonic() - self._since)
        if self._show is not None:
            self._line(f"[green]✓[/] {self._current} ({took})")
            return
        if self._grouped:
            self._line(self._github.endgroup())
        self._line(f"  {self._current}: done in {took}")

    def _heartbeat(self) -> None:
        every = heartbeat_seconds()
        while not self._stop.wait(every):
            with self._lock:
                if self._current and time.monotonic() - self._since >= every:
                    self._line(f"  {self._current} … still running ({elapsed(time.monotonic() - self._since)})")


@contextmanager
def status(text: str) -> Iterator[Callable[[str], None]]:
    """A spinner on a terminal; a line per step's start and end elsewhere (see Steps).
    Yields the function that names the next step."""
    if _is_tty():
        with _rich().status(text) as live:
            steps = Steps(show=lambda step: live.update(step), line=_rich().print)
            try:
                yield steps.step
            finally:
                steps.close()
    else:
        say(text)
        steps = Steps()
        try:
            yield steps.step
        finally:
            steps.close()


def interactive() -> bool:
    """Prompts only on a terminal, never in CI."""
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        return False
    return sys.stdin.isatty() and sys.stderr.isatty()
