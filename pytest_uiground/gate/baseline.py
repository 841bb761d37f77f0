"""The baseline of a suite: ``baselines/<suite>/samples.json`` and ``snapshots/``, one thing.

``samples.json`` is a reviewable JSON file mapping sample id → whether it was right (and its
0..100 value, its answer ``a``: the point, box or text and the raw output cut to
:data:`ANSWER_RAW_CHARS` characters, so a regression later shows where the accepted model
clicked beside where the candidate clicks; and ``s``, right k of K, when the baseline was
recorded with ``--uiground-repeat``), with provenance (model and fingerprint, package versions, suite version, dataset
fingerprint, date); ``snapshots/`` holds one file per aggregate check (:mod:`.snapshot`). They
are written together, only by the controller, only on ``--snapshot-update``, and published as
one: the new pair is written into a sibling folder ``.<suite>.new`` (a copy of the old folder,
so files a reviewer keeps there survive), and the whole folder is swapped in by renames, so a
full disk leaves the previous pair untouched and a reader never sees half of each.

Why a folder swap (issue 34, item 8): renaming each file into place let a reader running beside
an update read the new ``samples.json`` with the old snapshots, or the reverse (445 of 2,000
reads in a loop; a plain run failed with "the baseline's two halves disagree"). A generation
folder per update, or a symlink, would change the committed layout that reviewers diff; a
manifest of hashes would add a file that every hand edit breaks. The swap keeps every file at
its path: ``<suite>`` is renamed to ``.<suite>.old``, ``.<suite>.new`` to ``<suite>``, and the
old one removed. A reader (:func:`load`) opens the folder once and reads both halves through
that handle, so both come from one generation even if it is swapped away meanwhile; it then
checks that the folder it read is still the one at ``<suite>`` and reads again if not, and it
waits out the moment between the two renames when ``<suite>`` is missing (a ``.<suite>.old``
or ``.new`` beside it says an update is under way, not that the suite is new).

They are read together: a suite with no
``baselines/<suite>/`` folder is new; a folder with any part missing, unreadable, non-finite or
out of range is *damaged*, which fails the suite's aggregate checks naming the file and the fix
(never "no baseline yet", which would let a 60-point drop pass).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_uiground.gate import snapshot as snapshot_mod
from pytest_uiground.record import locks, prediction
from pytest_uiground.record.codec import FieldError
from pytest_uiground.record.files import stage_text as _stage
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.score import Score

if TYPE_CHECKING:  # the schema imports msgspec, which loads when a baseline is read, not with the plugin
    from pytest_uiground.gate.baseline_schema import SamplesFile

FORMAT = 1
SAMPLES_FILE = "samples.json"
SNAPSHOT_DIR = "snapshots"
FIX = "restore it from version control, or record a new baseline with --snapshot-update"
NEW_SUFFIX, OLD_SUFFIX = ".new", ".old"
ANSWER_RAW_CHARS = 300
"""Characters kept of each text of a baseline entry's answer (the raw output, a free-text answer): enough
to recognise an answer, short enough to review."""
ANSWER_TEXT_LIMIT = 10_000
"""The longest text of a stored answer that loads: beyond it, damage. Above :data:`ANSWER_RAW_CHARS` because
writers before issue 38 cut only the raw output (a long free-text answer they kept still loads)."""
ANSWER_KEYS = ("point", "box", "verdict", "option", "answer", "refused", "raw", "format_error")
READ_ATTEMPTS = 200
"""How often :func:`load` reads again when an update swapped the folder during a read, or the folder
is missing between the update's two renames (a few microseconds; each try waits up to 10 ms)."""


class BaselineError(Exception):
    """A baseline file is malformed; the message names the file and the field."""


@dataclass(frozen=True)
class BaselineEntry:
    right: bool
    value: float
    components: Mapping[str, bool | float] = field(default_factory=dict)
    answer: Prediction | None = None  # absent in baselines written before answers were kept
    stability: tuple[int, int] | None = None  # (right, of) when recorded with --uiground-repeat

    @property
    def unstable(self) -> bool:
        """Right in some repeats and wrong in others when the baseline was recorded: its flips are noise."""
        return self.stability is not None and 0 < self.stability[0] < self.stability[1]

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

    def entry(self, sample_id: str) -> BaselineEntry | None:
        return self.entries.get(sample_id)


def suite_dir(root: Path, suite: str) -> Path:
    return root / suite


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _strict_json(text: str) -> Any:
    """JSON as the standard has it: NaN and Infinity (which Python's parser accepts) are errors."""
    return json.loads(text, parse_constant=_reject_constant)


def staging_dirs(root: Path, suite: str) -> tuple[Path, Path]:
    """The sibling folders of an update: the new pair is staged in the first, the previous folder is
    moved to the second between the two renames that swap it out (hidden: neither is a suite)."""
    return root / f".{suite}{NEW_SUFFIX}", root / f".{suite}{OLD_SUFFIX}"


def load(root: Path, suite: str) -> Baseline | None:
    """The suite's baseline; None only when the suite has no folder under the baselines yet.
    A damaged baseline is returned with ``damaged`` set, never raised: it fails the aggregate
    checks of a plain run, and an update replaces it. Both halves are read through one handle on
    the folder, and read again when an update swapped the folder meanwhile (module docstring)."""
    folder = suite_dir(root, suite)
    path = folder / SAMPLES_FILE
    staged, old = staging_dirs(root, suite)
    got: Baseline | None = None
    for attempt in range(READ_ATTEMPTS):
        if attempt:
            time.sleep(min(0.01, 0.0005 * attempt))
        if not os.path.lexists(folder):
            if os.path.lexists(staged) or os.path.lexists(old):
                got = _interrupted(folder, old)
                continue  # between an update's two renames: wait for the new folder
            return None
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError:
            continue  # swapped out between the check and the open
        except NotADirectoryError:
            return Baseline(path=path, entries={}, snapshots={}, damaged=(
                f"damaged baseline: {folder} is not a folder; remove it, then record a baseline with "
                "--snapshot-update"))
        except OSError as exc:
            return Baseline(path=path, entries={}, snapshots={}, damaged=(
                f"damaged baseline: {folder} cannot be read ({exc.strerror or exc}); {FIX}"))
        try:
            try:
                entries, provenance = _read_samples(path, folder, fd)
                snapshots = _read_snapshots(folder / SNAPSHOT_DIR, fd)
                got = Baseline(path=path, entries=entries, provenance=provenance, snapshots=snapshots)
            except BaselineError as exc:
                got = Baseline(path=path, entries={}, snapshots={}, damaged=f"damaged baseline: {exc}")
            if _still_there(folder, fd):
                return got
        finally:
            os.close(fd)
    return got


def _still_there(folder: Path, fd: int) -> bool:
    """Whether the folder read through ``fd`` is still the one at ``folder`` (no update swapped it out)."""
    try:
        now, held = os.stat(folder), os.fstat(fd)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


def _interrupted(folder: Path, old: Path) -> Baseline | None:
    """What a missing folder with an update's sibling beside it is once the retries run out: an update
    that stopped between its two renames left the previous baseline at ``old`` (damaged: a run must not
    take the suite for new and pass a drop); a staged folder alone is an update that never swapped."""
    if not os.path.lexists(old):
        return None
    return Baseline(path=folder / SAMPLES_FILE, entries={}, snapshots={}, damaged=(
        f"damaged baseline: {folder} is missing while {old} holds the previous one (an update stopped between "
        f"its renames); rename {old.name} back to {folder.name}, or record a new baseline with --snapshot-update"))


def _read_text(name: str, dir_fd: int) -> str:
    fd = os.open(name, os.O_RDONLY, dir_fd=dir_fd)
    with os.fdopen(fd, encoding="utf-8") as fh:
        return fh.read()


def _read_samples(path: Path, folder: Path, dir_fd: int) -> tuple[dict[str, BaselineEntry], dict[str, Any]]:
    try:
        regular = stat.S_ISREG(os.stat(SAMPLES_FILE, dir_fd=dir_fd).st_mode)
    except OSError:
        regular = False
    if not regular:
        raise BaselineError(f"{path} is missing while {folder} exists (the suite is not new: its baseline "
                            f"lost a part); {FIX}")
    try:
        text = _read_text(SAMPLES_FILE, dir_fd)
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: not valid JSON ({exc}); {FIX}") from exc
    stored = _decode(path, text)
    entries: dict[str, BaselineEntry] = {}
    for sid, item in stored.samples.items():
        name = _name(sid)
        if item.s is not None and item.s[0] > item.s[1]:
            raise BaselineError(f"{path}: samples.{name}.s must be [right, of] with 0 <= right <= of, got "
                                f"{_short(list(item.s))}; {FIX}")
        value = item.value if item.value is not None else 100.0 if item.right else 0.0
        entries[sid] = BaselineEntry(right=item.right, value=value, components=item.c,
                                     answer=_read_answer(path, name, item.a), stability=item.s)
    return entries, stored.provenance


def _name(sid: str) -> str:
    """A sample id in a message, cut so a damaged key cannot flood it."""
    return sid if len(sid) <= 80 else sid[:77] + "..."


def _decode(path: Path, text: str) -> SamplesFile:
    """``samples.json`` checked against its schema (:mod:`.baseline_schema`) while msgspec parses it; a file
    that does not fit is parsed again by the standard library (NaN named as such) and its first problem
    worded as one line naming the file, the sample, the field and the fix."""
    import msgspec

    from pytest_uiground.gate.baseline_schema import SamplesFile
    from pytest_uiground.record.schema import Key, SchemaError, convert

    try:
        return msgspec.json.decode(text, type=SamplesFile)
    except msgspec.MsgspecError:
        pass  # the slow path below says what is wrong
    try:
        data = _strict_json(text)
    except ValueError as exc:
        raise BaselineError(f"{path}: not valid JSON ({exc}); {FIX}") from exc
    if isinstance(data, dict) and data.get("format") != FORMAT:
        # before the shape: a file of another format may have another shape, and the format is what to say
        raise BaselineError(f"{path}: field 'format' is {_short(data.get('format'))}, expected {FORMAT}; {FIX}")
    try:
        return convert(data, SamplesFile, table="an object")
    except SchemaError as exc:
        problem = exc.problem
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{_name(p) if isinstance(p, Key) else p}"
                    for p in problem.path).lstrip(".") or "the top level"
    if problem.expected:
        raise BaselineError(f"{path}: {where} must be {problem.expected}, got {problem.got}; {FIX}") from None
    raise BaselineError(f"{path}: {where}: {problem.why}; {FIX}") from None


def _read_snapshots(folder: Path, dir_fd: int) -> dict[str, Mapping[str, Any]]:
    try:
        fd = os.open(SNAPSHOT_DIR, os.O_RDONLY | os.O_DIRECTORY, dir_fd=dir_fd)
    except OSError as exc:
        raise BaselineError(f"{folder} is missing beside {SAMPLES_FILE} (the aggregate snapshots); {FIX}") from exc
    out: dict[str, Mapping[str, Any]] = {}
    try:
        with os.scandir(fd) as listing:
            names = sorted(e.name for e in listing)
        for name in names:
            if not snapshot_mod.is_snapshot(name):
                continue
            file = folder / name
            try:
                data = _strict_json(_read_text(name, fd))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise BaselineError(f"{file}: not valid JSON ({exc}); {FIX}") from exc
            why = snapshot_mod.problem(data) if isinstance(data, dict) else "expected a JSON object"
            if why:
                raise BaselineError(f"{file}: {why}; {FIX}")
            out[name] = data
    finally:
        os.close(fd)
    return out


def _read_answer(path: Path, sid: str, value: Mapping[str, Any] | None) -> Prediction | None:
    """The stored answer, every field checked by type and range (:func:`prediction.stored`): a point of
    letters or an infinite coordinate is damage named here, never an answer a report draws (issue 38)."""
    if value is None:
        return None
    try:
        return prediction.stored({k: value[k] for k in ANSWER_KEYS if k in value}, text_chars=ANSWER_TEXT_LIMIT)
    except FieldError as exc:
        raise BaselineError(f"{path}: samples.{sid}.a.{exc.field} is damaged ({exc.why}); {FIX}") from exc


def _short(value: Any) -> str:
    """A stored value in a one-line message, cut so a damaged file cannot flood the terminal."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def answer_json(pred: Prediction | None) -> dict[str, Any] | None:
    """The part of a prediction a baseline keeps: the answer and the start of the raw output."""
    if pred is None or pred.error is not None:
        return None
    data = pred.to_json()
    out = {k: data[k][:ANSWER_RAW_CHARS] if isinstance(data[k], str) else data[k]
           for k in ANSWER_KEYS if k in data and data[k] not in (None, False, "")}
    while out:  # what the reader would refuse (a custom adapter's far-off point) is left out, never written
        try:
            prediction.stored(out, text_chars=ANSWER_RAW_CHARS)
            break
        except FieldError as exc:
            if out.pop(exc.field.split(".", 1)[0].split("[", 1)[0], None) is None:
                return {}  # a field the answer does not hold: keep nothing rather than loop
    return out


def _entry(r: SampleResult) -> dict[str, Any]:
    entry: dict[str, Any] = {"right": r.right, "value": round(r.value, 4)}
    if r.score.components:
        entry["c"] = dict(sorted(r.score.components.items()))
    if (answer := answer_json(r.prediction)) is not None:
        entry["a"] = answer
    if r.stability is not None and r.stability.how == "repeat":
        entry["s"] = [r.stability.right, r.stability.of]
    return entry


def _stored(entry: BaselineEntry) -> dict[str, Any]:
    out: dict[str, Any] = {"right": entry.right, "value": round(entry.value, 4)}
    if entry.components:
        out["c"] = dict(sorted(entry.components.items()))
    if (answer := answer_json(entry.answer)) is not None:
        out["a"] = answer
    if entry.stability is not None:
        out["s"] = list(entry.stability)
    return out


def samples_text(suite: str, results: Sequence[SampleResult], provenance: Mapping[str, Any],
                 previous: Baseline | None = None, kept: Mapping[str, Any] | None = None) -> str:
    """The text of ``samples.json``. A sample that errored is never recorded as a wrong answer:
    its previous entry is kept when there is one, else it has no entry (the controller refuses
    an update with errors unless ``--uiground-keep-errored`` says so). ``kept``: stored entries
    written back as they are (``--uiground-only-new``: the samples this run did not run)."""
    samples: dict[str, Any] = dict(kept or {})
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
          previous: Baseline | None = None, snapshots: Mapping[str, Mapping[str, Any]] | None = None,
          kept: Mapping[str, Any] | None = None) -> Path:
    """Write the suite's baseline as a pair: ``samples.json`` and one snapshot per aggregate check
    (``snapshots``: check label → aggregate; None writes ``samples.json`` alone, for tests of it).

    The pair is written into ``.<suite>.new`` (a copy of the current folder, so any other file in it
    stays; the snapshots of checks the suite no longer has, a removed metric or slice, are left out),
    then swapped in whole (module docstring). A failure while staging (a full disk, a read-only
    folder) removes the staged folder and raises the ``OSError`` with the previous pair untouched."""
    folder = suite_dir(root, suite)
    staged, old = staging_dirs(root, suite)
    files = {SAMPLES_FILE: samples_text(suite, results, provenance, previous, kept)}
    if snapshots is not None:
        files |= {f"{SNAPSHOT_DIR}/{snapshot_mod.file_name(label)}": snapshot_mod.serialize(data)
                  for label, data in snapshots.items()}
    _remove(staged)  # left by an update that stopped before its swap
    try:
        if folder.is_dir():
            shutil.copytree(folder, staged, symlinks=True)
            if snapshots is not None and (staged / SNAPSHOT_DIR).is_dir():
                for stale in (staged / SNAPSHOT_DIR).iterdir():
                    if snapshot_mod.is_snapshot(stale.name):
                        stale.unlink()
        for name, text in files.items():
            os.replace(_stage(staged / name, text), staged / name)
        if snapshots is not None:
            (staged / SNAPSHOT_DIR).mkdir(parents=True, exist_ok=True)
        _sync_dir(staged)
        _swap(folder, staged, old)
    except BaseException:
        _remove(staged)
        raise
    return folder / SAMPLES_FILE


def _swap(folder: Path, staged: Path, old: Path) -> None:
    """Put ``staged`` at ``folder``: the current folder renamed to ``old``, the staged one into its place,
    then the old one removed. A rename of the staged folder that fails puts the old one back."""
    if os.path.lexists(folder):
        _remove(old)  # left by an update that stopped after its swap (its baseline is at ``folder``)
        os.rename(folder, old)
        try:
            os.rename(staged, folder)
        except BaseException:
            os.rename(old, folder)
            raise
        _remove(old)
    else:
        folder.parent.mkdir(parents=True, exist_ok=True)
        os.rename(staged, folder)
        _remove(old)  # an update stopped between its renames: the new pair replaces what it left
    try:
        _sync_dir(folder.parent)
    except OSError:
        pass  # the swap is done and visible; only its durability across a crash is not assured


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        path.unlink()


def _sync_dir(path: Path) -> None:
    """fsync a folder, so the renames in it survive a crash (the staged files are fsynced themselves)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:  # some filesystems cannot fsync a folder; the files are durable already
        if exc.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


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
    version, dataset revision or loader options), or None. Per-sample comparisons still use the
    shared ids; the aggregate checks fail with this text until the baseline is updated."""
    prov = base.provenance
    out: list[str] = []
    for key, what in (("suite_version", "suite version"), ("dataset_revision", "dataset revision"),
                      ("refusals", "refusal policy (--uiground-refusals, [scorer] refusals)")):
        old, new = prov.get(key), current.get(key)
        if old != new and (old is not None or new is not None):
            out.append(f"{what} {old!r} in the baseline, {new!r} now")
    # A suite that grew or shrank is no mismatch: new samples are run, not gated, and removed ones drop out
    # (growth()); the fingerprint (of the ids and the loader options) is compared when the ids are the same
    # (and the refusal policy, itself compared above, is the same: it is folded into the fingerprint).
    if ids == recorded_ids(base) and prov.get("refusals") == current.get("refusals") and \
            prov.get("dataset_fingerprint") not in (None, current.get("dataset_fingerprint")):
        out.append(f"dataset fingerprint {prov.get('dataset_fingerprint')!r} in the baseline, "
                   f"{current.get('dataset_fingerprint')!r} now (the loader options changed)")
    if not out:
        return None
    return ("the baseline was recorded on another dataset or suite version: " + "; ".join(out)
            + f" ({base.path}); per-sample results are compared on the shared samples only; review the change "
            "and record a new baseline with --snapshot-update")


def growth(base: Baseline | None, ids: set[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The samples the suite has that the baseline never recorded (new: run, listed, not gated; the aggregate
    comparison uses the samples both have) and those the baseline has that the suite no longer does
    (removed: they drop out). Empty for a suite without a usable baseline (every sample is then new)."""
    if base is None or base.damaged:
        return (), ()
    old = recorded_ids(base)
    return tuple(sorted(ids - old)), tuple(sorted(old - ids))


def growth_text(new: Sequence[str], removed: Sequence[str]) -> str:
    """One line for the terminal and the report: which samples are new and which were removed."""
    parts = ([f"{len(new)} new sample{'s' * (len(new) != 1)} (not in the baseline: run, not gated; "
              f"--snapshot-update --uiground-only-new adds them): {_few(set(new))}"] if new else [])
    parts += [f"{len(removed)} removed (dropped from the comparison): {_few(set(removed))}"] if removed else []
    return "; ".join(parts)


def stored_entries(root: Path, suite: str) -> dict[str, Any]:
    """``samples.json``'s per-sample objects as stored (every key kept), for an update that adds samples and
    must leave the others' entries byte-identical (``--uiground-only-new``)."""
    data = _strict_json((suite_dir(root, suite) / SAMPLES_FILE).read_text(encoding="utf-8"))
    samples = data.get("samples") if isinstance(data, dict) else None
    return dict(samples) if isinstance(samples, dict) else {}


class UpdateLock:
    """One ``--snapshot-update`` at a time per baseline folder: an exclusive, non-blocking lock
    (:class:`pytest_uiground.record.locks.FileLock`) on ``<baselines>/.uiground-update.lock``, held for
    the whole session so that syrupy's snapshots and ``samples.json`` always come from the same run. The
    kernel drops the lock when the process dies, so a killed run never blocks the next one. A second
    update is refused rather than queued: it would otherwise rewrite the first one's baseline a moment
    later with a different model's results."""

    NAME = ".uiground-update.lock"

    def __init__(self, root: Path) -> None:
        self.path = root / self.NAME
        self._lock = locks.FileLock(self.path)

    def acquire(self) -> str | None:
        """None when held now; else why not (another update holds it, or the folder cannot be locked)."""
        try:
            busy = self._lock.acquire()
        except OSError as exc:
            return (f"--snapshot-update cannot write under the baselines folder {str(self.path.parent)!r} "
                    f"({exc.strerror or exc}); make it a writable folder, or choose another with "
                    "--uiground-baselines")
        return None if busy is None else self.refusal(busy.holder)

    def refusal(self, holder: str) -> str:
        """The one line that refuses this run while process ``holder`` holds the lock."""
        return (f"another --snapshot-update is writing baselines under {self.path.parent} (pid {holder}, "
                f"lock {self.path}); wait for it to finish, then run again")

    def release(self) -> None:
        """Remove the lock file (the baselines folder keeps only reviewable files), then unlock."""
        self._lock.release()


class ReportLock(UpdateLock):
    """One run at a time per ``--uiground-report`` folder (two would interleave ``samples.jsonl``
    and overwrite each other's summary): the same non-blocking lock as :class:`UpdateLock`, on
    ``<report>/.uiground-report.lock``, removed when the run ends. Unlike the update lock, a
    folder that cannot be written raises the ``OSError`` (the controller notes it and goes on)."""

    NAME = ".uiground-report.lock"

    def acquire(self) -> str | None:
        busy = self._lock.acquire()  # raises OSError when the folder cannot be written or locked
        return None if busy is None else self.refusal(busy.holder)

    def refusal(self, holder: str) -> str:
        return (f"another pytest run is writing the report folder {str(self.path.parent)!r} (pid {holder}, lock "
                f"{self.path}); wait for it to finish, or give this run another --uiground-report folder")
