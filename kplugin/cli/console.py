"""Rich output, always on stderr so stdout stays for data (--json, rendered files)."""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def err() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def interactive() -> bool:
    """Prompts only on a terminal, never in CI."""
    import os
    import sys

    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        return False
    return sys.stdin.isatty() and sys.stderr.isatty()
