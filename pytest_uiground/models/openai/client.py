"""``openai``: any OpenAI-compatible chat-completions server (vLLM, SGLang, TGI, hosted APIs).

Serving a model with vLLM is often the only practical way to run a 7B+ grounding
model, so this adapter sends each sample to ``--uiground-api-base`` as one chat request and
scores the raw text with the family's own parser (``--uiground-parser``, the same prompt the
native adapter would use). The server returns the underlying model's raw text, so
the plugin — not the server — stays in charge of prompts and coordinate conventions.
A suite's ``[models.<family>]`` overrides (prompt templates, preprocessing, parser; else
``[models.openai]``) apply as they do to the native adapter of that family, so a model served
by vLLM is prompted and read as the benchmark's reference code does.

Options and why:

* ``--uiground-api-base URL`` and ``--uiground-served-model NAME`` say where and what; ``--uiground-parser NAME``
  says which family's prompt and parser to use (the server cannot tell us).
* The key is read only from the environment variable named by ``--uiground-api-key-env``
  (default ``OPENAI_API_KEY``), so it never lands in shell history, pytest's
  command-line echo, reports or caches. A local vLLM without ``--api-key`` accepts
  anything: ``export OPENAI_API_KEY=EMPTY``. The key is kept out of the fingerprint,
  the cache key, predictions and every error message (redacted if a server echoes it).
* ``--uiground-concurrency N`` requests are in flight at once (a thread pool of N). The
  model streams (``in_flight = N``, :meth:`OpenAIChatModel.submit`): the harness
  submits the samples its process runs next and a new request starts as soon as any
  finishes (a sliding window, not lock-step batches that wait for their slowest);
  each test collects its own sample's result, so results keep sample order.
* Images are encoded once per image content (``ImageRef.content_key``: a file's hash, a
  generated image's stable key), however many samples and
  concurrent requests use them: the first request encodes, the others wait for it.
  RGB PNG bytes go out as they are; a decoded image (a generator's) is encoded with
  :func:`.png.encode_png_fast`.
* Greedy and seeded (``temperature=0``, ``seed=0``, ``max_tokens=--uiground-max-new-tokens``, by
  default the family's official limit, e.g. 400 for ``uitars`` as UI-TARS' README_deploy.md):
  the settings are part of the fingerprint and of every cache key.

Retry policy, per sample (the harness is never asked to retry): 429, 5xx, timeouts,
connection errors and malformed 200 responses are retried up to ``--uiground-max-retries``
times with exponential backoff and jitter seeded by the sample id (reproducible, yet
different samples spread out); a ``Retry-After`` header (seconds, HTTP date, or
``retry-after-ms``) replaces the backoff, capped at :data:`MAX_RETRY_AFTER_S`. Any
other 4xx (e.g. 400 "image too large") is that sample's error at once, with the
server's message. A malformed 200 (a body that is not JSON, or JSON without choices)
is retried like a 5xx: it is what a proxy cutting a response or a server crashing
mid-answer produce, both transient; a server that is deterministically broken
exhausts the retries and the error says "malformed response". Once a sample has
exhausted its retries on connection errors, the server is taken to be down and
later connection errors are not retried (one attempt each) until any request gets an
HTTP answer again, so a dead server costs seconds, not retries x backoff per sample.

Absolute-pixel families (``uitars``, ``qwen-vl``) answer in pixels of the image as the
server resized it; :mod:`.wire` computes that size (Qwen2.5-VL's ``smart_resize``,
overridable with ``UIGROUND_OPENAI_MIN_PIXELS``/``UIGROUND_OPENAI_MAX_PIXELS``), and the
assumption is written into the fingerprint, never silently guessed.

The server's address is deliberately not in ``fingerprint()`` or ``cache_key()``:
the cache directory is derived from the fingerprint, and the same served model on a
restarted server (new port, new node) must resume from the cache. It is kept in
:attr:`OpenAIChatModel.endpoint`, with any credentials stripped.
"""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from pytest_uiground.models import families
from pytest_uiground.models.base import ModelAdapter, ModelLoadError, ModelOptions, to_prediction
from pytest_uiground.models.families.parts import split_at_image
from pytest_uiground.models.openai.endpoints import COOLDOWN_S, Router, cooldown_from_env, split_bases
from pytest_uiground.models.openai.http import BACKOFF_CAP_S, MAX_RETRY_AFTER_S, ChatPoster
from pytest_uiground.models.openai.settings import (
    BACKOFF_BASE_S,
    Secret,
    api_key_from_env,
    backoff_from_env,
    check_options,
)
from pytest_uiground.models.openai.wire import (
    EncodedImage,
    ResizeRule,
    default_resize_rule,
    encode_image,
    needs_input_size,
    resize_rule_from_env,
)
from pytest_uiground.models.overrides import NONE, Overrides
from pytest_uiground.record.image import ImageError
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample

if TYPE_CHECKING:
    import openai
    from PIL import Image

#: the extra this model needs (checked at start-up: options.missing_extra)
EXTRA = ("openai", ("openai",))


IMAGE_CACHE_SIZE = 8
"""Encoded images kept per model beyond those of the requests in flight: the samples of
one screenshot are adjacent in a suite, so each screenshot is encoded once, not once
per sample."""

# --- the model --------------------------------------------------------------------------------


class OpenAIChatModel(ModelAdapter):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    name = "openai"

    def __init__(
        self,
        *,
        api_base: str | Sequence[str],
        api_key: Secret | str,
        served_model: str,
        parser: str | None,
        max_new_tokens: int = 256,
        concurrency: int = 8,
        request_timeout: float = 120.0,
        max_retries: int = 5,
        api_key_env: str = "OPENAI_API_KEY",
        resize: ResizeRule | None = None,
        backoff_base_s: float = BACKOFF_BASE_S,
        backoff_cap_s: float = BACKOFF_CAP_S,
        retry_after_cap_s: float = MAX_RETRY_AFTER_S,
        seed: int = 0,
        client: openai.OpenAI | None = None,
        reply_model: str | None = None,
        cooldown_s: float = COOLDOWN_S,
    ) -> None:
        if client is None and importlib.util.find_spec("openai") is None:
            raise ModelLoadError("--model openai and --uiground-judge openai need the openai package: "
                                 "pip install 'pytest-uiground[openai]'")
        if parser is not None and not families.is_family(parser):
            raise ModelLoadError(f"--uiground-parser {parser!r} is unknown; known: {', '.join(families.names())}")
        # Held only inside a Secret (whose repr redacts it): a traceback shown with ``pytest -l``
        # prints every local of every frame, so no frame may hold the key as a plain string.
        secret = api_key if isinstance(api_key, Secret) else Secret(api_key)
        del api_key
        bases = split_bases(api_base) if isinstance(api_base, str) else list(api_base)
        posters = [ChatPoster(api_base=base, secret=secret, request_timeout=request_timeout, max_retries=max_retries,
                              api_key_env=api_key_env, backoff_base_s=backoff_base_s, backoff_cap_s=backoff_cap_s,
                              retry_after_cap_s=retry_after_cap_s, seed=seed, client=client if i == 0 else None)
                   for i, base in enumerate(bases)]
        self._http = posters[0]  # the key's redaction (one key for every endpoint)
        self._posters = posters
        self.router = Router(posters, window=concurrency, cooldown_s=cooldown_s)
        self.endpoint = ", ".join(p.endpoint for p in posters)
        self.served_model, self.parser, self.api_key_env = served_model, parser, api_key_env
        # The names the server's replies carried (their "model" field): recorded in the fingerprint, so
        # the baseline says what answered, and checked against what was asked for (a proxy serving
        # another checkpoint would otherwise be scored as this model).
        self.reply_model = reply_model
        self.answered_as: set[str] = set()
        self.concurrency, self.request_timeout, self.max_retries = concurrency, request_timeout, max_retries
        self.preferred_batch_size = self.in_flight = concurrency * len(posters)  # a window per endpoint
        self.resize = (resize or default_resize_rule(parser)) if needs_input_size(parser) else None
        # The suite's [models.<family>] table applies, as for the native adapter of that family
        # (and a replay); a suite without one falls back to [models.openai] (worker.apply_overrides).
        self.overrides_table = parser
        self.overrides: Overrides = NONE
        self.seed = seed
        self.generation: dict[str, Any] = {"temperature": 0, "max_tokens": max_new_tokens, "seed": seed}
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._images: OrderedDict[str, Future[EncodedImage]] = OrderedDict()

    @property
    def counters(self) -> dict[str, int]:
        """Requests, retries, errors and skipped retries so far (read by the terminal summary and tests)."""
        total: dict[str, int] = {}
        for poster in self._posters:
            for key, n in poster.counters.items():
                total[key] = total.get(key, 0) + n
        return total

    def __repr__(self) -> str:
        return (f"OpenAIChatModel(endpoint={self.endpoint!r}, served_model={self.served_model!r}, "
                f"parser={self.parser!r})")

    # -- the Model protocol ----------------------------------------------------------------
    def use_overrides(self, overrides: Overrides) -> None:
        """The running suite's ``[models.<parser>]`` (else ``[models.openai]``) prompts,
        preprocessing and parser. A request takes the overrides current when it was
        submitted: requests of the previous suite may still be in flight."""
        self.overrides = overrides

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        """One prediction per sample, in order, with up to ``concurrency`` requests in flight."""
        if not samples:
            return []
        ov = self.overrides
        if len(samples) == 1:
            return [self._predict_one(samples[0], ov)]
        return list(self._executor().map(self._predict_one, samples, [ov] * len(samples)))

    def submit(self, sample: Sample) -> Future[Prediction]:
        """Queue one sample's request; it starts as soon as one of the ``concurrency`` slots is free."""
        return self._executor().submit(self._predict_one, sample, self.overrides)

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.in_flight, thread_name_prefix="uiground-openai")
            return self._pool

    def prompt(self, sample: Sample, overrides: Overrides | None = None) -> str:
        """The family's prompt, or the suite's template for this task kind."""
        return (overrides or self.overrides).prompt(sample, self._family())

    def framing(self, sample: Sample, overrides: Overrides | None = None) -> tuple[str | None, bool]:
        """The family's system text and image placement (:meth:`Overrides.framing`)."""
        return (overrides or self.overrides).framing(sample, self._family())

    def cache_key(self, sample: Sample) -> dict[str, Any]:
        key: dict[str, Any] = {"sample": sample.id, "image": sample.image.key, "task": sample.task,
               "prompt": self.prompt(sample), "served_model": self.served_model,
               "parser": self.parser, "generation": self.generation}
        system, image_first = self.framing(sample)
        if system is not None or not image_first:  # only where there is one: older cache keys stay valid
            key["system"], key["image_first"] = system, image_first
        return key

    def fingerprint(self) -> dict[str, Any]:
        resize = self.resize.to_json() if self.resize is not None else {
            "rule": "none", "why": f"the {self.parser} parser reads coordinates relative to the image"}
        with self._lock:
            answered = sorted(self.answered_as)
        out: dict[str, Any] = {"model": self.name, "served_model": self.served_model, "parser": self.parser,
               "generation": self.generation, "resize": resize, **({"answered_as": answered} if answered else {})}
        if self.router.several:  # each endpoint's identity, by position: no address (it is not the model's)
            out["endpoint_models"] = self.router.identities()
        family = families.get(self.parser) if self.parser is not None and families.is_family(self.parser) else None
        if family is not None and family.client_resize and family.resize is not None:
            rule = family.resize  # the image is resized here before it is sent, as the official client does
            out["client_resize"] = {"factor": rule.factor, "min_pixels": rule.min_pixels,
                                    "max_pixels": rule.max_pixels, "resample": rule.resample, "source": rule.source}
        return out

    def clear_cache(self) -> None:
        """Forget encoded images (the latency benchmark times real work)."""
        with self._lock:
            self._images.clear()

    def close(self) -> None:
        for poster in self._posters:
            poster.closing.set()  # requests waiting to retry give up now
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        for poster in self._posters:
            poster.close()

    # -- one sample ------------------------------------------------------------------------
    def _predict_one(self, sample: Sample, overrides: Overrides) -> Prediction:
        """Never raises: whatever goes wrong becomes this sample's error."""
        t0 = time.perf_counter()
        try:
            pred = self._predict_unguarded(sample, overrides)
        except Exception as exc:  # the worker must never crash
            pred = Prediction.failed(exc)
        if pred.error is not None:
            pred.error = self._http.redact(pred.error)
            self._http.count("errors")
        pred.raw = self._http.redact(pred.raw)
        pred.latency_ms = (time.perf_counter() - t0) * 1000
        return pred

    def _image(self, sample: Sample, overrides: Overrides) -> EncodedImage:
        """The sample's encoded image (after the suite's ``preprocess``), one per image content:
        encoded by the first request that needs it, while concurrent requests for the same
        image wait for that one instead of encoding again."""
        try:
            content = sample.image.content_key()  # a file by its content hash: a copy under another name is one image
        except OSError:  # unreadable: encode_image raises the ImageError that names the file and the fix
            content = f"unreadable:{sample.image.key}"
        key = f"{content}\0{overrides.preprocess}" if overrides.preprocess else content
        with self._lock:
            future = self._images.get(key)
            mine = future is None
            if future is None:
                future = self._images[key] = Future()
            self._images.move_to_end(key)
            while len(self._images) > IMAGE_CACHE_SIZE + self.concurrency:
                self._images.popitem(last=False)
        if not mine:
            return future.result()
        try:
            future.set_result(encode_image(sample.image, self._preprocess(overrides)))
        except BaseException as exc:
            with self._lock:  # not cached: a later sample of a broken image gets its own error
                if self._images.get(key) is future:
                    del self._images[key]
            future.set_exception(exc)
        return future.result()

    def _preprocess(self, overrides: Overrides) -> Callable[[Image.Image], Image.Image] | None:
        """The suite's preprocessing, then the family's own resize where its official client
        resizes before sending (the server then sees the image the family was measured with)."""
        family = families.get(self.parser) if self.parser is not None and families.is_family(self.parser) else None
        rule = family.resize if family is not None and family.client_resize else None
        if rule is None:
            return overrides.image if overrides.preprocess else None

        def resize(image: Image.Image) -> Image.Image:
            from PIL import Image as PILImage

            image = overrides.image(image) if overrides.preprocess else image
            size = rule.apply(image.size)
            if size == image.size:
                return image
            resample = PILImage.Resampling.LANCZOS if rule.resample == "lanczos" else PILImage.Resampling.BICUBIC
            return image.resize(size, resample=resample)

        return resize

    def build_body(self, prompt: str, image: EncodedImage, system: str | None = None,
                   image_first: bool = True) -> bytes:
        """The request JSON: one user message, the image first, then the family's prompt.

        Equal to ``json.dumps({"model": ..., **generation, "messages": [{"role": "user",
        "content": [{"type": "image_url", "image_url": {"url": data_url}}, {"type": "text",
        "text": prompt}]}]})``, but spliced by hand around the data URL: serializing a
        megabyte of base64 through ``json.dumps`` (and the SDK's type-driven transform of
        ``chat.completions.create``) cost ~4 ms of GIL-holding time per request, which at
        32 requests in flight throttled the whole batch. A base64 data URL needs no JSON
        escaping, so the splice is exact.
        """
        head = json.dumps({"model": self.served_model, **self.generation})[:-1].encode()
        system_part = b""
        if system is not None:
            system_part = b'{"role": "system", "content": ' + json.dumps(system).encode() + b"}, "
        image_part = b'{"type": "image_url", "image_url": {"url": "' + image.data_url + b'"}}'
        text_part = b'{"type": "text", "text": ' + json.dumps(prompt).encode() + b"}"
        first, second = (image_part, text_part) if image_first else (text_part, image_part)
        if (lead := split_at_image(prompt)) is not None:  # text, image, text (a prompt with a lead)
            first = b'{"type": "text", "text": ' + json.dumps(lead[0]).encode() + b"}, " + image_part
            second = b'{"type": "text", "text": ' + json.dumps(lead[1]).encode() + b"}"
        return b"".join((head, b', "messages": [', system_part, b'{"role": "user", "content": [', first, b", ",
                         second, b"]}]}"))

    def _predict_unguarded(self, sample: Sample, overrides: Overrides) -> Prediction:
        try:
            image = self._image(sample, overrides)
            input_size = self.resize.input_size(image.size) if self.resize is not None else None
            system, image_first = self.framing(sample, overrides)
            if system is not None:  # GTA1 states the size of the image it is shown
                system = system.replace("{width}", str(image.size[0])).replace("{height}", str(image.size[1]))
            body = self.build_body(self.prompt(sample, overrides), image, system, image_first)
        except (ImageError, ValueError) as exc:
            return Prediction(error=str(exc))
        attempt, endpoint, left = self.router.request(sample.id, body)
        route: dict[str, Any] = {}
        if self.router.several:  # which server answered, per record: summary.json counts them (and a merge)
            route = {"endpoint": endpoint.url, **({"answered_as": attempt.model} if attempt.model else {}),
                     **({"left": list(left)} if left else {})}
        if attempt.text is None:
            return Prediction(error=attempt.error, route=route)
        if attempt.model is not None:
            with self._lock:
                self.answered_as.add(attempt.model)
            if attempt.model not in (self.served_model, self.reply_model):
                return Prediction(raw=self._http.redact(attempt.text), route=route, error=(
                    f"the server at {endpoint.url} answered as model {attempt.model!r}, not the "
                    f"--uiground-served-model {self.served_model!r} asked for: another checkpoint would be "
                    "scored as this one. Point --uiground-api-base at the right server, or, when the name is an "
                    f"alias of the same model, pass --uiground-served-model-reply {attempt.model!r}"))
        pred = self.to_prediction(sample, attempt.text, attempt.finish, image.size, input_size, overrides)
        pred.route = route
        return pred

    def _family(self) -> str:
        if self.parser is None:
            raise ValueError("this client was built for text-only chat (a judge): it has no --uiground-parser "
                             "for samples")
        return self.parser

    def to_prediction(self, sample: Sample, text: str, finish: str | None, image_size: tuple[int, int],
                      input_size: tuple[int, int] | None, overrides: Overrides | None = None) -> Prediction:
        ctx = families.ParseContext(image_size=image_size, model_input_size=input_size)
        parsed = (overrides or self.overrides).parse(self._family(), text, sample.task, ctx)
        raw = text
        if parsed.format_error and finish == "length":
            raw = f"{text} [cut off at --uiground-max-new-tokens {self.generation['max_tokens']} without an answer]"
        return to_prediction(parsed, raw)

def create(options: ModelOptions) -> OpenAIChatModel:
    """Validate the options and the key's environment variable; no request is made here."""
    check_options(options)
    assert options.api_base is not None and options.served_model is not None and options.parser is not None
    resize = resize_rule_from_env(parser=options.parser)
    # not given: the family's official answer length (Family.generation; 256 where the
    # family leaves it to the checkpoint, which a server does not expose)
    max_new_tokens = options.max_new_tokens or families.get(options.parser).generation.max_new_tokens or 256
    backoff = backoff_from_env()
    var = options.api_key_env
    key = api_key_from_env(var, who="--model openai", option="--uiground-api-key-env")
    try:
        return OpenAIChatModel(
            api_base=options.api_base, api_key=key, served_model=options.served_model, parser=options.parser,
            max_new_tokens=max_new_tokens, concurrency=options.concurrency,
            request_timeout=options.request_timeout, max_retries=options.max_retries, api_key_env=var,
            resize=resize, backoff_base_s=backoff, reply_model=options.served_model_reply,
            cooldown_s=cooldown_from_env(),
        )
    except ModelLoadError:
        raise
    except Exception as exc:  # the SDK's own validation; its message may quote the key
        message = key.redact(str(exc))
        raise ModelLoadError(f"--model openai: could not create the client: {message}") from None
