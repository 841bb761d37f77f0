"""The annotations file and its review sidecar: every read and write the annotator makes.

Why one small module: the annotator must never lose or silently overwrite an edit. It keeps
lines it does not change byte for byte (so it reads lines itself), but every sample it writes
passes the loader's own checks (:func:`pytest_uiground.screens.format.parse`, as a draft) and every
id is read and minted by the format's one rule (:func:`pytest_uiground.screens.format.line_ids`).

* **The file.** ``annotations.jsonl``: one JSON object per line (``image``, ``instruction``,
  ``bbox`` ``[x1, y1, x2, y2]`` in pixels or ``polygon``, optional ``id``, ``task``,
  ``element_type``, ``click``; any other key is metadata and is kept as it is). Lines the
  annotator does not change are written back byte for byte; a line that is not a JSON object
  (or a blank one) is kept verbatim and reported, never dropped. Lines end at ``\\n`` only: a U+2028
  inside an instruction is part of its line (:mod:`pytest_uiground.record.jsontext`).
* **The sidecar.** Review state that is no part of a sample (which detector proposals were
  accepted or rejected, which images are done, the proposals themselves so a reload does not
  run the detector again) lives in ``<stem>.review.json`` beside the file, never as extra keys
  on a sample line (extra keys are metadata and would become slices).
* **Revisions.** The revision is a digest of the file's bytes and of the sidecar's review part.
  A change names the revision it was made on; when the files moved on since (another tab,
  another annotator process, an editor), it is refused with :class:`Conflict` and nothing is
  written. Both files are replaced atomically (``record.files.atomic_write_text``), the file
  first: a crash between the two leaves every sample and at worst shows a handled proposal again.
* **Changes** are small operations on entry indexes (``insert``, ``replace``, ``delete``, each
  naming the sample it expects where one is replaced or removed; ``review``; ``done``), so the
  page's undo is the inverse operation, saved like any other.
* **Ids are the store's.** An ``insert`` without an id (a sample the page creates) gets one here,
  under the lock (:func:`new_id`); the change's answer names it (:attr:`Snapshot.created`), so the
  page's undo deletes that very sample. An insert with an id (an undone delete) keeps it, and an id
  used twice is refused.
* **No temporary file left behind.** A write stages ``.NAME.XXXXXXXX.tmp`` beside its target
  (``record.files.stage_text``) and renames it. :meth:`Store.close` (the command's SIGTERM and
  Ctrl+C path) waits for the save in progress and removes any such file; a process killed
  outright (SIGKILL, power) can still leave one, so :meth:`Store.remove_temp_files` runs at start.
  Both hold the folder's lock, so another annotator's save in progress is never touched.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pytest_uiground.record import jsontext
from pytest_uiground.record.files import atomic_write_text, hex_digest
from pytest_uiground.record.locks import FileLock
from pytest_uiground.screens import format as fmt

TASKS: Final = fmt.TASKS
REVIEW_STATUSES: Final = ("accepted", "rejected")
SIDECAR_VERSION: Final = 1


class StoreError(ValueError):
    """A change that cannot be applied as sent (the page shows the message); nothing is written."""


class Conflict(Exception):
    """The files changed since the revision the change was made on; nothing is written."""

    def __init__(self, current: str) -> None:
        super().__init__(f"the annotations changed since this page loaded them (now at revision {current})")
        self.current = current


@dataclass
class Entry:
    """One line of the file: its text as read (``None`` once changed) and its object (``None``
    for a blank line or one that is not a JSON object, kept verbatim)."""

    raw: str | None
    data: dict[str, Any] | None


@dataclass
class Snapshot:
    """The file and the sidecar as read at one revision."""

    entries: list[Entry]
    review: dict[str, Any]
    proposals: dict[str, Any]
    revision: str
    problems: list[str] = field(default_factory=list)
    created: list[dict[str, Any]] = field(default_factory=list)
    """After a change: each sample it inserted, as written (with the id the store gave it), in the change's order."""


def check_image_path(value: object) -> str:
    """A sample's ``image``, checked by the format's one rule (:func:`pytest_uiground.screens.format.check_image_path`);
    raises :class:`StoreError`."""
    try:
        return fmt.check_image_path(value)
    except fmt.BadLine as exc:
        raise StoreError(str(exc)) from None


def check_sample(sample: object, sizes: Mapping[str, tuple[int, int]]) -> dict[str, Any]:
    """The checks a sample the page sends must pass: the loader's own (:func:`pytest_uiground.screens.format.parse`,
    as a draft: an instruction may still be empty), then the box inside its image. So the page can save nothing
    the loader refuses (issue 39: a blank or NUL image path, a ``detect`` sample without a box were saved)."""
    if not isinstance(sample, dict):
        raise StoreError(f"a sample must be a JSON object, got {type(sample).__name__}")
    try:
        ann = fmt.parse(fmt.Line(number=0, raw=sample), draft=True)
    except fmt.BadLine as exc:
        raise StoreError(str(exc).replace("line 0", "this sample")) from None
    size = sizes.get(ann.image)
    x1, y1, x2, y2 = ann.bbox
    if size is not None and ann.task != "refusal" and (x1 < 0 or y1 < 0 or x2 > size[0] or y2 > size[1]):
        raise StoreError(f"{fmt.box_text(ann.bbox)} is not inside the {size[0]}x{size[1]} image {ann.image}")
    for key in ("instruction", "element_type"):
        if key in sample and sample[key] is not None and not isinstance(sample[key], str):
            raise StoreError(f"{key} {sample[key]!r} must be a string")
    return sample


def new_id(image: str, entries: Sequence[Entry]) -> str:
    """The id of a sample the page creates: the one id rule (:func:`pytest_uiground.screens.format.new_id`) against
    every id a run reads from ``entries`` (the minted ids of lines written without one included, so a hand-written
    line's id never moves). Given here, under the store's lock, not in the browser: two tabs creating a sample
    on one screenshot at once get two ids (the second change is made on the revision the first produced)."""
    lines = [fmt.Line(n, e.data) for n, e in enumerate(entries, 1) if e.data is not None]
    return fmt.new_id(image, set(fmt.line_ids(lines).values()))


def sidecar_path(annotations: Path) -> Path:
    return annotations.with_name(f"{annotations.stem}.review.json")


def _line(data: Mapping[str, Any]) -> str:
    """A changed sample's line: readable UTF-8, U+2028/U+2029/U+0085 escaped (a reader splitting on them would
    cut the line in two, and the next save would write the halves back joined, losing the sample)."""
    return jsontext.dumps_line(data)


class Store:
    """``annotations.jsonl`` and its sidecar, read and changed under one lock.

    The in-process lock orders the server's threads; an advisory lock on the file's folder
    (:class:`~pytest_uiground.record.locks.FileLock`) orders two annotator processes on the same file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sidecar = sidecar_path(path)
        self._lock = threading.Lock()
        self._held = ExitStack()
        self._closed = False

    # -- temporary files ------------------------------------------------------------------------
    def temp_files(self) -> list[Path]:
        """The temporary files a write of the file or the sidecar stages (``tempfile.mkstemp``'s
        ``.NAME.`` + 8 characters + ``.tmp``, as ``record.files.stage_text`` names them)."""
        if not self.path.parent.is_dir():
            return []
        names = {self.path.name, self.sidecar.name}
        pattern = re.compile(r"\.(" + "|".join(re.escape(n) for n in names) + r")\.[a-z0-9_]{8}\.tmp")
        return sorted(p for p in self.path.parent.iterdir() if pattern.fullmatch(p.name) and p.is_file())

    def remove_temp_files(self) -> list[Path]:
        """Remove the temporary files a killed save left (under the lock: never another process's
        save in progress); returns them."""
        with self._locked():
            return self._remove_temp_files()

    def _remove_temp_files(self) -> list[Path]:
        found = self.temp_files()
        for tmp in found:
            tmp.unlink(missing_ok=True)
        return found

    def close(self) -> None:
        """The process is stopping: wait for the save in progress, remove any temporary file, and
        keep the lock, so no later write starts (a request still being answered waits, and ends
        with the process)."""
        if self._closed:
            return
        self._closed = True
        self._held.enter_context(self._locked())
        self._remove_temp_files()

    # -- reading --------------------------------------------------------------------------------
    def read(self) -> Snapshot:
        with self._locked():
            return self._read()

    def _read(self) -> Snapshot:
        raw = self.path.read_bytes() if self.path.exists() else b""
        entries: list[Entry] = []
        problems: list[str] = []
        for n, line in enumerate(jsontext.split_lines(raw.decode("utf-8", errors="replace")), 1):
            data: Any = None
            if line.strip():
                try:
                    data = jsontext.loads(line)
                except (ValueError, RecursionError) as exc:  # RecursionError: jsontext.TooDeep
                    problems.append(f"{self.path.name} line {n} is not JSON ({exc}); kept as it is")
                if data is not None and not isinstance(data, dict):
                    problems.append(f"{self.path.name} line {n} is not a JSON object; kept as it is")
                    data = None
            entries.append(Entry(line, data))
        side = self._read_sidecar(problems)
        review: dict[str, Any] = side["images"] if isinstance(side.get("images"), dict) else {}
        proposals: dict[str, Any] = side["proposals"] if isinstance(side.get("proposals"), dict) else {}
        return Snapshot(entries, review, proposals, self._revision(raw, review), problems)

    def _read_sidecar(self, problems: list[str]) -> dict[str, Any]:
        if not self.sidecar.exists():
            return {}
        try:
            side = jsontext.loads(self.sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            problems.append(f"{self.sidecar.name} cannot be read ({exc}); review state starts empty, the next change "
                            "rewrites it")
            return {}
        return side if isinstance(side, dict) else {}

    @staticmethod
    def _revision(raw: bytes, review: Mapping[str, Any]) -> str:
        return (hex_digest(raw, short=True)[:12] + "."
                + hex_digest(json.dumps(review, sort_keys=True), short=True)[:8])

    def revision(self) -> str:
        return self.read().revision

    # -- changing -------------------------------------------------------------------------------
    def change(self, base: str, ops: Sequence[Mapping[str, Any]], sizes: Mapping[str, tuple[int, int]]) -> Snapshot:
        """Apply ``ops`` made on revision ``base`` and write both files; :class:`Conflict` when
        the files moved on, :class:`StoreError` when an operation does not fit (nothing written)."""
        with self._locked():
            snap = self._read()
            if base != snap.revision:
                raise Conflict(snap.revision)
            entries = list(snap.entries)
            review = json.loads(json.dumps(snap.review))
            created: list[dict[str, Any]] = []
            for n, op in enumerate(ops, 1):
                try:
                    self._apply(op, entries, review, sizes, created)
                except StoreError as exc:
                    raise StoreError(f"change {n} of {len(ops)}: {exc}") from None
            # The loader's reading of an id (an integer id such as 3 included): the ids a run will have.
            ids = [i for i in (fmt.own_id(e.data) for e in entries if e.data is not None) if i]
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            if dupes:
                raise StoreError(f"sample id {dupes[0]!r} would be used twice; ids must be unique in the file")
            if any(e.raw is None for e in entries) or len(entries) != len(snap.entries):
                text = "".join(f"{e.raw if e.raw is not None else _line(e.data or {})}\n" for e in entries)
                atomic_write_text(self.path, text)
            if review != snap.review:
                self._write_sidecar(review, snap.proposals)
            after = self._read()
            after.created = created
            return after

    def _apply(self, op: Mapping[str, Any], entries: list[Entry], review: dict[str, Any],
               sizes: Mapping[str, tuple[int, int]], created: list[dict[str, Any]]) -> None:
        kind = op.get("op") if isinstance(op, Mapping) else None
        if kind in ("insert", "replace", "delete"):
            index = op.get("index")
            top = len(entries) if kind == "insert" else len(entries) - 1
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index <= top:
                raise StoreError(f"{kind}: line index {index!r} is outside the file's {len(entries)} line(s)")
            if kind != "insert" and entries[index].data != op.get("old"):
                raise StoreError(f"{kind}: line {index + 1} is not the sample this change was made on; reload the page")
            if kind == "delete":
                del entries[index]
                return
            entry = Entry(None, check_sample(op.get("sample"), sizes))
            if kind == "insert":
                assert entry.data is not None
                if not fmt.own_id(entry.data):  # a new sample: the id is the store's to give, under the lock
                    entry.data = {"id": new_id(entry.data["image"], entries), **entry.data}
                entries.insert(index, entry)
                created.append(entry.data)
            else:
                entries[index] = entry
        elif kind == "review":
            image, pid, status = op.get("image"), op.get("pid"), op.get("status")
            if not isinstance(image, str) or not isinstance(pid, str) or status not in (*REVIEW_STATUSES, None):
                raise StoreError(f"review: expected an image, a proposal id and a status in {REVIEW_STATUSES} or "
                                 f"null, got {dict(op)!r}")
            marks = review.setdefault(image, {}).setdefault("proposals", {})
            if status is None:
                marks.pop(pid, None)
            else:
                marks[pid] = status
        elif kind == "done":
            image, done = op.get("image"), op.get("done")
            if not isinstance(image, str) or not isinstance(done, bool):
                raise StoreError(f"done: expected an image and true or false, got {dict(op)!r}")
            review.setdefault(image, {})["done"] = done
        else:
            raise StoreError(f"unknown change {kind!r}: expected insert, replace, delete, review or done")

    def save_proposals(self, image: str, record: Mapping[str, Any]) -> None:
        """Keep one image's detector proposals in the sidecar (not part of the revision: a
        proposal computed in the background never conflicts with an edit)."""
        with self._locked():
            snap = self._read()
            self._write_sidecar(snap.review, {**snap.proposals, image: dict(record)})

    def _write_sidecar(self, review: Mapping[str, Any], proposals: Mapping[str, Any]) -> None:
        doc = {"version": SIDECAR_VERSION, "annotations": self.path.name,
               "note": "review state of python -m pytest_uiground annotate; not read by the loader",
               "images": review, "proposals": proposals}
        atomic_write_text(self.sidecar, json.dumps(doc, ensure_ascii=False, indent=1) + "\n")

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._lock:
            # The folder itself is locked (record/locks.py): no lock file is left beside the annotations.
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(self.path.parent, folder=True):
                yield
