"""A stand-in API server for the unit tests of kplugin's client (bulk creation, snapshot
paging): a keep-alive HTTP server on 127.0.0.1 whose handler answers JSON. The tests that
need a real API server use the local control plane (test_integration_*)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class JsonHandler(BaseHTTPRequestHandler):
    """Subclass it with do_GET / do_POST that ``answer``."""

    protocol_version = "HTTP/1.1"  # keep-alive, as kplugin's client expects
    disable_nagle_algorithm = True  # as a Go server: headers and body are not held apart

    def log_message(self, *args: Any) -> None:
        pass

    def answer(self, code: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextlib.contextmanager
def serving(handler: type[JsonHandler]) -> Iterator[str]:
    """The server's URL while it runs in a thread of its own; shut down on leaving."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
