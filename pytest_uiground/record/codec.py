"""One JSON mechanism for the typed records: fields in, fields out, read from the dataclass.

The records (:class:`~pytest_uiground.record.prediction.Prediction`,
:class:`~pytest_uiground.record.score.Score`, :class:`~pytest_uiground.record.result.SampleResult`)
used to carry hand-written ``to_json``/``from_json`` pairs that had to be kept in step with every
new field (a field forgotten in one of them vanished between the worker and the report). Here the
dataclass's own fields and type hints decide both directions; the few rules a field needs beyond
its type sit on the field, as ``field(metadata=json_field(...))``:

* ``omit``: ``"none"`` leaves the key out when the value is None, ``"empty"`` when it is empty;
* ``digits``: round a float to that many digits when writing (latencies);
* ``key``: the JSON key, when it differs from the field name.

Reading is lenient the way the hand-written readers were: a missing key or a JSON ``null`` for a
field that is not optional takes the field's default, numbers are converted to the field's type,
tuples of numbers (points, boxes) come back as their named tuple, and nested records are read with
this same function. Unknown keys are ignored (a newer writer's extra field does not break an older
reader). :func:`to_json` and :func:`from_json` are each other's inverse on every record.

That leniency suits records this package wrote a moment ago (a worker's record on its way to the
controller). Stored answers read back from a file someone may have edited, or a disk may have
damaged (the baseline's answers, the prediction cache), are read with ``strict=True`` instead
(issue 38: ``{"point": "ab"}`` became ``Point("a", "b")`` and crashed the report writers): every
present value must already have its field's JSON type (a finite number for a float, a string for
a string, a list of finite numbers of the right length for a point or a box, true/false for a
bool, no ``null`` for a field that is not optional), else :class:`FieldError` names the field.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")

_META = "uiground_json"


def json_field(*, omit: str | None = None, digits: int | None = None, key: str | None = None) -> dict[str, Any]:
    """Field metadata for the rules above: ``field(default=None, metadata=json_field(omit="none"))``."""
    return {_META: {"omit": omit, "digits": digits, "key": key}}


def _rules(f: dataclasses.Field[Any]) -> dict[str, Any]:
    rules: dict[str, Any] = f.metadata.get(_META, {})
    return rules


def _encode(value: Any, digits: int | None) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, float):
        return round(value, digits) if digits is not None else value
    if isinstance(value, int):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_json(value)
    if isinstance(value, Mapping):
        return {k: _encode(v, None) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_encode(v, None) for v in value]
    return value


def to_json(record: Any) -> dict[str, Any]:
    """The record's JSON form: every field, in declaration order, by the rules above."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(record):
        rules = _rules(f)
        value = getattr(record, f.name)
        if rules.get("omit") == "none" and value is None:
            continue
        if rules.get("omit") == "empty" and not value:
            continue
        out[rules.get("key") or f.name] = _encode(value, rules.get("digits"))
    return out


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    raise KeyError(f.name)


def _optional(tp: Any) -> tuple[bool, Any]:
    """``(True, X)`` for ``X | None``; ``(False, tp)`` otherwise."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) < len(typing.get_args(tp)):
            return True, (args[0] if len(args) == 1 else Any)  # several: read as written
    return False, tp


class FieldError(ValueError):
    """A value of the wrong type in strict reading; ``field`` is its dotted path (``point``, ``route.name``)."""

    def __init__(self, field: str, why: str) -> None:
        super().__init__(f"{field}: {why}")
        self.field, self.why = field, why


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _kind(tp: Any) -> str:
    """How a type is named in an error: what the JSON value should have been."""
    if isinstance(tp, type):
        if issubclass(tp, tuple) and hasattr(tp, "_fields"):
            return f"a list of {len(tp._fields)} finite numbers"
        names = {bool: "true or false", int: "a whole number", float: "a finite number", str: "a string"}
        if tp in names:
            return names[tp]
        if dataclasses.is_dataclass(tp) or issubclass(tp, Mapping):
            return "an object"
        if issubclass(tp, (list, tuple)):
            return "a list"
    origin = typing.get_origin(tp)
    if origin in (dict, Mapping):
        return "an object"
    if origin in (list, tuple):
        return "a list"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_kind(a) for a in typing.get_args(tp))
    return str(tp)


def _check(tp: Any, value: Any, where: str) -> None:
    """Raise :class:`FieldError` unless ``value`` already has the JSON type of ``tp`` (strict reading)."""
    optional, inner = _optional(tp)
    if value is None:
        if optional:
            return
        raise FieldError(where, f"expected {_kind(inner)}, got null")
    tp = inner
    origin = typing.get_origin(tp)
    if tp is Any:
        return
    if origin in (typing.Union, types.UnionType):
        for member in typing.get_args(tp):
            try:
                _check(member, value, where)
                return
            except FieldError:
                continue
        raise FieldError(where, f"expected {_kind(tp)}, got {value!r}"[:200])
    ok: bool
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        ok = isinstance(value, dict)
    elif origin in (list, tuple) or tp in (list, tuple):
        ok = isinstance(value, list)
    elif isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):  # Point, Box
        ok = isinstance(value, list) and len(value) == len(tp._fields) and all(_number(v) for v in value)
    elif isinstance(tp, type) and dataclasses.is_dataclass(tp):
        ok = isinstance(value, dict)
    elif isinstance(tp, type) and issubclass(tp, enum.Enum):
        ok = value in {m.value for m in tp}
    elif tp is bool:
        ok = isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif tp is float:
        ok = _number(value)
    elif tp is str:
        ok = isinstance(value, str)
    else:
        ok = True
    if not ok:
        raise FieldError(where, f"expected {_kind(tp)}, got {value!r}"[:200])
    args = typing.get_args(tp)
    if origin in (dict, Mapping) and len(args) == 2:
        for k, v in value.items():
            _check(args[1], v, f"{where}.{k}")
    elif origin is list and len(args) == 1:
        for i, v in enumerate(value):
            _check(args[0], v, f"{where}[{i}]")


def _decode(tp: Any, value: Any) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any or origin is typing.Union or origin is types.UnionType:
        return value  # a union of several types (a component: bool | float): as written
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        return dict(value)
    item = typing.get_args(tp)[0] if origin is list and len(typing.get_args(tp)) == 1 else None
    if isinstance(item, type) and dataclasses.is_dataclass(item):
        return [from_json(item, v) for v in value]  # a list of records (a stability's predictions)
    if origin in (list, tuple) or tp in (list, tuple):
        return list(value) if origin is list or tp is list else tuple(value)
    if isinstance(tp, type):
        if dataclasses.is_dataclass(tp):
            return from_json(tp, value)
        if issubclass(tp, tuple) and hasattr(tp, "_fields"):  # Point, Box
            return tp(*value)
        if issubclass(tp, enum.Enum):
            return tp(value)
        if tp is bool:
            return bool(value)
        if tp in (int, float, str):
            return tp(value)
    return value


def from_json(cls: type[T], data: Mapping[str, Any], *, strict: bool = False, where: str = "") -> T:
    """A ``cls`` record read back from its JSON form (see the module docstring for the leniency).
    ``strict``: every present value must already have its field's JSON type, else :class:`FieldError`
    names the field (prefixed with ``where``, the record's own path, for a nested record)."""
    hints = _hints(typing.cast(type, cls))
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not f.init:
            continue
        key = _rules(f).get("key") or f.name
        value = data.get(key)
        optional, tp = _optional(hints[f.name])
        if strict and key in data:
            _check(hints[f.name], value, where + key)
            if isinstance(tp, type) and dataclasses.is_dataclass(tp) and value is not None:
                kwargs[f.name] = from_json(tp, value, strict=True, where=f"{where}{key}.")
                continue
        if value is None or (value == "" and isinstance(tp, type) and issubclass(tp, enum.Enum)):
            if optional and key in data:
                kwargs[f.name] = None
                continue
            try:
                kwargs[f.name] = _default(f)
            except KeyError:
                raise KeyError(key) from None  # a required field: the caller names the record
            continue
        kwargs[f.name] = _decode(tp, value)
    return cls(**kwargs)
