"""The project's kube-scheduler for one run: its process (on a free port, anonymous reads
of /metrics on loopback, and of its CPU profile when one is recorded), its readiness, its
/metrics, and what /proc says about its CPU and memory.
"""

from __future__ import annotations

import os
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from kplugin.bench import metrics
from kplugin.bench.cpuprofile import ENDPOINT
from kplugin.core.errors import OperationError
from kplugin.kube.controlplane import Process, free_ports

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


class Scheduler:
    """The project's kube-scheduler for one run: its process and its /metrics."""

    def __init__(
        self,
        binary: Path,
        config: Path,
        log: Path,
        verbosity: int,
        extra_args: Sequence[str] = (),
        profiling: bool = False,
        prefix: Sequence[str] = (),
    ) -> None:
        (self.port,) = free_ports(1)
        allowed = ["/healthz", "/readyz", "/livez", "/metrics", *([ENDPOINT] if profiling else [])]
        cmd = [
            str(binary),
            *prefix,  # an adopted binary's subcommand, before the scheduler's flags
            f"--config={config}",
            f"--secure-port={self.port}",
            "--bind-address=127.0.0.1",
            # anonymous reads of /metrics (and the CPU profile) on loopback: no authorization
            # kubeconfig is given, and the port is 127.0.0.1's alone
            f"--authorization-always-allow-paths={','.join(allowed)}",
            f"-v={verbosity}",
            *extra_args,  # the feature gates the plugins' points need
        ]
        self.process = Process("kube-scheduler", cmd, log)
        # its serving certificate is self-signed and made up at start: nothing to verify it by
        self._ssl = ssl.create_default_context()
        self._ssl.check_hostname = False
        self._ssl.verify_mode = ssl.CERT_NONE

    @property
    def pid(self) -> int:
        return self.process.popen.pid

    def fetch(self, path: str, timeout: float = 10.0) -> bytes:
        url = f"https://127.0.0.1:{self.port}{path}"
        with urllib.request.urlopen(url, context=self._ssl, timeout=timeout) as response:
            return bytes(response.read())

    def get(self, path: str, timeout: float = 10.0) -> str:
        return self.fetch(path, timeout).decode()

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        paths = ["/readyz", "/healthz"]  # 1.28 serves no /readyz
        while time.monotonic() < deadline:
            self.process.check()
            try:
                if self.get(paths[0], timeout=2).strip() == "ok":
                    return
            except urllib.error.HTTPError as err:
                err.close()
                if err.code == 404 and len(paths) > 1:
                    paths.pop(0)
            except OSError:
                pass
            time.sleep(0.2)
        raise OperationError(
            f"kube-scheduler did not answer on 127.0.0.1:{self.port} within {timeout:.0f}s", details=self.process.tail()
        )

    def scrape(self, prefixes: tuple[str, ...] = ("scheduler_",)) -> list[metrics.Sample]:
        try:
            return metrics.parse(self.get("/metrics"), prefixes)
        except OSError as err:
            self.process.check()
            raise OperationError(f"kube-scheduler /metrics: {err}") from None

    def stop(self) -> None:
        self.process.stop()
