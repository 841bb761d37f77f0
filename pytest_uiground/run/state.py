"""Per-process state of a worker (or the single process), kept in ``config.stash[STATE]``.

One object per process carries what outlives a single sample test: the options, the baselines
read so far, the judge built on first use and the prediction strategy (:mod:`.predictors`, which
owns the prediction cache and the predictions made ahead of their tests).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_uiground import registry
from pytest_uiground.gate import baseline as baseline_mod
from pytest_uiground.judges import base as judge_mod
from pytest_uiground.judges.base import JudgeBackend, JudgeSetupError
from pytest_uiground.judges.pool import JudgedScorer
from pytest_uiground.models.base import Model
from pytest_uiground.options import RunOptions
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import Sample
from pytest_uiground.run.predictors import Predictor, predictor_for
from pytest_uiground.run.repeats import Repeats
from pytest_uiground.run.variants import with_variants
from pytest_uiground.suite.loading import LoadedSuite, SuiteLoadError, load_suite


@dataclass
class Replayed:
    """``python -m pytest_uiground merge``: the shards' records stand in for the model. A sample test
    takes its prediction, score and error from its shard's record and decides its outcome against
    the baseline as any run does (:func:`pytest_uiground.run.worker.run_sample`)."""

    records: dict[tuple[str, str], SampleResult]  # (suite, sample id) → the shard's record
    models: dict[str, dict[str, Any]] = field(default_factory=dict)  # suite → the model's identity
    judges: dict[str, dict[str, Any]] = field(default_factory=dict)  # suite → the judge's fingerprint


@dataclass
class WorkerState:
    """Per-process state: options, baselines, judges and predictions made ahead of their test."""

    options: RunOptions
    worker_id: str = "master"
    baselines: dict[str, baseline_mod.Baseline | None] = field(default_factory=dict)
    sent: set[tuple[str, str]] = field(default_factory=set)  # (suite, "model"/"judge") identities sent
    judged: dict[str, JudgedScorer] = field(default_factory=dict)  # per suite name
    judge_error: str | None = None
    suite_names: dict[str, Path] = field(default_factory=dict)  # suite name → its file, one file per name
    model_load_s: float | None = None  # how long the model fixture took to build the model
    stop: str | None = None  # why the session must stop after this test (the judge is unusable)
    preloaded: Model | None = None  # a model built before the session in this process (the probe's), not yet used
    replay: Replayed | None = None  # merge: the shards' records, in place of the model's predictions
    _backend: JudgeBackend | None = None
    _predictor: Predictor | None = None
    _repeats: Repeats | None = None

    def predictor(self, model: Model) -> Predictor:
        """This process's prediction strategy for ``model``, picked on first use (the model fixture)."""
        if self._predictor is None:
            self._predictor = predictor_for(model, worker_id=self.worker_id,
                                            batch_size=self.options.model.batch_size,
                                            cache_dir=self.options.cache_dir, on_ready=self._judge_ahead)
        return self._predictor

    def repeats(self, model: Model) -> Repeats:
        """This process's ``--uiground-repeat`` rounds (:mod:`.repeats`), built on first use."""
        if self._repeats is None:
            self._repeats = Repeats(model, worker_id=self.worker_id, batch_size=self.options.model.batch_size,
                                    seed=self.options.seed)
        return self._repeats

    def _judge_ahead(self, loaded: LoadedSuite, sample: Sample, pred: Prediction) -> None:
        """A prediction made ahead of its test starts being judged now (once the suite's judge exists)."""
        judged = self.judged.get(loaded.config.name)
        if judged is not None:
            judged.submit(sample, pred)

    def judged_scorer(self, loaded: LoadedSuite) -> JudgedScorer:
        """The suite's judge, built on first use; a judge that cannot be built fails every judged sample."""
        if self.judge_error is not None:
            raise JudgeSetupError(self.judge_error)
        name = loaded.config.name
        if name not in self.judged:
            try:
                self.judged[name] = self._build_judged(loaded)
            except Exception as exc:
                self.judge_error = f"the judge could not be set up: {type(exc).__name__}: {exc}"
                raise JudgeSetupError(self.judge_error) from exc
        return self.judged[name]

    def _build_judged(self, loaded: LoadedSuite) -> JudgedScorer:
        jopts = replace(self.options.judge, worker_id=self.worker_id, device=self.options.model.device)
        if not jopts.name:
            raise JudgeSetupError(
                f"suite {loaded.config.name!r} scores free-text answers with an LLM judge: pass "
                "--uiground-judge openai "
                "--uiground-judge-api-base URL --uiground-judge-model NAME (or --uiground-judge module:factory)")
        if self._backend is None:
            factory = registry.resolve(registry.JUDGE_GROUP, jopts.name, what="judge", option="--uiground-judge")
            self._backend = factory(jopts)
        cache_root = self.options.cache_dir / "judge" if self.options.cache_dir is not None else None
        judge = judge_mod.Judge(backend=self._backend, options=jopts, prompt_hash=loaded.scorer.prompt_hash,
                                cache_root=cache_root)
        assert loaded.scorer.judged is not None
        ids = [s.id for s in loaded.samples if s.invalid is None]
        subset = (judge_mod.repeat_subset(ids, jopts.repeat_samples, self.options.seed) if jopts.repeat > 1
                  else frozenset())
        return JudgedScorer(judge, loaded.scorer.judged, parse_errors=jopts.parse_errors, repeat=jopts.repeat,
                            repeat_ids=subset)

    def judge_fingerprint(self, suite: str) -> dict[str, Any] | None:
        if self.replay is not None:  # merge: the judge that scored the shards' records
            return self.replay.judges.get(suite)
        judged = self.judged.get(suite)
        return judged.judge.fingerprint() if judged is not None else None

    def suite(self, path: Path) -> LoadedSuite:
        loaded = with_variants(load_suite(path, self.options.data_path), self.options)
        claim_name(self.suite_names, loaded.config.name, path)
        return loaded

    def baseline(self, suite: str) -> baseline_mod.Baseline | None:
        if suite not in self.baselines:
            self.baselines[suite] = baseline_mod.load(self.options.baselines_dir, suite)
        return self.baselines[suite]

    def comparable_baseline(self, suite: str) -> baseline_mod.Baseline | None:
        """The suite's baseline when this run's samples can be compared with it one by one: not
        when it was judged by another judge (the aggregate checks say so, once, for the suite)."""
        base = self.baseline(suite)
        judge = self.judge_fingerprint(suite)
        if base is not None and judge is not None and judge_mod.incomparable(base.provenance.get("judge"), judge):
            return None
        return base

    def first(self, suite: str, what: str) -> bool:
        """True once per suite and process: whether this record carries the model's (or judge's) identity."""
        if (suite, what) in self.sent:
            return False
        self.sent.add((suite, what))
        return True

    def take_model(self) -> Model | None:
        """The model the probe already built in this process, once: the model fixture uses it
        instead of loading the weights a second time (a local 7B model takes minutes and its memory twice)."""
        model, self.preloaded = self.preloaded, None
        return model

    def close(self) -> None:
        if self.preloaded is not None:  # built for the probe, never used by a test (nothing collected)
            self.preloaded.close()
            self.preloaded = None
        if self._predictor is not None:
            self._predictor.close()
        if self._repeats is not None:
            self._repeats.close()
        for judged in self.judged.values():
            judged.close()
        close = getattr(self._backend, "close", None)
        if callable(close):
            close()


def claim_name(names: dict[str, Path], name: str, path: Path) -> None:
    """Two suite files with one ``[suite] name`` would share (and overwrite) one baseline."""
    first = names.setdefault(name, path)
    if first != path:
        raise SuiteLoadError(f"{path}: [suite] name {name!r} is already used by {first}; each suite needs its own "
                             "name (it names its folder under the baselines and the report)")
