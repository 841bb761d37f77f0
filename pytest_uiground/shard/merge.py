"""``python -m pytest_uiground merge SHARD_DIR... --out DIR [--snapshot-update]``: N shards, one verdict.

Each shard (``--uiground-shard I/N --uiground-report SHARD_DIR``) left its records
(``samples.jsonl``) and a manifest (``shard.json``, :mod:`.manifest`). The merge first checks that
the shards belong together: the same N, every index once (a missing shard is an error naming it,
never a partial PASS), the same suites with the same version and dataset fingerprint, the same
model (name and fingerprint), the same options, each shard's records exactly the samples it was to
run, and no sample twice.

It judges, never trusts: a shard's manifest carries a digest of its records and of each suite file
(:mod:`.manifest`), checked here (a record edited after the run is an error naming the shard), and
every record is scored again from its prediction by the suite's scorer, its stability counted again
from the answers it recorded (:func:`pytest_uiground.run.worker.rescore`, :func:`~pytest_uiground.run.worker.recount`):
a ``score`` or a ``stability`` typed into ``samples.jsonl`` changes nothing, even with the digest
recomputed. What an edit of the predictions themselves with the digest recomputed can still do, the
digest cannot stop (it is no signature): keep the shards' folders where only the CI jobs write.

Then it does not compute a verdict: it runs pytest once, on the shards' command line, in a process
of its own (as a shard ran: a strict project's ``filterwarnings = error`` and ``addopts`` apply, and
SIGTERM or Ctrl-C is passed on and ends it as an interrupted run), with the shards' records standing
in for the model (:mod:`.replay`, :class:`~pytest_uiground.run.state.Replayed`: each sample test
takes its prediction from its record, scores it and decides its outcome against the baseline as
any run does). The controller, the gate and the writers are the ordinary
ones, so ``samples.jsonl``, ``summary.json`` with its verdict, ``report.html``, the Markdown summary,
the JUnit XML, the terminal section, the exit status and, with ``--snapshot-update``, the baseline
are those a single unsharded run writes: the verdict is decided in one place
(:func:`pytest_uiground.gate.verdict.decide` through :func:`pytest_uiground.gate.outcome.conclude`)
whether the records came from one machine or from N. ``--out`` is never a shard's folder nor inside
one, and every URL of the command line it prints is scrubbed (:mod:`pytest_uiground.record.secrets`).

Run it from the checkout the shards ran in (the same suites, baselines and ini file): the shards'
command line names its suites relative to it. Nothing of the model is loaded or contacted; only
the suites' datasets are read (for the sample ids, and the crops of the report).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground.models.base import ModelAdapter, ModelOptions
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.secrets import scrub, scrub_args
from pytest_uiground.report.runs import CompareError, read_records
from pytest_uiground.run.state import Replayed
from pytest_uiground.shard.manifest import NAME, VERSION, comparable, records_digest

#: the ``--model`` of the merged run: never built (the records stand in for it), named so that the
#: model's own start-up checks (a key in the environment, an installed extra) are not made on the merge machine
RECORDED = "pytest_uiground.shard.merge:recorded"
#: the environment variable naming the file the merge writes when it is sent SIGTERM or SIGINT (:class:`Forward`)
STOP_ENV = "UIGROUND_MERGE_STOP"


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


REPLAY_PLUGIN = "pytest_uiground.shard.replay"
"""The merged run's plugin (:mod:`.replay`), named for ``-p``: the merged pytest process loads it; this one
never imports it (it imports this module: named here, the two stay one way)."""
SHARDS_ENV = "UIGROUND_MERGE_SHARDS"
"""The environment variable that names the shards' folders (a JSON list) to the merged run."""


def replayed(shards: Sequence[Shard]) -> Replayed:
    """The records of every shard, by suite and sample id, with each suite's model and judge identity
    (the lowest shard's: :func:`check` made sure they agree)."""
    book = Replayed(records={})
    for s in sorted(shards, key=lambda s: s.index):
        for r in s.records:
            book.records[(r.suite, r.id)] = r
            if r.model and r.suite not in book.models:
                book.models[r.suite] = r.model
            if r.judge and r.suite not in book.judges:
                book.judges[r.suite] = r.judge
    return book


class RecordedModel(ModelAdapter):
    """Stands in for the model in the merged run: its records make every prediction, so it is never asked."""

    def __init__(self, name: str, fingerprint: dict[str, Any]) -> None:
        self.name, self._fingerprint = name, fingerprint

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        raise RuntimeError("the merge replays the shards' records; no sample is predicted")

    def fingerprint(self) -> dict[str, Any]:
        return self._fingerprint


def recorded(options: ModelOptions) -> ModelAdapter:
    """The ``--model`` the merge names (:data:`RECORDED`); only ever built by mistake outside a merge."""
    raise RuntimeError(f"--model {RECORDED} is the merge's stand-in: use python -m pytest_uiground merge")


def check_out(out: Path, shards: Sequence[Shard]) -> None:
    """``--out`` is a new folder of its own: never a shard's folder, nor inside one (the merged run would
    replace that shard's records and report), nor another shard's."""
    where = out.resolve()
    for s in shards:
        folder = s.folder.resolve()
        if where == folder or where.is_relative_to(folder):
            inside = "is" if where == folder else "is inside"
            raise MergeError(f"--out {out} {inside} the folder of {s.label}: the merge would overwrite that shard; "
                             "give a folder of its own, e.g. --out merged")
    if (where / NAME).exists():
        raise MergeError(f"--out {out} holds a {NAME}: it is a shard's report folder; give a folder of its own, "
                         "e.g. --out merged")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_uiground merge",
        description="merge the report folders of --uiground-shard I/N runs into the one run they split: "
                    "samples.jsonl, summary.json with the verdict, report.html, summary.md, junit.xml, the exit "
                    "status (and the baseline with --snapshot-update)")
    parser.add_argument("shards", nargs="+", type=Path, metavar="SHARD_DIR",
                        help="the --uiground-report folder of each shard")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR",
                        help="the merged report folder (a folder of its own, never a shard's)")
    parser.add_argument("--snapshot-update", action="store_true",
                        help="record the baseline from the merged run (as a single run's --snapshot-update)")
    args = parser.parse_args(argv)
    with Forward() as forward:
        try:
            shards = [read_shard(folder) for folder in args.shards]
            check(shards)
            check_out(args.out, shards)
        except MergeError as exc:
            print(f"merge: {scrub(str(exc))}", file=sys.stderr)
            return int(pytest.ExitCode.USAGE_ERROR)
        first = min(shards, key=lambda s: s.index)
        out = args.out.resolve()
        out.mkdir(parents=True, exist_ok=True)
        run = [*first.args, "--model", RECORDED, "--uiground-report", str(out), "--junitxml", str(out / "junit.xml"),
               "--uiground-markdown", str(out / "summary.md"), *(["--snapshot-update"] if args.snapshot_update else [])]
        print(f"merge: {len(shards)} shards, {sum(len(s.records) for s in shards)} records; running "
              f"pytest {' '.join(scrub_args(run))}", flush=True)
        env = {**os.environ, SHARDS_ENV: json.dumps([str(s.folder.resolve()) for s in shards])}
        return forward.run([sys.executable, "-m", "pytest", "-p", REPLAY_PLUGIN, *run], env)


class Forward:
    """SIGTERM and SIGINT, from the merge's start to its end, end the merge as an interrupted run: exit 2,
    and once the merged run has started, an ``interrupted`` summary of what finished, as a single run
    (:mod:`pytest_uiground.run.stop`; a second signal insists). Before the run starts (reading and
    checking the shards), the merge stops there, writing nothing. The run has a process group of its
    own, so a signal to the merge's whole group reaches it once, through here, always as SIGTERM (the
    run's one way to stop after the test in progress). The run starts with both signals ignored until
    its handler is in place (pytest's start-up), and reads the stop file (:data:`STOP_ENV`) at its
    session's start, so a signal in between is not lost and does not kill it."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.received: list[int] = []
        self.previous: dict[int, Any] = {}
        self.stop_file = Path()

    def __enter__(self) -> Forward:
        self.stop_file = Path(tempfile.mkdtemp(prefix="uiground-merge-")) / "stop"
        for sig in self.SIGNALS:
            with contextlib.suppress(ValueError):  # main() called from another thread: no handler there
                self.previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        shutil.rmtree(self.stop_file.parent, ignore_errors=True)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.received.append(signum)
        with contextlib.suppress(OSError):
            self.stop_file.write_text(f"signal {signum} ({signal.Signals(signum).name}) to the merge\n")
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    @staticmethod
    def _ignore_signals() -> None:  # in the run's process, before it starts Python
        for sig in Forward.SIGNALS:
            signal.signal(sig, signal.SIG_IGN)

    def run(self, cmd: list[str], env: dict[str, str]) -> int:
        if self.received:
            name = signal.Signals(self.received[0]).name
            print(f"merge: interrupted by {name} before the merged run started; nothing written", file=sys.stderr)
            return int(pytest.ExitCode.INTERRUPTED)
        env = {**env, STOP_ENV: str(self.stop_file)}
        self.proc = subprocess.Popen(cmd, env=env, start_new_session=True, preexec_fn=self._ignore_signals)
        if self.received:  # arrived while the process was being started
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait()
        return code if code >= 0 else 128 - code  # killed by a signal: the shell's convention
