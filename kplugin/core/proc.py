"""The one helper that runs external commands (go, docker, the built scheduler)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from kplugin.core.errors import OperationError, ToolError


def which(tool: str) -> str | None:
    return shutil.which(tool)


class TimedOut(OperationError):
    """A command that did not finish in the time it was given (``probe``)."""


def _cannot_start(cmd: Sequence[str], label: str, err: OSError) -> OperationError:
    if isinstance(err, FileNotFoundError):
        return OperationError(f"{cmd[0]} not found on PATH; install it to {label}")
    return OperationError(f"cannot run {cmd[0]}: {err.strerror or err}")


def _failed(cmd: Sequence[str], code: int, output: str, label: str) -> ToolError:
    return ToolError(cmd, code, output, f"{label} failed (exit {code})")


def run(
    cmd: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    what: str | None = None,
    timeout: float | None = None,
    stdin: str | None = None,
    merge: bool = True,
) -> str:
    """Run ``cmd`` (with ``stdin`` as its input); return its combined output (only its
    stdout when not ``merge``), or raise ToolError naming what failed."""
    merged = {**os.environ, **(env or {})}
    label = what or " ".join(cmd[:2])
    try:
        proc = subprocess.run(
            list(cmd),
            cwd=cwd,
            env=merged,
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge else subprocess.PIPE,
            text=True,
            timeout=timeout,
            check=False,
        )
    except OSError as err:
        raise _cannot_start(cmd, label, err) from None
    except subprocess.TimeoutExpired as err:
        raise OperationError(f"{label} did not finish within {timeout:.0f}s") from err
    if proc.returncode != 0:
        raise _failed(cmd, proc.returncode, proc.stdout + (proc.stderr or ""), label)
    return proc.stdout


def probe(cmd: Sequence[str], *, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` for its answer, whatever its exit code (stdout and stderr apart).
    Only a command that cannot be started at all raises."""
    try:
        return subprocess.run(
            list(cmd), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, check=False
        )
    except OSError as err:
        raise _cannot_start(cmd, cmd[0], err) from None
    except subprocess.TimeoutExpired as err:
        raise TimedOut(f"{cmd[0]} did not finish within {timeout:.0f}s") from err


def stream(
    cmd: Sequence[str],
    on_line: Callable[[str], None],
    *,
    env: Mapping[str, str] | None = None,
    what: str | None = None,
) -> str:
    """Run ``cmd``, handing each output line to ``on_line`` as it comes; return the
    whole output or raise ToolError. On Ctrl-C the command gets SIGINT (so it can clean
    up) before the interrupt goes on."""
    label = what or " ".join(cmd[:2])
    lines: list[str] = []
    try:
        process = subprocess.Popen(
            list(cmd),
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    except OSError as err:
        raise _cannot_start(cmd, label, err) from None
    with process:
        try:
            assert process.stdout is not None
            for raw in process.stdout:
                line = raw.rstrip("\n")
                lines.append(line)
                on_line(line)
            code = process.wait()
        except BaseException:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
            raise
    output = "\n".join(lines)
    if code != 0:
        raise _failed(cmd, code, output, label)
    return output
