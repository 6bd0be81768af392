"""How a long operation tells its caller what it is doing: one line a step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

Progress = Callable[[str], None]


class Observer(Protocol):
    """What a job (kplugin e2e's, bench's, build's pipeline) tells the person waiting: the
    step at hand, counted batches and notes. It only reports: what a job decides is its
    result or its error."""

    def step(self, text: str) -> None: ...

    def count(self, what: str, done: int, total: int) -> None: ...

    def note(self, text: str) -> None: ...


class Quiet:
    """An Observer that tells nobody (tests, and jobs run inside other jobs)."""

    def step(self, text: str) -> None:
        pass

    def count(self, what: str, done: int, total: int) -> None:
        pass

    def note(self, text: str) -> None:
        pass
