"""The local control plane's ports: free, distinct, and below the kernel's ephemeral range,
where no outgoing connection can take one between its pick and the component's listen (a
CI run lost kube-apiserver's port that way)."""

from __future__ import annotations

import socket

import pytest

from kplugin.kube import process


def test_ports_are_free_distinct_and_below_the_ephemeral_range() -> None:
    start = process._ephemeral_start()
    for _ in range(20):
        ports = process.free_ports(3)
        assert len(set(ports)) == 3
        assert all(process.LISTEN_FLOOR <= port < start for port in ports), (ports, start)
        for port in ports:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.bind(("127.0.0.1", port))  # free: it binds


def test_a_port_taken_by_a_listener_is_not_picked(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        held = taken.getsockname()[1]
        # the only candidate below the range is the taken port: the kernel picks instead
        monkeypatch.setattr(process.random, "sample", lambda population, k: [held])
        (port,) = process.free_ports(1)
        assert port != held
