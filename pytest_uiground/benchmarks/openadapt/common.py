"""Helpers shared by the two OpenAdapt loaders: ``openadapt`` (annotation files, in
:mod:`.loader`) and ``recorded_sessions`` (click logs, in :mod:`.recorded`).

Why this exists: both loaders turn one malformed element or line into one ``invalid``
sample (:class:`BadValue` carries the message), resolve their paths against
``--uiground-data-path`` or the suite folder, make sample ids safe and unique, and slice
results by element size in the same way. Keeping that here lets each loader import it
without importing the other (``loader`` re-exports ``load_recorded``, so ``recorded``
must not import ``loader``).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Final

from pytest_uiground.record.geometry import Box, size_bucket
from pytest_uiground.record.sample import safe_id
from pytest_uiground.suite.loading import LoaderContext

UNKNOWN_TYPE: Final = "unknown"

_LEADING_JUNK: Final = re.compile(r"^[^A-Za-z0-9]+")


class BadValue(ValueError):
    """One element or line is malformed; the message says what and how to fix it."""


def resolve_path(value: Any, ctx: LoaderContext, option: str) -> Path:
    """``value`` relative to ``--uiground-data-path`` when given, else to the suite's folder."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"loader option {option}: expected a path, got {value!r}")
    path = Path(value).expanduser()
    if path.is_absolute():
        return path
    return (ctx.data_path if ctx.data_path is not None else ctx.suite_dir) / path


def base_note(ctx: LoaderContext) -> str:
    """Where relative paths were looked up, for a not-found message."""
    if ctx.data_path is not None:
        return f"relative paths are read from --uiground-data-path {ctx.data_path}"
    return (f"relative paths are read from the suite folder {ctx.suite_dir} (pass --uiground-data-path to read "
            "elsewhere)")


def unique_id(raw: str, used: set[str], fallback: str) -> str:
    """``raw`` made safe for the sample-id pattern and distinct from every id in ``used``.

    Unsafe characters become ``_`` and a leading non-alphanumeric run is dropped (ids must
    start with a letter or digit); two raw ids that end up equal get ``-2``, ``-3``... in
    file order, so ids stay stable as long as the file's order does.
    """
    safe = _LEADING_JUNK.sub("", safe_id(raw)) or fallback
    out, n = safe, 2
    while out in used:
        out, n = f"{safe}-{n}", n + 1
    used.add(out)
    return out


def finite_numbers(value: Any, n: int, name: str, *, hint: str) -> list[float]:
    """Exactly ``n`` finite numbers, or :class:`BadValue` naming ``name`` and the expected layout."""
    ok = isinstance(value, (list, tuple)) and len(value) == n and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    if not ok:
        raise BadValue(f"{name} {show(value)} is not {n} numbers; expected {hint}")
    return [float(v) for v in value]


def show(value: Any) -> str:
    """A value as it is written in the file (so a message can be searched for)."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def nonblank(value: Any) -> str | None:
    """``value`` stripped when it is a non-blank string, else ``None``."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def instruction_for(instruction: Any, text: Any, element_type: str) -> str:
    """The element's instruction, else its text, else its type ("the icon")."""
    return nonblank(instruction) or nonblank(text) or (f"the {element_type}" if element_type != UNKNOWN_TYPE
                                                       else "the clicked element")


def bucket(box: Box, width: int, height: int) -> str:
    """The size bucket of a normalized box on a ``width`` x ``height`` image.

    Pixel sides are rounded to 1e-6 first: a 32 px element stored as a fraction comes
    back as 31.999999999999996 px and must not fall into ``lt32``.
    """
    return size_bucket(round(box.width * width, 6), round(box.height * height, 6))
