"""kplugin's per-user cache directory: ``$KPLUGIN_CACHE_DIR``, else ``$XDG_CACHE_HOME/kplugin``,
else ``~/.cache/kplugin``.

It holds the kube-apiserver binaries ``kplugin e2e`` builds per Kubernetes version and
the Args probes argsinfo builds per plugin source. The cache is an optimization: an unwritable directory
or ``KPLUGIN_NO_CACHE=1`` turns it off, and failing to use it is never an error.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


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


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold ``path``'s lock (``<path>.lock``, created beside it) while the block runs: two
    kplugin runs that would make the same cached file at once make it once, the second
    waiting for the first. The lock goes with the process, however it ends."""
    lock = path.with_name(f".{path.name}.lock")
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
