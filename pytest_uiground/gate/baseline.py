"""Per-sample baselines: ``baselines/<suite>/samples.json``.

A reviewable JSON file mapping sample id → whether it was right (and its 0..100
value), with provenance (model and fingerprint, package versions, suite version,
dataset fingerprint, date). It is written only by the controller, only on
``--snapshot-update``, atomically (write a temp file, then ``os.replace``). The
aggregate snapshots live beside it in ``snapshots/``, which syrupy owns; nothing
else under ``baselines/`` is touched.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.score import Score

FORMAT = 1
SAMPLES_FILE = "samples.json"
SNAPSHOT_DIR = "snapshots"


class BaselineError(Exception):
    """A baseline file is malformed; the message names the file and the field."""


@dataclass(frozen=True)
class BaselineEntry:
    right: bool
    value: float
    components: Mapping[str, bool | float] = field(default_factory=dict)

    def as_score(self, binary: bool) -> Score:
        """The stored result as a Score that metrics read like the current one. ``binary``:
        whether the task has a right/wrong outcome (the current record's ``correct`` is set)."""
        return Score(self.value, self.right if binary else None, components=dict(self.components))


@dataclass(frozen=True)
class Baseline:
    path: Path
    entries: Mapping[str, BaselineEntry]
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def right(self, sample_id: str) -> bool | None:
        entry = self.entries.get(sample_id)
        return entry.right if entry is not None else None


def suite_dir(root: Path, suite: str) -> Path:
    return root / suite


def load(root: Path, suite: str) -> Baseline | None:
    """The suite's baseline, or None when there is none yet."""
    path = suite_dir(root, suite) / SAMPLES_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise BaselineError(
            f"{path}: not valid JSON ({exc}); restore it from version control or rewrite it with "
            "--snapshot-update"
        ) from exc
    if not isinstance(data, dict):
        raise BaselineError(f"{path}: expected a JSON object at the top level")
    if data.get("format") != FORMAT:
        raise BaselineError(f"{path}: field 'format' is {data.get('format')!r}, expected {FORMAT}")
    samples = data.get("samples")
    if not isinstance(samples, dict):
        raise BaselineError(f"{path}: field 'samples' must be an object of sample id → result")
    entries: dict[str, BaselineEntry] = {}
    for sid, item in samples.items():
        if not isinstance(item, dict) or not isinstance(item.get("right"), bool):
            raise BaselineError(f"{path}: samples.{sid}.right must be true or false, got {item!r}")
        value = item.get("value", 100.0 if item["right"] else 0.0)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BaselineError(f"{path}: samples.{sid}.value must be a number, got {value!r}")
        comps = item.get("c", {})
        if not isinstance(comps, dict) or not all(isinstance(v, (bool, int, float)) for v in comps.values()):
            raise BaselineError(f"{path}: samples.{sid}.c must map component names to true/false or numbers, "
                                f"got {comps!r}")
        entries[sid] = BaselineEntry(right=item["right"], value=float(value), components=comps)
    provenance = data.get("provenance", {})
    return Baseline(path=path, entries=entries, provenance=provenance if isinstance(provenance, dict) else {})


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)  # mkstemp creates 0600; baselines and reports are shared files
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _entry(r: SampleResult) -> dict[str, Any]:
    entry: dict[str, Any] = {"right": r.right, "value": round(r.value, 4)}
    if r.score.components:
        entry["c"] = dict(sorted(r.score.components.items()))
    return entry


def _stored(entry: BaselineEntry) -> dict[str, Any]:
    out: dict[str, Any] = {"right": entry.right, "value": round(entry.value, 4)}
    if entry.components:
        out["c"] = dict(sorted(entry.components.items()))
    return out


def write(root: Path, suite: str, results: Sequence[SampleResult], provenance: Mapping[str, Any],
          previous: Baseline | None = None) -> Path:
    """Write the suite's per-sample baseline. A sample that errored is never recorded as a
    wrong answer: its previous entry is kept when there is one, else it has no entry (the
    controller refuses an update with errors unless ``--uiground-keep-errored`` says so)."""
    path = suite_dir(root, suite) / SAMPLES_FILE
    samples: dict[str, Any] = {}
    for r in sorted(results, key=lambda r: r.id):
        if r.error is None:
            samples[r.id] = _entry(r)
        elif previous is not None and r.id in previous.entries:
            samples[r.id] = _stored(previous.entries[r.id])
    head = json.dumps({"format": FORMAT, "suite": suite, "provenance": dict(provenance)}, indent=1)
    samples = dict(sorted(samples.items()))
    # One line per sample keeps the file short and its diffs readable in review.
    lines = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in samples.items())
    atomic_write_text(path, head[:-2] + ',\n "samples": {\n' + lines + "\n }\n}\n")
    return path


def recorded_ids(base: Baseline) -> set[str]:
    """The samples the suite had when the baseline was written: those with an entry, plus
    those that errored then and were left out (``provenance.unrecorded``)."""
    extra = base.provenance.get("unrecorded")
    return set(base.entries) | ({str(i) for i in extra} if isinstance(extra, list) else set())


def _few(ids: set[str], limit: int = 10) -> str:
    shown = sorted(ids)
    more = f" ... (+{len(shown) - limit} more)" if len(shown) > limit else ""
    return ", ".join(shown[:limit]) + more


def provenance_mismatch(base: Baseline, current: Mapping[str, Any], ids: set[str]) -> str | None:
    """Why the baseline was recorded on something else than this run's suite (another suite
    version, dataset revision or sample set), or None. Per-sample comparisons still use the
    shared ids; the aggregate checks fail with this text until the baseline is updated."""
    prov = base.provenance
    out: list[str] = []
    for key, what in (("suite_version", "suite version"), ("dataset_revision", "dataset revision")):
        old, new = prov.get(key), current.get(key)
        if old != new and (old is not None or new is not None):
            out.append(f"{what} {old!r} in the baseline, {new!r} now")
    old_ids = recorded_ids(base)
    added, removed = ids - old_ids, old_ids - ids
    if added or removed:
        parts = [f"{len(added)} added ({_few(added)})" if added else "",
                 f"{len(removed)} removed ({_few(removed)})" if removed else ""]
        out.append(f"sample set changed: {len(old_ids)} samples in the baseline, {len(ids)} now; "
                   + "; ".join(p for p in parts if p))
    elif prov.get("dataset_fingerprint") not in (None, current.get("dataset_fingerprint")):
        out.append(f"dataset fingerprint {prov.get('dataset_fingerprint')!r} in the baseline, "
                   f"{current.get('dataset_fingerprint')!r} now (the loader options changed)")
    if not out:
        return None
    return ("the baseline was recorded on another dataset or suite version: " + "; ".join(out)
            + f" ({base.path}); per-sample results are compared on the shared samples only; review the change "
            "and record a new baseline with --snapshot-update")


class UpdateLock:
    """One ``--snapshot-update`` at a time per baseline folder: an exclusive, non-blocking
    ``flock`` on ``<baselines>/.uiground-update.lock``, held for the whole session so that
    syrupy's snapshots and ``samples.json`` always come from the same run. The kernel drops
    the lock when the process dies, so a killed run never blocks the next one (its empty
    file is reused). A second update is refused rather than queued: it would otherwise
    rewrite the first one's baseline a moment later with a different model's results."""

    NAME = ".uiground-update.lock"

    def __init__(self, root: Path) -> None:
        self.path = root / self.NAME
        self._fd: int | None = None

    def acquire(self) -> str | None:
        """None when held now; else why not (another update holds it)."""
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
                os.close(fd)
                return (f"another --snapshot-update is writing baselines under {self.path.parent} (pid {holder}, "
                        f"lock {self.path}); wait for it to finish, then run again")
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:  # not a file the previous holder unlinked while we waited to lock it
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd
        return None

    def release(self) -> None:
        """Remove the lock file (the baselines folder keeps only reviewable files), then unlock."""
        if self._fd is not None:
            self.path.unlink(missing_ok=True)
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None
