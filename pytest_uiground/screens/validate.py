"""``python -m pytest_uiground validate suites/NAME``: the annotation checks before a suite is trusted.

Why: the seed's curation plan ends with "validate: run a known-good detector, check for annotation
errors, fix outliers". A wrong box makes a good model look bad for every run after, and nothing
else names it. This prints one line per finding (severity, sample id, problem, fix; :mod:`.checks`)
and writes an HTML page with each flagged screenshot and its boxes drawn.

Why two severities (issue 39): on a correct suite of real screenshots, the heuristics (no OCR proposal
over an icon's box, an instruction sharing a word with several boxes) gave 14 findings on 23 samples, so the
command could not be a CI step. Errors (a line that fails to load, a missing or unreadable image, a
box outside the image, no instruction, a duplicate id, one instruction for two targets on a screen, a
screenshot the detector cannot decode) exit 1; advice is printed and drawn and exits 0 unless
``--strict``. Exit 2: the command cannot run (no annotation file, a bad ``--detector``).
Hostile input never ends in a traceback (issue 38): a line nested past the recursion limit, a
decompression bomb or a truncated screenshot is one error line naming the file, and the page is written.

The detector (for "a box no detector proposal overlaps" and "an instruction that matches several
boxes") is any name ``annotate --detector`` accepts (``ocr``, the default, or ``module:function``),
loaded by that command's ``load_detector`` (imported by name: the annotator's folder may import this
one); ``--detector none`` runs only the checks that need no pixels (those the loader warns about
at collection).
"""

from __future__ import annotations

import argparse
import base64
import io
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_uiground.record.files import atomic_write_text
from pytest_uiground.record.image import ImageError, ImageRef
from pytest_uiground.report.assets import static
from pytest_uiground.report.markup import esc
from pytest_uiground.screens import checks
from pytest_uiground.screens import format as fmt
from pytest_uiground.screens.samples import annotations_path, samples_of
from pytest_uiground.suite.config import SuiteConfigError, load_suite_config
from pytest_uiground.suite.loading import LoaderContext

THUMB_WIDTH = 960


def find_annotations(target: Path) -> Path:
    """The annotation file of a suite folder (its suite.toml's ``grounding`` loader), a folder holding
    ``annotations.jsonl``, or the file itself; ``ValueError`` saying what was expected otherwise."""
    if target.is_file() and target.name != "suite.toml":
        return target
    toml = target if target.name == "suite.toml" else target / "suite.toml"
    if toml.is_file():
        try:
            config = load_suite_config(toml)
        except SuiteConfigError as exc:
            raise ValueError(str(exc)) from exc
        except RecursionError:
            raise ValueError(f"{toml}: a value nested too deeply to read (past Python's recursion limit); fix the "
                             "suite file") from None
        if config.loader != "grounding":
            raise ValueError(f"{toml}: loader {config.loader!r}; validate reads suites of the 'grounding' loader "
                             "(annotations.jsonl)")
        return annotations_path(config.loader_options, LoaderContext(config.name, toml.parent))
    for name in (fmt.DEFAULT_FILE, "annotations.csv"):
        if (target / name).is_file():
            return target / name
    raise ValueError(f"{target}: no suite.toml and no {fmt.DEFAULT_FILE}; pass a suite folder (suites/NAME), "
                     "a folder with annotations.jsonl, or the file")


def run(path: Path, detector: checks.Detector | None, detector_name: str) -> list[checks.Flag]:
    """Every finding on the file: errors first, then advice, each in file order."""
    lines = checks.read(path)
    samples = samples_of(path, lines)
    flags = checks.invalid(path, lines, samples) + checks.cheap(path, lines, samples)
    if detector is not None:
        flags += checks.with_detector(lines, samples, detector, detector_name)
    return [f for f in flags if f.severity == checks.ERROR] + [f for f in flags if f.severity != checks.ERROR]


def page(path: Path, flags: Sequence[checks.Flag]) -> str:
    """One HTML page (no external assets): every flagged screenshot, downscaled, with the flagged boxes
    numbered (errors red, advice orange), and the findings listed under it. Every string from the file is
    escaped; a screenshot is read only inside the file's folder and within the pixel limit, and one that
    cannot be decoded is named instead of drawn."""
    from PIL import ImageDraw

    errors = sum(f.severity == checks.ERROR for f in flags)
    parts = [f"<!doctype html><meta charset='utf-8'><title>validate {esc(path.name)}</title>"
             f"<style>{static('validate.css')}</style>",
             f"<h1>{_errors(errors)} and {len(flags) - errors} advice in {esc(str(path))}</h1>"]
    by_image: dict[str, list[tuple[int, checks.Flag]]] = {}
    for i, f in enumerate(flags, 1):
        by_image.setdefault(f.image, []).append((i, f))
    for image, items in by_image.items():
        parts.append(f"<h2>{esc(image or '(no image)')}</h2>")
        file = _inside(path.parent, image)
        if file is not None and file.is_file():
            try:
                img = ImageRef.from_path(file).load()
            except ImageError as exc:
                parts.append(f"<p>cannot draw it: {esc(str(exc))}</p>")
            else:
                scale = min(1.0, THUMB_WIDTH / img.width)
                img = img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))))
                draw = ImageDraw.Draw(img)
                for i, f in items:
                    if f.box is not None:
                        color = (230, 0, 0) if f.severity == checks.ERROR else (240, 140, 0)
                        b = [v * scale for v in f.box]
                        draw.rectangle((min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])),
                                       outline=color, width=3)
                        draw.text((b[0] + 3, b[1] + 2), str(i), fill=color)
                buf = io.BytesIO()
                img.save(buf, format="PNG")
                parts.append(f"<img alt='{esc(image)}' src='data:image/png;base64,"
                             f"{base64.b64encode(buf.getvalue()).decode()}'>")
        parts.append("<ol>" + "".join(f"<li value='{i}' class='{f.severity}'><b>{f.severity}</b> "
                                      f"<b>{esc(f.id)}</b>: {esc(f.problem)}; "
                                      f"<i>fix</i>: {esc(f.fix)}</li>" for i, f in items) + "</ol>")
    if not flags:
        parts.append("<p>clean: nothing flagged</p>")
    return "\n".join(parts) + "\n"


def _inside(folder: Path, image: str) -> Path | None:
    """``folder / image`` when ``image`` is a path the format allows (relative, no ``..``), else None: the page
    never reads a file a line points outside the suite at."""
    try:
        return folder / fmt.check_image_path(image)
    except fmt.BadLine:
        return None


def load_detector(name: str) -> checks.Detector:
    from pytest_uiground.screens import review as annotate

    try:
        detector: checks.Detector = annotate.load_detector(name)
    except annotate.AnnotateError as exc:
        raise ValueError(str(exc)) from exc
    return detector


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m pytest_uiground validate",
                                description="Check a grounding suite's annotations: one line per finding with the "
                                            "sample id and the fix, and an HTML page with them drawn.")
    p.add_argument("target", type=Path, help="suites/NAME, a folder with annotations.jsonl, or the file")
    p.add_argument("--detector", default="ocr", help="the detector for the overlap and ambiguity checks: any name "
                   "annotate --detector accepts (default: ocr), or none")
    p.add_argument("--html", type=Path, default=Path("out/validate.html"),
                   help="the page with the flagged samples drawn (default: out/validate.html)")
    p.add_argument("--strict", action="store_true", help="exit 1 on advice too (no proposal overlaps a box, an "
                   "ambiguous instruction, duplicate boxes, a slice key on some lines), not only on errors")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        path = find_annotations(args.target)
        detector = None if args.detector == "none" else load_detector(args.detector)
        flags = run(path, detector, args.detector)
    except (ValueError, OSError) as exc:
        print(f"validate: {exc}", file=sys.stderr)
        return 2
    except RecursionError:
        print(f"validate: {args.target}: nested too deeply to read (past Python's recursion limit)", file=sys.stderr)
        return 2
    for f in flags:
        print(f"{f.severity}: {f.line()}")
    args.html.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.html, page(path, flags))
    print(summary(path, flags, args))
    errors = sum(f.severity == checks.ERROR for f in flags)
    return 1 if errors or (flags and args.strict) else 0


def _errors(n: int) -> str:
    return f"{n} error" + ("" if n == 1 else "s")


def summary(path: Path, flags: Sequence[checks.Flag], args: argparse.Namespace) -> str:
    """The last line: the counts, where the page is, why the exit status is what it is, and how many samples
    the overlap check did not look at (icons under the ocr detector)."""
    lines = checks.read(path)
    errors = sum(f.severity == checks.ERROR for f in flags)
    advice = len(flags) - errors
    text = f"{_errors(errors)} and {advice} advice in {len(lines)} samples of {path}"
    text += f"; drawn in {args.html}" if flags else f": clean ({args.html})"
    if advice and not errors:
        text += "; --strict: advice fails" if args.strict else "; advice fails only with --strict"
    if args.detector == "ocr":
        skipped = 0
        for line in lines:
            try:
                skipped += not checks.overlap_checked(fmt.parse(line), "ocr")
            except fmt.BadLine:
                continue
        if skipped:
            text += (f"; {skipped} icon samples not overlap-checked (the ocr detector proposes text only; "
                     "--detector omniparser proposes icons)")
    return text
