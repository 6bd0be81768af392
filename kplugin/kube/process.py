"""A process a run starts (etcd, kube-apiserver, kube-scheduler), and the loopback
ports it listens on."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from kplugin.core.errors import OperationError

# Ports picked below the kernel's ephemeral range: a port from that range, free when picked,
# can be handed to any outgoing connection before the component listens on it (a CI run
# lost kube-apiserver's that way); below it, only another listener can take it.
LISTEN_FLOOR = 20_000


def _ephemeral_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports, below the ephemeral range where it leaves
    room (all held open while they are picked, so none is picked twice), else any the
    kernel gives."""
    sockets: list[socket.socket] = []
    top = _ephemeral_start()
    candidates = random.sample(range(LISTEN_FLOOR, top), min(64, top - LISTEN_FLOOR)) if top > LISTEN_FLOOR else []
    try:
        for port in candidates:
            if len(sockets) == count:
                break
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                sock.close()
                continue
            sockets.append(sock)
        while len(sockets) < count:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


class Process:
    """One started component: its log file, and a clear error if it dies."""

    def __init__(self, name: str, cmd: Sequence[str], log: Path) -> None:
        self.name = name
        self.log = log
        self._out: IO[bytes] = log.open("wb")
        try:
            # in UTC: klog's headers carry no zone, and e2e reads times from them (TZ=UTC is
            # Go's UTC without a zone file; no clock goes back for daylight saving)
            self.popen = subprocess.Popen(
                list(cmd),
                stdin=subprocess.DEVNULL,
                stdout=self._out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, "TZ": "UTC"},
            )
        except OSError as err:
            self._out.close()
            raise OperationError(f"cannot start {name} ({cmd[0]}): {err.strerror or err}") from None

    def tail(self, lines: int = 15) -> list[str]:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if line.strip()][-lines:]

    def check(self) -> None:
        code = self.popen.poll()
        if code is not None:
            raise OperationError(f"{self.name} exited (code {code}); the end of its log:", details=self.tail())

    def stop(self) -> None:
        if self.popen.poll() is None:
            with_group = os.getpgid(self.popen.pid)
            os.killpg(with_group, signal.SIGTERM)
            try:
                self.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(with_group, signal.SIGKILL)
                self.popen.wait()
        self._out.close()
