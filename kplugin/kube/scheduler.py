"""A kube-scheduler process of a run, the one kind e2e's replays (on the local control
plane or an existing cluster) and bench's runs start: its command line (an adopted
binary's subcommand before the scheduler's flags), its log, a clear error if it dies, and,
when it serves, its port on loopback with anonymous reads of the paths a run reads
(/metrics, its CPU profile) and its readiness.

A scheduler that does not serve (``--secure-port=0``) asks the API server for nothing to
authenticate its callers, so its log holds no refusal a replay would read as its own
RBAC's."""

from __future__ import annotations

import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from kplugin.core.errors import OperationError
from kplugin.kube.process import Process, free_ports

HEALTH = ("/healthz", "/readyz", "/livez")


class Scheduler:
    """kube-scheduler ``binary`` with ``config``, logging to ``log``; with ``serve``, on a
    free loopback port whose ``readable`` paths (besides the health checks) anyone may read."""

    def __init__(
        self,
        binary: Path,
        config: Path,
        log: Path,
        verbosity: int,
        *,
        vmodule: str | None = None,
        extra_args: Sequence[str] = (),
        prefix: Sequence[str] = (),
        serve: bool = False,
        readable: Sequence[str] = (),
    ) -> None:
        self.port = free_ports(1)[0] if serve else 0
        serving = (
            [
                f"--secure-port={self.port}",
                "--bind-address=127.0.0.1",
                # no authorization kubeconfig is given, and the port is 127.0.0.1's alone
                f"--authorization-always-allow-paths={','.join([*HEALTH, *readable])}",
            ]
            if serve
            else ["--secure-port=0"]
        )
        cmd = [
            str(binary),
            *prefix,  # an adopted binary's subcommand, before the scheduler's flags
            f"--config={config}",
            *serving,
            f"-v={verbosity}",
            *([f"--vmodule={vmodule}"] if vmodule else []),
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

    @property
    def log(self) -> Path:
        return self.process.log

    def check(self) -> None:
        self.process.check()

    def tail(self, lines: int = 15) -> list[str]:
        return self.process.tail(lines)

    def stop(self) -> None:
        self.process.stop()

    def fetch(self, path: str, timeout: float = 10.0) -> bytes:
        assert self.port, "a scheduler that does not serve has nothing to fetch"
        url = f"https://127.0.0.1:{self.port}{path}"
        with urllib.request.urlopen(url, context=self._ssl, timeout=timeout) as response:
            return bytes(response.read())

    def get(self, path: str, timeout: float = 10.0) -> str:
        return self.fetch(path, timeout).decode()

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Until it answers ok on /readyz (/healthz on 1.28, which serves no /readyz)."""
        deadline = time.monotonic() + timeout
        paths = ["/readyz", "/healthz"]
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
            f"kube-scheduler did not answer on 127.0.0.1:{self.port} within {timeout:.0f}s", details=self.tail()
        )
