"""A report that does not cost more than the run: pictures drawn only for the samples looked at first.

Large (beside-the-page) reports decode and crop the screenshots of at most ``DRAWN_MAX``
samples, in the table's order (regressions, errors, wrong answers), and link every screenshot
to its dataset file; the page draws the other crops from it when a sample is opened. The right answers'
screenshots here are PNG headers without pixels: decoding one would fail, so a clean page
shows none was decoded.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path

import pytest
from conftest import header_only_png
from PIL import Image

from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.record.score import Score
from pytest_uiground.report import assets, gallery
from pytest_uiground.report import html as htmlreport
from pytest_uiground.report.summary import MetricSummary, SuiteSummary

TRUTH = Box(0.4, 0.4, 0.5, 0.5)



def build(tmp: Path, n_right: int, n_wrong: int) -> tuple[list[SampleResult], dict[str, Sample]]:
    data = tmp / "data"
    data.mkdir()
    records, samples = [], {}
    for i in range(n_right + n_wrong):
        right = i < n_right
        sid = f"{'ok' if right else 'bad'}-{i:03d}"
        if right:
            path = header_only_png(data / f"{sid}.png", (1920, 1080))
        else:
            path = data / f"{sid}.png"
            Image.new("RGB", (640, 400), (200, 210, 220)).save(path)
        samples[sid] = Sample(id=sid, image=ImageRef.from_path(path), instruction="click", task="point",
                              target=Target(box=TRUTH))
        point = (0.45, 0.45) if right else (0.9, 0.1)
        records.append(SampleResult(suite="s", id=sid, task="point", meta={}, score=Score(100.0 * right, right),
                                    prediction=Prediction(point=Point(*point)), latency_ms=1.0,
                                    outcome="pass" if right else "regression"))
    return records, samples


def summary(n: int) -> SuiteSummary:
    return SuiteSummary(suite="s", model="m", model_fingerprint={}, n_samples=n, metrics={"acc": MetricSummary(
        value=50.0, n=n)}, baseline_comparison={}, latency_ms=None, regressed=(), fixed=(), errors=(),
        format_errors=0, provenance={})


def page_data(path: Path) -> dict[str, object]:
    text = path.read_text()
    found = re.search(r'<script type="application/json" id="uig-data">(.*?)</script>', text, re.S)
    assert found is not None
    data: dict[str, object] = json.loads(found.group(1))
    return data


def test_only_the_first_samples_to_look_at_are_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gallery, "INLINE_MAX_SAMPLES", 4)
    monkeypatch.setattr(gallery, "DRAWN_MAX", 3)
    records, samples = build(tmp_path, n_right=6, n_wrong=5)
    lines: list[str] = []
    out = tmp_path / "out"
    htmlreport.write_reports(out, [htmlreport.SuitePage(summary(len(records)), records, samples.get)],
                             progress=lines.append)
    data = page_data(out / "report.html")
    entries = {e["id"]: e for e in data["samples"]}  # type: ignore[attr-defined]
    crops = sorted("-".join(p.name.split("-")[:2]) for p in (out / "report_files" / "crops").iterdir())
    assert crops == ["bad-006", "bad-007", "bad-008"]  # the first three regressions, in the table's order
    for sid, entry in entries.items():
        assert "img_note" not in entry, entry  # nothing was decoded that could not be
        screen = data["screens"][entry["screen"]]  # type: ignore[index]
        # every screenshot is the dataset's own file, relative to the page, at its full size (the header's)
        target = (out / urllib.parse.unquote(screen["src"])).resolve()
        assert target == (tmp_path / "data" / f"{sid}.png").resolve() and screen.get("linked") is True
        assert (screen["w"], screen["h"]) == ((1920, 1080) if sid.startswith("ok") else (640, 400))
        x0, y0, x1, y1 = entry["rect"]
        assert x0 <= TRUTH.x0 and y0 <= TRUTH.y0 and x1 >= TRUTH.x1 and y1 >= TRUTH.y1  # the zoom holds the truth
    assert lines and lines[-1].startswith("uiground: report written: 11/11 samples, 3 with pictures drawn")
    assert "function zoomed(s, scr)" in assets.BROWSER_JS  # the page's own drawing of linked samples


def test_a_small_page_still_draws_everything_inline(tmp_path: Path) -> None:
    records, samples = build(tmp_path, n_right=0, n_wrong=4)
    text = htmlreport.render(summary(4), records, samples.get, tmp_path / "out")
    assert text.count('class="thumb"') == 4 and "data:image/" in text and "linked" not in text


def test_a_source_image_beyond_the_cap_says_why_it_has_no_picture(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gallery, "INLINE_MAX_SAMPLES", 1)
    monkeypatch.setattr(gallery, "DRAWN_MAX", 1)
    records, samples = build(tmp_path, n_right=2, n_wrong=0)
    samples["ok-001"] = Sample(id="ok-001", image=ImageRef.from_source("row:1", lambda: b""), instruction="c",
                               task="point", target=Target(box=TRUTH))
    htmlreport.write(tmp_path / "report.html", summary(2), records, samples.get)
    entries = {e["id"]: e for e in page_data(tmp_path / "report.html")["samples"]}  # type: ignore[attr-defined]
    assert "not a file the page can show" in entries["ok-001"]["img_note"]
