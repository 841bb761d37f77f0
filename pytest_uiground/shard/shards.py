"""The shards a merge is given: each one read (its ``shard.json`` and records), then all checked to make
one whole run, each problem one :class:`MergeError` naming the shard, what is wrong and the fix.

The same N, every index once (a missing shard is an error naming it, never a partial PASS), the same
suites with the same version, dataset fingerprint and suite file, the same model (name and
fingerprint), the same options, each shard's records exactly the samples its manifest lists and what
the shard wrote (``records_sha256``, :mod:`.manifest`), and no sample twice. Both the merge's command
(:mod:`.merge`, before it starts the merged run) and the merged run's plugin (:mod:`.replay`, in that
run's process and each of its workers) read and check the shards through here, so neither imports
the other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_uiground.record.result import SampleResult
from pytest_uiground.report.runs import CompareError, read_records
from pytest_uiground.shard.manifest import NAME, VERSION, comparable, records_digest

SHARDS_ENV = "UIGROUND_MERGE_SHARDS"
"""The environment variable that names the shards' folders (a JSON list) to the merged run."""
STOP_ENV = "UIGROUND_MERGE_STOP"
"""The environment variable naming the file the merge writes when it is sent SIGTERM or SIGINT
(:class:`pytest_uiground.shard.merge.Forward`), read by the merged run at its session's start."""


class MergeError(Exception):
    """Shards that do not make one run; the message names the shard, what is wrong and the fix."""


@dataclass
class Shard:
    folder: Path
    index: int
    count: int
    args: list[str]
    suites: dict[str, dict[str, Any]]
    records: list[SampleResult]
    interrupted: bool

    @property
    def label(self) -> str:
        return f"shard {self.index}/{self.count} ({self.folder})"


def read_shard(folder: Path) -> Shard:
    """One shard's manifest and records, or a MergeError saying why they cannot be read."""
    path = folder / NAME
    if not folder.is_dir():
        raise MergeError(f"{folder} is not a folder; give the --uiground-report folders of the shards")
    if not path.is_file():
        raise MergeError(f"{folder} has no {NAME}: it is not the report folder of a --uiground-shard run, or that "
                         "run did not finish (rerun the shard)")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or doc.get("version") != VERSION:
            raise ValueError(f"expected a version {VERSION} manifest")
        index, count = int(doc["index"]), int(doc["count"])
        args = [str(a) for a in doc["args"]]
        suites = {str(k): dict(v) for k, v in doc["suites"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise MergeError(f"{path} is damaged ({type(exc).__name__}: {exc}); rerun that shard") from None
    try:
        records = read_records(folder)
    except CompareError as exc:
        raise MergeError(f"{exc}; rerun that shard") from None
    return Shard(folder, index, count, args, suites, records, bool(doc.get("interrupted")))


def check(shards: Sequence[Shard]) -> None:
    """That the shards make one whole run (see the module docstring); the first problem found is raised."""
    first = min(shards, key=lambda s: s.index)
    seen: dict[int, Shard] = {}
    for s in shards:
        if s.count != first.count:
            raise MergeError(f"{s.label} is one of {s.count} shards, {first.label} one of {first.count}: they come "
                             "from two different splits; merge the shards of one run")
        if s.index in seen:
            raise MergeError(f"shard {s.index}/{s.count} is given twice: {seen[s.index].folder} and {s.folder}; give "
                             "each shard's folder once")
        seen[s.index] = s
        if s.interrupted:
            raise MergeError(f"{s.label} was interrupted: part of its samples never ran; rerun that shard")
    missing = [i for i in range(1, first.count + 1) if i not in seen]
    if missing:
        named = ", ".join(f"{i}/{first.count}" for i in missing)
        raise MergeError(f"shard{'s' * (len(missing) > 1)} {named} missing: {len(shards)} of {first.count} given; "
                         "a verdict on part of a suite is no verdict: give every shard's folder (rerun the "
                         "missing ones with --uiground-shard I/N)")
    for s in shards:
        if sorted(s.suites) != sorted(first.suites):
            raise MergeError(f"{s.label} ran the suites {sorted(s.suites)}, {first.label} {sorted(first.suites)}; "
                             "every shard must run the same suites")
        for name, suite in s.suites.items():
            mine = first.suites[name]
            for key, what in (("suite_version", "suite version"), ("dataset_fingerprint", "dataset"),
                              ("dataset_revision", "dataset revision"), ("file", "suite file"),
                              ("suite_sha256", "suite file digest")):
                if suite.get(key) != mine.get(key):
                    raise MergeError(f"{s.label} ran {name!r} on {what} {suite.get(key)!r}, {first.label} on "
                                     f"{mine.get(key)!r}: shards of one run share the suites and data")
            if suite.get("model") != mine.get("model"):
                raise MergeError(f"{s.label} ran {name!r} with another model than {first.label}: "
                                 f"{_model_text(suite.get('model'))} against {_model_text(mine.get('model'))}; "
                                 "every shard must run the same model (rerun that shard with it)")
            ran = [r.id for r in s.records if r.suite == name]
            if sorted(ran) != sorted(suite.get("ran", [])):
                raise MergeError(f"{s.label}: its samples.jsonl does not hold the records its {NAME} lists for "
                                 f"{name!r}; the folder was changed after the run: rerun that shard")
            if records_digest(r for r in s.records if r.suite == name) != suite.get("records_sha256"):
                raise MergeError(f"{s.label}: its samples.jsonl is not what the shard wrote for {name!r} (the "
                                 f"records_sha256 of its {NAME} differs): a record was edited after the run; "
                                 "rerun that shard")
        if comparable(s.args) != comparable(first.args):
            raise MergeError(f"{s.label} ran with other options than {first.label}: {' '.join(s.args)!r} against "
                             f"{' '.join(first.args)!r}; shards of one run differ only in --uiground-shard, the "
                             "report folder, -n and --uiground-api-base")
    owner: dict[tuple[str, str], Shard] = {}
    for s in shards:
        for r in s.records:
            other = owner.setdefault((r.suite, r.id), s)
            if other is not s:
                raise MergeError(f"sample {r.id!r} of {r.suite!r} has a record in {other.label} and in {s.label}: "
                                 "a sample belongs to one shard; were they split with different options?")


def _model_text(model: Any) -> str:
    if not isinstance(model, dict):
        return "no model recorded"
    return f"{model.get('name')!r} {json.dumps(model.get('fingerprint'), sort_keys=True)}"
