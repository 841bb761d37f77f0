"""JSON and JSON Lines text the package reads and writes: bounded nesting, line separators kept inside lines.

Why one module: three mistakes were made in several readers each (issue 38). ``json.loads`` on JSON
nested past the interpreter's limit raises RecursionError (a traceback instead of one line naming the
file), and how deep it goes first depends on the Python version (3.11 raises on 5,000 nested lists,
3.12 parses them); ``str.splitlines()`` also splits on U+2028, U+2029, U+0085 and other separators that
``json.dumps(..., ensure_ascii=False)`` leaves raw inside a string, so a sample whose instruction holds
one became two broken lines (and an editor's next save joined them, losing it). Here:

* :func:`loads`: ``json.loads`` refusing nesting deeper than :data:`MAX_DEPTH` with :class:`TooDeep`
  (a RecursionError, naming the line), the same on every Python: the one bound of the package, for
  model answers (:mod:`pytest_uiground.models.families.reading`) and for files alike;
* :func:`split_lines`: a JSONL text's lines, split on ``\\n`` only (a ``\\r`` before it is dropped);
* :func:`dumps_line`: one JSONL line with the separators escaped (``\\u2028``), still readable UTF-8.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

MAX_DEPTH: Final = 500
"""Deeper JSON is refused before parsing, on every Python version (see the module docstring)."""

_TOKENS: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
"""A string (an unterminated one runs to the end, as a decoder would read it) or a bracket outside one."""

LINE_BREAKERS: Final = ("\u2028", "\u2029", "\u0085")
"""Characters ``json.dumps(ensure_ascii=False)`` writes raw that ``str.splitlines()`` splits on (the control
characters below U+0020 that it also splits on are always escaped by ``json.dumps``)."""


class TooDeep(RecursionError):
    """JSON nested deeper than :data:`MAX_DEPTH`; ``line`` is the 1-based line of the bracket past the bound.
    A RecursionError, as ``json.loads`` itself raises on deeper JSON, so callers catch one thing."""

    def __init__(self, line: int) -> None:
        super().__init__(f"JSON nested deeper than {MAX_DEPTH} levels (line {line}); flatten it")
        self.line = line


def check_depth(text: str) -> None:
    """Raise :class:`TooDeep` when ``text`` nests brackets (outside strings) deeper than :data:`MAX_DEPTH`.
    A linear scan, brackets and strings only, at the regular-expression engine's speed."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for m in _TOKENS.finditer(text):
        ch = m.group()
        if ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise TooDeep(text.count("\n", 0, m.start()) + 1)
        elif ch in "]}":
            depth -= 1


def loads(text: str | bytes) -> Any:
    """``json.loads``, refusing nesting deeper than :data:`MAX_DEPTH` with :class:`TooDeep` on every Python."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    check_depth(text)
    return json.loads(text)


def split_lines(text: str) -> list[str]:
    """The lines of a JSONL text, split on ``\\n`` only (``\\r\\n`` too): never inside a JSON string, where
    U+2028 and its kin may stand raw. A final newline ends the last line; it does not start an empty one."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def escape_breakers(line: str) -> str:
    """``line`` (JSON text) with U+2028, U+2029 and U+0085 written as ``\\u`` escapes: they only occur inside
    strings in ``json.dumps`` output, where the escape means the same character."""
    for ch in LINE_BREAKERS:
        line = line.replace(ch, f"\\u{ord(ch):04x}")
    return line


def dumps_line(value: Any, **kwargs: Any) -> str:
    """One JSONL line (no newline) of ``value``: UTF-8 kept readable, the line separators escaped."""
    return escape_breakers(json.dumps(value, ensure_ascii=False, **kwargs))
