"""The model interface every adapter implements, and the options it is built from.

An adapter turns a batch of samples into predictions in the internal coordinate
convention. It decodes images itself (``sample.image.load()``) so that decoding is
timed with the prediction and never happens at collection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample

if TYPE_CHECKING:
    from pytest_uiground.models.families.reading import Parsed
    from pytest_uiground.models.overrides import Overrides


@dataclass(frozen=True)
class ModelOptions:
    """Command-line model settings, parsed and validated at start-up."""

    name: str
    path: str | None = None
    device: str = "cpu"
    batch_size: int = 1
    worker_id: str = "master"
    dtype: str | None = None
    """None: not given, so the adapter applies its model's official dtype."""
    max_new_tokens: int | None = None
    """None: not given, so the adapter applies its model's official generation limit."""
    predictions: str | None = None
    replay_parser: str | None = None
    api_base: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    served_model: str | None = None
    served_model_reply: str | None = None  # --uiground-served-model-reply: another name the replies may carry
    parser: str | None = None
    concurrency: int = 8
    request_timeout: float = 120.0
    max_retries: int = 5
    revision: str | None = None  # --uiground-model-revision: the hub revision passed to from_pretrained
    trust_remote_code: bool = False  # --uiground-trust-remote-code: remote code without a pinned revision
    omniparser_llm: str = "none"  # --uiground-omniparser-llm: none or openai (models/omniparser)
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Settings declared by adapters themselves (``pytest_uiground.options.declared_options``)."""


def to_prediction(parsed: Parsed, raw: str, *, latency_ms: float = 0.0) -> Prediction:
    """The prediction an adapter returns for a family's reading of its output (:meth:`Family.parse
    <pytest_uiground.models.families.Family.parse>`), the raw text kept for reports."""
    return Prediction(point=parsed.point, box=parsed.box, verdict=parsed.verdict, option=parsed.option,
                      answer=parsed.answer, raw=raw, format_error=parsed.format_error, latency_ms=latency_ms,
                      refused=parsed.refused, note=parsed.note)


class ModelLoadError(Exception):
    """A model could not be loaded; the message names the model, the value and the fix."""


class ModelAdapter:
    """The base class of every model the harness runs: two methods to write, the rest optional.

    Write :meth:`predict` and :meth:`fingerprint`. Every other method is an optional
    capability with a safe default; override it when your model has it:

    * :meth:`cache_key`: what, besides the fingerprint, determines a sample's output (the
      prompt, the image, the generation settings). Returning a mapping makes the model's
      predictions cacheable (reruns and resumed runs skip finished samples); the default
      ``None`` means "not cacheable".
    * :meth:`use_overrides`: receive a suite's ``[models.<name>]`` overrides (prompt
      templates, preprocessing, parser) before predicting that suite's samples.
    * :attr:`preferred_batch_size`: the smallest batch worth a call (an HTTP client keeps
      that many requests in flight); the harness uses ``max(--uiground-batch-size, this)``.
    * :meth:`clear_cache`: forget per-image work so ``test_latency`` times real work.
    * :meth:`close`: release the weights, threads or connections at the end of the session.
    * :meth:`deferred_load_s`: the weights' load time, for a model that loads them on first use.
    * :meth:`warm_up`: load what ``generate`` needs now; a preparing model's harness calls
      it while the first batch is prepared, so loading and preparing overlap.

    Two capabilities keep the model busy while the harness runs tests (see
    :mod:`pytest_uiground.run.pipeline`); a model has at most one of them:

    * streaming, :attr:`in_flight` > 0 and :meth:`submit`: the model predicts up to
      ``in_flight`` samples at once, fed one at a time (an HTTP client). The harness
      submits the samples this process runs next and collects each prediction when its
      test runs, so a new request starts as soon as any finishes.
    * preparation, :attr:`prepares` = True and :meth:`prepare` / :meth:`generate`: the
      CPU work (decode, resize, processor, tokenizer) is split from the device work
      (``generate``), and the harness prepares the next batch in a background thread
      while the current one generates. ``prepare`` must not touch state that
      ``generate`` uses at the same time; ``predict`` stays ``generate(prepare(batch))``.

    A factory (``pytest_uiground.models`` entry point, or ``--model package.module:function``)
    takes :class:`ModelOptions` and returns the adapter. See README "Adding a model".
    """

    name: str = "model"
    preferred_batch_size: int = 1
    #: Which ``[models.<name>]`` table of a suite applies; None: the model's own ``name``. A replay of
    #: another model's outputs reads that model's table (its reference parser, say).
    overrides_table: str | None = None
    in_flight: int = 0
    prepares: bool = False

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        """One prediction per sample, in order, in the internal convention. May raise: the
        harness retries the batch one sample at a time so the error lands on its sample."""
        raise NotImplementedError

    def fingerprint(self) -> dict[str, Any]:
        """What identifies this model's outputs (weights, revision, settings): provenance and cache keys."""
        raise NotImplementedError

    def cache_key(self, sample: Sample) -> dict[str, Any] | None:
        return None

    def use_overrides(self, overrides: Overrides) -> None:
        return None

    def clear_cache(self) -> None:
        return None

    def close(self) -> None:
        return None

    def deferred_load_s(self) -> float | None:
        """Seconds spent loading weights on first use, for a model that defers that until a
        prediction needs it (a rerun answered from the cache never loads); None: not deferred
        or not loaded yet. Added to the build time in "model loaded in ..." lines."""
        return None

    def warm_up(self) -> None:
        """Load the weights (or whatever ``generate`` waits for) now rather than on first use.

        Called once, on the test's thread, while the first batch is prepared in the
        background (models with :attr:`prepares`); must not raise: a failed load is
        reported by ``generate``, on each sample."""
        return None

    def submit(self, sample: Sample) -> Future[Prediction]:
        """Start predicting one sample and return at once (models with :attr:`in_flight`).

        The future must never raise: a failure is the sample's error prediction. This
        default predicts at once, on the caller's thread.
        """
        future: Future[Prediction] = Future()
        try:
            future.set_result(self.predict([sample])[0])
        except Exception as exc:
            future.set_result(Prediction.failed(exc))
        return future

    def prepare(self, samples: Sequence[Sample]) -> Any:
        """The batch's CPU work, done in a background thread (models with :attr:`prepares`).
        May raise: the harness then prepares the samples one at a time."""
        return list(samples)

    def generate(self, prepared: Any) -> list[Prediction]:
        """One prediction per sample of a :meth:`prepare`-d batch, in order (the device work)."""
        return self.predict(prepared)


class DelegatingAdapter(ModelAdapter):
    """A model that wraps another one (cropping): every capability goes to ``inner`` unless
    the wrapper overrides it, so a new capability needs no forwarding list."""

    def __init__(self, inner: Any) -> None:
        self.inner: ModelAdapter = adapt(inner)
        self.name = self.inner.name
        self.preferred_batch_size = self.inner.preferred_batch_size
        self.overrides_table = self.inner.overrides_table
        # Streaming and preparation would go straight to ``inner``, bypassing a wrapper
        # that changes what ``predict`` does (cropping calls the model several times per
        # sample): such a wrapper has neither capability.
        self._forwards = type(self).predict is DelegatingAdapter.predict
        self.in_flight = self.inner.in_flight if self._forwards else 0
        self.prepares = self.inner.prepares if self._forwards else False

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        return self.inner.predict(samples)

    def submit(self, sample: Sample) -> Future[Prediction]:
        return self.inner.submit(sample) if self._forwards else super().submit(sample)

    def prepare(self, samples: Sequence[Sample]) -> Any:
        return self.inner.prepare(samples) if self._forwards else super().prepare(samples)

    def generate(self, prepared: Any) -> list[Prediction]:
        return self.inner.generate(prepared) if self._forwards else super().generate(prepared)

    def fingerprint(self) -> dict[str, Any]:
        return self.inner.fingerprint()

    def cache_key(self, sample: Sample) -> dict[str, Any] | None:
        return self.inner.cache_key(sample)

    def use_overrides(self, overrides: Overrides) -> None:
        self.inner.use_overrides(overrides)

    def clear_cache(self) -> None:
        self.inner.clear_cache()

    def deferred_load_s(self) -> float | None:
        fn = getattr(self.inner, "deferred_load_s", None)
        return fn() if callable(fn) else None

    def warm_up(self) -> None:
        fn = getattr(self.inner, "warm_up", None)
        if callable(fn):
            fn()

    def close(self) -> None:
        self.inner.close()


class _DuckAdapter(DelegatingAdapter):
    """A factory's object that does not subclass :class:`ModelAdapter` (written against the
    earlier duck-typed interface): its optional methods are used where it has them."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = str(getattr(inner, "name", "model"))
        self.preferred_batch_size = int(getattr(inner, "preferred_batch_size", 1))
        self._forwards = False  # the earlier interface had neither streaming nor preparation

    def _call(self, method: str, *args: Any) -> Any:
        fn = getattr(self.inner, method, None)
        return fn(*args) if callable(fn) else None

    def cache_key(self, sample: Sample) -> dict[str, Any] | None:
        key = self._call("cache_key", sample)
        return dict(key) if key is not None else None

    def use_overrides(self, overrides: Overrides) -> None:
        self._call("use_overrides", overrides)

    def clear_cache(self) -> None:
        self._call("clear_cache")

    def close(self) -> None:
        self._call("close")


def adapt(model: Any) -> ModelAdapter:
    """``model`` as a :class:`ModelAdapter` (wrapping duck-typed ones); a clear error otherwise."""
    if isinstance(model, ModelAdapter):
        return model
    if not (callable(getattr(model, "predict", None)) and callable(getattr(model, "fingerprint", None))):
        raise TypeError(f"the model factory returned {type(model).__name__}, which has no predict() and "
                        "fingerprint(); subclass pytest_uiground.models.base.ModelAdapter")
    return _DuckAdapter(model)


#: Kept for annotations written against the earlier name.
Model = ModelAdapter

ModelFactory = Callable[[ModelOptions], ModelAdapter]
