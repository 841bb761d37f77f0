"""``openai``: any OpenAI-compatible chat-completions server (vLLM, SGLang, TGI, hosted APIs).

Serving a model with vLLM is often the only practical way to run a 7B+ grounding
model, so this adapter sends each sample to ``--uiground-api-base`` as one chat request and
scores the raw text with the family's own parser (``--uiground-parser``, the same prompt the
native adapter would use). The server returns the underlying model's raw text, so
the plugin — not the server — stays in charge of prompts and coordinate conventions.

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
* Images are encoded once per image (by ``ImageRef.key``), however many samples and
  concurrent requests use them: the first request encodes, the others wait for it.
  RGB PNG bytes go out as they are; a decoded image (a generator's) is encoded with
  :func:`pytest_uiground.image.encode_png_fast`.
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

Absolute-pixel families (``uitars``, ``qwen-vl``) answer in pixels of the image as
the server's processor resized it. The client cannot see that size, so it computes
it with Qwen2.5-VL's ``smart_resize`` rule and the Qwen2.5-VL processor defaults
(factor 28, min_pixels 4*28*28, max_pixels 16384*28*28); for ``uitars``, UI-TARS' own
limits (min_pixels 100*28*28, ``codes/ui_tars/action_parser.py``), which its parser
converts with and which the server should be given (``--mm-processor-kwargs``). If the server runs with
other limits (vLLM ``--mm-processor-kwargs '{"max_pixels": ...}'``, or a
preprocessor_config.json with other values), set ``UIGROUND_OPENAI_MIN_PIXELS`` /
``UIGROUND_OPENAI_MAX_PIXELS`` to the same numbers; the assumption is written into
the fingerprint (and so into reports and the cache directory), never silently guessed.

The server's address is deliberately not in ``fingerprint()`` or ``cache_key()``:
the cache directory is derived from the fingerprint, and the same served model on a
restarted server (new port, new node) must resume from the cache. It is kept in
:attr:`OpenAIChatModel.endpoint`, with any credentials stripped.
"""

from __future__ import annotations

import base64
import email.utils
import importlib.util
import inspect
import json
import math
import os
import random
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from pytest_uiground.image import ImageError, ImageRef, encode_png_fast
from pytest_uiground.prediction import Prediction
from pytest_uiground.sample import Sample

from . import parsers, prompts
from .base import ModelAdapter, ModelLoadError, ModelOptions
from .qwen import UITARS_MAX_PIXELS, UITARS_MIN_PIXELS

if TYPE_CHECKING:
    import openai
    from PIL import Image

RESIZE_FACTOR = 28
"""Qwen2.5-VL: 14-pixel patches merged 2 x 2, so sides are multiples of 28."""
DEFAULT_MIN_PIXELS = 4 * 28 * 28
"""Qwen2.5-VL processor default (preprocessor_config.json ``min_pixels`` = 3136)."""
DEFAULT_MAX_PIXELS = 16384 * 28 * 28
"""Qwen2.5-VL processor default (preprocessor_config.json ``max_pixels`` = 12845056)."""
UITARS_SOURCE = "UI-TARS codes/ui_tars/action_parser.py MIN_PIXELS/MAX_PIXELS"
"""``uitars``: UI-TARS' own limits (100*28*28 .. 16384*28*28), which its parser converts with."""
MIN_PIXELS_ENV = "UIGROUND_OPENAI_MIN_PIXELS"
MAX_PIXELS_ENV = "UIGROUND_OPENAI_MAX_PIXELS"
BACKOFF_ENV = "UIGROUND_OPENAI_BACKOFF_S"
"""Overrides :data:`BACKOFF_BASE_S` (tests use a few milliseconds)."""

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 20.0
MAX_RETRY_AFTER_S = 60.0
"""A server asking for a longer pause is waited on for this long, then asked again."""
IMAGE_CACHE_SIZE = 8
"""Encoded images kept per model beyond those of the requests in flight: the samples of
one screenshot are adjacent in a suite, so each screenshot is encoded once, not once
per sample."""
SERVER_MESSAGE_LIMIT = 500
REDACT_MIN_KEY_LENGTH = 8

NEEDS_INPUT_SIZE = ("uitars", "qwen-vl")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# --- smart_resize ----------------------------------------------------------------------


def smart_resize(
    height: int,
    width: int,
    *,
    factor: int = RESIZE_FACTOR,
    min_pixels: int = DEFAULT_MIN_PIXELS,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> tuple[int, int]:
    """Qwen2-VL/Qwen2.5-VL's resize rule, as (height, width) like the original.

    Both sides are rounded to a multiple of ``factor`` (Python's ``round``, so halves go
    to even, exactly as transformers does); if the area then exceeds ``max_pixels``
    (or falls below ``min_pixels``) the image is scaled by the square root of the area
    ratio and the sides floored (ceiled) to the factor. A reimplementation rather than an
    import, because importing transformers' image processor costs seconds and a GPU-less
    client must not need it; tests compare it with hand-computed values.
    """
    if height <= 0 or width <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    if max(height, width) / min(height, width) > 200:
        raise ValueError(
            f"absolute aspect ratio must be smaller than 200, got {max(height, width) / min(height, width)}"
        )
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


@dataclass(frozen=True)
class ResizeRule:
    """The server-side resize this client assumes, and where the numbers came from."""

    min_pixels: int = DEFAULT_MIN_PIXELS
    max_pixels: int = DEFAULT_MAX_PIXELS
    factor: int = RESIZE_FACTOR
    source: str = "Qwen2.5-VL processor defaults"

    def input_size(self, image_size: tuple[int, int]) -> tuple[int, int]:
        """The (width, height) the server's processor feeds the model for an image of ``image_size``."""
        w, h = image_size
        rh, rw = smart_resize(h, w, factor=self.factor, min_pixels=self.min_pixels, max_pixels=self.max_pixels)
        return rw, rh

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": "qwen2.5-vl smart_resize", "factor": self.factor, "min_pixels": self.min_pixels,
            "max_pixels": self.max_pixels, "source": self.source,
            "assumption": "must match the server's processor config (min_pixels/max_pixels)",
        }


def default_resize_rule(parser: str | None) -> ResizeRule:
    """The family's resize: UI-TARS' constants for ``uitars``, the Qwen2.5-VL defaults otherwise."""
    if parser == "uitars":
        return ResizeRule(UITARS_MIN_PIXELS, UITARS_MAX_PIXELS, RESIZE_FACTOR, UITARS_SOURCE)
    return ResizeRule()


def resize_rule_from_env(environ: Mapping[str, str] | None = None, *, parser: str | None = None) -> ResizeRule:
    """The resize assumption: the family's defaults, or the ``UIGROUND_OPENAI_*_PIXELS`` overrides."""
    env = os.environ if environ is None else environ
    base = default_resize_rule(parser)
    values = {"min_pixels": base.min_pixels, "max_pixels": base.max_pixels}
    overridden = []
    for key, var in (("min_pixels", MIN_PIXELS_ENV), ("max_pixels", MAX_PIXELS_ENV)):
        text = env.get(var, "").strip()
        if not text:
            continue
        try:
            values[key] = int(text)
        except ValueError:
            raise ModelLoadError(f"{var}={text!r} is not a whole number of pixels, e.g. {DEFAULT_MAX_PIXELS}") from None
        if values[key] <= 0:
            raise ModelLoadError(f"{var}={text!r} must be positive")
        overridden.append(f"{var}={values[key]}")
    if values["min_pixels"] > values["max_pixels"]:
        raise ModelLoadError(
            f"min_pixels {values['min_pixels']} > max_pixels {values['max_pixels']} "
            f"(check {MIN_PIXELS_ENV} and {MAX_PIXELS_ENV})"
        )
    source = "environment: " + ", ".join(overridden) if overridden else base.source
    return ResizeRule(values["min_pixels"], values["max_pixels"], RESIZE_FACTOR, source)


# --- images ------------------------------------------------------------------------------


@dataclass(frozen=True)
class EncodedImage:
    """A ``data:image/png;base64,...`` URL (kept as bytes: it goes straight into the body) and the size."""

    data_url: bytes
    size: tuple[int, int]


def png_rgb8_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) of an 8-bit RGB PNG from its header, else None.

    Only such files are sent as they are: they decode to exactly the pixels of
    ``ImageRef.load()``. Alpha, palette or 16-bit PNGs are converted to RGB here first,
    because servers flatten alpha differently (vLLM composites on white, PIL drops it).
    """
    if len(data) < 33 or not data.startswith(_PNG_SIGNATURE) or data[12:16] != b"IHDR":
        return None
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    if depth != 8 or colour != 2 or width == 0 or height == 0:
        return None
    return width, height


def encode_image(ref: ImageRef) -> EncodedImage:
    """A PNG data URL for ``ref`` and its size, without re-encoding when it already is RGB PNG.

    Raw bytes (a file, a parquet cell) are read once; anything else is decoded exactly as
    ``ImageRef.load()`` would (same errors) and encoded with :func:`encode_png_fast`.
    """
    raw: bytes | Image.Image
    if ref.path is not None:
        try:
            raw = ref.path.read_bytes()
        except OSError:
            ref.load()  # raises the ImageError that names the image and the fix
            raise
    elif ref.source is not None:
        try:
            raw = ref.source()
        except (OSError, ValueError) as exc:
            raise ImageError(f"image {ref.key!r} could not be read ({exc})") from exc
    else:
        raise ImageError(f"image {ref.key!r} has neither a path nor a source")
    if isinstance(raw, bytes) and (size := png_rgb8_size(raw)) is not None:
        png = raw
    else:
        img = ImageRef.from_source(ref.key, lambda: raw).load()
        size, png = img.size, encode_png_fast(img)
    return EncodedImage(b"data:image/png;base64," + base64.b64encode(png), size)


# --- responses -----------------------------------------------------------------------------


def read_completion(content: bytes) -> tuple[str, str | None] | str:
    """``(text, finish_reason)`` from a chat-completion body, or why it is malformed.

    Parsed by hand rather than into the SDK's pydantic models: it is cheaper, and a
    broken body becomes a message about the body rather than a validation traceback.
    A ``null`` content (nothing generated) is the empty string, which the parser
    reports as a format error like any other unusable output.
    """
    try:
        data = json.loads(content)
    except ValueError as exc:
        return f"the body is not JSON ({exc}); it starts {content[:120]!r}"
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        return f"no choices in the response; it starts {content[:120]!r}"
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        return "the first choice has no message"
    text = message.get("content")
    if text is None:
        text = ""
    elif isinstance(text, list):  # content parts, as some servers return
        text = "".join(str(p.get("text", "")) for p in text if isinstance(p, dict))
    elif not isinstance(text, str):
        return f"message content is a {type(text).__name__}, not text"
    finish = first.get("finish_reason")
    return text, finish if isinstance(finish, str) else None


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds a server asked us to wait: ``retry-after-ms``, or ``Retry-After`` seconds or HTTP date."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def public_url(url: str) -> str:
    """``url`` without user:password or query (where keys sometimes hide)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


# --- the model --------------------------------------------------------------------------------


class _Attempt:
    """What one HTTP attempt came to: a text, a reason to retry, or a final error."""

    __slots__ = ("error", "final", "finish", "retry_after", "text", "unreachable")

    def __init__(self, *, text: str | None = None, finish: str | None = None, error: str = "",
                 final: bool = False, retry_after: float | None = None, unreachable: bool = False) -> None:
        self.text, self.finish, self.error, self.final = text, finish, error, final
        self.retry_after, self.unreachable = retry_after, unreachable


class OpenAIChatModel(ModelAdapter):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    name = "openai"

    def __init__(
        self,
        *,
        api_base: str,
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
    ) -> None:
        if client is None and importlib.util.find_spec("openai") is None:
            raise ModelLoadError("--model openai and --uiground-judge openai need the openai package: "
                                 "pip install 'pytest-uiground[openai]'")
        if parser is not None and parser not in parsers.FAMILIES:
            raise ModelLoadError(f"--uiground-parser {parser!r} is unknown; known: {', '.join(parsers.FAMILIES)}")
        self.endpoint = public_url(api_base)
        self.served_model, self.parser, self.api_key_env = served_model, parser, api_key_env
        self.concurrency, self.request_timeout, self.max_retries = concurrency, request_timeout, max_retries
        self.preferred_batch_size = concurrency
        self.in_flight = concurrency
        self.resize = (resize or default_resize_rule(parser)) if parser in NEEDS_INPUT_SIZE else None
        self.backoff_base_s, self.backoff_cap_s = backoff_base_s, backoff_cap_s
        self.retry_after_cap_s = retry_after_cap_s
        self.seed = seed
        self.generation: dict[str, Any] = {"temperature": 0, "max_tokens": max_new_tokens, "seed": seed}
        # Held only inside a Secret (whose repr redacts it): a traceback shown with ``pytest -l``
        # prints every local of every frame, so no frame may hold the key as a plain string.
        self._secret = api_key if isinstance(api_key, Secret) else Secret(api_key)
        del api_key
        self._api_base = api_base
        self._client: openai.OpenAI | None = client  # built by _sdk() on the first request
        self._raw_body_arg = ""
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._images: OrderedDict[str, Future[EncodedImage]] = OrderedDict()
        self._unreachable = threading.Event()
        self._closing = threading.Event()
        self.counters: dict[str, int] = {"requests": 0, "retries": 0, "errors": 0, "skipped_retries": 0}

    def __repr__(self) -> str:
        return (f"OpenAIChatModel(endpoint={self.endpoint!r}, served_model={self.served_model!r}, "
                f"parser={self.parser!r})")

    # -- the Model protocol ----------------------------------------------------------------
    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        """One prediction per sample, in order, with up to ``concurrency`` requests in flight."""
        if not samples:
            return []
        if len(samples) == 1:
            return [self._predict_one(samples[0])]
        return list(self._executor().map(self._predict_one, samples))

    def submit(self, sample: Sample) -> Future[Prediction]:
        """Queue one sample's request; it starts as soon as one of the ``concurrency`` slots is free."""
        return self._executor().submit(self._predict_one, sample)

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="uiground-openai")
            return self._pool

    def _sdk(self) -> tuple[openai.OpenAI, str]:
        """The SDK client and the name of its raw-body argument, built on the first request.

        Importing ``openai`` takes about 0.7 s (its hundreds of pydantic types), which a
        rerun answered wholly from the prediction cache never needs: ``perf/bench_rerun.py``
        measured it as most of such a rerun's sample-test time.
        """
        with self._lock:
            if self._client is None:
                self._client = self._new_client()
            if not self._raw_body_arg:
                # openai >= 3 takes a raw body as ``content=`` (and warns on bytes in ``body=``);
                # 1.x only has ``body=``.
                params = inspect.signature(self._client.post).parameters
                self._raw_body_arg = "content" if "content" in params else "body"
            return self._client, self._raw_body_arg

    def _new_client(self) -> openai.OpenAI:
        import openai

        try:
            return openai.OpenAI(base_url=self._api_base, api_key=self._secret.reveal(),
                                 timeout=self.request_timeout, max_retries=0)
        except Exception as exc:  # the SDK's own validation; its frames hold the key, so they are cut
            message = self._secret.redact(str(exc))
        raise ModelLoadError(f"could not create the client for {self.endpoint}: {message}")

    def cache_key(self, sample: Sample) -> dict[str, Any]:
        return {"sample": sample.id, "image": sample.image.key, "task": sample.task,
                "prompt": prompts.prompt_for(self._family(), sample), "served_model": self.served_model,
                "parser": self.parser, "generation": self.generation}

    def fingerprint(self) -> dict[str, Any]:
        resize = self.resize.to_json() if self.resize is not None else {
            "rule": "none", "why": f"the {self.parser} parser reads coordinates relative to the image"}
        return {"model": self.name, "served_model": self.served_model, "parser": self.parser,
                "generation": self.generation, "resize": resize}

    def clear_cache(self) -> None:
        """Forget encoded images (the latency benchmark times real work)."""
        with self._lock:
            self._images.clear()

    def close(self) -> None:
        self._closing.set()
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if self._client is not None:
            self._client.close()

    # -- one sample ------------------------------------------------------------------------
    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.counters[key] += n

    def _redact(self, text: str) -> str:
        """Mask the key if a server echoes it (a proxy's 401 message, say).

        Short values are placeholders for servers without auth (``EMPTY``), not secrets;
        masking them would corrupt model outputs that happen to contain the word.
        """
        if len(self._secret.reveal()) < REDACT_MIN_KEY_LENGTH:
            return text
        return self._secret.redact(text)

    def _predict_one(self, sample: Sample) -> Prediction:
        """Never raises: whatever goes wrong becomes this sample's error."""
        t0 = time.perf_counter()
        try:
            pred = self._predict_unguarded(sample)
        except Exception as exc:  # the worker must never crash
            pred = Prediction(error=f"{type(exc).__name__}: {exc}")
        if pred.error is not None:
            pred.error = self._redact(pred.error)
            self._count("errors")
        pred.raw = self._redact(pred.raw)
        pred.latency_ms = (time.perf_counter() - t0) * 1000
        return pred

    def _image(self, sample: Sample) -> EncodedImage:
        """The sample's encoded image: encoded by the first request that needs it, while
        concurrent requests for the same image wait for that one instead of encoding again."""
        key = sample.image.key
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
            future.set_result(encode_image(sample.image))
        except BaseException as exc:
            with self._lock:  # not cached: a later sample of a broken image gets its own error
                if self._images.get(key) is future:
                    del self._images[key]
            future.set_exception(exc)
        return future.result()

    def build_body(self, prompt: str, image: EncodedImage) -> bytes:
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
        return b"".join((
            head, b', "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "',
            image.data_url, b'"}}, {"type": "text", "text": ', json.dumps(prompt).encode(), b"}]}]}",
        ))

    def _predict_unguarded(self, sample: Sample) -> Prediction:
        try:
            image = self._image(sample)
            body = self.build_body(prompts.prompt_for(self._family(), sample), image)
            input_size = self.resize.input_size(image.size) if self.resize is not None else None
        except (ImageError, ValueError) as exc:
            return Prediction(error=str(exc))
        attempt = self._request(sample.id, body)
        if attempt.text is None:
            return Prediction(error=attempt.error)
        return self.to_prediction(sample, attempt.text, attempt.finish, image.size, input_size)

    def _family(self) -> str:
        if self.parser is None:
            raise ValueError("this client was built for text-only chat (a judge): it has no --uiground-parser "
                             "for samples")
        return self.parser

    def chat_text(self, messages: Sequence[Mapping[str, str]], request_id: str) -> tuple[str | None, str, bool]:
        """One text-only chat request with this client's retries: ``(text, error, unreachable)``.

        Used by the judge (no image, no parser); ``request_id`` seeds the backoff jitter.
        """
        body = json.dumps({"model": self.served_model, **self.generation, "messages": list(messages)}).encode()
        attempt = self._request(request_id, body)
        return attempt.text, self._redact(attempt.error), attempt.unreachable

    def to_prediction(self, sample: Sample, text: str, finish: str | None, image_size: tuple[int, int],
                      input_size: tuple[int, int] | None) -> Prediction:
        ctx = parsers.ParseContext(image_size=image_size, model_input_size=input_size)
        parsed = parsers.parse(self._family(), text, sample.task, ctx)
        raw = text
        if parsed.format_error and finish == "length":
            raw = f"{text} [cut off at --uiground-max-new-tokens {self.generation['max_tokens']} without an answer]"
        return parsers.to_prediction(parsed, raw)

    # -- HTTP with retries ----------------------------------------------------------------
    def _request(self, sample_id: str, body: bytes) -> _Attempt:
        rng = random.Random(f"{self.seed}:{sample_id}")
        attempts = 0
        while True:
            attempts += 1
            self._count("requests")
            result = self._attempt(body)
            if result.text is not None or result.final:
                return result
            if result.unreachable and self._unreachable.is_set():
                self._count("skipped_retries")
                return _Attempt(error=f"{result.error} (the server has been unreachable since earlier samples "
                                      "exhausted their retries; not retrying until a request gets an answer)",
                                unreachable=True)
            if attempts > self.max_retries or self._closing.is_set():
                if result.unreachable:
                    self._unreachable.set()
                retries = attempts - 1
                return _Attempt(error=f"gave up after {attempts} attempt{'s' * (attempts > 1)} ({retries} "
                                      f"retr{'ies' if retries != 1 else 'y'}, --uiground-max-retries "
                                      f"{self.max_retries}): "
                                      f"{result.error}", unreachable=result.unreachable)
            if result.retry_after is not None:
                wait = min(result.retry_after, self.retry_after_cap_s)
            else:
                wait = min(self.backoff_cap_s, self.backoff_base_s * 2 ** (attempts - 1)) * (0.5 + rng.random() / 2)
            self._count("retries")
            self._closing.wait(wait)

    def _attempt(self, body: bytes) -> _Attempt:
        """One POST through the SDK's documented low-level ``post`` (pre-serialized body, raw bytes back);
        status errors, timeouts and connection errors arrive as the SDK's usual exceptions."""
        import openai

        try:
            client, body_arg = self._sdk()
            raw_body: dict[str, Any] = {body_arg: body}
            content = client.post("/chat/completions", cast_to=bytes, **raw_body)
        except openai.APIStatusError as exc:
            self._unreachable.clear()
            status = exc.status_code
            error = f"HTTP {status} from {self.endpoint}: {self._server_message(exc)}"
            if status == 429 or status >= 500:
                return _Attempt(error=error, retry_after=parse_retry_after(exc.response.headers))
            if status == 404:
                error += (" (check --uiground-api-base: it usually ends in /v1; and --uiground-served-model: GET "
                          "/v1/models lists names)")
            elif status in (401, 403):
                error += f" (check the key in ${self.api_key_env})"
            return _Attempt(error=error, final=True)
        except openai.APITimeoutError:
            return _Attempt(error=f"no answer from {self.endpoint} within --uiground-request-timeout "
                                  f"{self.request_timeout:g}s")
        except openai.APIConnectionError as exc:
            cause = f" ({type(exc.__cause__).__name__}: {exc.__cause__})" if exc.__cause__ is not None else ""
            return _Attempt(error=f"could not connect to {self.endpoint}{cause}", unreachable=True)
        self._unreachable.clear()
        got = read_completion(content)
        if isinstance(got, str):
            return _Attempt(error=f"malformed response from {self.endpoint}: {got}")
        return _Attempt(text=got[0], finish=got[1])

    @staticmethod
    def _server_message(exc: openai.APIStatusError) -> str:
        body = exc.body
        if isinstance(body, dict) and body.get("message"):
            text = str(body["message"])
        elif isinstance(body, str) and body.strip():
            text = body.strip()
        else:
            text = exc.message
        return text if len(text) <= SERVER_MESSAGE_LIMIT else text[:SERVER_MESSAGE_LIMIT] + "..."


def _backoff_from_env() -> float:
    text = os.environ.get(BACKOFF_ENV, "").strip()
    if not text:
        return BACKOFF_BASE_S
    try:
        value = float(text)
    except ValueError:
        raise ModelLoadError(f"{BACKOFF_ENV}={text!r} is not a number of seconds") from None
    if not (value >= 0 and math.isfinite(value)):
        raise ModelLoadError(f"{BACKOFF_ENV}={text!r} must be a non-negative number of seconds")
    return value


class Secret:
    """An API key that never shows itself: ``repr`` and ``str`` print ``[REDACTED]``, so a
    traceback with locals (``pytest -l``), a JUnit XML report or a log line cannot leak it.
    Only :meth:`reveal`, called inside the expression that hands it to the HTTP client, gives
    the text."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def redact(self, text: str) -> str:
        return text.replace(self._value, "[REDACTED]") if self._value else text

    def __repr__(self) -> str:
        return "Secret('[REDACTED]')"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


def api_key_from_env(var: str, *, who: str, option: str) -> Secret:
    """The API key from the environment variable ``var``: keys never travel on the command line."""
    if not var:
        raise ModelLoadError(f"{option} is empty: name the environment variable that holds the API key")
    if not os.environ.get(var, ""):
        raise ModelLoadError(
            f"{who} reads the API key from the environment variable {var}, which is not set or empty. "
            f"Set it before running (export {var}=...); a local vLLM or SGLang server started without "
            f"--api-key accepts any value: export {var}=EMPTY. Use {option} to name another variable; "
            "never pass the key itself on the command line"
        )
    return Secret(os.environ[var])


def check_options(options: ModelOptions) -> None:
    """The settings ``--model openai`` needs, checked once at start-up (``options.check_model``)
    and again by :func:`create`; the key's environment variable is checked too, so a missing
    key stops the run once instead of failing every sample."""
    known = ", ".join(parsers.FAMILIES)
    if not options.api_base:
        raise ModelLoadError(
            "--model openai needs --uiground-api-base URL: the server's OpenAI-compatible base URL, "
            "e.g. --uiground-api-base http://gpu-node:8000/v1 for vLLM or SGLang"
        )
    if urlsplit(options.api_base).scheme not in ("http", "https") or not urlsplit(options.api_base).hostname:
        raise ModelLoadError(
            f"--uiground-api-base {public_url(options.api_base)!r} is not an http(s) URL; e.g. http://gpu-node:8000/v1"
        )
    if not options.served_model:
        raise ModelLoadError(
            "--model openai needs --uiground-served-model NAME: the model name the server serves "
            "(vLLM: its --served-model-name or model path; GET <api-base>/models lists them)"
        )
    if not options.parser:
        raise ModelLoadError(
            "--model openai needs --uiground-parser NAME: the model family whose prompts and parser to use "
            f"(the server returns the model's raw text); known: {known}"
        )
    if options.parser not in parsers.FAMILIES:
        raise ModelLoadError(f"--uiground-parser {options.parser!r} is unknown; known: {known}")
    if options.max_retries < 0:
        raise ModelLoadError(f"--uiground-max-retries {options.max_retries} must be 0 or more")
    if not options.request_timeout > 0:
        raise ModelLoadError(f"--uiground-request-timeout {options.request_timeout:g} must be a positive number "
                             "of seconds")
    if options.concurrency < 1:
        raise ModelLoadError(f"--uiground-concurrency {options.concurrency} must be 1 or more")
    api_key_from_env(options.api_key_env, who="--model openai", option="--uiground-api-key-env")


def create(options: ModelOptions) -> OpenAIChatModel:
    """Validate the options and the key's environment variable; no request is made here."""
    check_options(options)
    assert options.api_base is not None and options.served_model is not None and options.parser is not None
    resize = resize_rule_from_env(parser=options.parser)
    # not given: the family's official answer length (prompts.MAX_NEW_TOKENS; 256 where the
    # family leaves it to the checkpoint, which a server does not expose)
    max_new_tokens = options.max_new_tokens or prompts.MAX_NEW_TOKENS[options.parser].max_new_tokens or 256
    backoff = _backoff_from_env()
    var = options.api_key_env
    key = api_key_from_env(var, who="--model openai", option="--uiground-api-key-env")
    try:
        return OpenAIChatModel(
            api_base=options.api_base, api_key=key, served_model=options.served_model, parser=options.parser,
            max_new_tokens=max_new_tokens, concurrency=options.concurrency,
            request_timeout=options.request_timeout, max_retries=options.max_retries, api_key_env=var,
            resize=resize, backoff_base_s=backoff,
        )
    except ModelLoadError:
        raise
    except Exception as exc:  # the SDK's own validation; its message may quote the key
        message = key.redact(str(exc))
        raise ModelLoadError(f"--model openai: could not create the client: {message}") from None
