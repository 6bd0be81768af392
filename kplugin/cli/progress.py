"""Progress of long commands (e2e replays, snapshots, bulk creation): the current step
and counted batches. On a terminal one Rich display (a spinner for the step, a bar with
the rate for each batch, each finished step a line with its time); elsewhere plain lines
on stderr (console.Steps: a step's start, its end with its time, a heartbeat while it
goes on), a batch every ten seconds and when it ends, so CI logs stay short."""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any

from kplugin.cli import console

_PLAIN_EVERY = 10.0


class Reporter:
    """The command line's kplugin.core.progress.Observer: ``step(text)`` names what is
    going on, ``count(what, done, total)`` moves a bar, ``note(text)`` tells a notice."""

    def __init__(self, title: str) -> None:
        self.title = title
        self._live: Any = None
        self._step: Any = None
        self._tasks: dict[str, Any] = {}
        self._started: dict[str, float] = {}
        self._last_line: dict[str, float] = {}
        self._steps: console.Steps | None = None
        self._entered = False
        self._finished: set[str] = set()  # counts whose bar became a line (a terminal's)

    def __enter__(self) -> Reporter:
        self._entered = True
        return self

    def _start(self) -> None:
        """The display, from the first step or count on: a run that stops at a bad input
        before its first step says one line, its error."""
        if self._steps is not None or not self._entered:
            return
        if console._is_tty():
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self._live = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                console=console._rich(),
            )
            self._live.start()
            self._step = self._live.add_task(self.title, total=None, rate="")
            live = self._live
            self._steps = console.Steps(
                show=lambda text: live.update(self._step, description=text), line=live.console.print
            )
        else:
            console.say(self.title)
            self._steps = console.Steps()

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        if self._steps is not None:
            self._steps.close()
        if self._live is not None:
            self._live.stop()

    def step(self, text: str) -> None:
        """The next step (its start and, when the next begins, its end with its time)."""
        self._start()
        if self._steps is None:
            console.say(text)
            return
        self._steps.step(text)

    def note(self, text: str) -> None:
        """A notice, above the live display on a terminal."""
        console.note(text)

    def count(self, what: str, done: int, total: int) -> None:
        self._start()
        now = time.monotonic()
        started = self._started.setdefault(what, now)
        rate = done / (now - started) if now > started else 0.0
        # a rate of one object, or of none measured (all at once), says nothing
        shown = f"  {what}: {done:,}/{total:,}" + (f" ({rate:,.0f}/s)" if done > 1 and now > started else "")
        if self._live is not None:
            if done >= total and what in self._finished:
                return
            self._finished.discard(what)
            if what not in self._tasks:
                self._tasks[what] = self._live.add_task(what, total=total, rate="")
            self._live.update(self._tasks[what], completed=done, total=total, rate=f"{rate:,.0f}/s")
            if done >= total:  # a finished bar becomes a line: bench's many phases never pile up
                self._live.remove_task(self._tasks.pop(what))
                self._finished.add(what)
                self._live.console.print(shown)
            return
        if total <= 1 and done < total:
            return  # a count of one says its end only
        last = self._last_line.get(what)
        if last is None or done >= total or now - last >= _PLAIN_EVERY:
            if last is not None and done >= total and self._last_line.get(what + "\0done"):
                return
            self._last_line[what] = now
            if done >= total:
                self._last_line[what + "\0done"] = now
            console.say(shown)
