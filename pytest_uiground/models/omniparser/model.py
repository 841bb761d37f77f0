"""``--model omniparser``: OmniParser v2 (Microsoft) as its authors run it, the seed's baseline method.

Why it exists: OpenAdapt's grounding evaluation plan compares its current approach, OmniParser,
with UI-TARS under three cropping strategies, and curates its detection sets from OmniParser's
proposals. This adapter runs the real v2 interactive-region detector (an Ultralytics checkpoint,
the ``[omniparser]`` extra) with the authors' settings, on CPU or GPU, and answers:

* ``detect`` tasks (the seed's ``detect(image, click)``): the smallest parsed element containing
  the click (:func:`~.parse.element_at`), its box and centre;
* ``point`` tasks: with ``--uiground-omniparser-llm none`` the instruction is matched against the
  elements' texts and captions by the ``ocr`` model's matcher; with ``openai`` the authors'
  ScreenSpot-Pro prompt, the screenshot and its set-of-marks image go to the
  ``--uiground-api-base`` server, and the box id it answers is clicked at its centre.

The parse (``util/utils.py`` of microsoft/OmniParser): the detector at ``BOX_TRESHOLD`` 0.05 with
YOLO's NMS at IoU 0.1 and the checkpoint's own input size (``scale_img=False``); OCR lines from
RapidOCR (the PaddleOCR models, the authors' ``use_paddleocr`` path, texts scored above 0.5); the
merge :func:`~.parse.remove_overlap_new` at 0.7; captions (Florence-2 ``<CAPTION>``, 64x64 crops,
greedy, 20 new tokens) for the icons without text when ``--model-path`` holds ``icon_caption``.
Where this differs from the authors' run: docs/omniparser.md.

Importing this module imports neither ultralytics nor torch: they load when a model is built.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_uiground import extras
from pytest_uiground.models.base import ModelAdapter, ModelLoadError, ModelOptions
from pytest_uiground.models.offline.ocr import OcrGrounder, OcrItem, match_instruction
from pytest_uiground.models.omniparser import parse as P
from pytest_uiground.models.omniparser.weights import V2_DETECTOR_SHA256, Weights, check, resolve, sha256
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageError, image_digest
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample

if TYPE_CHECKING:
    from PIL import Image

#: the extra this model needs, and the modules it brings (checked at start-up: options.missing_extra)
EXTRA = ("omniparser", ("ultralytics", "torch"))
PARSER_VERSION: Final = 1  # bump when the parse or the answer rules change, so cached answers are not reused
CACHE_SIZE: Final = 16  # parsed screens kept per process (the samples of one screenshot are adjacent)
CAPTION_PROMPT: Final = "<CAPTION>"  # get_parsed_content_icon: Florence-2's caption task
CAPTION_SIZE: Final = 64  # get_parsed_content_icon: crops resized to 64x64 (cv2.resize)
CAPTION_TOKENS: Final = 20  # get_parsed_content_icon: max_new_tokens=20, num_beams=1, do_sample=False
CAPTION_BATCH: Final = 128
LLM_MAX_TOKENS: Final = 2048  # ground_only_positive: max_tokens=2048


def _quiet_ultralytics() -> None:
    """Ultralytics must never install packages, phone home or print per image inside a test run."""
    for var, value in (("YOLO_AUTOINSTALL", "False"), ("YOLO_OFFLINE", "True"), ("YOLO_VERBOSE", "False")):
        os.environ.setdefault(var, value)


def pillow_open_back() -> None:
    """Undo what importing ultralytics does to Pillow: ``ultralytics/utils/patches.py`` (8.4) replaces
    ``PIL.Image.open`` for the whole process with a wrapper that, on an image Pillow cannot identify, tries
    to install pi-heif and raises ModuleNotFoundError; every later broken screenshot of the run (any
    model's) would then fail with that instead of its own error. The wrapper keeps Pillow's own open as
    ``_image_open``; it is put back whenever the wrapper is in place, whoever imported ultralytics first."""
    from PIL import Image

    patches = sys.modules.get("ultralytics.utils.patches")
    own = getattr(patches, "_image_open", None)
    if own is not None and Image.open is getattr(patches, "image_open", None):
        Image.open = own


def _device(options: ModelOptions) -> str:
    if options.device != "auto":
        return options.device
    import torch

    return "cuda:0" if torch.cuda.is_available() else "cpu"


class Detector:
    """The interactive-region detector: ``(image) -> [(normalized box, confidence)]`` (``predict_yolo``)."""

    def __init__(self, path: Path, device: str = "cpu", *, threads: int | None = None) -> None:
        extras.require(*EXTRA, "model 'omniparser'")
        _quiet_ultralytics()
        import importlib

        import torch

        yolo: Any = importlib.import_module("ultralytics").YOLO
        pillow_open_back()
        if threads is not None:
            torch.set_num_threads(threads)
        t0 = time.perf_counter()
        try:
            self.model: Any = yolo(str(path))
        except Exception as exc:
            raise ModelLoadError(f"model 'omniparser': {path} is not an Ultralytics detector checkpoint "
                                 f"({type(exc).__name__}: {exc})") from exc
        self.load_s = time.perf_counter() - t0
        self.device, self.path = device, path
        self.imgsz = self.model.overrides.get("imgsz")

    def __call__(self, img: Image.Image) -> list[tuple[Box, float]]:
        # predict_yolo(scale_img=False): conf and iou only; the input size is the checkpoint's (1280 for v2).
        result = self.model.predict(source=img, conf=P.BOX_THRESHOLD, iou=P.NMS_IOU, device=self.device,
                                    verbose=False)[0]
        w, h = img.size
        out = []
        for (x0, y0, x1, y1), conf in zip(result.boxes.xyxy.tolist(), result.boxes.conf.tolist(), strict=True):
            out.append((Box(x0 / w, y0 / h, x1 / w, y1 / h), float(conf)))
        return out


class Captioner:
    """Florence-2 captions for icon crops (``get_parsed_content_icon``), from an ``icon_caption`` folder."""

    def __init__(self, folder: Path, device: str = "cpu") -> None:
        extras.require("hf", ("torch", "transformers"), f"model 'omniparser': the caption model in {folder}")
        from transformers import AutoModelForImageTextToText, AutoProcessor

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if "auto_map" in config:
            raise ModelLoadError(
                f"model 'omniparser': {folder} is Florence-2 remote code (its config has an auto_map), which "
                "transformers 5 does not load; convert it to the native Florence-2 format (with its processor) "
                "or leave icon_caption out of --model-path (icons then have no text)")
        try:
            self.processor: Any = AutoProcessor.from_pretrained(str(folder))  # type: ignore[no-untyped-call]
            model: Any = AutoModelForImageTextToText.from_pretrained(str(folder))
            self.model: Any = model.to(device).eval()
        except Exception as exc:
            raise ModelLoadError(f"model 'omniparser': the caption model in {folder} did not load "
                                 f"({type(exc).__name__}: {exc}); it needs a native Florence-2 checkpoint and "
                                 "its processor") from exc
        self.device, self.folder = device, folder

    def __call__(self, img: Image.Image, boxes: Sequence[Box]) -> list[str]:
        import numpy as np
        import torch
        from PIL import Image as PILImage

        pixels = np.asarray(img.convert("RGB"))
        height, width = pixels.shape[:2]
        crops = []
        for b in boxes:  # get_parsed_content_icon: int(coord * size) corners, cv2.resize to 64x64
            crop = pixels[int(b.y0 * height):int(b.y1 * height), int(b.x0 * width):int(b.x1 * width)]
            crops.append(PILImage.fromarray(crop).resize((CAPTION_SIZE, CAPTION_SIZE), PILImage.Resampling.BILINEAR))
        texts: list[str] = []
        for i in range(0, len(crops), CAPTION_BATCH):
            batch = crops[i:i + CAPTION_BATCH]
            inputs = self.processor(images=batch, text=[CAPTION_PROMPT] * len(batch), return_tensors="pt")
            with torch.inference_mode():
                ids = self.model.generate(input_ids=inputs["input_ids"].to(self.device),
                                          pixel_values=inputs["pixel_values"].to(self.device),
                                          max_new_tokens=CAPTION_TOKENS, num_beams=1, do_sample=False)
            texts += [t.strip() for t in self.processor.batch_decode(ids, skip_special_tokens=True)]
        return texts


class ScreenParser:
    """OmniParser's parse of a screenshot into elements, once per distinct image (an LRU by content).

    ``detector``, ``ocr`` and ``captioner`` are callables so tests can inject fakes; by default
    they are built from ``weights``. Thread-safe: the LLM path parses from request threads.
    """

    def __init__(self, detector: Callable[[Image.Image], list[tuple[Box, float]]],
                 ocr: Callable[[Image.Image], list[OcrItem]],
                 captioner: Callable[[Image.Image, Sequence[Box]], list[str]] | None = None,
                 cache_size: int = CACHE_SIZE) -> None:
        self.detector, self.ocr, self.captioner = detector, ocr, captioner
        self.cache_size = cache_size
        self._cache: OrderedDict[str, list[P.Element]] = OrderedDict()
        self._lock = threading.Lock()
        self.parse_s: list[float] = []  # seconds per parsed screen (what a rerun on the same screen skips)

    def __call__(self, img: Image.Image) -> list[P.Element]:
        key = image_digest(img)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
            t0 = time.perf_counter()
            elements = self.parse(img)
            self.parse_s.append(time.perf_counter() - t0)
            self._cache[key] = elements
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
            return elements

    def parse(self, img: Image.Image) -> list[P.Element]:
        """``get_som_labeled_img`` with ``check_ocr_box``'s lines: detect, read, merge, order, caption."""
        width, height = img.size
        rgb = img.convert("RGB")
        texts = [P.Element("text", it.box, it.text, "box_ocr_content_ocr", it.score) for it in self.ocr(rgb)
                 if it.score > P.OCR_TEXT_THRESHOLD and P.nonzero(it.box, width, height)]
        icons = [P.Element("icon", b, None, "box_yolo_content_yolo", conf) for b, conf in self.detector(rgb)
                 if P.nonzero(b, width, height)]
        elements = P.ordered(P.remove_overlap_new(icons, texts))
        if self.captioner is not None:
            bare = [i for i, e in enumerate(elements) if e.content is None]
            if bare:
                captions = self.captioner(rgb, [elements[i].box for i in bare])
                for i, text in zip(bare, captions, strict=True):
                    e = elements[i]
                    elements[i] = P.Element(e.type, e.box, text, e.source, e.score)
        return elements

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()


def build_parser(weights: Weights, device: str = "cpu", *, worker_id: str = "master") -> ScreenParser:
    """The real parser for ``weights``: the detector, RapidOCR (as the ``ocr`` model builds it) and,
    when the weights have ``icon_caption``, the caption model."""
    threads = 1 if worker_id != "master" else None  # xdist workers share the cores, as the ocr model does
    detector = Detector(weights.detector, device, threads=threads)
    ocr = OcrGrounder(ModelOptions(name="ocr", worker_id=worker_id))
    captioner = Captioner(weights.caption, device) if weights.caption is not None else None
    return ScreenParser(detector, ocr.read, captioner)


_PARSERS: dict[str, ScreenParser] = {}


def element_boxes(img: Image.Image, model_path: str | None = None) -> list[tuple[int, int, int, int]]:
    """The pixel boxes ``(x0, y0, x1, y1)`` of the elements OmniParser finds on ``img``.

    For code that needs a known-good element detector (a validation command, a curation tool)
    without building a model adapter: the parser for ``model_path`` (as ``--model-path`` reads
    it) is built once per process.
    """
    width, height = img.size
    return [(round(e.box.x0 * width), round(e.box.y0 * height), round(e.box.x1 * width), round(e.box.y1 * height))
            for e in elements(img, model_path)]


def elements(img: Image.Image, model_path: str | None = None) -> list[P.Element]:
    """The parsed elements of ``img`` (each has ``.text``, ``.box`` normalized, ``.score``, ``.element_type``):
    the annotator's ``--detector omniparser`` proposals."""
    key = model_path or ""
    parser = _PARSERS.get(key)
    if parser is None:
        options = ModelOptions(name="omniparser", path=model_path, device="auto")
        weights = resolve(options)
        check(weights)
        parser = _PARSERS[key] = build_parser(weights, _device(options))
    return parser(img)


def check_options(options: ModelOptions) -> None:
    """Start-up checks (``options.check_model``): the device, the server settings of the LLM path, and the
    weights (present, and the pinned detector where one is claimed: :func:`~.weights.check`), so a missing
    or damaged detector is one start-up error naming the fix rather than a setup error per test."""
    if options.device not in ("auto", "cpu") and not options.device.startswith("cuda"):
        raise ModelLoadError(f"model 'omniparser': --uiground-device {options.device!r} is not supported; use cpu, "
                             "cuda or auto")
    if options.omniparser_llm == "openai":
        from pytest_uiground.models.omniparser.llm import check_llm_options

        check_llm_options(options)
    if extras.missing(*EXTRA) is None:  # else the missing extra is the error (options.check_model), weights next
        check(resolve(options, download=_asked_for_hub(options)))


def _asked_for_hub(options: ModelOptions) -> bool:
    """Only a hub id or revision given on the command line is downloaded; the default detector comes from the
    fetch command or the Hugging Face cache, never from a download at start-up (where the hub cannot be reached,
    huggingface_hub retries for half a minute, a line per try, before the one error)."""
    return options.path is not None or options.revision is not None


class OmniParserModel(ModelAdapter):
    """OmniParser's parse, answering detect and point tasks (see the module docstring)."""

    name = "omniparser"

    def __init__(self, options: ModelOptions, *, parser: ScreenParser | None = None,
                 weights: Weights | None = None, chooser: Any = None) -> None:
        self.options = options
        self.weights = weights
        self._sha = sha256(weights.detector) if weights is not None else "injected"
        self.parser = parser or build_parser(self._require(weights), _device(options), worker_id=options.worker_id)
        self.chooser = chooser  # the LLM path (llm.LlmChooser), or None: the text matcher
        if self.chooser is not None:
            self.in_flight = self.chooser.concurrency
            self.preferred_batch_size = self.chooser.concurrency

    @staticmethod
    def _require(weights: Weights | None) -> Weights:
        if weights is None:
            raise ModelLoadError("model 'omniparser': no weights and no parser given")
        return weights

    def fingerprint(self) -> dict[str, Any]:
        from pytest_uiground.models.omniparser.weights import HUB_ID

        out: dict[str, Any] = {
            "model": self.name, "parser_version": PARSER_VERSION, "reference": HUB_ID,
            "detector_sha256": self._sha, "detector_pinned_v2": self._sha == V2_DETECTOR_SHA256,
            "box_threshold": P.BOX_THRESHOLD, "nms_iou": P.NMS_IOU,
            "merge_iou": P.MERGE_IOU, "ocr": "rapidocr_onnxruntime", "ocr_text_threshold": P.OCR_TEXT_THRESHOLD,
            "captions": None, "llm": None,
        }
        if self.weights is not None:
            out["weights"] = self.weights.source
            out["licenses"] = self.weights.licenses()
            if self.weights.caption is not None:
                out["captions"] = self.weights.caption.name
        if self.chooser is not None:
            out["llm"] = self.chooser.fingerprint()
        return out

    def cache_key(self, sample: Sample) -> dict[str, Any]:
        click = [sample.click.x, sample.click.y] if sample.click is not None else None
        return {"sample": sample.id, "image": sample.image.key, "task": sample.task,
                "instruction": sample.instruction, "click": click}

    def clear_cache(self) -> None:
        self.parser.clear()

    def close(self) -> None:
        if self.chooser is not None:
            self.chooser.close()

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        return [self.predict_one(s) for s in samples]

    def submit(self, sample: Sample) -> Any:
        if self.chooser is None:
            return super().submit(sample)
        return self.chooser.submit(lambda: self.predict_one(sample))

    def predict_one(self, sample: Sample) -> Prediction:
        """One sample; an unreadable image or a failed call fails only this sample."""
        t0 = time.perf_counter()
        if sample.task not in ("point", "detect"):
            return Prediction(error=f"model 'omniparser' answers only 'point' and 'detect' tasks, not {sample.task!r}")
        try:
            img = sample.image.load()
            found = self.parser(img)
        except ImageError as exc:
            return Prediction(error=str(exc))
        except Exception as exc:
            return Prediction.failed(exc, (time.perf_counter() - t0) * 1000)
        pred = self._answer(sample, img, found)
        pred.latency_ms = (time.perf_counter() - t0) * 1000
        return pred

    def _answer(self, sample: Sample, img: Image.Image, found: list[P.Element]) -> Prediction:
        n = len(found)
        if sample.task == "detect" and sample.click is not None:
            hit = P.element_at(found, sample.click)
            if hit is None:
                return Prediction(raw=f"omniparser: no element at the click ({n} elements)")
            return Prediction(box=hit.box, point=hit.box.center, raw=_describe(hit, n))
        if self.chooser is not None:
            return self.chooser.choose(sample.instruction, img, found)  # type: ignore[no-any-return]
        items = [OcrItem(e.content, e.score, e.box) for e in found if e.content]
        match = match_instruction(sample.instruction, items)
        if match is None:
            return Prediction(raw=f"omniparser: no element text matches ({n} elements)")
        return Prediction(point=match.box.center, box=match.box,
                          raw=f"omniparser: {match.text!r} box {[round(v, 4) for v in match.box]} ({n} elements)")


def _describe(e: P.Element, n: int) -> str:
    return f"omniparser: {e.type} {e.content!r} box {[round(v, 4) for v in e.box]} ({n} elements)"


def create(options: ModelOptions) -> OmniParserModel:
    """Factory for the ``pytest_uiground.models`` entry point ``omniparser``."""
    check_options(options)
    extras.require(*EXTRA, "--model omniparser")
    chooser = None
    if options.omniparser_llm == "openai":
        from pytest_uiground.models.omniparser.llm import LlmChooser

        chooser = LlmChooser.from_options(options)
    weights = resolve(options, download=_asked_for_hub(options))
    check(weights)
    return OmniParserModel(options, weights=weights, chooser=chooser)
