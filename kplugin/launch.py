"""The console entry point. Signals and broken standard streams are dealt with here,
before anything heavy is imported, so that Ctrl-C in the first moments of a run prints
one line (no traceback) and SIGTERM or SIGHUP clean up as Ctrl-C does."""

from __future__ import annotations

import errno
import io
import os
import signal
import sys

from kplugin.core.interrupts import Terminated, report_interrupt


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
