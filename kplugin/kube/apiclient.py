"""A small Kubernetes API client over keep-alive HTTPS connections: JSON requests,
paginated lists and watches. It serves the local control plane, a user's cluster
(through a kubeconfig), bulk creation and kplugin bench's load generator alike.

Each thread gets its own connection (``http.client`` connections are not thread-safe),
so a pool of worker threads is a pool of connections. Errors are one line that names the
API server and what it answered: unreachable, TLS, credentials refused (401), forbidden
(403), or the server's own message.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kplugin.core.errors import OperationError

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
LIST_PAGE = 500


class ApiError(OperationError):
    """The API server answered with an error status; ``detail`` is the server's own
    message, without kplugin's words around it."""

    def __init__(self, message: str, status: int, reason: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.detail = detail or message


@dataclass(frozen=True)
class Endpoint:
    """Where an API server is and how to authenticate to it."""

    server: str  # https://host:port[/path]
    token: str | None = None
    ca_file: str | None = None
    ca_data: bytes | None = None  # PEM
    cert_file: str | None = None
    key_file: str | None = None
    insecure: bool = False
    shown: str = ""  # how messages name it, e.g. "context prod of ~/.kube/config"
    _context: list[ssl.SSLContext] = field(default_factory=list, compare=False, repr=False)

    @property
    def name(self) -> str:
        return f"the API server at {self.server}" + (f" ({self.shown})" if self.shown else "")

    def ssl_context(self) -> ssl.SSLContext:
        if not self._context:
            try:
                context = ssl.create_default_context(
                    cafile=self.ca_file, cadata=self.ca_data.decode("ascii") if self.ca_data else None
                )
                if self.insecure:
                    context.check_hostname = False
                    context.verify_mode = ssl.CERT_NONE
                if self.cert_file:
                    context.load_cert_chain(self.cert_file, self.key_file)
            except (OSError, ssl.SSLError, ValueError) as err:
                raise OperationError(f"{self.name}: cannot use its TLS settings: {_reason(err)}") from None
            self._context.append(context)
        return self._context[0]

    def connect(self, timeout: float) -> http.client.HTTPConnection:
        parts = urllib.parse.urlsplit(self.server)
        host = parts.hostname or ""
        if parts.scheme == "http":
            return _Plain(host, parts.port or 80, timeout=timeout)
        return _Tls(host, parts.port or 443, timeout=timeout, context=self.ssl_context())

    @property
    def base_path(self) -> str:
        return urllib.parse.urlsplit(self.server).path.rstrip("/")


class _Plain(http.client.HTTPConnection):
    def connect(self) -> None:
        super().connect()
        # headers and body may leave in two writes: without this, Nagle's algorithm and
        # the server's delayed ACK hold every request for 40 ms
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _Tls(http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def query(path: str, **params: str | int | None) -> str:
    """``path`` with query parameters given in snake_case (label_selector=...), those
    that are None left out."""

    def camel(name: str) -> str:
        first, *rest = name.split("_")
        return first + "".join(part.capitalize() for part in rest)

    shown = {camel(k): v for k, v in params.items() if v is not None}
    if not shown:
        return path
    return f"{path}{'&' if '?' in path else '?'}{urllib.parse.urlencode(shown)}"


# what reusing a kept-alive connection the server has closed raises
_CLOSED_BY_SERVER = (
    http.client.RemoteDisconnected,
    ConnectionResetError,
    BrokenPipeError,
    ssl.SSLEOFError,
    ssl.SSLZeroReturnError,
)


def _reason(err: BaseException) -> str:
    if isinstance(err, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted ({err.verify_message})"
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    text = str(err) or type(err).__name__
    return text.splitlines()[0][:200]


class Client:
    """JSON requests to one API server; one persistent connection per thread."""

    def __init__(self, endpoint: Endpoint, timeout: float = 30.0) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self._local = threading.local()
        self._headers = {"Accept": JSON, "User-Agent": "kplugin"}
        if endpoint.token:
            self._headers["Authorization"] = f"Bearer {endpoint.token}"

    def _connection(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self.endpoint.connect(self.timeout)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def send(
        self, method: str, path: str, body: Any = None, content_type: str = JSON, timeout: float | None = None
    ) -> tuple[int, bytes, http.client.HTTPResponse]:
        """One request: (status, body, response). Connection problems raise
        OperationError after one retry on a fresh connection (a kept-alive connection the
        server closed in between fails once: kube-apiserver closes one idle for 90 s, and
        over TLS that shows as an EOF)."""
        data = body if isinstance(body, bytes) else (_encode(body) if body is not None else None)
        headers = dict(self._headers)
        if data is not None:
            headers["Content-Type"] = content_type
        url = self.endpoint.base_path + path
        for attempt in (1, 2):
            conn = self._connection()
            answered = False  # a status line came back: the server took the request
            try:
                if timeout is not None:
                    conn.timeout = timeout
                    if conn.sock is not None:
                        conn.sock.settimeout(timeout)
                conn.request(method, url, body=data, headers=headers)
                response = conn.getresponse()
                answered = True
                payload = response.read()
                if timeout is not None:
                    conn.timeout = self.timeout
                    if conn.sock is not None:
                        conn.sock.settimeout(self.timeout)
                return response.status, payload, response
            except (http.client.HTTPException, OSError) as err:
                self.close()
                # only a request no answer began to: sent again, a POST the server handled would be made twice
                retry = attempt == 1 and not answered and isinstance(err, _CLOSED_BY_SERVER)
                if not retry:
                    raise OperationError(f"cannot reach {self.endpoint.name}: {_reason(err)}") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = JSON,
        timeout: float | None = None,
    ) -> Any:
        status, payload, _ = self.send(method, path, body, content_type, timeout)
        if status >= 400:
            raise self.error(method, path, status, payload)
        text = payload.decode(errors="replace")
        return json.loads(text) if text.strip().startswith(("{", "[")) else text

    def error(self, method: str, path: str, status: int, payload: bytes) -> ApiError:
        message, reason = payload.decode(errors="replace").strip(), ""
        with contextlib.suppress(ValueError, AttributeError):
            decoded = json.loads(message)
            message, reason = str(decoded.get("message") or message), str(decoded.get("reason") or "")
        message = " ".join(message.split())[:300]
        if status == 401:
            shown = f"{self.endpoint.name} refused the credentials (401 Unauthorized): {message}"
        elif status == 403:
            shown = f"{self.endpoint.name}: {method} {path}: forbidden: {message}"
        else:
            shown = f"{self.endpoint.name}: {method} {path}: {status} {message}"
        return ApiError(shown, status, reason, message)

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def create(self, path: str, body: Any) -> Any:
        return self.request("POST", path, body)

    def patch(self, path: str, body: Any, content_type: str = MERGE_PATCH) -> Any:
        return self.request("PATCH", path, body, content_type)

    def delete(self, path: str, missing_ok: bool = True) -> None:
        try:
            self.request("DELETE", path, {"gracePeriodSeconds": 0})
        except ApiError as err:
            if not (missing_ok and err.status == 404):
                raise

    def list_pages(
        self, path: str, limit: int | None = None, version: list[str] | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every item of a list, page by page (``limit`` and ``continue``); a page token
        that expired in between (410) restarts nothing: it is an error to retry. The
        list's resourceVersion (all pages are of one snapshot) goes into ``version``."""
        token = ""
        sep = "&" if "?" in path else "?"
        while True:
            query = f"limit={limit or LIST_PAGE}" + (f"&continue={urllib.parse.quote(token)}" if token else "")
            page = self.get(f"{path}{sep}{query}")
            if not isinstance(page, dict):
                raise OperationError(f"{self.endpoint.name}: GET {path}: not a list")
            yield from page.get("items") or []
            meta = page.get("metadata") or {}
            if version is not None and meta.get("resourceVersion"):
                version[:] = [str(meta["resourceVersion"])]
            token = str(meta.get("continue") or "")
            if not token:
                return

    def list_all(self, path: str, each: Callable[[dict[str, Any]], None]) -> str:
        """Every item of ``path`` handed to ``each``, page by page; returns the list's
        resourceVersion, to watch from."""
        version: list[str] = []
        for item in self.list_pages(path, version=version):
            each(item)
        return version[0] if version else ""

    def follow(
        self,
        path: str,
        version: str,
        each: Callable[[str, dict[str, Any]], None],
        stopped: Callable[[], bool],
        timeout_seconds: int = 300,
        opened: Callable[[http.client.HTTPConnection], None] = lambda _: None,
        answered: Callable[[], None] = lambda: None,
    ) -> None:
        """Keep up with ``path`` from ``version`` (see ``list_all``) until ``stopped()``:
        each event but bookmarks goes to ``each(type, object)``; a watch the server ends
        is opened again where it left off; one too old to resume (410) lists again, its
        items handed on as ADDED. Other watch errors are raised."""
        while not stopped():
            for event in self.watch(path, version, timeout_seconds, opened, answered):
                if stopped():
                    return
                kind, obj = str(event.get("type")), event.get("object") or {}
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        version = self.list_all(path, lambda item: each("ADDED", item))
                        break
                    raise OperationError(f"{self.endpoint.name}: watching {path.split('?')[0]}: {obj.get('message')}")
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if kind != "BOOKMARK":
                    each(kind, obj)

    def watch(
        self,
        path: str,
        resource_version: str,
        timeout_seconds: int = 300,
        opened: Callable[[http.client.HTTPConnection], None] = lambda _: None,
        answered: Callable[[], None] = lambda: None,
    ) -> Iterator[dict[str, Any]]:
        """Watch events from ``resource_version`` on a connection of its own (handed to
        ``opened``, so another thread can close it), until the server ends the watch (at
        most ``timeout_seconds``) or the connection is closed. ``answered`` is called
        once the server has accepted the watch, before its first event."""
        sep = "&" if "?" in path else "?"
        query = f"watch=1&allowWatchBookmarks=true&resourceVersion={resource_version}&timeoutSeconds={timeout_seconds}"
        conn = self.endpoint.connect(timeout_seconds + 30)
        opened(conn)
        try:
            try:
                conn.request("GET", self.endpoint.base_path + f"{path}{sep}{query}", headers=self._headers)
                response = conn.getresponse()
            except (http.client.HTTPException, OSError) as err:
                raise OperationError(f"cannot reach {self.endpoint.name}: {_reason(err)}") from None
            if response.status >= 400:
                raise self.error("GET", path, response.status, response.read())
            answered()
            while True:
                try:
                    line = response.readline()
                except (TimeoutError, http.client.HTTPException, OSError):
                    return
                if not line:
                    return
                if line.strip():
                    yield json.loads(line)
        finally:
            conn.close()


def _encode(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()
