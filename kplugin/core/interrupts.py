"""Ctrl-C, SIGTERM and SIGHUP as kplugin reports them: one line on stderr and the exit code
128+signal. Imported by the entry point before anything heavy, and by the CLI."""

from __future__ import annotations

import signal
import sys


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C (every cleanup runs), exit 128+signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def interruption(err: KeyboardInterrupt) -> tuple[str, int]:
    """The line to print and the exit code for Ctrl-C, SIGTERM or SIGHUP."""
    signum = getattr(err, "signum", signal.SIGINT)
    if signum == signal.SIGINT:
        return "kplugin: interrupted\n", 128 + signum
    return f"kplugin: terminated by signal {signum}\n", 128 + signum


def wrapped_interrupt(err: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or SIGTERM/SIGHUP) an error was raised from, if any. The interpreter
    wraps some exceptions in its own: Python 3.11 turns one raised in a class's
    __set_name__ (a dataclass being defined while a module imports) into a RuntimeError
    caused by it, so an interrupt at that moment arrives dressed as a bug."""
    seen: set[int] = set()
    cause: BaseException | None = err
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        # the chain Python would print: 'raise ... from None' hides the context
        cause = cause.__cause__ if cause.__cause__ is not None or cause.__suppress_context__ else cause.__context__
    return None


def report_interrupt(err: BaseException) -> int | None:
    """For an error that is, or was raised from, an interrupt: its line written to
    stderr, and its exit code. None for any other error."""
    interrupt = wrapped_interrupt(err)
    if interrupt is None:
        return None
    message, code = interruption(interrupt)
    sys.stderr.write(message)
    return code
