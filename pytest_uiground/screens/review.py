"""``python -m pytest_uiground annotate --terminal DIR [--out FILE.jsonl]``: the prompt review of proposals.

Why this exists: the browser annotator (:mod:`pytest_uiground.screens.annotator`) needs a browser; over SSH, or
from a script, a person reviews a detector's proposals on real screenshots one question at a time (OpenAdapt's
curation workflow: auto-annotate, accept / adjust / reject, add what was missed) and gets a valid file, never
pixel boxes typed into a JSON editor. It writes the one format the page writes and the ``grounding`` loader
reads (:mod:`pytest_uiground.screens.format`, issue 39: it wrote OpenAdapt's normalised JSON before).

(About 470 lines, over the project's usual ~400: it is one interactive command whose parts,
the answer script, the review loop and the resumable output, share one small state machine;
split, each part would only be read together with the others.)

* **Detector.** ``--detector ocr`` (the default) proposes every text RapidOCR reads (the
  offline ``ocr`` model's engine, no download); ``--detector omniparser[=WEIGHTS]`` proposes
  OmniParser's elements, icons included (``--model-path``'s forms; the ``[omniparser]`` extra);
  ``--detector module:function`` names any
  callable ``(PIL.Image) -> [objects with .text, .box (normalized Box), .score]``, so a
  test or another detector can be plugged in. Proposals below ``--min-score`` are not shown.
  The browser annotator gets its proposals from here too (:func:`load_detector`, :func:`proposals_of`).
* **Questions.** For each proposal, printed as ``image #i 'text' box [x1, y1, x2, y2] px type T``
  (the format's one box text, :func:`pytest_uiground.screens.format.box_text`; open the image to look):
  ``[a]ccept, [r]eject, [e]dit, [t]ype, [s]kip rest of image, [q]uit``. ``e x1 y1 x2 y2 [TEXT]``
  replaces the box (and the text) and ``t TYPE`` the element type (``text`` for OCR proposals); both
  ask again, so an edit is seen before it is accepted (a bare ``e`` or ``t`` asks for the value on the
  next line). A box may be typed as four numbers or pasted as printed (``box [40, 40, 160, 80] px``).
  ``s`` drops the image's remaining proposals. Then ``add a missed element? x1 y1 x2 y2
  TYPE TEXT`` repeats until an empty line. Boxes are checked to lie inside the image
  with positive area.
* **Answers.** From a person on stdin by default (a bad answer is asked again; end of
  input quits), or from ``--answers FILE`` (``-`` = stdin), one answer per line: the
  scriptable mode, where a bad answer is an error naming its line and running out of
  answers is an error naming the image and proposal that were waiting.
* **The file.** ``annotations.jsonl`` in DIR unless ``--out`` names another at or above DIR: one
  ``detect`` line per kept element (``id`` by the one id rule, ``image`` relative to the file, pixel
  ``bbox`` ``[x1, y1, x2, y2]``, ``element_type``, the text read as ``instruction``); ``annotate`` in the
  browser then gives a line a user's words and task ``point``.
* **Never lose work.** The file is rewritten atomically after every image, so quitting
  or a crash keeps every finished image; ``--resume`` keeps the file's lines byte for byte and skips the
  images it has lines for (an image where nothing was kept has none, so it is asked again). An existing
  file is never added to without ``--resume``.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TextIO, TypeVar

from pytest_uiground.record.files import atomic_write_text
from pytest_uiground.registry import UnknownNameError, import_object, is_import_path
from pytest_uiground.screens import format as fmt

if TYPE_CHECKING:
    from PIL import Image

IMAGE_SUFFIXES: Final = fmt.IMAGE_SUFFIXES  # the format's one list (issue 39: there were three)
ACTIONS: Final = "[a]ccept, [r]eject, [e]dit, [t]ype, [s]kip rest of image, [q]uit"
ADD_PROMPT: Final = "add a missed element? x1 y1 x2 y2 TYPE TEXT (empty line = done)"
EDIT_PROMPT: Final = "new box: x1 y1 x2 y2 [TEXT] (pixels)"
TYPE_PROMPT: Final = "element type (one word, e.g. button, icon, text, link)"
DEFAULT_TYPE: Final = "text"
_TYPE_RE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")

T = TypeVar("T")
Detector = Callable[["Image.Image"], Sequence[Any]]
PixelBox = tuple[float, float, float, float]


class AnnotateError(Exception):
    """The command cannot go on; ``code`` is the exit status (2: usage, 1: a run failure)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class BadAnswer(ValueError):
    """An answer that does not parse or a box that does not fit; says what is expected."""


class Quit(Exception):
    """The person asked to stop (``q`` or end of input); finished images are kept."""


# -- answers --------------------------------------------------------------------------------------
class Answers:
    """Answers from a person (re-asked on a bad one) or a script (a bad one is an error)."""

    def __init__(self, stream: TextIO, out: TextIO, *, scripted: bool, source: str) -> None:
        self.stream, self.out, self.scripted, self.source = stream, out, scripted, source
        self.line = 0

    def ask(self, prompt: str, waiting: str, parse: Callable[[str], T]) -> T:
        """Ask ``prompt`` until ``parse`` accepts the answer; ``waiting`` names what asks."""
        while True:
            self.out.write(f"  {prompt}: ")
            self.out.flush()
            raw = self.stream.readline()
            if raw == "":
                if self.scripted:
                    raise AnnotateError(
                        f"ran out of answers in {self.source} after {self.line} line(s): {waiting} was waiting for "
                        f"an answer to {prompt!r}; add answers to the file (or run with --resume to go on)")
                self.out.write("\n")
                raise Quit
            self.line += 1
            answer = raw.rstrip("\r\n")
            if self.scripted:
                self.out.write(f"{answer}\n")
            try:
                return parse(answer)
            except BadAnswer as exc:
                if self.scripted:
                    raise AnnotateError(f"{self.source} line {self.line}: {exc} (answering {waiting})") from None
                self.out.write(f"  {exc}; try again\n")


# -- parsing answers ------------------------------------------------------------------------------
_NUM: Final = r"\s*([-+0-9.eE]+|nan|inf)\s*"
_BOX_TEXT: Final = re.compile(r"(?:\bbox\s*)?\[" + ",".join([_NUM] * 4) + r"\](?:\s*px\b)?", re.IGNORECASE)


def plain(answer: str) -> str:
    """An answer with a box pasted as it is printed (``box [40, 40, 160, 80] px``, :func:`fmt.box_text`) turned
    into the four numbers typed (``40 40 160 80``): a person can copy the box they read."""
    return _BOX_TEXT.sub(lambda m: " ".join(m.groups()), answer, count=1)


def parse_box(tokens: Sequence[str], size: tuple[int, int]) -> PixelBox:
    """Four pixel numbers forming a box inside a ``size`` image with positive area."""
    if len(tokens) < 4:
        raise BadAnswer(f"expected four pixel numbers x1 y1 x2 y2, got {' '.join(tokens)!r}")
    try:
        box = tuple(float(t) for t in tokens[:4])
    except ValueError:
        raise BadAnswer(f"box {' '.join(tokens[:4])!r} is not four numbers x1 y1 x2 y2 (pixels)") from None
    if not all(math.isfinite(v) for v in box):
        raise BadAnswer(f"box {' '.join(tokens[:4])!r} is not four finite numbers")
    x0, y0, x1, y1 = box
    if x1 <= x0 or y1 <= y0:
        raise BadAnswer(f"{fmt.box_text(box)} has no area: need x1 < x2 and y1 < y2 (corners, not width/height)")
    width, height = size
    if x0 < 0 or y0 < 0 or x1 > width or y1 > height:
        raise BadAnswer(f"{fmt.box_text(box)} is not inside the {width}x{height} image: need 0 <= x1 < x2 <= {width} "
                        f"and 0 <= y1 < y2 <= {height} (pixels)")
    return _tidy(x0), _tidy(y0), _tidy(x1), _tidy(y1)


def _tidy(v: float) -> float:
    """``12.0`` → ``12`` so pixel boxes print as typed."""
    return int(v) if v.is_integer() else v


def parse_type(value: str) -> str:
    if not _TYPE_RE.match(value):
        raise BadAnswer(f"element type {value!r} is not one word (letters, digits, '_' or '-'), e.g. button")
    return value


@dataclass(frozen=True)
class Action:
    """A parsed answer to the per-proposal question; ``box``/``text``/``kind`` carry inline values."""

    letter: str
    box: PixelBox | None = None
    text: str | None = None
    kind: str | None = None


_WORDS: Final = {"a": "accept", "r": "reject", "e": "edit", "t": "type", "s": "skip", "q": "quit"}


def parse_action(answer: str, size: tuple[int, int]) -> Action:
    """``a``, ``r``, ``s``, ``q``, ``e [x1 y1 x2 y2 [TEXT]]`` or ``t [TYPE]`` (words work too)."""
    tokens = plain(answer).split()
    if not tokens:
        raise BadAnswer(f"empty answer; expected one of {ACTIONS}")
    word = tokens[0].lower()
    letter = next((k for k, v in _WORDS.items() if word in (k, v)), None)
    if letter is None:
        raise BadAnswer(f"{tokens[0]!r} is not one of {ACTIONS}")
    rest = tokens[1:]
    if letter == "e" and rest:
        return Action("e", box=parse_box(rest, size), text=" ".join(rest[4:]) or None)
    if letter == "t" and rest:
        if len(rest) > 1:
            raise BadAnswer(f"element type {' '.join(rest)!r} is not one word, e.g. button")
        return Action("t", kind=parse_type(rest[0]))
    if rest and letter in "arsq":
        raise BadAnswer(f"{tokens[0]!r} takes no arguments, got {' '.join(rest)!r}")
    return Action(letter)


def parse_edit(answer: str, size: tuple[int, int]) -> tuple[PixelBox, str | None]:
    tokens = plain(answer).split()
    return parse_box(tokens, size), " ".join(tokens[4:]) or None


def parse_add(answer: str, size: tuple[int, int]) -> Element | None:
    """``x1 y1 x2 y2 TYPE [TEXT]``; an empty line ends adding (``None``); ``q`` quits."""
    tokens = plain(answer).split()
    if not tokens:
        return None
    if len(tokens) == 1 and tokens[0].lower() in ("q", "quit"):
        raise Quit
    if len(tokens) < 5:
        raise BadAnswer(f"expected x1 y1 x2 y2 TYPE [TEXT] (pixels), got {answer.strip()!r}")
    box = parse_box(tokens, size)
    return Element(box, " ".join(tokens[5:]) or None, parse_type(tokens[4]))


# -- proposals and elements -----------------------------------------------------------------------
@dataclass
class Element:
    """An element being reviewed or kept: a pixel box, its text and its type."""

    box: PixelBox
    text: str | None
    element_type: str

    def show(self) -> str:
        return f"{self.text!r} {fmt.box_text(self.box)} type {self.element_type}"


def to_pixels(box: Any, size: tuple[int, int], where: str) -> PixelBox:
    """A proposal's normalized box as whole pixels that contain it (floor/ceil, clipped)."""
    try:
        x0, y0, x1, y1 = (float(v) for v in box)
    except (TypeError, ValueError):
        raise AnnotateError(f"{where}: box {box!r} is not four numbers; a detector returns normalized Box "
                            "values (x0, y0, x1, y1) in 0..1") from None
    if not all(-1e-6 <= v <= 1 + 1e-6 for v in (x0, y0, x1, y1)) or x1 < x0 or y1 < y0:
        raise AnnotateError(f"{where}: box {box!r} is not a normalized (x0, y0, x1, y1) box in 0..1; a detector "
                            "must divide pixel values by the image size")
    width, height = size
    # At least one pixel wide and tall, and inside the image even for a zero-size box on its edge.
    px0, py0 = min(width - 1, max(0, math.floor(x0 * width))), min(height - 1, max(0, math.floor(y0 * height)))
    px1, py1 = min(width, math.ceil(x1 * width)), min(height, math.ceil(y1 * height))
    return px0, py0, max(px1, px0 + 1), max(py1, py0 + 1)


def proposals_of(detector: Detector, img: Image.Image, name: str, min_score: float) -> tuple[list[Element], int]:
    """The detector's proposals at or above ``min_score`` as elements, and how many were hidden."""
    try:
        items = list(detector(img))
    except Exception as exc:
        raise AnnotateError(f"detector failed on {name}: {type(exc).__name__}: {exc}") from exc
    kept: list[Element] = []
    for i, item in enumerate(items, 1):
        score = getattr(item, "score", 1.0)
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise AnnotateError(f"detector proposal #{i} on {name}: score {score!r} is not a number")
        if score < min_score:
            continue
        box = to_pixels(getattr(item, "box", None), img.size, f"detector proposal #{i} on {name}")
        text = getattr(item, "text", None)
        kind = getattr(item, "element_type", None) or getattr(item, "type", None) or DEFAULT_TYPE
        kept.append(Element(box, str(text) if text else None, str(kind)))
    return kept, len(items) - len(kept)


# -- the annotation file --------------------------------------------------------------------------
@dataclass
class Output:
    """The ``annotations.jsonl`` being written (:mod:`pytest_uiground.screens.format`): the lines it held
    (``--resume``), kept byte for byte, then one line per kept element; rewritten after each image."""

    path: Path
    before: str = ""
    existing: list[fmt.Line] = field(default_factory=list)
    lines: list[dict[str, Any]] = field(default_factory=list)

    def done_images(self) -> set[Path]:
        """The screenshots the file already has lines for (``--resume`` skips them)."""
        named = [line.raw.get("image") for line in self.existing if line.raw is not None]
        named += [line["image"] for line in self.lines]
        return {(self.path.parent / n).resolve() for n in named if isinstance(n, str)}

    def image_name(self, image: Path) -> str:
        """``image`` relative to the file's folder, as the format writes it (never ``..``); a screenshot that is a
        link to elsewhere is named where it lies (absolute paths, links not followed), as the loader opens it."""
        folder = Path(os.path.abspath(self.path.parent))
        try:
            return Path(os.path.abspath(image)).relative_to(folder).as_posix()
        except ValueError:
            raise AnnotateError(f"{image} is not under {folder}, the folder of --out {self.path}: "
                                "a sample's image is relative to the file and never contains '..'; put --out "
                                "beside or above the screenshots", code=2) from None

    def add(self, image: Path, elements: Sequence[Element]) -> None:
        """One ``detect`` line per kept element: its pixel box, its type, the text read as its instruction (what
        the element says; ``annotate`` in the browser turns a line into a ``point`` sample with a user's
        words), and an id by the format's one rule (:func:`pytest_uiground.screens.format.new_id`)."""
        name = self.image_name(image)
        used = set(fmt.line_ids(self.existing).values()) | {str(line["id"]) for line in self.lines}
        for e in elements:
            sid = fmt.new_id(name, used)
            line = {"id": sid, "image": name, "instruction": e.text, "bbox": list(e.box),
                    "element_type": e.element_type, "task": "detect"}
            fmt.parse(fmt.Line(0, line))  # the loader's checks: a line it would refuse is our bug, never written
            used.add(sid)
            self.lines.append(line)

    def save(self) -> None:
        sep = "\n" if self.before and not self.before.endswith("\n") else ""
        atomic_write_text(self.path, self.before + sep + fmt.dumps(self.lines))


def open_output(path: Path, *, resume: bool) -> Output:
    """A fresh output, or (``--resume``) the existing file's lines to extend."""
    if path.suffix.lower() != ".jsonl":
        raise AnnotateError(f"--out {path}: the review writes annotations.jsonl (pixel x1, y1, x2, y2 lines, the "
                            f"browser annotator's format): pass --out {path.with_suffix('.jsonl')}", code=2)
    if not path.exists():
        return Output(path)
    if not resume:
        raise AnnotateError(f"--out {path} already exists; pass --resume to add to it (images already in it are "
                            "skipped) or choose another --out", code=2)
    try:
        before = path.read_bytes().decode("utf-8")
        return Output(path, before, fmt.read(path))
    except (OSError, UnicodeDecodeError, fmt.FormatError) as exc:
        raise AnnotateError(f"--resume: cannot read {path} ({exc}); fix or move it", code=2) from None


# -- detectors ------------------------------------------------------------------------------------
def load_detector(spec: str) -> Detector:
    """``ocr`` (RapidOCR through the ``ocr`` model) or a ``module:function`` callable."""
    if spec == "ocr":
        from pytest_uiground.models.base import ModelOptions
        from pytest_uiground.models.offline.ocr import OcrGrounder

        try:
            return OcrGrounder(ModelOptions(name="ocr")).read
        except ImportError as exc:
            raise AnnotateError(f"--detector ocr: {exc}", code=2) from exc
    if spec == "omniparser" or spec.startswith("omniparser="):
        return _omniparser(spec.partition("=")[2] or None)
    if not is_import_path(spec):
        raise AnnotateError(f"--detector {spec!r}: expected 'ocr', 'omniparser[=WEIGHTS]' or 'module:function' (a "
                            "callable taking a PIL "
                            "image and returning objects with .text, .box and .score)", code=2)
    try:
        obj = import_object(spec, what="--detector")
    except UnknownNameError as exc:
        raise AnnotateError(str(exc), code=2) from exc
    if not callable(obj):
        raise AnnotateError(f"--detector {spec!r} is a {type(obj).__name__}, not a callable", code=2)
    detector: Detector = obj
    return detector


def _omniparser(model_path: str | None) -> Detector:
    """OmniParser's parsed elements (its OCR lines and icon boxes), from ``--model-path``-style weights."""
    from pytest_uiground import extras
    from pytest_uiground.models.omniparser import model

    try:
        extras.require(*model.EXTRA, "--detector omniparser")
    except ImportError as exc:
        raise AnnotateError(str(exc), code=2) from exc
    return lambda img: model.elements(img, model_path)


# -- the review loop ------------------------------------------------------------------------------
def review_proposal(answers: Answers, name: str, i: int, n: int, element: Element,
                    size: tuple[int, int]) -> Element | Literal["reject", "skip"]:
    """Ask about one proposal: the element to keep (as accepted, after any edits),
    ``"reject"``, or ``"skip"`` for the rest of the image; ``q`` raises :class:`Quit`."""
    while True:
        answers.out.write(f"{name} #{i}/{n} {element.show()}\n")
        waiting = f"image {name!r} proposal #{i} ({element.text!r})"
        action = answers.ask(ACTIONS, waiting, lambda a: parse_action(a, size))
        if action.letter == "a":
            return element
        if action.letter == "r":
            return "reject"
        if action.letter == "s":
            return "skip"
        if action.letter == "q":
            raise Quit
        if action.letter == "e":
            if action.box is None:
                box, text = answers.ask(EDIT_PROMPT, waiting, lambda a: parse_edit(a, size))
            else:
                box, text = action.box, action.text
            element = Element(box, text if text is not None else element.text, element.element_type)
        else:
            kind = action.kind or answers.ask(TYPE_PROMPT, waiting, parse_type)
            element = Element(element.box, element.text, kind)


def review_image(answers: Answers, name: str, size: tuple[int, int], proposals: Sequence[Element]) -> list[Element]:
    """Every proposal's verdict, then the missed elements a person adds."""
    kept: list[Element] = []
    for i, proposal in enumerate(proposals, 1):
        verdict = review_proposal(answers, name, i, len(proposals), proposal, size)
        if verdict == "skip":
            break
        if isinstance(verdict, Element):
            kept.append(verdict)
    while True:
        added = answers.ask(ADD_PROMPT, f"image {name!r} (adding missed elements)", lambda a: parse_add(a, size))
        if added is None:
            return kept
        kept.append(added)


def read_image(path: Path) -> Image.Image | None:
    """The screenshot, or None (skipped, with the reason) when it cannot be decoded or its
    header declares more pixels than the limit (a decompression bomb must not end the session)."""
    from pytest_uiground.record.image import ImageError, ImageRef

    try:
        return ImageRef.from_path(path).load()
    except ImageError as exc:
        print(f"annotate: skipped {path}: {exc}", file=sys.stderr)
        return None


def list_images(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise AnnotateError(f"DIR {folder} is not a folder of screenshots", code=2)
    images = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    if not images:
        raise AnnotateError(f"DIR {folder} holds no {'/'.join(s[1:] for s in IMAGE_SUFFIXES)} images", code=2)
    return images


def run(args: argparse.Namespace, answers: Answers) -> int:
    images = list_images(Path(args.dir))
    out = open_output(Path(args.out) if args.out else Path(args.dir) / fmt.DEFAULT_FILE, resume=args.resume)
    for path in images:
        out.image_name(path)  # every screenshot under the file's folder, before any question
    done = out.done_images()
    todo = [p for p in images if p.resolve() not in done]
    if len(todo) < len(images):
        answers.out.write(f"--resume: {len(images) - len(todo)} image(s) already in {out.path}, skipped\n")
    if not todo:
        answers.out.write(f"nothing to do: every image in {args.dir} is already in {out.path}\n")
        return 0
    detector = load_detector(args.detector)
    finished = 0
    for path in todo:
        img = read_image(path)
        if img is None:
            continue
        proposals, hidden = proposals_of(detector, img, path.name, args.min_score)
        answers.out.write(f"\n{path.name} ({img.width}x{img.height}): {len(proposals)} proposal(s)"
                          + (f", {hidden} below --min-score {args.min_score} hidden" if hidden else "") + "\n")
        try:
            elements = review_image(answers, path.name, img.size, proposals)
        except Quit:
            answers.out.write(f"quit: {finished} image(s) saved to {out.path}; {path.name} was not saved "
                              "(run again with --resume to go on)\n")
            return 0
        out.add(path, elements)
        out.save()
        finished += 1
        answers.out.write(f"saved {path.name}: {len(elements)} element(s) → {out.path}\n")
    answers.out.write(f"done: {finished} image(s) annotated, {len(out.lines)} new line(s) in {out.path}\n")
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m pytest_uiground annotate --terminal",
                                description="Review detector proposals on screenshots and write annotations.jsonl.")
    p.add_argument("dir", metavar="DIR", help="folder of screenshots (png/jpg/jpeg, read in name order)")
    p.add_argument("--out", metavar="FILE.jsonl", help=f"annotations file to write, at or above DIR (default: "
                   f"DIR/{fmt.DEFAULT_FILE})")
    p.add_argument("--answers", metavar="FILE", help="read one answer per line from FILE ('-' = stdin) and fail "
                   "on a bad or missing answer, instead of asking a person")
    p.add_argument("--detector", default="ocr", help="'ocr' (default), 'omniparser[=WEIGHTS]' or module:function "
                   "returning proposals")
    p.add_argument("--min-score", type=float, default=0.5, help="hide proposals scored below this (default 0.5)")
    p.add_argument("--resume", action="store_true", help="add to an existing --out, skipping its images")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m pytest_uiground annotate``; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.answers is None:
            answers = Answers(sys.stdin, sys.stdout, scripted=False, source="stdin")
            return run(args, answers)
        if args.answers == "-":
            return run(args, Answers(sys.stdin, sys.stdout, scripted=True, source="stdin"))
        try:
            stream = open(args.answers, encoding="utf-8")
        except OSError as exc:
            raise AnnotateError(f"--answers {args.answers}: cannot read it ({exc})", code=2) from exc
        with stream:
            return run(args, Answers(stream, sys.stdout, scripted=True, source=args.answers))
    except AnnotateError as exc:
        print(f"annotate: error: {exc}", file=sys.stderr)
        return exc.code
