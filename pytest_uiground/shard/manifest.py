"""``shard.json``: what a ``--uiground-shard I/N`` run leaves beside its records, read by the merge.

It says which shard this is (I of N), which suites it ran (each suite's version, dataset
fingerprint, the sample ids it was to run and those it ran), which model answered (its name and
fingerprint, without the worker or load time, which differ between machines), and the run's
command line without what is the shard's own (the shard, its report folder, ``-n``, the JUnit and
Markdown files, the model's name, which the merge replaces): the merge replays the records through
that command line, so the run it makes is the one a single machine would have made. Every URL in
that command line is scrubbed (:func:`pytest_uiground.record.secrets.scrub`): an endpoint's password
is kept out of ``shard.json`` (an uploaded CI artifact) as it is out of every output of a normal run.

It carries two digests per suite, checked by the merge: ``records_sha256``, of the records this
shard wrote (read back from ``samples.jsonl``, so an edit of a prediction or of a stability after the
run is a mismatch), and ``suite_sha256``, of the suite file it ran (the merge runs the checkout's). A
digest is no signature: whoever can rewrite ``samples.jsonl`` can recompute it. The merge's other
defence does not depend on it: every record is scored again from its prediction
(:mod:`pytest_uiground.shard.merge`).

It is written at the end of the run: a shard killed mid-run leaves records and no manifest, and the
merge names it rather than merge part of a suite.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_uiground.gate.rules import dataset_provenance
from pytest_uiground.options import RunOptions
from pytest_uiground.record.files import atomic_write_text, digest, hex_digest
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.secrets import scrub_args
from pytest_uiground.shard.plan import planned

if TYPE_CHECKING:  # types only: the manifest reads the outcomes it is handed
    from pytest_uiground.gate.outcome import SuiteOutcome

NAME = "shard.json"
VERSION = 2  # 2: the digests, and the scrubbed command line

#: options a shard's command line holds that are the shard's own, never replayed by the merge:
#: with a value, and switches
OWN_WITH_VALUE = frozenset({"--uiground-shard", "--uiground-report", "--junitxml", "--junit-xml",
                            "--uiground-markdown", "-n", "--numprocesses", "--maxprocesses", "--dist", "--model",
                            "--basetemp"})
OWN_SWITCHES = frozenset({"--snapshot-update", "--uiground-probe"})
#: options whose value may differ between shards that belong together (one server per shard)
PER_MACHINE = frozenset({"--uiground-api-base"})


def _drop(args: Sequence[str], switches: frozenset[str] = frozenset(),
          with_value: frozenset[str] = frozenset()) -> list[str]:
    """``args`` without the ``switches`` and the ``with_value`` options and their values (``--opt value``
    and ``--opt=value``)."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in switches:
            continue
        if name in with_value:
            skip = "=" not in arg
            continue
        out.append(arg)
    return out


def replayable(args: Sequence[str]) -> list[str]:
    """The command line without what belongs to one shard (``--opt value``, ``--opt=value``, ``-n2``)."""
    return [a for a in _drop(args, OWN_SWITCHES, OWN_WITH_VALUE)
            if not (a.startswith("-n") and not a.startswith("--") and len(a) > 2)]  # -n2, -nauto


def comparable(args: Sequence[str]) -> list[str]:
    """``args`` without the values that may differ between shards of one run (:data:`PER_MACHINE`)."""
    return _drop(args, with_value=PER_MACHINE)


def records_digest(records: Iterable[SampleResult]) -> str:
    """The digest of a suite's records as written (in any order): what the merge reads must be what the shard wrote."""
    return digest({"records": sorted(json.dumps(r.to_json(), sort_keys=True) for r in records)})


def suite_digest(path: Path) -> str:
    """The digest of a suite file's bytes; an unreadable file digests as empty (the run named it already)."""
    try:
        return hex_digest(path.read_bytes())
    except OSError:
        return ""


def identity(model: dict[str, Any] | None) -> dict[str, Any] | None:
    """The model as every shard must have it: its name and fingerprint, not the worker or load time, nor
    which of its servers answered what (``endpoint_models``: one shard may have one server, another three)."""
    if model is None:
        return None
    out = {k: v for k, v in model.items() if k not in ("worker", "load_s")}
    if isinstance(out.get("fingerprint"), dict):
        out["fingerprint"] = {k: v for k, v in out["fingerprint"].items() if k != "endpoint_models"}
    return out


class ShardManifest:
    """Registered on the controller with ``--uiground-shard``: writes ``shard.json`` at the end of the run."""

    def __init__(self, config: pytest.Config, options: RunOptions) -> None:
        assert options.shard is not None
        if options.report_dir is None:
            raise pytest.UsageError(
                f"--uiground-shard {options.shard[0]}/{options.shard[1]} needs --uiground-report DIR: the merge "
                "reads each shard's report folder (its samples.jsonl and shard.json)")
        if options.updating:
            raise pytest.UsageError(
                "--snapshot-update with --uiground-shard would record a baseline of part of a suite; run the "
                "shards without it and update at the merge: python -m pytest_uiground merge SHARD_DIR... --out DIR "
                "--snapshot-update")
        self.config, self.options = config, options
        self.path = options.report_dir / NAME
        self.failed = ""
        self.path.unlink(missing_ok=True)  # a previous run's manifest never stands beside this run's records

    def pytest_uiground_run_outcome(self, config: pytest.Config, outcomes: Sequence[SuiteOutcome],
                                    interrupted: bool) -> None:
        assert self.options.shard is not None
        index, count = self.options.shard
        root = config.rootpath
        invoked = config.invocation_params.dir
        doc = {
            "version": VERSION, "index": index, "count": count, "interrupted": interrupted,
            "args": scrub_args(replayable(config.invocation_params.args)),
            "invocation_dir": str(invoked.relative_to(root)) if invoked.is_relative_to(root) else ".",
            "suites": {o.name: {
                "file": str(o.path.relative_to(root)) if o.path.is_relative_to(root) else str(o.path),
                **dataset_provenance(o.loaded),
                "model": identity(o.model),
                "planned": [s.id for s in planned(o.loaded, self.options)],
                "ran": [r.id for r in o.results],
                "records_sha256": records_digest(o.results),
                "suite_sha256": suite_digest(o.path),
            } for o in outcomes},
        }
        try:
            atomic_write_text(self.path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
        except OSError as exc:  # one line in the terminal, like the other outputs; the merge names the gap
            self.failed = f"uiground: could not write {self.path}: {exc.strerror or exc}"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        assert self.options.shard is not None
        index, count = self.options.shard
        if self.failed:
            terminalreporter.write_line(self.failed, yellow=True)
        terminalreporter.write_line(
            f"uiground shard {index}/{count}: aggregate checks and the baseline are left to "
            f"python -m pytest_uiground merge (manifest: {self.path})")
