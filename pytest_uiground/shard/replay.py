"""The merged run's plugin: ``-p pytest_uiground.shard.replay`` in the pytest process the merge starts.

:func:`pytest_uiground.shard.merge.main` checks the shards (:mod:`.shards`), then runs pytest in a process
of its own, on the shards' command line, as a shard ran: a fresh interpreter in which pytest imports the package
itself (a project with ``filterwarnings = error`` would fail an in-process run on pytest's "module
already imported so cannot be rewritten" warning), the ini's ``addopts`` apply as they did to the
shards, and SIGTERM is the ordinary interrupt of :mod:`pytest_uiground.run.stop`. This plugin reads the
shards again in that process (and in every xdist worker, should the ini's ``addopts`` ask for them),
from the folders named in :data:`ENV`, and hands their records to the process's state, in place of
the model (:class:`~pytest_uiground.run.state.Replayed`, :class:`RecordedModel`; each record is scored again there,
:func:`pytest_uiground.run.worker.rescore`). It also checks that the suite files this checkout
collects are the ones the shards ran (their ``suite_sha256``) and that every sample collected has
its record and no record is left over.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground.models.base import ModelAdapter, ModelOptions
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.secrets import scrub
from pytest_uiground.run import STATE
from pytest_uiground.run.state import Replayed
from pytest_uiground.shard.manifest import NAME, suite_digest
from pytest_uiground.shard.shards import SHARDS_ENV, STOP_ENV, MergeError, Shard, check, read_shard
from pytest_uiground.suite.items import SAMPLE_ARG, suite_path_of

#: the environment variable that names the shards' folders (a JSON list) to the merged run
ENV = SHARDS_ENV


def replayed(shards: Sequence[Shard]) -> Replayed:
    """The records of every shard, by suite and sample id, with each suite's model and judge identity
    (the lowest shard's: :func:`~pytest_uiground.shard.shards.check` made sure they agree)."""
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
    """The ``--model`` the merge names (:data:`pytest_uiground.shard.merge.RECORDED`); the merged run hands
    its state a :class:`RecordedModel` instead, so this is only ever called by mistake outside a merge."""
    raise RuntimeError(f"--model {__name__}:recorded is the merge's stand-in: use python -m pytest_uiground merge")


class Replay:
    """Checks that every sample collected has its record (what the shards were to run, the merged run
    runs) and that each suite file is the one the shards ran."""

    def __init__(self, book: Replayed, shards: list[Shard]) -> None:
        self.book = book
        first = min(shards, key=lambda s: s.index)  # check() made sure every shard agrees with it
        self.suites = {name: (str(suite.get("suite_sha256", "")), first) for name, suite in first.suites.items()}

    def install(self, config: pytest.Config) -> None:
        state = config.stash[STATE]
        state.replay = self.book
        model: dict[str, Any] = next(iter(self.book.models.values()), {})
        fingerprint = model.get("fingerprint")
        state.preloaded = RecordedModel(str(model.get("name", "recorded")),
                                        dict(fingerprint) if isinstance(fingerprint, dict) else {})

    @pytest.hookimpl(trylast=True)  # after -k, -m and --deselect have had their say, as in the shards
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        # test_latency times the model, which is not here (it skips under -n in the shards anyway).
        latency = [i for i in items if i.name == "test_latency"]
        if latency:
            config.hook.pytest_deselected(items=latency)
            items[:] = [i for i in items if i.name != "test_latency"]
        state = config.stash[STATE]
        wanted: set[tuple[str, str]] = set()
        checked: set[Path] = set()
        for item in items:
            path = suite_path_of(item)
            callspec = getattr(item, "callspec", None)
            sample = callspec.params.get(SAMPLE_ARG) if callspec is not None else None
            if path is None or not isinstance(sample, Sample):
                continue
            name = state.suite(path).config.name
            if path not in checked:
                checked.add(path)
                self._same_suite(name, path)
            key = (name, sample.id)
            wanted.add(key)
            if key not in self.book.records:
                raise pytest.UsageError(
                    f"merge: sample {sample.id!r} of {key[0]!r} ({item.nodeid}) has no record in any shard: the "
                    "shards ran another selection than this checkout collects (another suite file, dataset or "
                    "option); merge from the checkout the shards ran in, or rerun them from this one")
        extra = sorted(f"{suite}::{sid}" for suite, sid in set(self.book.records) - wanted)
        if extra:
            raise pytest.UsageError(
                f"merge: {len(extra)} record(s) of the shards are of samples this checkout does not collect "
                f"({', '.join(extra[:5])}); merge from the checkout the shards ran in")

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """A signal the merge passed on before this process's handler was in place (it started ignoring
        them) stops the run here, as the handler would have."""
        stop = Path(os.environ.get(STOP_ENV, "") or os.devnull)
        if stop.is_file():
            session.shouldstop = stop.read_text(encoding="utf-8", errors="replace").strip() or "stopped by the merge"

    def _same_suite(self, name: str, path: Path) -> None:
        if name not in self.suites:
            return  # its samples have no records: named just after
        recorded, shard = self.suites[name]
        if recorded != suite_digest(path):
            raise pytest.UsageError(
                f"merge: {path} is not the suite file {shard.label} ran ({NAME}'s suite_sha256 for {name!r} differs): "
                "the suite changed since the shards ran; merge from the checkout the shards ran in, or rerun them")


@pytest.hookimpl(trylast=True)  # after the plugin's own configure has made the state
def pytest_configure(config: pytest.Config) -> None:
    folders = os.environ.get(ENV, "")
    if not folders:
        raise pytest.UsageError(f"-p {__name__} is the merge's own plugin; run python -m pytest_uiground merge "
                                "SHARD_DIR... --out DIR")
    try:
        shards = [read_shard(Path(folder)) for folder in json.loads(folders)]
        check(shards)
    except (MergeError, ValueError, TypeError) as exc:
        raise pytest.UsageError(f"merge: {scrub(str(exc))}") from None
    replay = Replay(replayed(shards), shards)
    replay.install(config)
    config.pluginmanager.register(replay, "uiground-replay")
