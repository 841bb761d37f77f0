"""Size and time of ``report.html`` for large suites (the sample browser embeds or writes every image).

    python perf/report_size.py [--samples 5000] [--per-screen 6] [--width 1280] [--height 800]

Generates a synthetic suite (seeded UI screenshots, ``--per-screen`` targets each),
scores a fixed "click the centre" prediction for every sample, and renders the page
twice: as a run would (images beside the page above ``INLINE_MAX_SAMPLES``), and
fully inline for comparison. Reports the HTML size, the ``report_files/`` size and
the render time; time is also given per sample, and as a ratio to a floor measured
in the same run (decoding each screenshot once), since the machine's speed varies.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from pytest_uiground.record.geometry import Point
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.score import Score
from pytest_uiground.report import gallery
from pytest_uiground.report import html as htmlreport
from pytest_uiground.report.summary import MetricSummary, SuiteSummary
from pytest_uiground.suite.loading import load_suite

SUITE = """
[suite]
name = "size"
version = "1"
[loader]
name = "synthetic"
[loader.options]
seed = 0
screens = {screens}
width = {width}
height = {height}
targets_per_screen = {per}
[[metrics]]
name = "grounding_accuracy"
tasks = ["point"]
slices = ["difficulty", "theme", "element_type", "size"]
"""


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--per-screen", type=int, default=6)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=800)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        toml = root / "suite.toml"
        screens = -(-args.samples * 11 // (10 * args.per_screen))  # the generator skips a few targets
        toml.write_text(SUITE.format(screens=screens, width=args.width, height=args.height, per=args.per_screen))
        samples = load_suite(toml).samples[: args.samples]
        records = []
        for s in samples:
            hit = s.target.box is not None and s.target.box.contains(Point(0.5, 0.5))
            records.append(SampleResult(suite="size", id=s.id, task=s.task, meta=dict(s.meta),
                                        score=Score(100.0 * hit, hit),
                                        prediction=Prediction(point=Point(0.5, 0.5), raw="(0.5, 0.5)"),
                                        latency_ms=12.5, outcome="pass" if hit else "known-failure"))
        summary = SuiteSummary(suite="size", model="center", model_fingerprint=None, n_samples=len(records),
                               metrics={"grounding_accuracy": MetricSummary(value=0.0, n=len(records))},
                               baseline_comparison={}, latency_ms=None, regressed=(), fixed=(), errors=(),
                               format_errors=0, provenance={})
        by_id = {s.id: s for s in samples}

        t0 = time.perf_counter()
        keys = {s.image.key: s for s in samples}
        for s in keys.values():
            s.image.load()
        floor = time.perf_counter() - t0

        for label, inline_max in (("as a run writes it", gallery.INLINE_MAX_SAMPLES), ("all inline", 10**9)):
            out = root / label.replace(" ", "_")
            gallery.INLINE_MAX_SAMPLES = inline_max
            t0 = time.perf_counter()
            htmlreport.write(out / "report.html", summary, records, by_id.get)
            took = time.perf_counter() - t0
            html_mb = (out / "report.html").stat().st_size / 1e6
            files_mb = folder_size(out / gallery.FILES_DIR) / 1e6 if (out / gallery.FILES_DIR).exists() else 0.0
            print(f"{len(records)} samples, {len(keys)} screens {args.width}x{args.height}, {label}: "
                  f"report.html {html_mb:.1f} MB, report_files/ {files_mb:.1f} MB; render {took:.1f} s "
                  f"({1000 * took / len(records):.1f} ms/sample, {took / floor:.1f}x decoding every screen once)")


if __name__ == "__main__":
    main()
