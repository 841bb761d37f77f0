"""Content digests and atomic file writes: the one implementation for caches, baselines and reports.

Kept with the records (below every user: the caches, the gate, the reports, the loaders) so
that none reaches into another stage for a helper.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SHORT_DIGEST = 16  # hex characters of a short digest: fingerprints, cache folders, prompt hashes


def hex_digest(data: str | bytes, *, short: bool = False) -> str:
    """The one content hash: sha256 in hex, or its first :data:`SHORT_DIGEST` characters (enough to
    tell datasets, prompts and models apart in provenance and folder names, short enough to read).
    Its values are recorded in committed baselines: the algorithm and the length never change."""
    full = hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()
    return full[:SHORT_DIGEST] if short else full


def digest(data: Mapping[str, Any], *, short: bool = False) -> str:
    """A stable hash of JSON-able data (keys sorted): cache keys and seeded orders."""
    return hex_digest(json.dumps(data, sort_keys=True, default=str, separators=(",", ":")), short=short)


def ids_digest(ids: Sequence[str]) -> str:
    """The short digest of a set of sample ids (order ignored): a snapshot records which samples
    its aggregate was computed over."""
    return hex_digest("\n".join(sorted(ids)), short=True)


def stage_text(path: Path, text: str, *, durable: bool = True) -> Path:
    """Write ``text`` to a temporary file beside ``path`` (mode 0644) and return it; the caller
    renames it into place (several files staged first are then renamed together: a baseline).

    ``durable`` fsyncs the data before the rename, so a crash right after cannot leave an empty
    baseline or report in place; caches skip it (a lost entry is only recomputed). On any failure
    the temporary file is removed and the error raised."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)  # mkstemp creates 0600; baselines, reports and caches are shared files
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    """Replace ``path`` with ``text`` whole or not at all: a reader (another xdist worker, a judge
    thread, a CI step) never sees half a file, and a failed write keeps the previous one."""
    tmp = stage_text(path, text, durable=durable)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_entry(path: Path, doc: Mapping[str, Any]) -> None:
    """One cache entry, atomically; not fsync'd (a lost entry is only recomputed). Serialized
    before anything touches the disk, so data that is not JSON leaves no file at all."""
    atomic_write_text(path, json.dumps(doc), durable=False)
