"""What travels to and from an OpenAI-compatible server: images, sizes, responses, addresses.

Split from :mod:`.client` so that the model class there holds only the request
schedule and the retry policy; everything here is a pure function of its inputs and is
tested without a server.

Absolute-pixel families (``uitars``, ``qwen-vl``) answer in pixels of the image as the
server's processor resized it. The client cannot see that size, so it computes it with
Qwen2.5-VL's ``smart_resize`` rule and the processor defaults (factor 28, min_pixels
4*28*28, max_pixels 16384*28*28); for ``uitars``, UI-TARS' own limits
(``codes/ui_tars/action_parser.py``). ``UIGROUND_OPENAI_MIN_PIXELS`` /
``UIGROUND_OPENAI_MAX_PIXELS`` replace them when the server runs with other limits.

Images go out as ``data:image/png;base64`` URLs: RGB PNG bytes as they are (checked from
the header, nothing decoded), anything else decoded exactly as ``ImageRef.load()`` would
and encoded with :func:`.png.encode_png_fast`.
"""

from __future__ import annotations

import base64
import email.utils
import io
import json
import os
import struct
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_uiground.models import families
from pytest_uiground.models.base import ModelLoadError
from pytest_uiground.models.families import smart_resize
from pytest_uiground.models.openai.png import encode_png_fast
from pytest_uiground.record.image import ImageError, ImageRef

if TYPE_CHECKING:
    from PIL import Image

RESIZE_FACTOR = 28
"""Qwen2.5-VL: 14-pixel patches merged 2 x 2, so sides are multiples of 28."""
DEFAULT_MIN_PIXELS = families.QWEN25_MIN_PIXELS
"""Qwen2.5-VL processor default (preprocessor_config.json ``min_pixels`` = 3136)."""
DEFAULT_MAX_PIXELS = families.QWEN25_MAX_PIXELS
"""Qwen2.5-VL processor default (preprocessor_config.json ``max_pixels`` = 12845056)."""
MIN_PIXELS_ENV = "UIGROUND_OPENAI_MIN_PIXELS"
MAX_PIXELS_ENV = "UIGROUND_OPENAI_MAX_PIXELS"
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# --- smart_resize ----------------------------------------------------------------------


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


def needs_input_size(parser: str | None) -> bool:
    """The family answers in pixels of the resized image, so the client must know that size."""
    return parser is not None and families.get(parser).needs_input_size


def default_resize_rule(parser: str | None) -> ResizeRule:
    """The family's resize rule (e.g. UI-TARS' own constants for ``uitars``); the Qwen2.5-VL
    defaults for a family without one."""
    rule = families.get(parser).resize if parser is not None else None
    if rule is None:
        return ResizeRule()
    return ResizeRule(rule.min_pixels, rule.max_pixels, rule.factor, rule.source)


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
    return ResizeRule(values["min_pixels"], values["max_pixels"], base.factor, source)


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


_IEND = b"\x00\x00\x00\x00IEND\xaeB`\x82"


def png_complete(data: bytes) -> bool:
    """Whether a PNG sent as it is is whole: it ends with its IEND chunk and every chunk's CRC holds
    (PIL's ``verify``, which reads the chunks without decoding the pixels). A truncated or corrupt
    file is instead decoded like ``ImageRef.load()``, which raises the error naming the image, so
    the sample fails as invalid rather than the server being sent (and scored on) a broken image."""
    if not data.endswith(_IEND):
        return False
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.verify()
    except Exception:  # PIL raises several types (SyntaxError for a bad CRC among them)
        return False
    return True


def encode_image(ref: ImageRef, preprocess: Callable[[Image.Image], Image.Image] | None = None) -> EncodedImage:
    """A PNG data URL for ``ref`` and its size, without re-encoding when it already is RGB PNG.

    Raw bytes (a file, a parquet cell) are read once; anything else is decoded exactly as
    ``ImageRef.load()`` would (same errors) and encoded with :func:`encode_png_fast`. With
    ``preprocess`` (a suite's override) the image is always decoded, preprocessed and encoded.
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
    if (preprocess is None and isinstance(raw, bytes) and (size := png_rgb8_size(raw)) is not None
            and png_complete(raw)):
        png = raw
    else:
        img = ImageRef.from_source(ref.key, lambda: raw).load()
        if preprocess is not None:
            img = preprocess(img)
        size, png = img.size, encode_png_fast(img)
    return EncodedImage(b"data:image/png;base64," + base64.b64encode(png), size)


# --- responses -----------------------------------------------------------------------------


def read_completion(content: bytes) -> tuple[str, str | None, str | None] | str:
    """``(text, finish_reason, model)`` from a chat-completion body, or why it is malformed
    (``model``: the name the server says answered, None when the body has none).

    Parsed by hand rather than into the SDK's pydantic models: it is cheaper, and a
    broken body becomes a message about the body rather than a validation traceback.
    A ``null`` content (nothing generated) is the empty string, which the parser
    reports as a format error like any other unusable output. JSON nested deeper than
    the interpreter's recursion limit (100,000 ``[``, say) makes ``json.loads`` raise
    RecursionError, which is a malformed body like any other, not a crash.
    """
    try:
        data = json.loads(content)
    except ValueError as exc:
        return f"the body is not JSON ({exc}); it starts {content[:120]!r}"
    except RecursionError:
        return f"the body nests JSON too deeply to parse; it starts {content[:120]!r}"
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
    model = data.get("model")
    return text, finish if isinstance(finish, str) else None, model if isinstance(model, str) else None


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
