"""The one helper that runs external commands (go, docker, the built scheduler)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from kplugin.errors import OperationError, ToolError


def which(tool: str) -> str | None:
    return shutil.which(tool)


def run(
    cmd: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    what: str | None = None,
    timeout: float | None = None,
) -> str:
    """Run ``cmd``; return its combined output, or raise ToolError naming what failed."""
    merged = {**os.environ, **(env or {})}
    label = what or " ".join(cmd[:2])
    try:
        proc = subprocess.run(
            list(cmd),
            cwd=cwd,
            env=merged,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise OperationError(f"{cmd[0]} not found on PATH; install it to {label}") from None
    except subprocess.TimeoutExpired as err:
        raise OperationError(f"{label} did not finish within {timeout:.0f}s") from err
    if proc.returncode != 0:
        raise ToolError(cmd, proc.returncode, proc.stdout, f"{label} failed (exit {proc.returncode})")
    return proc.stdout
