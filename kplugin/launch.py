"""The console entry point. Signals and broken standard streams are dealt with here,
before anything heavy is imported, so that Ctrl-C in the first moments of a run prints
one line (no traceback) and SIGTERM or SIGHUP clean up as Ctrl-C does."""

from __future__ import annotations

import errno
import io
import os
import signal
import sys


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C (every cleanup runs), exit 128+signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, _frame: object) -> None:
    raise Terminated(signum)


class _ClosedStdout(io.TextIOWrapper):
    """stdout when fd 1 was closed: it points at /dev/null, but whatever a library writes
    there (click's --help) fails as it would have, instead of vanishing."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "stdout is closed; redirect it to a file")


def _guard_streams() -> bool:
    """Keep fds 0-2 open (on /dev/null when they were closed), so that no file kplugin
    opens later becomes its 'stdout'; returns whether stdout was closed. Output that
    cannot be encoded (PYTHONIOENCODING=ascii) is escaped rather than fatal."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    if 1 in closed:
        sys.stdout = _ClosedStdout(open(1, "wb", closefd=False))  # noqa: SIM115 - lives as long as the process
    if 2 in closed:
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    return 1 in closed


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


def main() -> None:
    try:
        signal.signal(signal.SIGTERM, _terminate)
        signal.signal(signal.SIGHUP, _terminate)
        stdout_closed = _guard_streams()
        from kplugin.cli import main as run
        from kplugin.cli import state

        state.stdout_closed = stdout_closed
        run()  # reports its own interruptions; this catches those before and around it
    except (KeyboardInterrupt, Exception) as err:  # or one the interpreter wrapped while kplugin imported
        code = report_interrupt(err)
        if code is None:
            raise
        sys.exit(code)
