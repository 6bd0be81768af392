"""Label selectors as kubectl takes them (``app=web,tier!=db,env in (a,b),!canary,gpu``),
turned into a test of a set of labels."""

from __future__ import annotations

import re
from collections.abc import Callable

from kplugin.core import names
from kplugin.core.errors import Setting, UsageError

Matcher = Callable[[dict[str, str]], bool]

_SET = re.compile(r"\s*(?P<key>[^\s!=(),]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)\s*")
_EQUALITY = re.compile(r"\s*(?P<key>[^\s!=(),]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)\s*")
_EXISTS = re.compile(r"\s*(?P<not>!?)\s*(?P<key>[^\s!=(),]+)\s*")


def _requirements(text: str) -> list[str]:
    """Split at the commas that are not inside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _member(key: str, values: frozenset[str], inside: bool) -> Matcher:
    def test(labels: dict[str, str]) -> bool:
        return (labels.get(key) in values) == inside

    return test


def _exists(key: str, wanted: bool) -> Matcher:
    def test(labels: dict[str, str]) -> bool:
        return (key in labels) == wanted

    return test


def parse(text: str, option: str = Setting.RESCHEDULE) -> Matcher:
    if not text.strip() or len(text) > 4096:
        raise UsageError(f"{option} {text[:60]!r}: give a label selector, e.g. app=web or 'tier in (a,b)'")
    tests: list[Matcher] = []

    def key_of(key: str) -> str:
        problem = names.qualified_name_problem(key)
        if problem:
            raise UsageError(f"{option} {text!r}: label key {key!r} {problem}")
        return key

    def value_of(value: str) -> str:
        problem = names.label_value_problem(value)
        if problem:
            raise UsageError(f"{option} {text!r}: label value {value!r} {problem}")
        return value

    for part in _requirements(text):
        if match := _SET.fullmatch(part):
            key = key_of(match["key"])
            values = frozenset(value_of(v.strip()) for v in match["values"].split(",") if v.strip())
            tests.append(_member(key, values, match["op"] == "in"))
        elif match := _EQUALITY.fullmatch(part):
            key, value = key_of(match["key"]), value_of(match["value"])
            tests.append(_member(key, frozenset({value}), match["op"] != "!="))
        elif match := _EXISTS.fullmatch(part):
            key = key_of(match["key"])
            tests.append(_exists(key, not match["not"]))
        else:
            raise UsageError(f"{option} {text!r}: {part.strip()!r} is not a label selector requirement")
    return lambda labels: all(test(labels) for test in tests)
