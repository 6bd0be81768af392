"""The project's kube-scheduler for one run (kplugin.kube.scheduler's, serving on
loopback: anonymous reads of /metrics, and of its CPU profile when one is recorded), its
/metrics, and what /proc says about its CPU and memory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from kplugin.bench import metrics
from kplugin.bench.cpuprofile import ENDPOINT
from kplugin.core.errors import OperationError
from kplugin.kube.scheduler import Scheduler

# plugin_execution_duration_seconds goes through the scheduler's asynchronous recorder,
# flushed once a second: wait that long before reading /metrics at a phase's edge
FLUSH_SECONDS = 1.3


def cpu_seconds(pid: int) -> float:
    """The process's user and system CPU so far, in seconds (0 if it cannot be read)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in bytes (0 if it cannot be read)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def own_cpu() -> float:
    """This process's CPU so far, in seconds: the load generator's."""
    times = os.times()
    return times.user + times.system


def scrape(scheduler: Scheduler, prefixes: tuple[str, ...] = ("scheduler_",)) -> list[metrics.Sample]:
    """The scheduler's /metrics samples whose names start with ``prefixes``."""
    try:
        return metrics.parse(scheduler.get("/metrics"), prefixes)
    except OSError as err:
        scheduler.check()
        raise OperationError(f"kube-scheduler /metrics: {err}") from None


def start(
    binary: Path, config: Path, log: Path, verbosity: int, extra_args: Sequence[str], profiling: bool,
    prefix: Sequence[str],
) -> Scheduler:  # fmt: skip
    """A run's scheduler, serving its /metrics (and, when recorded, its CPU profile) on loopback."""
    readable = ["/metrics", *([ENDPOINT] if profiling else [])]
    return Scheduler(
        binary, config, log, verbosity, extra_args=extra_args, prefix=prefix, serve=True, readable=readable
    )
