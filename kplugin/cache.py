"""kplugin's per-user cache directory: ``$KPLUGIN_CACHE_DIR``, else ``$XDG_CACHE_HOME/kplugin``,
else ``~/.cache/kplugin``.

It holds compiled Jinja templates and the results of commands whose output is a pure
function of their inputs (``render-config``). A result is stored with its whole key: every
input, and a fingerprint of kplugin's own code and data (version, each file's size and
mtime), so an edited or reinstalled kplugin never serves an old result; a read compares
the key byte for byte (the file name is only a checksum of it, so a clash is a miss).
Only successes are stored. The cache is an optimization: an unwritable directory or
``KPLUGIN_NO_CACHE=1`` turns it off, and failing to read or write it is never an error.
"""

from __future__ import annotations

import os
import zlib
from functools import cache
from pathlib import Path

from kplugin import __version__

_PACKAGE = Path(__file__).resolve().parent
_SUFFIXES = (".py", ".json", ".jinja", ".go", ".yaml", ".md")


def root() -> Path:
    """Where kplugin caches live (not created)."""
    if explicit := os.environ.get("KPLUGIN_CACHE_DIR"):
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kplugin"


def directory(namespace: str) -> Path | None:
    """The cache directory for ``namespace``, created; None when caching is off."""
    if os.environ.get("KPLUGIN_NO_CACHE", "").lower() in {"1", "true", "yes"}:
        return None
    base = root() / namespace
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return base if os.access(base, os.W_OK) else None


@cache
def fingerprint() -> bytes:
    """kplugin's version and the size and mtime of each of its files (stat only)."""
    lines = [__version__]
    for root, dirs, files in os.walk(_PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(_SUFFIXES)):
            path = os.path.join(root, name)
            stat = os.stat(path)
            lines.append(f"{os.path.relpath(path, _PACKAGE)}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(lines).encode()


def _material(parts: tuple[bytes | str, ...]) -> bytes:
    chunks = [fingerprint(), *(p.encode() if isinstance(p, str) else p for p in parts)]
    return b"".join(len(c).to_bytes(8, "big") + c for c in chunks)


def _entry(material: bytes) -> str:
    return f"{zlib.crc32(material):08x}-{len(material)}"


def read(namespace: str, *parts: bytes | str) -> bytes | None:
    """The data stored for exactly these parts, or None."""
    base = directory(namespace)
    if base is None:
        return None
    material = _material(parts)
    try:
        stored = (base / _entry(material)).read_bytes()
    except OSError:
        return None
    head = len(material).to_bytes(8, "big") + material
    return stored[len(head) :] if stored.startswith(head) else None


def write(namespace: str, data: bytes, *parts: bytes | str) -> None:
    base = directory(namespace)
    if base is None:
        return
    import tempfile

    material = _material(parts)
    try:
        fd, tmp = tempfile.mkstemp(dir=base, prefix=".tmp-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(len(material).to_bytes(8, "big") + material + data)
        os.replace(tmp, base / _entry(material))
    except OSError:
        return
