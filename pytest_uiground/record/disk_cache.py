"""The one disk cache: predictions (:mod:`pytest_uiground.run.prediction_cache`) and judge replies
(:class:`pytest_uiground.judges.base.Judge`) are both stored here, with one layout and one policy.

Layout: ``<root>/<fingerprint digest[:16]>/<key[:2]>/<key>.json``, one small JSON object per
entry, ``{"format": FORMAT, "key": key, <field>: value}``, written atomically
(:func:`~pytest_uiground.record.files.write_entry`) so concurrent xdist workers and judge threads
never see half an entry.

Policy for a damaged entry (unreadable, not JSON, JSON but not an object, another format or key,
a value that does not decode): it is reported, as a ``warning`` log record naming the file and in
the returned :attr:`Lookup.problem` (its caller puts it on the sample's record), and treated as a
miss, so the value is computed again and the entry rewritten. Never silently ignored (a cache that
quietly recomputes hides a disk or a writer that corrupts it), never fatal (a cache is only a
shortcut: a bad entry must not fail a sample, let alone the run).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pytest_uiground.record.files import digest, write_entry

FORMAT = 1
T = TypeVar("T")

log = logging.getLogger("pytest_uiground.cache")


@dataclass(frozen=True)
class Lookup(Generic[T]):
    """A cache answer: the value (None: a miss) and, for a damaged entry, what was wrong with it."""

    value: T | None
    problem: str | None = None


class DiskCache(Generic[T]):
    """Values of one kind, keyed by a digest, under a folder per fingerprint (a new model or judge
    starts an empty folder instead of mixing answers).

    ``what`` names the cache in messages (``"prediction"``), ``field`` is the entry's key holding
    the value, ``encode``/``decode`` turn the value into JSON and back (``decode`` raising means the
    entry is damaged) and ``again`` says what happens instead (``"predicting again"``)."""

    def __init__(self, root: Path, fingerprint: Mapping[str, Any], *, what: str, field: str,
                 encode: Callable[[T], Any], decode: Callable[[Any], T], again: str) -> None:
        self.root = root / digest(fingerprint, short=True)
        self.fingerprint = fingerprint
        self.what, self.field, self.again = what, field, again
        self._encode, self._decode = encode, decode

    def key(self, parts: Mapping[str, Any]) -> str:
        """The entry key of ``parts`` under this cache's fingerprint."""
        return digest({"fingerprint": self.fingerprint, **parts})

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Lookup[T]:
        path = self.path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return Lookup(None)
        except (OSError, ValueError) as exc:  # unreadable, not UTF-8, not JSON
            return self._damaged(path, str(exc))
        if not isinstance(data, dict):  # valid JSON, but ``[]``, ``null``, ``"x"`` or ``5``
            return self._damaged(path, f"a JSON {type(data).__name__}, not an object")
        if type(data.get("format")) is not int or data.get("format") != FORMAT or data.get("key") != key:
            return self._damaged(path, "format or key mismatch")
        if self.field not in data:
            return self._damaged(path, f"no {self.field!r}")
        try:
            return Lookup(self._decode(data[self.field]))
        except Exception as exc:  # any failure to decode a damaged value is a miss, never a crash
            return self._damaged(path, f"{type(exc).__name__}: {exc}")

    def put(self, key: str, value: T) -> None:
        write_entry(self.path(key), {"format": FORMAT, "key": key, self.field: self._encode(value)})

    def _damaged(self, path: Path, why: str) -> Lookup[T]:
        problem = f"warning: corrupt {self.what} cache entry {path} ({why}); {self.again}"
        log.warning("%s", problem)
        return Lookup(None, problem)
