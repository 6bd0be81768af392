"""Output for people, always on stderr so stdout stays for data (--json, rendered files).

On a terminal it goes through Rich (colour, spinners). Elsewhere — CI logs, pipes — it
is plain text, which also spares the Rich import on the hot path.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

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


def note(text: str) -> None:
    say(f"[yellow]note:[/] {text}")


@contextmanager
def status(text: str) -> Iterator[None]:
    """A spinner on a terminal; one line announcing the step elsewhere."""
    if _is_tty():
        with _rich().status(text):
            yield
    else:
        say(text)
        yield


def interactive() -> bool:
    """Prompts only on a terminal, never in CI."""
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        return False
    return sys.stdin.isatty() and sys.stderr.isatty()
