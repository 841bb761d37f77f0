"""The annotation checks of ``validate`` (the OpenAdapt plan's step 4), one implementation for both uses.

Why here: a suite built from hand annotations goes wrong in a few known ways that no test run
names (a box drawn on the wrong copy of a word, two lines for one element, an instruction that
fits two places, a slice key typed on some lines only). :func:`cheap` needs only the file and the
image headers, so the loader gives its findings as warnings at every collection; :func:`with_detector`
decodes each screenshot once and runs a detector (OCR by default) for the two checks that need one.
Each finding is one :class:`Flag`: the sample id, what is wrong and the fix, on one line.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pytest_uiground.benchmarks.grounding import format as fmt
from pytest_uiground.record.geometry import Box, iou
from pytest_uiground.record.sample import Sample

DUPLICATE_IOU: Final = 0.9
"""Two boxes on one screen overlapping this much are one element annotated twice."""
DETECTOR_IOU: Final = 0.3
"""A box that no detector proposal overlaps by at least this much is probably misplaced (issue 30)."""
_WORD: Final = re.compile(r"[^\W_]+", re.UNICODE)
_STOP: Final = frozenset("a an the to on in of and or for at by with open click tap press select go show me "
                         "my your this that it button icon menu".split())

Detector = Callable[[Any], Sequence[Any]]
"""``(PIL.Image) -> [objects with .text, .box (normalized Box), .score]``: annotate's detectors."""


@dataclass(frozen=True)
class Flag:
    """One finding: the sample, the screenshot and box to draw, what is wrong, the fix."""

    id: str
    image: str
    box: tuple[float, float, float, float] | None
    problem: str
    fix: str

    def line(self) -> str:
        return f"{self.id}: {self.problem}; fix: {self.fix}"


def _annotations(lines: Sequence[fmt.Line], samples: Sequence[Sample]) -> list[tuple[Sample, fmt.Annotation]]:
    """The lines that loaded as valid samples, with their sample (ids may have been made unique)."""
    out = []
    for line, sample in zip(lines, samples, strict=True):
        if sample.invalid is None:
            out.append((sample, fmt.parse(line)))
    return out


def invalid(path: Path, lines: Sequence[fmt.Line], samples: Sequence[Sample]) -> list[Flag]:
    """The lines that become invalid samples (missing images, degenerate boxes, no instruction...)."""
    out = []
    for line, s in zip(lines, samples, strict=True):
        if s.invalid is not None:
            image = (line.raw or {}).get("image")
            bbox: Any = (line.raw or {}).get("bbox")
            ok = isinstance(bbox, list) and len(bbox) == 4 and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in bbox)
            box = (float(bbox[0]), float(bbox[1]), float(bbox[2]), float(bbox[3])) if ok else None
            text = s.invalid.split(": ", 1)[-1]
            out.append(Flag(s.id, image if isinstance(image, str) else "", box,
                            text, f"edit line {line.number} of {path.name}"))
    return out


def cheap(path: Path, lines: Sequence[fmt.Line], samples: Sequence[Sample]) -> list[Flag]:
    """The checks that read no pixels: boxes partly outside the image, duplicate boxes, an instruction used
    twice on one screen, metadata keys present on only some lines."""
    pairs = _annotations(lines, samples)
    out: list[Flag] = []
    by_image: dict[str, list[tuple[Sample, fmt.Annotation]]] = defaultdict(list)
    for s, a in pairs:
        by_image[a.image].append((s, a))
        if a.task != "refusal" and s.target.box is not None:
            w, h = s.image.dimensions()
            x1, y1, x2, y2 = a.bbox
            if x1 < 0 or y1 < 0 or x2 > w or y2 > h:
                out.append(Flag(s.id, a.image, a.bbox, f"{fmt.box_text(a.bbox)} reaches outside the {w}x{h} px "
                                f"image (clipped to it)", f"redraw the box inside the screenshot (line {a.number})"))
    for image, group in by_image.items():
        seen: dict[str, str] = {}
        for i, (s, a) in enumerate(group):
            key = " ".join(a.instruction.lower().split())
            if key and a.task != "detect":
                if key in seen:
                    out.append(Flag(s.id, image, a.bbox, f"the instruction {a.instruction!r} is also sample "
                                    f"{seen[key]}'s on {image}", "make each instruction name one element "
                                    "(\"the Insert tab in the ribbon\"), or remove the duplicate line"))
                else:
                    seen[key] = s.id
            for t, b in group[:i]:
                if a.task != "refusal" and b.task != "refusal" and t.target.box is not None and \
                        s.target.box is not None and iou(s.target.box, t.target.box) >= DUPLICATE_IOU:
                    out.append(Flag(s.id, image, a.bbox, f"its {fmt.box_text(a.bbox)} duplicates sample {t.id}'s "
                                    f"{fmt.box_text(b.bbox)}", "keep one line per element (remove one, or give "
                                    "them different tasks)"))
                    break
    if pairs:
        counts: dict[str, list[str]] = defaultdict(list)
        for s, a in pairs:
            for k in a.meta:
                counts[k].append(s.id)
        for key, having in sorted(counts.items()):
            if len(having) < len(pairs):
                lacking = [s.id for s, a in pairs if key not in a.meta]
                shown = ", ".join(lacking[:5]) + (f" (+{len(lacking) - 5} more)" if len(lacking) > 5 else "")
                first = next(a.image for s, a in pairs if s.id == lacking[0])
                out.append(Flag(lacking[0], first, None,
                    f"metadata key {key!r} is on {len(having)} of {len(pairs)} samples, missing on {shown}",
                    f"give every line a {key!r} value (a slice over some samples compares unlike sets), or "
                    "remove the key"))
    return out


def words(text: str) -> list[str]:
    return list(_WORD.findall(text.lower()))


def _matches(instruction: str, proposals: Sequence[Any]) -> list[Any]:
    """The proposals carrying the instruction's most specific words: the longest proposal text whose
    content words all occur in the instruction, and every other proposal with that same text."""
    said = set(words(instruction))
    best: tuple[int, str] | None = None
    for p in proposals:
        ws = [w for w in words(str(getattr(p, "text", ""))) if w not in _STOP]
        if ws and all(w in said for w in ws) and max(len(w) for w in ws) >= 2:
            key = (len(ws), " ".join(ws))
            best = key if best is None or key > best else best
    if best is None:
        return []
    return [p for p in proposals if " ".join(w for w in words(str(getattr(p, "text", ""))) if w not in _STOP)
            == best[1]]


def with_detector(lines: Sequence[fmt.Line], samples: Sequence[Sample], detector: Detector,
                  detector_name: str) -> list[Flag]:
    """The checks that need a detector's proposals on each screen (decoded once): an instruction whose words
    match several proposals (ambiguous for a model), and a box no proposal overlaps (IoU < 0.3)."""
    pairs = _annotations(lines, samples)
    by_image: dict[str, list[tuple[Sample, fmt.Annotation]]] = defaultdict(list)
    for s, a in pairs:
        by_image[a.image].append((s, a))
    out: list[Flag] = []
    for image, group in by_image.items():
        img = group[0][0].image.load()
        proposals = [p for p in detector(img) if isinstance(getattr(p, "box", None), Box)]
        w, h = img.size
        for s, a in group:
            if a.task == "refusal" or s.target.box is None:
                continue
            hits = _matches(a.instruction, proposals) if a.task != "detect" else []
            apart = [p for i, p in enumerate(hits) if all(iou(p.box, q.box) < 0.5 for q in hits[:i])]
            if len(apart) >= 2:
                where = ", ".join(fmt.box_text(_px(p.box, w, h)) for p in apart[:3])
                out.append(Flag(s.id, image, a.bbox, f"the instruction {a.instruction!r} matches {len(apart)} "
                                f"{detector_name} boxes reading {apart[0].text!r} on its screen ({where})",
                                "say which one, as a user would (\"the Insert tab at the top\")"))
            best = max((iou(s.target.box, p.box) for p in proposals), default=0.0)
            if best < DETECTOR_IOU:
                out.append(Flag(s.id, image, a.bbox, f"no {detector_name} proposal overlaps its {fmt.box_text(a.bbox)} "
                                f"(best IoU {best:.2f} < {DETECTOR_IOU})", "check that the box is on the element "
                                "(an icon without text is expected here with the ocr detector)"))
    return out


def _px(box: Box, w: int, h: int) -> tuple[float, float, float, float]:
    return (round(box.x0 * w), round(box.y0 * h), round(box.x1 * w), round(box.y1 * h))
