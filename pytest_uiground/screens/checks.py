"""The annotation checks of ``validate`` (the OpenAdapt plan's step 4), one implementation for both uses.

Why here: a suite built from hand annotations goes wrong in a few known ways that no test run
names (a box drawn on the wrong copy of a word, two lines for one element, an instruction that
fits two places, a slice key typed on some lines only). :func:`cheap` needs only the file and the
image headers, so the loader gives its findings as warnings at every collection; :func:`with_detector`
decodes each screenshot once and runs a detector (OCR by default) for the two checks that need one.
Each finding is one :class:`Flag`: the sample id, what is wrong and the fix, on one line.

Two severities, so ``validate`` can be a CI step (issue 39): an **error** is a line the suite cannot
be trusted with (it fails to load, its box leaves the image, one instruction names two targets on one
screen, its screenshot cannot be decoded); **advice** is a guess from a heuristic (no proposal overlaps
the box, an instruction several proposals answer, a duplicate box, a slice key on some lines only),
shown and drawn but failing only under ``--strict``. The ambiguity rule reads the instruction as a
user would (:func:`names`): a proposal is what it names when it is quoted, is a phrase of two or more
words in it, or covers most of its content words, never because one word is shared ("Send the chat
message" does not name a tab reading "Chat").
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pytest_uiground.record.geometry import Box, iou
from pytest_uiground.record.sample import Sample
from pytest_uiground.screens import format as fmt

DUPLICATE_IOU: Final = 0.9
"""Two boxes on one screen overlapping this much are one element annotated twice."""
DETECTOR_IOU: Final = 0.3
"""A box that no detector proposal overlaps by at least this much is probably misplaced (issue 30)."""
MAX_DEPTH: Final = 32
"""An annotation line is an object holding lists (a box, a polygon): deeper nesting is refused as that line's error."""
ERROR: Final = "error"
ADVICE: Final = "advice"
_WORD: Final = re.compile(r"[^\W_]+", re.UNICODE)
_STOP: Final = frozenset("a an the to on in of and or for at by with open click tap press select go show me "
                         "my your this that it button icon menu".split())
_QUOTED: Final = re.compile(r"\"([^\"]+)\"|(?<![^\s(])'([^']+)'(?![^\s.,;:!?)])|\u201c([^\u201d]+)\u201d|"
                            r"\u2018([^\u2019]+)\u2019")
"""A quoted text in an instruction ('Click "Chat"'); a single quote opens after a space and closes before one
(or punctuation), so the apostrophe of "Google's" opens nothing."""
TEXTLESS: Final = frozenset({"icon"})
"""Element types an OCR detector cannot propose (no text): the overlap check skips them under ``ocr``."""

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
    severity: str = ERROR
    """:data:`ERROR` (``validate`` exits 1) or :data:`ADVICE` (exits 1 only under ``--strict``)."""

    def line(self) -> str:
        return f"{self.id}: {self.problem}; fix: {self.fix}"


def read(path: Path) -> list[fmt.Line]:
    """:func:`format.read`, except that a line nested past the interpreter's recursion limit (``json.loads``
    raises RecursionError on 100,000 ``[``) or holding an integer past Python's digit limit (ValueError)
    becomes that one line's problem instead of ending the command.
    ``format.read`` is tried first; the line-by-line fallback reads JSON lines only (a CSV cell that deep
    is reported for the whole file, naming it). A line that parses but nests deeper than :data:`MAX_DEPTH`
    (a Python whose ``json.loads`` goes deeper) is refused the same way, before anything walks it."""
    try:
        return [_shallow(line) for line in fmt.read(path)]
    except fmt.FormatError:
        raise
    except (RecursionError, ValueError):  # ValueError: an integer past Python's 4,300-digit limit
        pass
    if path.suffix.lower() == ".csv":
        raise fmt.FormatError(f"{path}: a cell holds JSON nested too deeply to read (past Python's recursion "
                              "limit); a polygon is a flat list [x1, y1, x2, y2, ...]")
    text = path.read_text(encoding="utf-8-sig")
    out: list[fmt.Line] = []
    for number, raw_line in enumerate(text.split("\n"), start=1):
        line = raw_line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        out.append(_one_line(number, line))
    return out


_TOO_DEEP: Final = (f"holds JSON nested deeper than {MAX_DEPTH} levels (deeper than Python reads safely); each line "
                    "is one flat object such as {\"image\": \"a.png\", \"instruction\": \"Open the menu\", \"bbox\": "
                    "[10, 20, 60, 44]}")


def _one_line(number: int, line: str) -> fmt.Line:
    try:
        raw = json.loads(line)
    except RecursionError:
        return fmt.Line(number, None, _TOO_DEEP)
    except json.JSONDecodeError as exc:
        return fmt.Line(number, None, f"not a JSON object ({exc.msg} at column {exc.colno})")
    except ValueError as exc:
        return fmt.Line(number, None, f"cannot be read ({exc}); numbers are pixels, a few digits long")
    if not isinstance(raw, dict):
        return fmt.Line(number, None, f"is a JSON {type(raw).__name__}, not an object")
    return _shallow(fmt.Line(number, raw))


def _shallow(line: fmt.Line) -> fmt.Line:
    """``line``, or the same line as a problem when its object nests deeper than :data:`MAX_DEPTH` (walked
    without recursion, so the walk itself cannot overflow)."""
    stack: list[tuple[Any, int]] = [(line.raw, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                return fmt.Line(line.number, None, _TOO_DEEP)
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return line


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
    """The checks that read no pixels. Errors: a box partly outside the image, one instruction used twice on
    one screen (for two targets, or the same line twice). Advice: duplicate boxes (two instructions for one
    element may be meant), metadata keys present on only some lines."""
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
        seen: dict[str, tuple[Sample, fmt.Annotation]] = {}
        for i, (s, a) in enumerate(group):
            key = " ".join(a.instruction.lower().split())
            if key and a.task != "detect":
                if key in seen:
                    t, b = seen[key]
                    same = _same_target(s, t)
                    out.append(Flag(s.id, image, a.bbox, f"the instruction {a.instruction!r} is also sample {t.id}'s "
                                    f"on {image}" + (" (the same line twice)" if same else
                                                     f" ({fmt.box_text(b.bbox)}): one instruction, two targets"),
                                    "remove the duplicate line" if same else "make each instruction name one "
                                    "element (\"the Insert tab in the ribbon\"), or remove the wrong line"))
                else:
                    seen[key] = (s, a)
            for t, b in group[:i]:
                if a.task != "refusal" and b.task != "refusal" and _same_target(s, t):
                    out.append(Flag(s.id, image, a.bbox, f"its {fmt.box_text(a.bbox)} duplicates sample {t.id}'s "
                                    f"{fmt.box_text(b.bbox)}", "keep one line per element unless both wordings "
                                    "are meant (remove one, or give them different tasks)", ADVICE))
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
                    "remove the key", ADVICE))
    return out


def _same_target(s: Sample, t: Sample) -> bool:
    """Two samples whose boxes overlap by :data:`DUPLICATE_IOU` or more (refusals have no box)."""
    return s.target.box is not None and t.target.box is not None and iou(s.target.box, t.target.box) >= DUPLICATE_IOU


def words(text: str) -> list[str]:
    return list(_WORD.findall(text.lower()))


def content(text: str) -> list[str]:
    """The words of ``text`` that say which element (verbs like "open", articles, "button" left out)."""
    return [w for w in words(text) if w not in _STOP]


def names(instruction: str, text: str) -> bool:
    """Whether ``instruction`` names an element reading ``text``, as a user would read it: every content
    word of the text is in the instruction, and the text is quoted there ('Click "Chat"'), or is a phrase
    of two or more content words in it ("Open the Page Layout tab" and "Page Layout"), or covers most (more
    than half) of the instruction's content words ("Open Chat"; "Open the Chat tab" is half: a tab, not any
    "Chat"). One shared word is not naming: "Send the chat message" does not name a box reading "Chat"."""
    said, ws = words(instruction), content(text)
    if not ws or max(len(w) for w in ws) < 2 or any(w not in said for w in ws):
        return False
    for m in _QUOTED.finditer(instruction):
        if content(next(g for g in m.groups() if g is not None)) == ws:
            return True
    own = content(instruction)
    if len(ws) >= 2 and any(own[i:i + len(ws)] == ws for i in range(len(own) - len(ws) + 1)):
        return True
    return 2 * len(set(ws) & set(own)) > len(set(own))


def _matches(instruction: str, proposals: Sequence[Any]) -> list[Any]:
    """The proposals the instruction names (:func:`names`) with its most specific text: the named proposal
    with the most content words, and every other proposal reading the same."""
    best: tuple[int, str] | None = None
    for p in proposals:
        text = str(getattr(p, "text", "") or "")
        if names(instruction, text):
            ws = content(text)
            key = (len(ws), " ".join(ws))
            best = key if best is None or key > best else best
    if best is None:
        return []
    return [p for p in proposals if " ".join(content(str(getattr(p, "text", "") or ""))) == best[1]]


def overlap_checked(annotation: fmt.Annotation, detector_name: str) -> bool:
    """Whether the overlap check applies: not to a :data:`TEXTLESS` element under the ``ocr`` detector,
    which proposes text only (every such icon would be advice, and advice nobody can act on trains
    people to skip the rest; ``--detector omniparser`` proposes icons and checks them)."""
    return not (detector_name == "ocr" and (annotation.element_type or "").lower() in TEXTLESS)


def with_detector(lines: Sequence[fmt.Line], samples: Sequence[Sample], detector: Detector,
                  detector_name: str) -> list[Flag]:
    """The checks that need a detector's proposals on each screen (decoded once), both advice: an
    instruction that names several proposals apart (:func:`names`; ambiguous for a model), and a box no
    proposal overlaps (IoU < :data:`DETECTOR_IOU`). A screenshot that cannot be decoded (truncated, a
    decompression bomb) or that the detector fails on is an error of each of its samples, naming the file."""
    from pytest_uiground.record.image import ImageError

    pairs = _annotations(lines, samples)
    by_image: dict[str, list[tuple[Sample, fmt.Annotation]]] = defaultdict(list)
    for s, a in pairs:
        by_image[a.image].append((s, a))
    out: list[Flag] = []
    for image, group in by_image.items():
        try:
            img = group[0][0].image.load()
        except ImageError as exc:
            out += [Flag(s.id, image, None, f"its screenshot cannot be decoded for the {detector_name} checks: {exc}",
                         f"replace {image} with a whole screenshot (save or export it again)") for s, _ in group]
            continue
        try:
            proposals = [p for p in detector(img) if isinstance(getattr(p, "box", None), Box)]
        except Exception as exc:
            out += [Flag(s.id, image, None, f"the {detector_name} detector failed on {image}: "
                         f"{type(exc).__name__}: {exc}", "check the screenshot and the detector, or run validate "
                         "with --detector none") for s, _ in group]
            continue
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
                                "say which one, as a user would (\"the Insert tab at the top\")", ADVICE))
            if not overlap_checked(a, detector_name):
                continue
            best = max((iou(s.target.box, p.box) for p in proposals), default=0.0)
            if best < DETECTOR_IOU:
                out.append(Flag(s.id, image, a.bbox, f"no {detector_name} proposal overlaps its {fmt.box_text(a.bbox)} "
                                f"(best IoU {best:.2f} < {DETECTOR_IOU})", "check that the box is on the element"
                                + (" (expected with the ocr detector for a box drawn around more than the text, or "
                                   "an element without text: mark an icon \"element_type\": \"icon\")"
                                   if detector_name == "ocr" else ""), ADVICE))
    return out


def _px(box: Box, w: int, h: int) -> tuple[float, float, float, float]:
    return (round(box.x0 * w), round(box.y0 * h), round(box.x1 * w), round(box.y1 * h))
