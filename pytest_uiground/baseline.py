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

from .results import SampleResult
from .score import Score

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


def write(root: Path, suite: str, results: Sequence[SampleResult], provenance: Mapping[str, Any]) -> Path:
    path = suite_dir(root, suite) / SAMPLES_FILE
    samples = {r.id: _entry(r) for r in sorted(results, key=lambda r: r.id)}
    head = json.dumps({"format": FORMAT, "suite": suite, "provenance": dict(provenance)}, indent=1)
    # One line per sample keeps the file short and its diffs readable in review.
    lines = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in samples.items())
    atomic_write_text(path, head[:-2] + ',\n "samples": {\n' + lines + "\n }\n}\n")
    return path
