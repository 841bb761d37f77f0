"""The aggregate snapshots under ``baselines/<suite>/snapshots/``: one JSON file per check.

The files keep the layout syrupy's JSON extension gave them (``test_aggregate[<label>].json``,
sorted keys, two-space indent), so baselines recorded before stay valid, but the plugin reads,
compares and writes them itself, together with ``samples.json`` (:mod:`.baseline`): the two
halves of a baseline are one thing, written as a pair and read as a pair, and the comparison
is decided before the check runs, so the verdict line, the Markdown summary, JUnit XML and the
exit status all read the same decision. syrupy only lends its ``--snapshot-update`` flag.

The comparison is tolerant: a drop of more than the suite's tolerance fails, an improvement
passes; a different sample set (``-k``, ``--uiground-limit``, a changed dataset) is not
comparable here and is left to the paired per-sample check.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Mapping
from typing import Any

PREFIX, SUFFIX = "test_aggregate[", "].json"


_EXCLUDED = set('\\/?*:|"<>')
_MAX_STEM = 255 - len(".json")


def file_name(label: str) -> str:
    """The snapshot file of a check, named as syrupy named it, so stored baselines stay valid: the
    characters a file name cannot hold (``\\/?*:|"<>`` and control characters) are dropped and the
    stem is cut to fit 255 bytes (follows syrupy extensions/single_file.py: _sanitize_filename)."""
    stem = f"{PREFIX}{label}{SUFFIX[:-len('.json')]}"
    kept = "".join(c for c in stem if c not in _EXCLUDED and not unicodedata.category(c).startswith("C"))
    return kept[:_MAX_STEM] + ".json"


def is_snapshot(name: str) -> bool:
    """Whether a file in the snapshot folder is one of the checks' snapshots (others are left alone)."""
    return name.startswith(PREFIX) and name.endswith(SUFFIX)


def serialize(data: Mapping[str, Any]) -> str:
    """Standard JSON (a non-finite number is written as null), in the layout of the files already stored."""
    clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in data.items()}
    return json.dumps(clean, indent=2, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n"


def problem(stored: Mapping[str, Any]) -> str | None:
    """What is wrong with a stored snapshot's content (None when it can be compared with)."""
    value = stored.get("value")
    if value is None:
        return None  # the metric had no value when it was recorded (no sample in it)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"'value' must be a number, got {value!r}"
    if not math.isfinite(value):
        return f"'value' is {value!r}, not a finite number"
    if not stored.get("lower_is_better") and not 0.0 <= value <= 100.0:
        return f"'value' is {value!r}, outside 0..100"
    return None


def matches(current: Mapping[str, Any], stored: Mapping[str, Any], tolerance: float) -> bool:
    """Whether the current aggregate holds against the stored one, within ``tolerance``."""
    if current.get("samples") != stored.get("samples"):
        return True  # another sample set: the paired per-sample check decides
    now, then = current.get("value"), stored.get("value")
    if then is None or now is None or not math.isfinite(float(now)):
        return then is None or now is None
    if current.get("lower_is_better"):
        return float(now) <= float(then) + tolerance
    return float(now) >= float(then) - tolerance
