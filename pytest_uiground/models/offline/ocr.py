"""The offline default model ``ocr``: read the screen, click the text the instruction names.

Why it exists: a grounding suite needs a model that runs anywhere, with no download and
no GPU, so the plugin can be demonstrated and its own tests can run end to end. RapidOCR
(``rapidocr_onnxruntime``) ships its ONNX detection and recognition models inside its
wheel, so this model works fully offline. It is a real baseline, not a stub: it finds
elements by visible text and, by construction, cannot find icon-only targets.

Two parts, kept apart so the matching logic is unit-testable without OCR:

* :func:`match_instruction` -- a pure function from an instruction and OCR items to the
  best item (or ``None``).
* :class:`OcrGrounder` -- runs OCR once per distinct image (an LRU keyed by the image's
  content digest, because several samples usually share one screenshot) and turns the
  match into a :class:`~pytest_uiground.record.prediction.Prediction`.

Importing this module imports neither rapidocr nor numpy: the engine is imported when a
model is built, so collection and ``--help`` stay cheap.
"""

from __future__ import annotations

import difflib
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from pytest_uiground.models.base import ModelAdapter, ModelOptions
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageError, image_digest
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample

if TYPE_CHECKING:
    from PIL import Image

MATCHER_VERSION: Final = 1  # bump when matching changes, so cached results are not reused
DEFAULT_THRESHOLD: Final = 0.75
DEFAULT_CACHE_SIZE: Final = 64
MIN_TEXT_CHARS: Final = 2  # single glyphs (an "X" icon read as a letter) are noise
# Texts this short need a stricter ratio: one wrong letter in four is still a 0.75 ratio
# but usually a different word (an icon misread as "puas" must not match "plus").
SHORT_TEXT_CHARS: Final = 4
SHORT_TEXT_THRESHOLD: Final = 0.85

# Words of instruction templates and widget names: they say *how* to act, not *what*,
# so a window made only of them must never match (an OCR'd "Select" would otherwise win
# every "Select the ... checkbox" instruction).
GENERIC_WORDS: Final[frozenset[str]] = frozenset(
    {
        "a", "an", "the", "on", "in", "at", "of", "to", "with", "and", "or", "for", "this", "that",
        "click", "tap", "press", "select", "choose", "pick", "hit", "open", "check", "tick", "toggle",
        "button", "link", "field", "input", "text", "box", "textbox", "checkbox", "label", "icon",
        "option", "item", "placeholder", "please", "then", "here",
    }
)  # fmt: skip

_PUNCT_RE: Final = re.compile(r"[^\w\s]+")
_SPACE_RE: Final = re.compile(r"\s+")
# Quoted spans: "...", “...”, ‘...’, and '...' only where the quotes are not inside a word
# (so the apostrophe in "Don't save" does not open a quote).
_QUOTED_RE: Final = re.compile(r'"([^"]+)"|“([^”]+)”|‘([^’]+)’|(?<!\w)\'([^\']+)\'(?!\w)')


@dataclass(frozen=True, slots=True)
class OcrItem:
    """One line of text found by OCR: the text, its confidence and its normalized box."""

    text: str
    score: float
    box: Box


def normalize_text(text: str) -> str:
    """Casefold, turn punctuation and quotes into spaces, collapse whitespace.

    Applied to both sides so that "Auto-save", "auto save" and "AUTO SAVE" compare equal
    and OCR's punctuation slips (a stray '.' or quote) do not cost a match.
    """
    return _SPACE_RE.sub(" ", _PUNCT_RE.sub(" ", text.casefold())).strip()


def _quoted_spans(instruction: str) -> list[str]:
    spans = []
    for m in _QUOTED_RE.finditer(instruction):
        span = normalize_text(next(g for g in m.groups() if g is not None))
        if span:
            spans.append(span)
    return spans


def _best_window_ratio(item_text: str, tokens: Sequence[str], threshold: float) -> tuple[float, str]:
    """Best similarity of ``item_text`` to any window of ``tokens`` of about its length.

    Windows have the OCR text's token count +-1, so one OCR split or merge still
    matches; windows made only of generic words are skipped. Returns (ratio, window).
    """
    n = item_text.count(" ") + 1
    best, best_window = 0.0, ""
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(item_text)
    for size in range(max(1, n - 1), n + 2):
        for start in range(0, len(tokens) - size + 1):
            words = tokens[start : start + size]
            if all(w in GENERIC_WORDS for w in words):
                continue
            window = " ".join(words)
            matcher.set_seq1(window)
            # real_quick_ratio/quick_ratio are cheap upper bounds of ratio().
            if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
                continue
            ratio = matcher.ratio()
            if ratio > best:
                best, best_window = ratio, window
    return best, best_window


def match_instruction(
    instruction: str, ocr_items: Sequence[OcrItem], *, threshold: float = DEFAULT_THRESHOLD
) -> OcrItem | None:
    """The OCR item the instruction most likely refers to, or ``None``.

    Quoted text in the instruction, when present, is the only thing searched for (the
    author said exactly what to click); otherwise every window of the instruction's
    words is. Each OCR text is compared with difflib's ratio (tolerates one misread
    letter) and must reach ``threshold`` (0.85 at least for texts of four characters or
    fewer, where one wrong letter already makes another word). Ties go to the longer text (so "Save as" beats
    "Save" when both match fully), then to the higher OCR confidence. OCR texts that
    are shorter than two characters or made only of generic words never match.
    """
    strict = max(threshold, SHORT_TEXT_THRESHOLD)
    quoted = _quoted_spans(instruction)
    tokens = " ".join(quoted).split() if quoted else normalize_text(instruction).split()
    if not tokens:
        return None
    best: OcrItem | None = None
    best_key: tuple[float, int, float] = (0.0, 0, 0.0)
    for item in ocr_items:
        text = normalize_text(item.text)
        if len(text.replace(" ", "")) < MIN_TEXT_CHARS or all(w in GENERIC_WORDS for w in text.split()):
            continue
        if quoted:
            # A quoted span is compared whole, and by its windows in case OCR split it.
            ratio = max(difflib.SequenceMatcher(None, text, span, autojunk=False).ratio() for span in quoted)
            if ratio < threshold:
                ratio, _ = _best_window_ratio(text, tokens, threshold)
        else:
            ratio, _ = _best_window_ratio(text, tokens, threshold)
        if ratio < (strict if len(text) <= SHORT_TEXT_CHARS else threshold):
            continue
        key = (round(ratio, 6), len(text), item.score)
        if key > best_key:
            best, best_key = item, key
    return best


def polygon_to_box(points: Sequence[Sequence[float]], width: int, height: int) -> Box:
    """Axis-aligned normalized box around an OCR polygon, clipped to the image."""
    xs = [float(p[0]) for p in points]
    ys = [float(p[1]) for p in points]

    def clip(v: float) -> float:
        return min(1.0, max(0.0, v))

    return Box(clip(min(xs) / width), clip(min(ys) / height), clip(max(xs) / width), clip(max(ys) / height))


class OcrEngine(Protocol):
    """What we call on ``RapidOCR``: ``engine(image) -> (result | None, elapse)``."""

    def __call__(self, img_content: Any) -> tuple[Any, Any]: ...


class OcrGrounder(ModelAdapter):
    """Text-matching grounder over RapidOCR, one instance per pytest process.

    ``engine`` may be injected (tests count OCR calls or fake it); by default RapidOCR
    is built here, with one intra-op thread under xdist so parallel workers do not
    oversubscribe the cores.
    """

    name = "ocr"

    def __init__(
        self,
        options: ModelOptions | None = None,
        *,
        engine: OcrEngine | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        cache_size: int = DEFAULT_CACHE_SIZE,
    ) -> None:
        options = options or ModelOptions(name="ocr")
        if options.device not in ("auto", "cpu"):
            raise ValueError(
                f"model 'ocr': --uiground-device {options.device!r} is not supported; the ocr model runs "
                "on the CPU only (use --uiground-device cpu or leave the default, auto)"
            )
        if options.path is not None:
            raise ValueError(
                f"model 'ocr': --model-path {options.path!r} is not used; the ocr model ships its "
                "weights inside the rapidocr-onnxruntime wheel (leave --model-path unset)"
            )
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"model 'ocr': threshold {threshold!r} must be in (0, 1]")
        if cache_size < 1:
            raise ValueError(f"model 'ocr': cache_size {cache_size!r} must be at least 1")
        self.threshold = threshold
        self.cache_size = cache_size
        self.engine_version = _rapidocr_version()
        if engine is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as exc:
                raise ImportError(
                    "model 'ocr' needs rapidocr-onnxruntime; install it with "
                    "`pip install rapidocr-onnxruntime` (it bundles its ONNX models)"
                ) from exc
            # No angle classifier: UI text is never upside down, and it costs ~10% per image.
            kwargs: dict[str, Any] = {"use_cls": False}
            if options.worker_id != "master":
                kwargs["intra_op_num_threads"] = 1
            engine = RapidOCR(**kwargs)
        self._engine: OcrEngine = engine
        self._cache: OrderedDict[str, list[OcrItem]] = OrderedDict()

    def fingerprint(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "engine": "rapidocr_onnxruntime",
            "engine_version": self.engine_version,
            "engine_options": {"use_cls": False},
            "matcher": {
                "version": MATCHER_VERSION,
                "threshold": self.threshold,
                "min_text_chars": MIN_TEXT_CHARS,
                "short_text": [SHORT_TEXT_CHARS, SHORT_TEXT_THRESHOLD],
                "generic_words": len(GENERIC_WORDS),
            },
        }

    def cache_key(self, sample: Sample) -> dict[str, Any]:
        """What determines an answer besides the fingerprint (engine and matcher settings): the
        image (the harness adds its content hash), the instruction, the task and the click."""
        click = [sample.click.x, sample.click.y] if sample.click is not None else None
        return {"sample": sample.id, "image": sample.image.key, "task": sample.task,
                "instruction": sample.instruction, "click": click}

    def clear_cache(self) -> None:
        """Forget OCR results, e.g. before timing predictions that should include OCR."""
        self._cache.clear()

    def read(self, img: Image.Image) -> list[OcrItem]:
        """OCR items of an image; computed once per distinct image content (LRU)."""
        key = image_digest(img)
        items = self._cache.get(key)
        if items is not None:
            self._cache.move_to_end(key)
            return items
        result, _elapse = self._engine(img)
        width, height = img.size
        items = [
            OcrItem(str(text), float(score), polygon_to_box(points, width, height))
            for points, text, score in (result or [])
        ]
        self._cache[key] = items
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return items

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        """One prediction per sample. An unreadable image fails only its own sample.

        OCR can only locate text: on a verdict task (pass/fail with a point) it still
        grounds the statement and gives no verdict, which scores the verdict as wrong;
        option and answer tasks it cannot do at all.
        """
        out: list[Prediction] = []
        for sample in samples:
            if sample.task not in ("point", "verdict", "detect"):
                out.append(Prediction(error=f"model 'ocr' answers only 'point', 'verdict' and 'detect' tasks, not "
                                            f"{sample.task!r}"))
                continue
            try:
                img = sample.image.load()
            except ImageError as exc:
                out.append(Prediction(error=str(exc)))
                continue
            if sample.task == "detect" and sample.click is not None:
                out.append(detect_at(self.read(img), sample.click))
                continue
            match = match_instruction(sample.instruction, self.read(img), threshold=self.threshold)
            if match is None:
                out.append(Prediction(point=None, raw="ocr:no match", format_error=False))
                continue
            centre = match.box.center
            raw = f"ocr:{match.text!r}@({centre.x:.2f},{centre.y:.2f})"
            out.append(Prediction(point=centre, box=match.box, raw=raw))
        return out


#: How far (fraction of the image side) a click may fall outside a text box and still select it.
CLICK_SLACK = 0.005


def detect_at(items: Sequence[OcrItem], click: Point) -> Prediction:
    """The text line under a click: the box containing it (smallest first), or nothing.

    A click a hair outside a tight OCR box still selects it (:data:`CLICK_SLACK`); a
    click on an icon finds no text and so no box — OCR cannot detect icons.
    """
    def grown(b: Box) -> Box:
        return Box(b.x0 - CLICK_SLACK, b.y0 - CLICK_SLACK, b.x1 + CLICK_SLACK, b.y1 + CLICK_SLACK)

    under = [it for it in items if grown(it.box).contains(click)]
    if not under:
        return Prediction(raw="ocr:no text at the click")
    best = min(under, key=lambda it: (it.box.x1 - it.box.x0) * (it.box.y1 - it.box.y0))
    raw = f"ocr:{best.text!r} box {[round(v, 4) for v in best.box]}"
    return Prediction(box=best.box, point=best.box.center, raw=raw)


def _rapidocr_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rapidocr_onnxruntime")
    except PackageNotFoundError:
        return "not installed"


def create(options: ModelOptions) -> OcrGrounder:
    """Factory for the ``pytest_uiground.models`` entry point ``ocr``."""
    return OcrGrounder(options)
