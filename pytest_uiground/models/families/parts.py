"""The parts a :class:`~pytest_uiground.models.families.Family` is built from: its prompts
(:class:`Prompt`, and :data:`SHARED_PROMPTS` for the task kinds a family leaves out), its image
resize rule (:class:`Resize`, Qwen's :func:`smart_resize`), its generation defaults
(:class:`Generation`) and the coordinate frames it may answer in.

Plain records with no import from the rest of the package, so that a module needing only the
resize arithmetic (the OpenAI wire) or a prompt reads them without the registry. ``Family``
itself stays in the package with the registry: it reads answers with
:mod:`.reading` and the task kinds of :mod:`pytest_uiground.record.sample`, and one more module
between the registry and those would lengthen the import chain from the plugin past the
8 modules ``tests/test_layout.py`` allows. Everything here is re-exported by the package.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FRAMES = ("norm1000", "norm1", "pixels-resized", "pixels-original", "percent", "loc-bins")
"""What the numbers a family writes are relative to: 0..1000 of the image, 0..1, pixels of the
image as the family's resize rule resizes it, pixels of the original image, percent, Florence-2
``<loc_N>`` bins."""


# --- resize --------------------------------------------------------------------------

QWEN25_MIN_PIXELS = 4 * 28 * 28
QWEN25_MAX_PIXELS = 16384 * 28 * 28
"""The Qwen2.5-VL processor's defaults (preprocessor_config.json min_pixels 3136, max_pixels
12845056): the resize of the ``qwen-vl`` family, of an OpenAI-compatible server left at its
defaults, and of :func:`smart_resize` when no limits are given."""


def smart_resize(height: int, width: int, *, factor: int = 28, min_pixels: int = QWEN25_MIN_PIXELS,
                 max_pixels: int = QWEN25_MAX_PIXELS) -> tuple[int, int]:
    """Qwen2-VL/Qwen2.5-VL's resize rule, as (height, width) like the original.

    Both sides are rounded to a multiple of ``factor`` (Python's ``round``, so halves go
    to even, exactly as transformers does); if the area then exceeds ``max_pixels``
    (or falls below ``min_pixels``) the image is scaled by the square root of the area
    ratio and the sides floored (ceiled) to the factor. Written from the rule in
    qwen-vl-utils ``vision_process.py: smart_resize`` rather than imported, because
    importing transformers' image processor costs seconds and a GPU-less client must not
    need it; tests compare it with hand-computed values.
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
class Resize:
    """A family's image resize (the Qwen ``smart_resize`` rule) and where its numbers come from.

    Pixel families answer in pixels of the image *as resized*; converting back needs the
    same numbers the official code used, which differ per family (UI-TARS, Holo1.5, MAI-UI,
    GTA1 each set their own), so they are part of the family, never a library default.
    """

    factor: int
    min_pixels: int
    max_pixels: int
    source: str = ""
    resample: str = "bicubic"
    """The PIL filter a client that resizes before sending uses (``Image.resize``'s default is
    bicubic; Holo1.5's cookbook passes LANCZOS)."""

    def apply(self, size: tuple[int, int]) -> tuple[int, int]:
        """The (width, height) an image of ``size`` (width, height) is resized to."""
        w, h = size
        rh, rw = smart_resize(h, w, factor=self.factor, min_pixels=self.min_pixels, max_pixels=self.max_pixels)
        return rw, rh


# --- prompts and generation ---------------------------------------------------------


IMAGE_SLOT = "<|uiground-image|>"
"""Where the image goes in a user text whose prompt has a :attr:`Prompt.lead` (text, then the image,
then more text: Gelato's ``run_grounding_eval.py``); the adapters split the text there into parts."""


def split_at_image(text: str) -> tuple[str, str] | None:
    """``(before, after)`` the :data:`IMAGE_SLOT` of a user text, or None where it has none."""
    if IMAGE_SLOT not in text:
        return None
    before, after = text.split(IMAGE_SLOT, 1)
    return before, after


@dataclass(frozen=True)
class Prompt:
    """One task kind's prompt: ``user`` holds ``{instruction}`` (replaced literally, so JSON
    braces in the text need no escaping; a ``{width}``/``{height}`` in ``system`` is the
    model-input size for families such as GTA1 that state it). ``image_first``: the image
    part comes before the text in the user message. ``lowercase``/``strip`` transform the
    rendered text as TinyClick's own code does."""

    user: str
    source: str
    system: str | None = None
    image_first: bool = True
    strip: bool = False
    lowercase: bool = False
    drop_final_period: bool = False
    """Remove one trailing ``.`` from the instruction first (UI-Venus' eval script does)."""
    lead: str = ""
    """Text in its own part *before* the image, ``user`` after it (Gelato's user message is text,
    image, text); rendered as ``lead + IMAGE_SLOT + user``, which the adapters split."""

    def text(self, instruction: str) -> str:
        """The user text for ``instruction``."""
        if self.strip:
            instruction = instruction.strip()
        if self.drop_final_period and instruction.endswith("."):
            instruction = instruction[:-1]
        out = self.user.replace("{instruction}", instruction)
        out = out.lower() if self.lowercase else out
        return f"{self.lead}{IMAGE_SLOT}{out}" if self.lead else out

    def system_text(self, input_size: tuple[int, int] | None = None) -> str | None:
        """The system text, with the model-input size filled in where the family states it."""
        if self.system is None or input_size is None:
            return self.system
        return self.system.replace("{width}", str(input_size[0])).replace("{height}", str(input_size[1]))


@dataclass(frozen=True)
class Generation:
    """Generation defaults of the family's official inference: ``dtype`` (``"auto"``: the
    checkpoint's), ``max_new_tokens`` (``None``: the checkpoint's generation_config decides),
    explicit ``decoding`` settings for ``generate``; ``--uiground-max-new-tokens`` and
    ``--uiground-dtype`` replace them."""

    max_new_tokens: int | None
    source: str
    dtype: str = "auto"
    decoding: Mapping[str, Any] = field(default_factory=lambda: {"do_sample": False, "num_beams": 1})


def _shared(user: str, source: str) -> Prompt:
    return Prompt(user=user, source=source)


SHARED_PROMPTS: Mapping[str, Prompt] = {
    # the common multiple-choice suffix of VLM evaluation kits; the instruction holds the options
    "option": _shared("{instruction}\nAnswer with the option's letter from the given choices directly.",
                      "project wording (VLM evaluation kits' multiple-choice suffix)"),
    # a short free-text answer, which normalized exact match can score
    "answer": _shared("{instruction}\nAnswer the question briefly, using a single word or phrase.",
                      "project wording"),
    # free-text questions (driving VQA): the question as asked; a judge reads the answer
    "vqa": _shared("{instruction}", "the question as asked"),
}
"""Task kinds a family may leave out: these prompts apply to every family that does."""
