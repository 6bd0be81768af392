"""SHA-256, the one digest kplugin records and compares (generated files' hashes in
kplugin.yaml, cache keys, names derived from content).

CPython's own SHA-256 module is used where the interpreter has it: ``hashlib`` loads
OpenSSL on import, which costs about 2 ms of every start-up that checks a file's
hash (render-config does). The digests are the same; hashlib is the fallback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Hasher(Protocol):
    def update(self, data: bytes, /) -> None: ...

    def hexdigest(self) -> str: ...


_sha256: Callable[[bytes], Hasher]
try:  # CPython 3.12+
    from _sha2 import sha256 as _sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
except ImportError:
    try:  # CPython 3.11
        from _sha256 import sha256 as _sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:  # another interpreter, or a build without them
        from hashlib import sha256 as _sha256  # type: ignore[no-redef,unused-ignore]


def sha256(data: bytes = b"") -> Hasher:
    """A SHA-256 hash object (``update``, ``hexdigest``), fed ``data``."""
    return _sha256(data)


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data``, as 64 lowercase hex digits."""
    return _sha256(data).hexdigest()
