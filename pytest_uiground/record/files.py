"""Content digests and atomic small-file writes, shared by the prediction cache and the judge cache.

Kept with the records (below both users) so that the judge's cache does not reach into the
run stage for two helpers.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def digest(data: Mapping[str, Any]) -> str:
    """A stable hash of JSON-able data (keys sorted): cache keys and seeded orders."""
    text = json.dumps(data, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def write_entry(path: Path, doc: Mapping[str, Any]) -> None:
    """One cache entry, atomically (temp file + rename): concurrent xdist workers and
    judge threads never see half an entry. No fsync: a lost entry is only recomputed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
