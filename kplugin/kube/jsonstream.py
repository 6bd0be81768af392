"""A JSON document read as a stream: the top-level object's keys one by one, and the
entries of its big lists (nodes, pods, items, ...) one at a time, so that a snapshot of
50,000 pods is never held as text or as one parsed tree.

The rules of kplugin's YAML reader hold here too: no duplicate keys, no NaN or Infinity,
no integers of thousands of digits, at most 64 levels of nesting, strict UTF-8. Every
problem is a UsageError naming the file, the line and the column.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from typing import Any, Protocol

from kplugin.core.errors import UsageError
from kplugin.core.yamlio import MAX_DEPTH

CHUNK = 1 << 22
_WHITESPACE = " \t\r\n"


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _Duplicate(ValueError):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return result


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def depth_of(value: Any, limit: int) -> int:
    """The nesting depth of ``value``, counted up to ``limit + 1`` at most."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


class Reader:
    """Reads ``stream`` (bytes); ``where`` names it in errors (e.g. "--scenario x.json")."""

    def __init__(self, stream: Readable, where: str, chunk: int = CHUNK) -> None:
        self.stream = stream
        self.where = where
        self.chunk = chunk
        self.decoder = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant)
        self.utf8 = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.bytes_read = 0
        self.lines_before = 0  # newlines in the text already dropped from buf
        self.column_before = 0  # characters after the last of them

    # --- the buffer --------------------------------------------------------------------

    def _fill(self, at_least: int = 0) -> bool:
        """Read more; False at the end of the file."""
        if self.eof:
            return False
        if self.pos > 0:  # drop what was consumed
            newlines = self.buf.count("\n", 0, self.pos)
            if newlines:
                self.lines_before += newlines
                self.column_before = self.pos - self.buf.rfind("\n", 0, self.pos) - 1
            else:
                self.column_before += self.pos
            self.buf = self.buf[self.pos :]
            self.pos = 0
        wanted = max(self.chunk, at_least)
        data = self.stream.read(wanted)
        try:
            text = self.utf8.decode(data, final=not data)
        except UnicodeDecodeError as err:
            offset = self.bytes_read + err.start
            bad = data[err.start] if err.start < len(data) else 0
            raise UsageError(
                f"{self.where} is not UTF-8 text (byte {bad:#04x} at offset {offset}); save it as UTF-8"
            ) from None
        self.bytes_read += len(data)
        if not data:
            self.eof = True
        self.buf += text
        return bool(data)

    def _peek(self) -> str:
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._fill():
                return ""

    def _expect(self, chars: str, what: str) -> str:
        char = self._peek()
        if not char or char not in chars:
            raise self._error(f"expected {what}", self.pos)
        self.pos += 1
        return char

    def _error(self, problem: str, pos: int) -> UsageError:
        newlines = self.buf.count("\n", 0, pos)
        line = self.lines_before + newlines + 1
        column = pos - (self.buf.rfind("\n", 0, pos) + 1) + (0 if newlines else self.column_before) + 1
        return UsageError(f"{self.where} is not valid JSON at line {line} column {column}: {problem}")

    def value(self) -> Any:
        """The next JSON value (read as far as it needs)."""
        self._peek()
        want = 0
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as err:
                cut_off = err.pos >= len(self.buf) - 8 or err.msg.startswith("Unterminated string")
                if cut_off and not self.eof:  # by the end of the buffer: read on
                    want = max(want * 2, len(self.buf) - self.pos, self.chunk)
                    self._fill(want)
                    continue
                raise self._error(err.msg, err.pos) from None
            except _Duplicate as dup:
                raise self._error(f"the key {str(dup)!r} appears twice", self.pos) from None
            except RecursionError:
                raise self._error(f"nested more than {MAX_DEPTH} levels deep", self.pos) from None
            except ValueError as err:  # an integer of thousands of digits, NaN
                problem = str(err).splitlines()[0][:120]
                if "integer string conversion" in problem:
                    problem = "an integer of thousands of digits"
                raise self._error(problem, self.pos) from None
            if end >= len(self.buf) and not self.eof:  # a number may go on in the next chunk
                want = max(want * 2, len(self.buf) - self.pos, self.chunk)
                self._fill(want)
                continue
            if depth_of(value, MAX_DEPTH) > MAX_DEPTH:
                raise self._error(f"nested more than {MAX_DEPTH} levels deep", self.pos)
            self.pos = end
            return value

    # --- the document ------------------------------------------------------------------

    def document(self, streamed: set[str]) -> Iterator[tuple[str, Any]]:
        """The top-level object's (key, value) pairs in order. For a key in ``streamed``
        whose value is a list, the value is an iterator over its entries, which must be
        consumed before the next pair is asked for."""
        if self._peek() != "{":
            raise UsageError(f"{self.where}: the document must be a JSON object ({{...}})")
        self.pos += 1
        seen: set[str] = set()
        if self._peek() == "}":
            self.pos += 1
        else:
            while True:
                if self._peek() != '"':
                    raise self._error("expected a key in double quotes", self.pos)
                key = self.value()
                if key in seen:
                    raise self._error(f"the key {key!r} appears twice", self.pos)
                seen.add(key)
                self._expect(":", "':'")
                if key in streamed and self._peek() == "[":
                    self.pos += 1
                    yield key, self._entries()
                else:
                    yield key, self.value()
                if self._expect(",}", "',' or '}'") == "}":
                    break
        if self._peek():
            raise self._error("text after the end of the document", self.pos)

    def _entries(self) -> Iterator[Any]:
        if self._peek() == "]":
            self.pos += 1
            return
        while True:
            yield self.value()
            if self._expect(",]", "',' or ']'") == "]":
                return


def looks_like_json(head: bytes) -> bool:
    """Whether a file starting with ``head`` is JSON (its first character is '{')."""
    text = head.lstrip(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
    return text.startswith(b"{")
