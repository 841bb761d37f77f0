"""``samples.jsonl``: every sample's record as it arrives on the controller, one whole line each.

Written while the run goes on (a crash keeps what finished), apart from the summaries built at the
end (:mod:`.summary`) and from the terminal's formatting (:mod:`.terminal`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from pathlib import Path
from typing import Any


def standard(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by null: JSON has no such numbers, and a
    strict parser (a CI tool, a browser's ``JSON.parse``) rejects a file that holds one. The
    prediction itself is already a format error then (:func:`~pytest_uiground.record.prediction.finite`);
    this covers whatever else a custom scorer or adapter put in a record."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: standard(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [standard(v) for v in value]
    return value


class SampleLog:
    """Append-only JSON lines: each record one whole line, written in one call, flushed and fsync'd,
    so a crash or a full disk leaves only whole lines behind. Standard JSON only (``allow_nan=False``:
    the records carry no NaN or Infinity, which strict parsers reject)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._size = 0

    def write(self, record: dict[str, Any]) -> None:
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        line = memoryview((json.dumps(standard(record), sort_keys=True, allow_nan=False) + "\n").encode("utf-8"))
        try:
            done = 0
            while done < len(line):
                done += os.write(self._fd, line[done:])
            os.fsync(self._fd)
        except OSError:
            with contextlib.suppress(OSError):  # drop the part that made it: the file keeps whole lines
                os.ftruncate(self._fd, self._size)
                os.lseek(self._fd, self._size, os.SEEK_SET)
            raise
        self._size += len(line)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
