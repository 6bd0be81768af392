"""The part of Go's text/template that scheduler_perf's object templates use, for the
createPods and createPodGroups ops that pass ``templateParams``: actions that print
``.Index`` (the object's index in its op) or a param, or one of scheduler_perf's integer
functions of them (``{{DivideInt .Index .podsPerGroup}}``: AddInt, SubtractInt,
MultiplyInt, DivideInt, Mod). Any other action is refused when the template is read,
naming the action.

A template is parsed once, as YAML with each action replaced by a marker, and rendered
per object by replacing the markers in its values: an action that is a whole unquoted
value gives an integer (as the YAML that Go's rendering yields would), one inside a
longer value gives text. So rendering an object costs a copy, not a YAML parse.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kplugin.core.errors import UsageError

INDEX = "Index"
_ACTION = re.compile(r"\{\{(.*?)\}\}", re.S)
_MARKER = re.compile(r"kplugintemplate([0-9]+)x")
_FIELD = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)")
_NUMBER = re.compile(r"-?[0-9]+")


def _divide(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError
    return int(a / b)  # Go's int(float64(a) / float64(b)): towards zero


def _mod(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError
    return int(math.fmod(a, b))  # Go's %: the sign of the dividend


FUNCTIONS: dict[str, tuple[int | None, Callable[..., int]]] = {  # name -> (arguments, None: two or more)
    "AddInt": (None, lambda *n: sum(n)),
    "SubtractInt": (2, lambda a, b: a - b),
    "MultiplyInt": (None, lambda *n: math.prod(n)),
    "DivideInt": (2, _divide),
    "Mod": (2, _mod),
}


@dataclass(frozen=True)
class Action:
    """One ``{{ }}``: a function of its arguments, or (function None) its one argument.
    An argument is a field name (str) or a number."""

    text: str
    function: str | None
    arguments: tuple[str | int, ...]
    quoted: bool  # written inside quotes: its value is text

    def value(self, env: Mapping[str, int]) -> int:
        values = [env[a] if isinstance(a, str) else a for a in self.arguments]
        if self.function is None:
            return values[0]
        return FUNCTIONS[self.function][1](*values)


def _action(text: str, quoted: bool, known: frozenset[str], fail: Callable[[str], UsageError]) -> Action:
    words = text.strip().split()
    supported = f"supported: .{INDEX}, .PARAM and {', '.join(FUNCTIONS)} of them"
    if not words or text.startswith(("-", "/*")) or text.endswith("-"):
        raise fail(f"template action {{{{{text[:40]}}}}} is not supported by kplugin bench ({supported})")
    function = None
    if words[0] in FUNCTIONS:
        function, words = words[0], words[1:]
        arity = FUNCTIONS[function][0]
        if (arity is not None and len(words) != arity) or (arity is None and len(words) < 2):
            raise fail(
                f"template action {{{{{text.strip()[:40]}}}}}: {function} takes {arity or 'two or more'} arguments"
            )
    elif len(words) != 1:
        raise fail(f"template action {{{{{text.strip()[:40]}}}}} is not supported by kplugin bench ({supported})")
    arguments: list[str | int] = []
    for word in words:
        field = _FIELD.fullmatch(word)
        if field is not None:
            if field[1] not in known:
                raise fail(
                    f"template action {{{{{text.strip()[:40]}}}}}: .{field[1]} is neither .{INDEX} nor one of its "
                    f"templateParams ({', '.join(sorted(known - {INDEX})) or 'none'})"
                )
            arguments.append(field[1])
        elif _NUMBER.fullmatch(word) and function is not None:
            arguments.append(int(word))
        else:
            raise fail(f"template action {{{{{text.strip()[:40]}}}}} is not supported by kplugin bench ({supported})")
    return Action(text.strip(), function, tuple(arguments), quoted)


@dataclass(frozen=True)
class ObjectTemplate:
    """An object's template: its YAML with markers where the actions were."""

    document: dict[str, Any]
    actions: tuple[Action, ...]

    def render(self, env: Mapping[str, int]) -> dict[str, Any]:
        """The object for ``env`` (Index and the params: every name the actions use)."""
        if not self.actions:
            return copy.deepcopy(self.document)
        values = [a.value(env) for a in self.actions]
        rendered: dict[str, Any] = self._render(self.document, values)
        return rendered

    def _render(self, node: Any, values: list[int]) -> Any:
        if isinstance(node, dict):
            return {k: self._render(v, values) for k, v in node.items()}
        if isinstance(node, list):
            return [self._render(v, values) for v in node]
        if isinstance(node, str) and "kplugintemplate" in node:
            whole = _MARKER.fullmatch(node)
            if whole is not None and not self.actions[int(whole[1])].quoted:
                return values[int(whole[1])]
            return _MARKER.sub(lambda m: str(values[int(m[1])]), node)
        return node


def expand(text: str, known: frozenset[str], fail: Callable[[str], UsageError]) -> tuple[str, tuple[Action, ...]]:
    """``text`` with each action replaced by a marker, and the actions (every field they
    read among ``known``); refused in one line where an action is not supported."""
    if "kplugintemplate" in text:
        raise fail("uses the word kplugintemplate, which kplugin bench keeps for its own markers")
    actions: list[Action] = []

    def marker(match: re.Match[str]) -> str:
        before, after = text[match.start() - 1 : match.start()], text[match.end() : match.end() + 1]
        actions.append(_action(match[1], before in "\"'" and before != "" and after == before, known, fail))
        return f"kplugintemplate{len(actions) - 1}x"

    return _ACTION.sub(marker, text), tuple(actions)


def check_keys(node: Any, fail: Callable[[str], UsageError]) -> None:
    """Actions print values only: one in a mapping's key is refused."""
    if isinstance(node, dict):
        for key, value in node.items():
            if "kplugintemplate" in str(key):
                raise fail("prints a template action in a key, which kplugin bench does not expand (values only)")
            check_keys(value, fail)
    elif isinstance(node, list):
        for value in node:
            check_keys(value, fail)


def check_rendered(template: ObjectTemplate, env: Mapping[str, int], fail: Callable[[str], UsageError]) -> None:
    """One render of ``template`` with ``env``: a division by zero is the template's error."""
    try:
        template.render(env)
    except ZeroDivisionError:
        raise fail("divides by zero (DivideInt or Mod by a param that is 0)") from None
