"""Reading a performance-config file as scheduler_perf's decoder reads it: a mapping's
keys matched without regard to case (unknown ones are errors), $params, counts and
countParams against kplugin bench's limits, Go durations. Every problem is a
UsageError naming the file and the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kplugin.bench.ops import MAX_SECONDS
from kplugin.bench.templates import TemplateFiles
from kplugin.core import yamlio
from kplugin.core.errors import UsageError


class Keys:
    """A mapping from the file, its keys matched without regard to case (as
    scheduler_perf's decoder matches Go field names); unknown keys are errors."""

    def __init__(self, raw: Any, where: str, allowed: tuple[str, ...], fail: Fail) -> None:
        if not isinstance(raw, dict):
            raise fail(where, f"must be a mapping, not {yamlio.describe(raw)}")
        self.where = where
        self.fail = fail
        known = {key.lower(): key for key in allowed}
        self.values: dict[str, Any] = {}
        for key, value in raw.items():
            if not isinstance(key, str) or key.lower() not in known:
                shown = str(key)[:60]
                raise fail(where, f"unknown key {shown!r} (known: {', '.join(allowed)})")
            name = known[key.lower()]
            if name in self.values:
                raise fail(where, f"{name} is given twice (keys are matched without regard to case)")
            self.values[name] = value

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def string(self, key: str, default: str | None = None) -> str | None:
        value = self.values.get(key, default)
        if value is not None and not isinstance(value, str):
            raise self.fail(f"{self.where}.{key}", f"must be a string, not {yamlio.describe(value)}")
        return value

    def boolean(self, key: str) -> bool:
        value = self.values.get(key, False)
        if not isinstance(value, bool):
            raise self.fail(f"{self.where}.{key}", f"must be true or false, not {yamlio.describe(value)}")
        return value


class Fail:
    """Makes the UsageError for a problem at a key of the file: the file, the key, the problem."""

    def __init__(self, source: str) -> None:
        self.source = source

    def __call__(self, where: str, problem: str) -> UsageError:
        return UsageError(f"{self.source}: {where}: {problem}")


@dataclass
class Context:
    """What reading one workload needs: its params and its template files."""

    params: dict[str, Any]
    fail: Fail
    where: str
    templates: TemplateFiles


def whole_number(value: Any, where: str, fail: Fail) -> int:
    """An integer of YAML (not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(where, f"must be a whole number, not {yamlio.describe(value)}")
    return value


def read_count(keys: Keys, ctx: Context, limit: int, unit: str, default: int | None = None) -> int:
    """count / countParam (countParam wins, as in scheduler_perf), checked against the limit."""
    where = keys.where
    param = keys.string("countParam")
    if param is not None:
        value = read_param(param, ctx, f"{where}.countParam")
        at = f"{where}.countParam ({param})"
    elif "count" in keys:
        value = keys.get("count")
        at = f"{where}.count"
    elif default is not None:
        return default
    else:
        raise ctx.fail(where, "needs count or countParam")
    number = whole_number(value, at, ctx.fail)
    if number < 0:
        raise ctx.fail(at, f"{number} is negative")
    if number > limit:
        raise ctx.fail(at, f"{number} {unit} is more than {limit}, the most kplugin bench creates")
    return number


def read_param(reference: str, ctx: Context, where: str) -> Any:
    """The value of the workload's param that ``reference`` ("$name") names."""
    if not reference.startswith("$") or len(reference) < 2:
        raise ctx.fail(where, f"{reference!r} must name a param as $name")
    name = reference[1:]
    if name not in ctx.params:
        known = ", ".join(sorted(ctx.params)) or "none"
        raise ctx.fail(where, f"${name} is not a param of workload {ctx.where} (params: {known})")
    return ctx.params[name]


_DURATION = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: Any, where: str, fail: Fail) -> float:
    """A Go duration ("500ms", "1m30s") in seconds."""
    if not isinstance(text, str) or not text or len(text) > 40:
        raise fail(where, f"must be a duration such as 500ms, 5s or 1m, not {yamlio.describe(text)}")
    position, seconds = 0, 0.0
    while position < len(text):
        match = _DURATION.match(text, position)
        if match is None:
            raise fail(where, f"{text!r} is not a duration (e.g. 500ms, 5s, 1m30s)")
        seconds += float(match[1]) * _UNITS[match[2]]
        position = match.end()
    if seconds > MAX_SECONDS:
        raise fail(where, f"{text} is longer than {MAX_SECONDS:.0f}s, the longest kplugin bench waits")
    return seconds
