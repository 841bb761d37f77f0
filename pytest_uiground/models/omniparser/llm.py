"""OmniParser's LLM path (``--uiground-omniparser-llm openai``): the published ScreenSpot-Pro run's prompt.

Why it exists: OmniParser v2's 39.5 on ScreenSpot-Pro is not the parser alone but GPT-4o
choosing among its elements (microsoft/OmniParser ``eval/ss_pro_gpt4o_omniv2.py``,
``GPT4XModel.ground_only_positive``). This module sends what that function sends, to any
OpenAI-compatible server through the project's transport (:class:`~pytest_uiground.models.openai.http.ChatPoster`:
retries, timeouts, the key kept in a ``Secret``): a system message, then one user message of
the prompt text, the screenshot and the set-of-marks screenshot (boxes tagged with their ids),
at ``max_tokens`` 2048 and temperature 0. The reply's box id is read by
:func:`~.parse.read_box_id` and the element's centre is the click (``bbox[0] + bbox[2] / 2``
on the authors' xywh box). An id outside the list is a format error (the reference raised).
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from pytest_uiground.models.base import ModelLoadError, ModelOptions
from pytest_uiground.models.omniparser import parse as P
from pytest_uiground.models.openai.http import ChatPoster
from pytest_uiground.models.openai.settings import Secret, api_key_from_env
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.secrets import public_url

if TYPE_CHECKING:
    from PIL import Image

WHO = "--model omniparser --uiground-omniparser-llm openai"


def check_llm_options(options: ModelOptions) -> None:
    """The server settings the LLM path needs, checked once at start-up."""
    if not options.api_base:
        raise ModelLoadError(f"{WHO} needs --uiground-api-base URL (the OpenAI-compatible server that chooses the "
                             "element), e.g. http://gpu-node:8000/v1")
    if not options.served_model:
        raise ModelLoadError(f"{WHO} needs --uiground-served-model NAME (the authors used gpt-4o-2024-05-13)")
    api_key_from_env(options.api_key_env, who=WHO, option="--uiground-api-key-env")


def som_image(img: Image.Image, elements: Sequence[P.Element]) -> Image.Image:
    """The screenshot with every element's box and id drawn on it (``get_som_labeled_img``'s
    ``annotate``, sized by ``box_overlay_ratio = max(size) / 3200`` as ``omniparser_parse`` sets it).
    The authors draw with supervision's BoxAnnotator; this draws the same boxes and ids with PIL."""
    from PIL import ImageDraw, ImageFont

    out = img.convert("RGB").copy()
    draw = ImageDraw.Draw(out)
    width, height = out.size
    ratio = max(out.size) / 3200
    thickness = max(int(3 * ratio), 1)
    font = ImageFont.load_default(size=max(10, round(40 * ratio)))
    palette = ((230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (70, 240, 240))
    for idx, e in enumerate(elements):
        colour = palette[idx % len(palette)]
        box = (e.box.x0 * width, e.box.y0 * height, e.box.x1 * width, e.box.y1 * height)
        draw.rectangle(box, outline=colour, width=thickness)
        label = str(idx)
        x0, y0, x1, y1 = draw.textbbox((box[0], box[1]), label, font=font)
        draw.rectangle((x0 - 1, y0 - 1, x1 + 1, y1 + 1), fill=colour)
        draw.text((box[0], box[1]), label, fill=(255, 255, 255), font=font)
    return out


def _data_url(img: Image.Image) -> str:
    buf = io.BytesIO()
    img.save(buf, format="PNG")  # convert_pil_image_to_base64: PNG
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def request_body(model: str, instruction: str, img: Image.Image, elements: Sequence[P.Element],
                 max_tokens: int = 2048) -> bytes:
    """``ground_only_positive``'s request: the system text, then the prompt, the screenshot and its
    set-of-marks version in one user message."""
    body = {
        "model": model,
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": P.SYSTEM_PROMPT}]},
            {"role": "user", "content": [
                {"type": "text", "text": P.prompt(instruction, elements)},
                {"type": "image_url", "image_url": {"url": _data_url(img)}},
                {"type": "image_url", "image_url": {"url": _data_url(som_image(img, elements))}},
            ]},
        ],
        "temperature": 0,
        "max_tokens": max_tokens,
    }
    return json.dumps(body).encode()


def to_prediction(reply: str, elements: Sequence[P.Element]) -> Prediction:
    """The clicked element's centre, or a format error naming what the reply lacked."""
    idx = P.read_box_id(reply)
    if idx is None:
        return Prediction(raw=reply, format_error=True, note="no 'Click BBox ID' in the reply")
    if not 0 <= idx < len(elements):
        return Prediction(raw=reply, format_error=True,
                          note=f"box id {idx} is not one of the {len(elements)} parsed elements")
    box = elements[idx].box
    return Prediction(point=box.center, box=box, raw=reply)


class LlmChooser:
    """Sends one sample's parse to the server and reads the box id back; requests run in a pool."""

    def __init__(self, poster: ChatPoster, served_model: str, *, concurrency: int = 8,
                 max_tokens: int = 2048) -> None:
        self.poster, self.served_model, self.concurrency = poster, served_model, concurrency
        self.max_tokens = max_tokens
        self._pool: ThreadPoolExecutor | None = None

    @classmethod
    def from_options(cls, options: ModelOptions) -> LlmChooser:
        check_llm_options(options)
        assert options.api_base is not None and options.served_model is not None
        key: Secret = api_key_from_env(options.api_key_env, who=WHO, option="--uiground-api-key-env")
        poster = ChatPoster(api_base=options.api_base, secret=key, request_timeout=options.request_timeout,
                            max_retries=options.max_retries, api_key_env=options.api_key_env)
        return cls(poster, options.served_model, concurrency=options.concurrency,
                   max_tokens=options.max_new_tokens or 2048)

    def fingerprint(self) -> dict[str, Any]:
        return {"transport": "openai", "served_model": self.served_model, "api_base": public_url(
            self.poster.endpoint), "prompt": "eval/ss_pro_gpt4o_omniv2.py PROMPT_TEMPLATE_SEECLICK_PARSED_CONTENT_v1",
            "max_tokens": self.max_tokens, "temperature": 0}

    def choose(self, instruction: str, img: Image.Image, elements: Sequence[P.Element]) -> Prediction:
        body = request_body(self.served_model, instruction, img, elements, self.max_tokens)
        attempt = self.poster.request(instruction, body)
        if attempt.text is None:
            return Prediction(error=attempt.error)
        return to_prediction(self.poster.redact(attempt.text), elements)

    def submit(self, work: Callable[[], Prediction]) -> Future[Prediction]:
        """Run ``work`` (a whole sample: parse, request, read) in the pool; the future never raises."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="uiground-omniparser")

        def guarded() -> Prediction:
            try:
                return work()
            except Exception as exc:
                return Prediction.failed(exc)

        return self._pool.submit(guarded)

    def close(self) -> None:
        self.poster.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
