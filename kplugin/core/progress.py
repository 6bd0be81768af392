"""How a long operation tells its caller what it is doing: one line a step."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str], None]
