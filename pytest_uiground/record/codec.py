"""One JSON mechanism for the typed records: fields in, fields out, read from the dataclass.

The records (:class:`~pytest_uiground.record.prediction.Prediction`,
:class:`~pytest_uiground.record.score.Score`, :class:`~pytest_uiground.record.result.SampleResult`)
used to carry hand-written ``to_json``/``from_json`` pairs that had to be kept in step with every
new field (a field forgotten in one of them vanished between the worker and the report). Here the
dataclass's own fields and type hints decide both directions; the few rules a field needs beyond
its type sit on the field, as ``field(metadata=json_field(...))``:

* ``omit``: ``"none"`` leaves the key out when the value is None, ``"empty"`` when it is empty,
  ``"default"`` when it equals the field's default (what older readers would misread);
* ``digits``: round a float to that many digits when writing (latencies);
* ``key``: the JSON key, when it differs from the field name;
* ``absent``: the value a *tolerant* reader gives a field whose key is missing or unreadable, when it
  differs from the field's default (a file from before the field existed: ``summary.json``'s version 1);
* ``write``/``read``: the field's own pair, for a nested type that is not written by this codec
  (the gate's :class:`~pytest_uiground.gate.verdict.Verdict`, whose JSON carries its derived wording).

Reading is lenient the way the hand-written readers were: a missing key or a JSON ``null`` for a
field that is not optional takes the field's default, numbers are converted to the field's type,
tuples of numbers (points, boxes) come back as their named tuple, and nested records are read with
this same function. Unknown keys are ignored (a newer writer's extra field does not break an older
reader). :func:`to_json` and :func:`from_json` are each other's inverse on every record.

A third way, ``tolerant=True``, reads files that other versions wrote, copied between machines or
damaged (``summary.json``, read by ``compare`` and the report): a value that does not have its
field's JSON type reads as the field's default, or None, or the empty value of its type (a NaN, a
bool or a string where a number belongs is "no value"; a malformed list is empty), an unreadable
entry of a dict or a list is left out, and a nested record that lacks a number it cannot do without
is None. Nothing raises but data that is not an object at all.

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
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")

_META = "uiground_json"


_UNSET: Any = object()


def json_field(*, omit: str | None = None, digits: int | None = None, key: str | None = None,
               absent: Any = _UNSET, write: Callable[[Any], Any] | None = None,
               read: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """Field metadata for the rules above: ``field(default=None, metadata=json_field(omit="none"))``."""
    return {_META: {"omit": omit, "digits": digits, "key": key, "absent": absent, "write": write, "read": read}}


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
        if rules.get("omit") == "default" and value == _default(f):
            continue
        write = rules.get("write")
        out[rules.get("key") or f.name] = write(value) if write and value is not None else _encode(
            value, rules.get("digits"))
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


def from_json(cls: type[T], data: Mapping[str, Any], *, strict: bool = False, where: str = "",
              tolerant: bool = False) -> T:
    """A ``cls`` record read back from its JSON form (see the module docstring for the leniency).
    ``strict``: every present value must already have its field's JSON type, else :class:`FieldError`
    names the field (prefixed with ``where``, the record's own path, for a nested record).
    ``tolerant``: a value of the wrong type reads as no value (module docstring); raises ``ValueError``
    only when ``data`` is not an object."""
    if tolerant:
        try:
            return _salvage_record(cls, data)
        except _Unreadable:
            raise ValueError(f"{getattr(cls, '__name__', cls)}: expected a JSON object, got "
                             f"{type(data).__name__}") from None
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


class _Unreadable(Exception):
    """A value a tolerant reader cannot use where it stands (its caller gives no value instead)."""


def _salvage_record(cls: type[T], data: Any) -> T:
    if not isinstance(data, Mapping):
        raise _Unreadable
    hints = _hints(typing.cast(type, cls))
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not f.init:
            continue
        rules = _rules(f)
        key = rules.get("key") or f.name
        if rules.get("read") is not None:
            kwargs[f.name] = rules["read"](data.get(key))
            continue
        try:
            if key not in data:
                raise _Unreadable
            kwargs[f.name] = _salvage(hints[f.name], data[key])
        except _Unreadable:
            if rules.get("absent", _UNSET) is not _UNSET:
                kwargs[f.name] = rules["absent"]
                continue
            try:
                kwargs[f.name] = _default(f)
            except KeyError:
                kwargs[f.name] = _empty(hints[f.name])
    return cls(**kwargs)


def _salvage(tp: Any, value: Any) -> Any:
    """``value`` as ``tp`` if it has that JSON type (a dict's or a list's bad entries left out), else
    :class:`_Unreadable`; None for an optional field that holds something else."""
    optional, inner = _optional(tp)
    if inner is Any:
        return value
    if value is None and not optional:
        raise _Unreadable
    try:
        return None if value is None else _salvage_inner(inner, value)
    except _Unreadable:
        if optional:
            return None
        raise


def _salvage_inner(tp: Any, value: Any) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):  # several types (a component: bool | float): the first that fits
        for member in args:
            try:
                return _salvage_inner(member, value)
            except _Unreadable:
                continue
        raise _Unreadable
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _salvage_record(tp, value)
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        if not isinstance(value, dict):
            raise _Unreadable
        if len(args) != 2:
            return dict(value)
        out = {}
        for k, v in value.items():
            try:
                out[k] = _salvage(args[1], v)
            except _Unreadable:
                continue
        return out
    if isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):  # Point, Box
        if isinstance(value, list) and len(value) == len(tp._fields) and all(_number(v) for v in value):
            return typing.cast(Any, tp)(*(float(v) for v in value))
        raise _Unreadable
    if origin in (list, tuple) or tp in (list, tuple):
        if not isinstance(value, list):
            raise _Unreadable
        if origin is tuple and args and args[-1] is not Ellipsis:  # fixed length: an interval (low, high)
            if len(value) != len(args):
                raise _Unreadable
            return tuple(_salvage(a, v) for a, v in zip(args, value, strict=True))
        items: list[Any] = []
        for v in value:
            try:
                items.append(_salvage(args[0], v) if args else v)
            except _Unreadable:
                continue
        return tuple(items) if origin is tuple or tp is tuple else items
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            raise _Unreadable from None
    if tp is float and _number(value):
        return float(value)
    if tp is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if (tp is bool and isinstance(value, bool)) or (tp is str and isinstance(value, str)):
        return value
    if tp in (float, int, bool, str):
        raise _Unreadable
    return value


def _empty(tp: Any) -> Any:
    """The value a required field reads as when a tolerant reader finds none: None, "", 0, False or an
    empty container; a float (a number that cannot be made up) makes its record unreadable."""
    optional, inner = _optional(tp)
    if optional or inner is Any:
        return None
    origin = typing.get_origin(inner) or inner
    if inner in (str, int, bool):
        return inner()
    if origin in (dict, Mapping):
        return {}
    if origin is list:
        return []
    if origin is tuple and (not typing.get_args(inner) or typing.get_args(inner)[-1] is Ellipsis):
        return ()
    raise _Unreadable
