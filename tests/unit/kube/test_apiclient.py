"""kplugin's API client over real TLS: a kept-alive connection the server has dropped in
between (kube-apiserver drops one idle for 90 s) is retried once on a fresh connection,
not reported as "cannot reach … EOF occurred in violation of protocol"."""

from __future__ import annotations

import socket
import ssl
import struct
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kplugin.core.errors import OperationError
from kplugin.kube.apiclient import Client, Endpoint


class Server:
    """A TLS server that answers each request with ``{}``; with ``drop`` set it then
    waits for ``drop_idle`` and resets the connection, as a server dropping an idle
    kept-alive connection does."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.drop = True
        self.go = threading.Event()
        self.dropped = threading.Event()
        self.connections = 0
        self.requests = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.connections += 1
            with self.context.wrap_socket(raw, server_side=True) as conn:
                self.answer(conn)

    def answer(self, conn: ssl.SSLSocket) -> None:
        data = b""
        while True:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            data = data.split(b"\r\n\r\n", 1)[1]
            self.requests += 1
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
            if self.drop:
                self.go.wait(10)  # the client has read the answer: a reset now loses nothing
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()  # a reset, no TLS close_notify
                self.dropped.set()
                return

    def drop_idle(self) -> None:
        self.dropped.clear()
        self.go.set()
        assert self.dropped.wait(10)
        self.go.clear()

    def close(self) -> None:
        if self.listener.fileno() == -1:
            return
        self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() in serve; new connections are refused
        self.listener.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[Server, Client]]:
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    tls = Server(cert, key)
    client = Client(Endpoint(f"https://127.0.0.1:{tls.port}", ca_data=cert.read_bytes()), timeout=5)
    try:
        yield tls, client
    finally:
        client.close()
        tls.close()


def test_a_connection_the_server_dropped_is_retried_on_a_fresh_one(server: tuple[Server, Client]) -> None:
    tls, client = server
    for path in ("/api/v1/nodes", "/api/v1/pods", "/api/v1/namespaces"):
        assert client.request("GET", path) == {}
        tls.drop_idle()  # the kept connection is gone before the next request uses it
    assert (tls.connections, tls.requests) == (3, 3)


def test_a_kept_connection_is_reused(server: tuple[Server, Client]) -> None:
    tls, client = server
    tls.drop = False
    for path in ("/a", "/b", "/c"):
        assert client.request("GET", path) == {}
    assert (tls.connections, tls.requests) == (1, 3)


def test_a_server_that_is_gone_is_still_one_line(server: tuple[Server, Client]) -> None:
    tls, client = server
    assert client.request("GET", "/a") == {}
    tls.drop_idle()
    tls.close()
    with pytest.raises(OperationError, match=r"^cannot reach the API server at https://127\.0\.0\.1:\d+: "):
        client.request("GET", "/b")
