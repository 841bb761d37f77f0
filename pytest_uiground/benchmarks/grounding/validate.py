"""``python -m pytest_uiground validate suites/NAME``: the annotation checks before a suite is trusted.

Why: the seed's curation plan ends with "validate: run a known-good detector, check for annotation
errors, fix outliers". A wrong box makes a good model look bad for every run after, and nothing
else names it. This prints one line per finding (sample id, problem, fix; :mod:`.checks`) and writes
an HTML page with each flagged screenshot and its boxes drawn, then exits 1 when anything was
flagged, 0 when the file is clean.

The detector (for "a box no detector proposal overlaps" and "an instruction that matches several
boxes") is any name ``annotate --detector`` accepts (``ocr``, the default, or ``module:function``),
loaded by that command's ``load_detector`` (imported by name: the annotator's folder may import this
one); ``--detector none`` runs only the checks that need no pixels (those the loader warns about
at collection).
"""

from __future__ import annotations

import argparse
import base64
import html
import importlib
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_uiground.benchmarks.grounding import checks
from pytest_uiground.benchmarks.grounding import format as fmt
from pytest_uiground.benchmarks.grounding.loader import annotations_path, samples_of
from pytest_uiground.record.files import atomic_write_text
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
    lines = fmt.read(path)
    samples = samples_of(path, lines)
    flags = checks.invalid(path, lines, samples) + checks.cheap(path, lines, samples)
    if detector is not None:
        flags += checks.with_detector(lines, samples, detector, detector_name)
    return flags


def page(path: Path, flags: Sequence[checks.Flag]) -> str:
    """One HTML page (no external assets): every flagged screenshot, downscaled, with the flagged boxes in
    red and numbered, and the findings listed under it. Every string from the file is escaped."""
    from PIL import Image, ImageDraw

    parts = [f"<!doctype html><meta charset='utf-8'><title>validate {html.escape(path.name)}</title>"
             "<style>body{font:14px sans-serif;margin:1em}img{max-width:100%;border:1px solid #ccc}"
             "li{margin:.2em 0}</style>", f"<h1>{len(flags)} findings in {html.escape(str(path))}</h1>"]
    by_image: dict[str, list[tuple[int, checks.Flag]]] = {}
    for i, f in enumerate(flags, 1):
        by_image.setdefault(f.image, []).append((i, f))
    for image, items in by_image.items():
        parts.append(f"<h2>{html.escape(image or '(no image)')}</h2>")
        file = path.parent / image
        if image and file.is_file():
            try:
                with Image.open(file) as src:
                    img = src.convert("RGB")
                scale = min(1.0, THUMB_WIDTH / img.width)
                img = img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))))
                draw = ImageDraw.Draw(img)
                for i, f in items:
                    if f.box is not None:
                        b = [v * scale for v in f.box]
                        draw.rectangle((min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])),
                                       outline=(230, 0, 0), width=3)
                        draw.text((b[0] + 3, b[1] + 2), str(i), fill=(230, 0, 0))
                buf = io.BytesIO()
                img.save(buf, format="PNG")
                parts.append(f"<img alt='{html.escape(image)}' src='data:image/png;base64,"
                             f"{base64.b64encode(buf.getvalue()).decode()}'>")
            except OSError as exc:
                parts.append(f"<p>cannot draw it: {html.escape(str(exc))}</p>")
        parts.append("<ol>" + "".join(f"<li value='{i}'><b>{html.escape(f.id)}</b>: {html.escape(f.problem)}; "
                                      f"<i>fix</i>: {html.escape(f.fix)}</li>" for i, f in items) + "</ol>")
    if not flags:
        parts.append("<p>clean: nothing flagged</p>")
    return "\n".join(parts) + "\n"


def load_detector(name: str) -> checks.Detector:
    annotate: Any = importlib.import_module("pytest_uiground.benchmarks.openadapt.annotate")
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
    for f in flags:
        print(f.line())
    args.html.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.html, page(path, flags))
    n = len(fmt.read(path))
    print(f"{len(flags)} findings in {n} samples of {path}" + (f"; drawn in {args.html}" if flags else
                                                              f": clean ({args.html})"))
    return 1 if flags else 0
