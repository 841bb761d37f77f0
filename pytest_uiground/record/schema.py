"""Files people edit, checked against a typed schema: ``msgspec`` converts, this module words its first error.

``suite.toml`` (:mod:`pytest_uiground.suite.schema`) and the baseline's ``samples.json``
(:mod:`pytest_uiground.gate.baseline`) are declared as ``msgspec.Struct`` types: the fields, their
types, their ranges (``Meta(ge=..., le=...)``), their allowed words (``Literal``) and whether unknown
keys are refused live on the types, not in hand-written ``isinstance`` chains. Why msgspec (issue 42),
measured on this project's venv after pytest's own imports: ``import msgspec`` 10 ms, a 0.7 MB
wheel with no dependencies; pydantic 90-105 ms (9.6 MB with pydantic-core); jsonschema 60-80 ms and a
JSON Schema validates dicts, it does not hand back typed values. msgspec's ``convert`` also refuses a bool
where a number belongs and an int where a float is not declared (``strict=True``), as the old checks did,
and ``msgspec.json.schema`` publishes the same types as a JSON Schema (``docs/schemas/``).

msgspec's messages are terse (``Expected `float` <= 100.0 - at `$.metrics[0].floor```: no value,
and ``[...]`` for a dict entry). :func:`convert` keeps the contract every file reader here has had:
one line naming the key path, the value and what it should be. It walks the path through the data
and the types side by side, finds the entry of a dict that failed, and words the problem from the
type (its range, its words, its hint). Two hints may sit on a type, as ``Meta(extra={...})``:

* ``"expected"``: what the value should be, in the reader's words; an error anywhere inside such a
  type is reported at its level (``samples.a.c``, not ``samples.a.c['iou']``);
* ``"fix"``: a sentence appended after the problem (what the words mean, how to write it).

msgspec is imported when a file is read, never when the plugin loads.
"""

from __future__ import annotations

import inspect
import json
import math
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

#: The largest finite float: a number field whose upper bound is this refuses infinity and NaN (msgspec
#: has no "finite" constraint; NaN fails every comparison).
FINITE = 1.7976931348623157e308
_TOKEN = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[\.\.\.\]")


class Key(str):
    """A path segment that is the key of a dict entry (``slice_floors['a=b']``), not a field name."""


@dataclass(frozen=True)
class Problem:
    """The first thing wrong in a file: where (``path``: field names, list indices and :class:`Key`\\ s),
    ``why`` in words (``"must be a number between 0 and 100, got 250"``), and for a value of the wrong
    kind what it should be (``expected``) and what it is (``got``, cut to one short line)."""

    path: tuple[str | int, ...]
    why: str
    expected: str | None = None
    got: str | None = None


class SchemaError(ValueError):
    """Data that does not fit its schema; ``problem`` says where and why."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"{'.'.join(map(str, problem.path))}: {problem.why}")
        self.problem = problem


def published(tp: Any, title: str) -> dict[str, Any]:
    """``tp`` as the JSON Schema published in ``docs/schemas/``: msgspec's, with every description cleaned
    as :func:`inspect.cleandoc` does (msgspec 0.23 cleans docstrings, 0.22 kept their indentation, so the
    published file would depend on the installed release)."""
    import msgspec.json

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: inspect.cleandoc(v) if k == "description" and isinstance(v, str) else clean(v)
                    for k, v in node.items()}
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node

    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title,
            **clean(msgspec.json.schema(tp))}


def write_or_check(schema: dict[str, Any], path: Path, argv: list[str]) -> int:
    """``python -m <module> [--check]`` of a published schema: write ``path``, or with ``--check`` exit 1
    when it differs from ``schema`` (what the docs' tests and a contributor run)."""
    text = json.dumps(schema, indent=1, sort_keys=True) + "\n"
    if "--check" in argv:
        return 0 if path.is_file() and path.read_text(encoding="utf-8") == text else 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return 0


def short(value: Any, limit: int = 80) -> str:
    """A value in a one-line message, cut so a damaged file cannot flood the terminal."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def convert(data: Any, tp: type[T], *, table: str = "a table") -> T:
    """``data`` (parsed TOML or JSON) as ``tp``, checked by msgspec; else :class:`SchemaError`.
    ``table``: what a table is called in the messages (``an object`` in a JSON file)."""
    import msgspec

    try:
        return msgspec.convert(data, tp, strict=True)
    except msgspec.ValidationError as exc:
        raise SchemaError(explain(data, tp, str(exc), table=table)) from None


def explain(data: Any, tp: Any, message: str, *, table: str = "a table") -> Problem:
    """Word msgspec's ``message`` about ``data`` (which failed to convert to ``tp``) as a :class:`Problem`."""
    text, _, where = message.rpartition(" - at `")
    where = where.rstrip("`")
    text = text or message
    if " in `" in where:  # a dict key that failed: "- at `key` in `$.c`"
        where = where.split(" in `", 1)[1].rstrip("`")
    path: list[str | int] = []
    value, cur = data, tp
    for field, index in ((m.group(1), m.group(2)) for m in _TOKEN.finditer(where.removeprefix("$"))):
        if _hint(cur, "expected"):
            break  # reported at the level that carries the reader's words
        cur = _container(cur, value)
        if field is not None and isinstance(value, Mapping):
            name = field
            cur, value = _field_type(cur, name), value.get(name)
        elif index is not None and isinstance(value, list):
            name, cur, value = int(index), _item_type(cur), value[int(index)]
        elif isinstance(value, Mapping):  # [...]: the first entry that does not convert
            name, cur, value = _failing_entry(cur, value)
        else:
            break
        path.append(name)
    if text.startswith("Object missing required field `") and not _hint(cur, "expected"):
        return Problem((*path, text.split("`")[1]), "is required")
    if text.startswith("Object contains unknown field `") and not _hint(cur, "expected"):
        allowed = ", ".join(sorted(_field_names(_container(cur, value))))
        return Problem((*path, text.split("`")[1]), f"unknown field; allowed: {allowed}")
    return _describe(tuple(path), value, cur, table)


def _strip(tp: Any) -> tuple[Any, dict[str, Any]]:
    """``Annotated[X, Meta(...)]`` as ``(X, the hints of its metas)``."""
    hints: dict[str, Any] = {}
    while typing.get_origin(tp) is typing.Annotated:
        args = typing.get_args(tp)
        for meta in args[1:]:
            hints.update(getattr(meta, "extra", None) or {})
        tp = args[0]
    return tp, hints


def _hint(tp: Any, name: str) -> Any:
    """A hint on ``tp`` or, for ``X | None``, on ``X``."""
    return _strip(tp)[1].get(name) or next((h for m in _members(tp) if (h := _strip(m)[1].get(name))), None)


def _members(tp: Any) -> list[Any]:
    """The types a value may have, each with its own ``Annotated`` metas: a union's members (None left out),
    else the type itself."""
    bare = _strip(tp)[0]
    if typing.get_origin(bare) in (typing.Union, types.UnionType):
        return [m for m in typing.get_args(bare) if m is not type(None)]
    return [tp]


def _is_struct(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "__struct_fields__")


def _container(tp: Any, value: Any) -> Any:
    """The member of ``tp`` that a container ``value`` was read as (a table as a Struct or a dict)."""
    for member in _members(tp):
        bare = _strip(member)[0]
        origin = typing.get_origin(bare) or bare
        if isinstance(value, Mapping) and (_is_struct(bare) or origin in (dict, Mapping)):
            return bare
        if isinstance(value, list) and origin in (list, tuple):
            return bare
    return _strip(tp)[0]


def _field_names(tp: Any) -> tuple[str, ...]:
    return tuple(getattr(tp, "__struct_encode_fields__", ()))


def _field_type(tp: Any, name: str) -> Any:
    if _is_struct(tp) and name in tp.__struct_encode_fields__:
        attr = tp.__struct_fields__[tp.__struct_encode_fields__.index(name)]
        return typing.get_type_hints(tp, include_extras=True)[attr]
    return Any


def _item_type(tp: Any) -> Any:
    args = typing.get_args(tp)
    return args[0] if args else Any


def _failing_entry(tp: Any, value: Mapping[str, Any]) -> tuple[Key, Any, Any]:
    import msgspec

    args = typing.get_args(tp)
    key_type, value_type = (args[0], args[1]) if len(args) == 2 else (Any, Any)
    for key, item in value.items():
        try:
            msgspec.convert(key, key_type, strict=True)
            msgspec.convert(item, value_type, strict=True)
        except msgspec.ValidationError:
            return Key(key), value_type, item
    return Key("?"), value_type, None  # pragma: no cover - msgspec said one entry fails


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(tp: Any, table: str = "a table") -> str:
    """A type in the words of the messages (``int or float``, ``str``, ``a list of strings``, ``a table``)."""
    tp, hints = _strip(tp)
    if hints.get("expected"):
        return str(hints["expected"])
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return "one of " + ", ".join(map(str, typing.get_args(tp)))
    if origin in (list, tuple):
        return "a list of strings" if _strip(_item_type(tp))[0] is str else "a list"
    if _is_struct(tp) or origin in (dict, Mapping) or tp in (dict, Mapping):
        return table
    members = _members(tp)
    if len(members) > 1 or members[0] is not tp:
        words = [w for m in members for w in _kind(m, table).split(" or ")]
        return " or ".join(dict.fromkeys(words))
    return {float: "int or float", int: "int", str: "str", bool: "bool"}.get(tp, getattr(tp, "__name__", str(tp)))


def _bounds(tp: Any) -> tuple[float, float]:
    """``(low, high)`` of a number type's ``Meta`` constraints (open or closed: the words are the same)."""
    low, high = -math.inf, math.inf
    for meta in typing.get_args(tp)[1:] if typing.get_origin(tp) is typing.Annotated else ():
        low = next((v for v in (getattr(meta, "ge", None), getattr(meta, "gt", None)) if v is not None), low)
        high = next((v for v in (getattr(meta, "le", None), getattr(meta, "lt", None)) if v is not None), high)
    return low, high


def _range(tp: Any, value: float, integer: bool) -> str:
    """A number out of its range, in words; an upper bound of :data:`FINITE` is "finite"."""
    low, high = _bounds(tp)
    noun = "" if integer else "a number "
    finite = "" if integer else " (and finite)"
    if low > -FINITE and high < FINITE:
        return f"must be {noun}between {low:g} and {high:g}, got {value!r}"
    if high < FINITE:
        return f"must be {noun}<= {high:g}, got {value!r}"
    if low > -FINITE:
        return f"must be {noun}>= {low:g}{finite}, got {value!r}"
    return f"must be a finite number, got {value!r}"


def _describe(path: tuple[str | int, ...], value: Any, tp: Any, table: str) -> Problem:
    """Why ``value`` does not fit ``tp``: out of range, not one of the words, or of another kind."""
    members = _members(tp)
    bare = [_strip(m)[0] for m in members]
    number = next((m for m in members if _strip(m)[0] in (int, float)), None)
    words = next((m for m in members if typing.get_origin(_strip(m)[0]) is typing.Literal), None)
    text = next((m for m in members if _strip(m)[0] is str), None)
    hints = {**next((_strip(m)[1] for m in members if _strip(m)[1].get("expected")), {}), **_strip(tp)[1]}
    why: str | None = None
    expected = hints.get("expected") or _kind(tp, table)
    if hints.get("expected"):
        pass
    elif isinstance(value, bool) and number is not None and bool not in bare:
        expected = "a number"
    elif _number(value) and number is not None and (_strip(number)[0] is float or isinstance(value, int)):
        why, hints = _range(number, value, _strip(number)[0] is int), {**_strip(number)[1], **hints}
    elif isinstance(value, str) and words is not None:
        why = f"{short(value)} is not one of {', '.join(map(str, typing.get_args(_strip(words)[0])))}"
        hints = {**_strip(words)[1], **hints}
    elif isinstance(value, str) and text is not None:  # a pattern or a length: the hint says which
        hints = {**_strip(text)[1], **hints}
        why, hints = f"{short(value)} {hints.get('fix') or 'is not accepted here'}", {}
    fix = str(hints.get("fix") or "")
    got = short(value)
    if why is None:
        why = f"expected {expected}, got {got}"
    else:
        expected, got = "", ""
    why = f"{why}{fix}" if not fix or fix[0] in ":;," else f"{why} {fix}"
    return Problem(path, why, expected or None, got or None)
