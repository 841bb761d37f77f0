"""The baseline of a suite: ``baselines/<suite>/samples.json`` and ``snapshots/``, one thing.

``samples.json`` is a reviewable JSON file mapping sample id → whether it was right (and its
0..100 value), with provenance (model and fingerprint, package versions, suite version, dataset
fingerprint, date); ``snapshots/`` holds one file per aggregate check (:mod:`.snapshot`). They
are written together, only by the controller, only on ``--snapshot-update``: every file goes to
a temporary file first, and only when all are written are they renamed into place, so a full
disk leaves the previous pair untouched. They are read together: a suite with no
``baselines/<suite>/`` folder is new; a folder with any part missing, unreadable, non-finite or
out of range is *damaged*, which fails the suite's aggregate checks naming the file and the fix
(never "no baseline yet", which would let a 60-point drop pass).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_uiground.gate import snapshot as snapshot_mod
from pytest_uiground.record.files import stage_text as _stage
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.score import Score

FORMAT = 1
SAMPLES_FILE = "samples.json"
SNAPSHOT_DIR = "snapshots"
FIX = "restore it from version control, or record a new baseline with --snapshot-update"


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
    """A suite's stored baseline. ``damaged`` says why it cannot be used (its entries are then
    empty): the aggregate checks fail with that text, the per-sample tests compare nothing."""

    path: Path
    entries: Mapping[str, BaselineEntry]
    provenance: Mapping[str, Any] = field(default_factory=dict)
    # snapshot file name → stored aggregate, as read from snapshots/ (None: not read, for a baseline built in memory)
    snapshots: Mapping[str, Mapping[str, Any]] | None = None
    damaged: str | None = None

    def right(self, sample_id: str) -> bool | None:
        entry = self.entries.get(sample_id)
        return entry.right if entry is not None else None


def suite_dir(root: Path, suite: str) -> Path:
    return root / suite


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _strict_json(text: str) -> Any:
    """JSON as the standard has it: NaN and Infinity (which Python's parser accepts) are errors."""
    return json.loads(text, parse_constant=_reject_constant)


def load(root: Path, suite: str) -> Baseline | None:
    """The suite's baseline; None only when the suite has no folder under the baselines yet.
    A damaged baseline is returned with ``damaged`` set, never raised: it fails the aggregate
    checks of a plain run, and an update replaces it."""
    folder = suite_dir(root, suite)
    path = folder / SAMPLES_FILE
    if not os.path.lexists(folder):
        return None
    try:
        entries, provenance = _read_samples(path, folder)
        snapshots = _read_snapshots(folder / SNAPSHOT_DIR)
    except BaselineError as exc:
        return Baseline(path=path, entries={}, snapshots={}, damaged=f"damaged baseline: {exc}")
    return Baseline(path=path, entries=entries, provenance=provenance, snapshots=snapshots)


def _read_samples(path: Path, folder: Path) -> tuple[dict[str, BaselineEntry], dict[str, Any]]:
    if not folder.is_dir():
        raise BaselineError(f"{folder} is not a folder; remove it, then record a baseline with --snapshot-update")
    if not path.is_file():
        raise BaselineError(f"{path} is missing while {folder} exists (the suite is not new: its baseline "
                            f"lost a part); {FIX}")
    try:
        data = _strict_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BaselineError(f"{path}: not valid JSON ({exc}); {FIX}") from exc
    if not isinstance(data, dict):
        raise BaselineError(f"{path}: expected a JSON object at the top level; {FIX}")
    if data.get("format") != FORMAT:
        raise BaselineError(f"{path}: field 'format' is {data.get('format')!r}, expected {FORMAT}; {FIX}")
    samples = data.get("samples")
    if not isinstance(samples, dict):
        raise BaselineError(f"{path}: field 'samples' must be an object of sample id → result; {FIX}")
    entries: dict[str, BaselineEntry] = {}
    for sid, item in samples.items():
        if not isinstance(item, dict) or not isinstance(item.get("right"), bool):
            raise BaselineError(f"{path}: samples.{sid}.right must be true or false, got {item!r}; {FIX}")
        value = item.get("value", 100.0 if item["right"] else 0.0)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BaselineError(f"{path}: samples.{sid}.value must be a number, got {value!r}; {FIX}")
        if not math.isfinite(value) or not 0.0 <= value <= 100.0:
            raise BaselineError(f"{path}: samples.{sid}.value is {value!r}, outside 0..100; {FIX}")
        comps = item.get("c", {})
        if not isinstance(comps, dict) or not all(
                isinstance(v, bool) or (isinstance(v, (int, float)) and math.isfinite(v)) for v in comps.values()):
            raise BaselineError(f"{path}: samples.{sid}.c must map component names to true/false or finite "
                                f"numbers, got {comps!r}; {FIX}")
        entries[sid] = BaselineEntry(right=item["right"], value=float(value), components=comps)
    provenance = data.get("provenance", {})
    return entries, provenance if isinstance(provenance, dict) else {}


def _read_snapshots(folder: Path) -> dict[str, Mapping[str, Any]]:
    if not folder.is_dir():
        raise BaselineError(f"{folder} is missing beside {SAMPLES_FILE} (the aggregate snapshots); {FIX}")
    out: dict[str, Mapping[str, Any]] = {}
    for file in sorted(folder.iterdir()):
        if not snapshot_mod.is_snapshot(file.name):
            continue
        try:
            data = _strict_json(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise BaselineError(f"{file}: not valid JSON ({exc}); {FIX}") from exc
        why = snapshot_mod.problem(data) if isinstance(data, dict) else "expected a JSON object"
        if why:
            raise BaselineError(f"{file}: {why}; {FIX}")
        out[file.name] = data
    return out


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


def samples_text(suite: str, results: Sequence[SampleResult], provenance: Mapping[str, Any],
                 previous: Baseline | None = None) -> str:
    """The text of ``samples.json``. A sample that errored is never recorded as a wrong answer:
    its previous entry is kept when there is one, else it has no entry (the controller refuses
    an update with errors unless ``--uiground-keep-errored`` says so)."""
    samples: dict[str, Any] = {}
    for r in sorted(results, key=lambda r: r.id):
        if r.error is None:
            samples[r.id] = _entry(r)
        elif previous is not None and r.id in previous.entries:
            samples[r.id] = _stored(previous.entries[r.id])
    head = json.dumps({"format": FORMAT, "suite": suite, "provenance": dict(provenance)}, indent=1,
                      allow_nan=False)
    samples = dict(sorted(samples.items()))
    # One line per sample keeps the file short and its diffs readable in review.
    lines = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, allow_nan=False)}" for k, v in samples.items())
    return head[:-2] + ',\n "samples": {\n' + lines + "\n }\n}\n"


def write(root: Path, suite: str, results: Sequence[SampleResult], provenance: Mapping[str, Any],
          previous: Baseline | None = None, snapshots: Mapping[str, Mapping[str, Any]] | None = None) -> Path:
    """Write the suite's baseline as a pair: ``samples.json`` and one snapshot per aggregate check
    (``snapshots``: check label → aggregate; None writes ``samples.json`` alone, for tests of it).

    Every file is staged first; only when all are on disk are they renamed into place, and the
    snapshots of checks the suite no longer has (a removed metric or slice) are deleted. A
    failure while staging (a full disk, a read-only folder) removes the staged files and raises
    the ``OSError`` with the previous pair untouched."""
    folder = suite_dir(root, suite)
    path = folder / SAMPLES_FILE
    files = {path: samples_text(suite, results, provenance, previous)}
    if snapshots is not None:
        files |= {folder / SNAPSHOT_DIR / snapshot_mod.file_name(label): snapshot_mod.serialize(data)
                  for label, data in snapshots.items()}
    staged: dict[Path, Path] = {}
    try:
        if snapshots is not None:
            (folder / SNAPSHOT_DIR).mkdir(parents=True, exist_ok=True)
        for target, text in files.items():
            staged[target] = _stage(target, text)
    except BaseException:
        for tmp in staged.values():
            tmp.unlink(missing_ok=True)
        raise
    # The snapshots first, samples.json last: a reader that finds the new samples.json finds its pair.
    for target in sorted(staged, key=lambda t: t == path):
        os.replace(staged[target], target)
    if snapshots is not None:
        current = {snapshot_mod.file_name(label) for label in snapshots}
        for old in (folder / SNAPSHOT_DIR).iterdir():
            if snapshot_mod.is_snapshot(old.name) and old.name not in current:
                old.unlink()
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

        while True:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                return (f"--snapshot-update cannot write under the baselines folder {str(self.path.parent)!r} "
                        f"({exc.strerror or exc}); make it a writable folder, or choose another with "
                        "--uiground-baselines")
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


class ReportLock(UpdateLock):
    """One run at a time per ``--uiground-report`` folder (two would interleave ``samples.jsonl``
    and overwrite each other's summary): the same non-blocking ``flock`` as :class:`UpdateLock`,
    on ``<report>/.uiground-report.lock``, removed when the run ends. Unlike the update lock, a
    folder that cannot be written raises the ``OSError`` (the controller notes it and goes on)."""

    NAME = ".uiground-report.lock"

    def acquire(self) -> str | None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644))  # raises when the folder is not writable
        busy = super().acquire()
        if busy is None:
            return None
        holder = busy.split("(pid ", 1)[-1].split(",", 1)[0]
        return (f"another pytest run is writing the report folder {str(self.path.parent)!r} (pid {holder}, lock "
                f"{self.path}); wait for it to finish, or give this run another --uiground-report folder")
