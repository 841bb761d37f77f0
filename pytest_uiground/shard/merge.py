"""``python -m pytest_uiground merge SHARD_DIR... --out DIR [--snapshot-update]``: N shards, one verdict.

Each shard (``--uiground-shard I/N --uiground-report SHARD_DIR``) left its records
(``samples.jsonl``) and a manifest (``shard.json``, :mod:`.manifest`). The merge first checks that
the shards belong together (:mod:`.shards`): the same N, every index once (a missing shard is an
error naming it, never a partial PASS), the same suites with the same version and dataset
fingerprint, the same model (name and fingerprint), the same options, each shard's records exactly
the samples it was to run, and no sample twice.

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
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground.record.secrets import scrub, scrub_args
from pytest_uiground.shard.manifest import NAME
from pytest_uiground.shard.shards import SHARDS_ENV, STOP_ENV, MergeError, Shard, check, read_shard

REPLAY_PLUGIN = "pytest_uiground.shard.replay"
"""The merged run's plugin (:mod:`.replay`), named for ``-p``: the merged pytest process loads it, this one
never does. Named here, it is an edge of the import graph (``perf/import_graph.py``); it stays one way
because the plugin takes what both share from :mod:`.shards`, never from this module."""
RECORDED = f"{REPLAY_PLUGIN}:recorded"
"""The ``--model`` of the merged run (:func:`pytest_uiground.shard.replay.recorded`): never built (the
records stand in for it), named so that the model's own start-up checks (a key in the environment,
an installed extra) are not made on the merge machine."""


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
