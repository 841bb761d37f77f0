"""report.html: verdict, unit-aware charts and every sample browsable, from real runs and hand-written records."""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Callable
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import Project
from PIL import Image

from pytest_uiground.gate import stats
from pytest_uiground.gate.baseline import BaselineEntry
from pytest_uiground.gate.verdict import Verdict
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.record.score import Score
from pytest_uiground.report import browse, details, gallery, units
from pytest_uiground.report import html as htmlreport
from pytest_uiground.report import plots as pl
from pytest_uiground.report.summary import Comparison, MetricSummary, SuiteSummary
from pytest_uiground.suite.config import MetricSpec

GREEN = gallery.TRUTH_RGB
RED = gallery.PREDICTION_RGB


class Page(HTMLParser):
    """The parts of a page these tests check: images, SVG plots, scripts, table rows and every src/href."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.imgs: list[dict[str, str]] = []
        self.svgs: list[dict[str, str]] = []
        self.scripts: list[dict[str, str]] = []
        self.rows: list[dict[str, str]] = []
        self.ids: set[str] = set()
        self.urls: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "img":
            self.imgs.append(a)
        if tag == "svg" and a.get("class") == "plot":
            self.svgs.append(a)
        if tag == "script":
            self.scripts.append(a)
        if tag == "tr" and "data-i" in a:
            self.rows.append(a)
        self.urls += [a[k] for k in ("src", "href") if k in a]

    def images(self, cls: str) -> list[dict[str, str]]:
        return [a for a in self.imgs if a.get("class") == cls]

    def data(self) -> dict[str, Any]:
        """The sample browser's JSON block."""
        m = re.search(r'<script type="application/json" id="uig-data">(.*?)</script>', self.text, re.S)
        assert m is not None, "no sample data block"
        out: dict[str, Any] = json.loads(m.group(1))
        return out


def decode(uri: str) -> Image.Image:
    head, _, payload = uri.partition(",")
    assert head in ("data:image/png;base64", "data:image/jpeg;base64"), head
    img = Image.open(io.BytesIO(base64.b64decode(payload, validate=True)))
    img.load()
    return img.convert("RGB")


NAN = re.compile(r"\b(NaN|nan|Infinity|inf)\b")


def check_self_contained(page: Page, base: Path | None = None) -> list[Image.Image]:
    """Nothing fetched from the network, no NaN shown, every image (tags and browser data) decodes."""
    assert not [u for u in page.urls if u.startswith(("http://", "https://", "//"))]
    assert "@import" not in page.text and "url(" not in page.text
    visible = re.sub(r"<script>.*?</script>", "", page.text, flags=re.S)  # the page's own code, not data
    assert not NAN.search(visible), NAN.search(visible)
    sources = [a["src"] for a in page.imgs]
    if "uig-data" in page.ids:
        sources += [s["src"] for s in page.data()["screens"]]
    out = []
    for src in sources:
        if src.startswith("data:"):
            out.append(decode(src))
        else:
            assert base is not None and not src.startswith("/"), src
            with Image.open(base / src) as img:
                out.append(img.convert("RGB"))
    return out


def read_page(path: Path) -> Page:
    return Page(path.read_text(encoding="utf-8"))


def near(img: Image.Image, xy: tuple[float, float], rgb: tuple[int, int, int], radius: int = 1) -> bool:
    """Is ``rgb`` (within JPEG noise) at ``xy`` or a pixel next to it?"""
    x, y = round(xy[0]), round(xy[1])
    for dx in range(-radius, radius + 1):
        for dy in range(-radius, radius + 1):
            px = img.getpixel((min(max(x + dx, 0), img.width - 1), min(max(y + dy, 0), img.height - 1)))
            assert isinstance(px, tuple)
            if all(abs(a - b) <= 40 for a, b in zip(px, rgb, strict=True)):
                return True
    return False


# -- real runs ----------------------------------------------------------------------

@pytest.mark.slow
def test_report_of_real_runs_without_and_with_baseline(project: Project) -> None:
    ids = project.ids()
    first = project.run("--snapshot-update", "--uiground-report", "first", wrong=ids[:1])
    assert first.ret == 0, first.stdout.str()
    page = read_page(project.root / "first" / "report.html")
    check_self_contained(page)
    assert 'class="banner pass"' in page.text and "baseline none before this run: it recorded one" in page.text
    assert len(page.svgs) == 2  # grounding_accuracy, latency distribution
    assert len(page.rows) == len(ids)

    regressed, garbled = ids[1:4], ids[5]
    worse = project.run("--uiground-report", "out", wrong=[ids[0], *regressed], garbled=[garbled])
    assert worse.ret == 1
    summary = project.summary()
    assert summary["regressed"] == sorted([*regressed, garbled])
    assert summary["metrics"]["grounding_accuracy"]["unit"] == "accuracy"
    assert summary["baseline"]["model"] == "scripted" and summary["baseline"]["date"]
    page = read_page(project.root / "out" / "report.html")
    check_self_contained(page)
    assert 'class="banner fail"' in page.text and "FAIL: 1 of 4 checks failed; 4 samples regressed" in page.text
    assert f"{summary['baseline']['date']}" in page.text  # the baseline is named, with its date
    data = page.data()
    assert len(page.rows) == len(data["samples"]) == len(ids)
    order = [s["id"] for s in data["samples"]]
    assert order[:4] == summary["regressed"]  # regressions first
    assert "&lt;&lt;garbage&gt;&gt;" not in page.text and "<<garbage>>" not in page.text
    assert next(s for s in data["samples"] if s["id"] == garbled)["raw"] == "<<garbage>>"  # JSON, escaped for HTML
    crops = sorted((project.root / "out" / gallery.FILES_DIR / "crops").iterdir())
    assert len(crops) == len(ids)  # one per sample, for compare


@pytest.mark.slow
def test_a_failing_renderer_leaves_the_json_and_says_so(project: Project) -> None:
    project.record()
    (project.root / "conftest.py").write_text(
        "import pytest_uiground.report.html as h\n\n"
        "def boom(*args, **kwargs):\n    raise RuntimeError('renderer exploded')\n\n"
        "h.render = boom\n"
    )
    result = project.run("--uiground-report", "out")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*report.html could not be rendered (RuntimeError: renderer exploded)*"])
    assert project.summary()["n_samples"] == len(project.ids())
    assert (project.root / "out" / "samples.jsonl").read_text().count("\n") == len(project.ids())
    text = (project.root / "out" / "report.html").read_text()
    assert "could not be rendered" in text and "renderer exploded" in text


# -- hand-written records -----------------------------------------------------------

def screenshot() -> Image.Image:
    img = Image.new("RGB", (1600, 1000), (240, 240, 240))
    img.paste((60, 60, 200), (600, 333, 1000, 433))
    return img


TRUTH = Box(0.375, 1 / 3, 0.625, 0.433)


def make_sample(sid: str, image: ImageRef) -> Sample:
    return Sample(id=sid, image=image, instruction=f"click <the> button & {sid}", task="point",
                  target=Target(box=TRUTH), meta={"size": "gt100"}, click=Point(0.1, 0.1))


def record(sid: str, outcome: str, size: str, *, correct: bool, raw: str = "", latency: float = 10.0,
           point: tuple[float, float] | None = None, error: str | None = None) -> SampleResult:
    return SampleResult(suite="hand", id=sid, task="point", meta={"size": size},
                        score=Score(100.0 * correct, correct),
                        prediction=Prediction(point=Point(*point) if point is not None else None, raw=raw),
                        error=error, latency_ms=latency, outcome=outcome)


RECORDS = [
    record("ok-1", "pass", "lt32", correct=True, latency=12.0),
    record("ok-2", "pass", "gt100", correct=True, latency=30.0),
    record("wrong-1", "known-failure", "lt32", correct=False, raw="<b>bold</b>", point=(0.9, 0.9)),
    record("reg-1", "regression", "gt100", correct=False, raw="</script><script>alert('x')</script>",
           point=(0.7, 0.5)),
    record("err-1", "error", "gt100", correct=False, error="<img src=x onerror=alert(1)>", latency=5.0),
]

SUMMARY = SuiteSummary(
    suite="hand", model="m<1>", model_fingerprint={"model": "m<1>", "revision": "abc123"}, n_samples=5,
    format_errors=0, errors=("err-1",), regressed=("reg-1",), fixed=(), latency_ms=None, judge={"model": "judge-7b"},
    metrics={"acc": MetricSummary(value=40.0, n=5, interval=(11.8, 76.9), unit="accuracy",
                                  slices={"size=lt32": 50.0, "size=gt100": 33.3333},
                                  slice_n={"size=lt32": 2, "size=gt100": 3})},
    baseline_comparison={
        "acc": Comparison(value=40.0, baseline=60.0, delta=-20.0, delta_interval=(-40.0, 0.0), mcnemar_p=0.5,
                          verdict="FAIL"),
        "acc.size=lt32": Comparison(value=50.0, baseline=50.0, delta=0.0, verdict="ok"),
        "acc.size=gt100": Comparison(value=33.3333, baseline=66.6667, delta=-33.3333, verdict="ok"),
    },
    provenance={"model": "m<1>", "date": "2024-01-02T00:00:00+00:00", "packages": {"pytest": "8"},
                "judge": {"model": "judge-7b"}},
    judge_parse_errors=("ok-2",), judge_stability={"samples": 2, "unstable": ["ok-1"]},
    baseline={"model": "base-model", "model_fingerprint": {"revision": "old999"}, "date": "2023-12-31T00:00:00+00:00",
              "n_samples": 5},
    verdict=Verdict(passed=False, reasons=("1 of 3 checks failed", "1 sample regressed", "1 sample error"), n_checks=3,
                    failed_checks=("acc",), regressed=1, errors=1),
)


def hand_lookup() -> Callable[[str], Sample | None]:
    good = ImageRef.from_source("mem:good", screenshot)
    broken = ImageRef.from_path("/nonexistent/screen.png")
    samples = {"reg-1": make_sample("reg-1", good), "ok-1": make_sample("ok-1", good),
               "wrong-1": make_sample("wrong-1", broken)}
    return samples.get


def test_page_names_the_verdict_the_model_and_the_baseline() -> None:
    page = Page(htmlreport.render(SUMMARY, RECORDS, hand_lookup()))
    check_self_contained(page)
    banner = page.text[page.text.index('id="verdict"'):page.text.index("</div></div>", page.text.index('id="verdict"'))]
    assert 'banner fail' in page.text
    assert "FAIL: 1 of 3 checks failed; 1 sample regressed; 1 sample error</div>" in banner
    assert '<div class="failed">failed checks: acc</div>' in banner
    assert "m&lt;1&gt;" in banner and "2024-01-02" in banner
    assert "base-model" in banner and "2023-12-31" in banner
    # The fingerprints once, as one table under the banner (issue 39: JSON twice above a table showing them again).
    assert "revision" not in banner and "abc123" not in banner and "old999" not in banner
    table = page.text[page.text.index('<table class="fingerprint'):]
    assert page.text.count("abc123") == 1 and page.text.count("old999") == 1 and "abc123" in table

    # The page prints the stored verdict; it never re-decides it from the numbers beside it.
    passed = Verdict(passed=True, reasons=(), n_checks=3)
    assert htmlreport.verdict(replace(SUMMARY, verdict=passed)) == ("pass", "PASS (3 checks ok, no regressed sample)")
    old = htmlreport.verdict(replace(SUMMARY, verdict=None, version=3))
    assert old[0] == "warn" and "verdict not recorded" in old[1] and "version 3" in old[1]
    assert "baseline none: the gate fails until one is recorded" in htmlreport.banner(replace(SUMMARY, baseline=None))


def test_metric_table_has_value_baseline_delta_interval_and_check() -> None:
    rows = htmlreport.metric_rows(SUMMARY, RECORDS)
    assert rows[0] == ["acc", "(all)", "5", "40.00", "[11.80, 76.90]", "60.00", "-20.00", "[-40.00, +0.00]", "0.5",
                       "FAIL"]
    low, high = stats.wilson_interval(1, 3)  # no slice interval given: Wilson from the slice's samples
    assert rows[2][:5] == ["acc", "size=gt100", "3", "33.33", f"[{low:.2f}, {high:.2f}]"]
    iou = MetricSummary(value=41.7, n=3, unit="iou", slices={"size=gt100": 41.7}, slice_n={"size=gt100": 3},
                        slice_intervals={"size=gt100": (12.5, 70.0)})
    rows = htmlreport.metric_rows(replace(SUMMARY, metrics={"mean_iou": iou}), RECORDS)
    assert rows[1][4] == "[12.50, 70.00]"  # the interval the metric computed, as the terminal prints it
    bare = replace(SUMMARY, metrics={"mean_iou": replace(iou, slice_intervals={})})
    assert htmlreport.metric_rows(bare, RECORDS)[1][4] == "-"  # graded: no honest Wilson interval


def test_every_sample_is_a_row_with_its_data_and_the_output_stays_text() -> None:
    page = Page(htmlreport.render(SUMMARY, RECORDS, hand_lookup()))
    data = page.data()
    assert [r["data-o"] for r in page.rows] == ["regression", "error", "known-failure", "pass", "pass"]
    assert [s["id"] for s in data["samples"]] == ["reg-1", "err-1", "wrong-1", "ok-1", "ok-2"]
    # untrusted text never becomes markup: exactly our two script elements, the JSON escapes every "<"
    assert len(page.scripts) == 2 and page.text.count("</script>") == 2
    assert "alert(" not in page.text.replace("\\u003cscript\\u003ealert(", "").replace(
        "\\u003cimg src=x onerror=alert(", "")
    reg = data["samples"][0]
    assert reg["raw"] == "</script><script>alert('x')</script>" and reg["instruction"] == "click <the> button & reg-1"
    assert reg["pred"] == {"point": [0.7, 0.5]}  # a point task: only what the model returned
    assert reg["truth"] == {"box": [round(v, 5) for v in TRUTH]}
    assert "screen" in reg and data["screens"][reg["screen"]]["W"] == 1600
    assert data["samples"][2]["img_note"].startswith("image unavailable: ImageError")  # wrong-1's file is missing
    assert data["samples"][1]["img_note"] == "image unavailable: the sample is not in the loaded suite"
    assert len(data["screens"]) == 1  # reg-1 and ok-1 share a screenshot: stored once


def test_the_zoomed_crop_shows_truth_and_prediction_enlarged() -> None:
    page = Page(htmlreport.render(SUMMARY, RECORDS, hand_lookup()))
    reg = page.data()["samples"][0]
    crop = decode(page.rows[0] and next(a["src"] for a in page.images("thumb")))
    x0, y0, x1, y1 = reg["rect"]
    assert x0 <= TRUTH.x0 and x1 >= 0.7 and y0 <= TRUTH.y0 and y1 >= TRUTH.y1  # truth and prediction inside
    assert max(crop.size) == gallery.CROP_SIZE
    scale = crop.width / ((x1 - x0) * 1600)
    assert scale > 0.35  # ~1,000 px screenshot region at 320 px: far larger than a 1600 -> 480 px thumbnail

    def at(x: float, y: float) -> tuple[float, float]:
        return ((x - x0) * 1600 * scale, (y - y0) * 1000 * scale)

    assert near(crop, at(TRUTH.x0, (TRUTH.y0 + TRUTH.y1) / 2), GREEN, radius=2)
    assert near(crop, at(0.7 + 6 / 1600 / scale, 0.5), RED, radius=2)
    screen = decode(page.data()["screens"][0]["src"])
    assert max(screen.size) <= max(gallery.SCREEN_MAX) and not near(screen, (0.375 * screen.width, 400 / 1000 *
                                                                              screen.height), GREEN, radius=0)


def test_one_chart_per_metric_in_its_own_unit() -> None:
    def metric(unit: str, value: float, hib: bool = True, **slices: float) -> MetricSummary:
        return MetricSummary(value=value, n=10, unit=unit, higher_is_better=hib,
                             slices={f"size={k}": v for k, v in slices.items()},
                             slice_n={f"size={k}": 5 for k in slices})

    doc = replace(SUMMARY, baseline_comparison={
        "latency_ms": Comparison(value=1238.0, baseline=700.0, delta=538.0)}, metrics={
        "detection_rate": metric("rate", 63.0, lt32=15.0, gt100=68.0),
        "false_positive_rate": metric("rate", 9.9, False, lt32=5.0),
        "mean_iou": metric("iou", 88.4), "attempts_to_success": metric("count", 1.0, False, lt32=1.0),
        "latency_ms": metric("ms", 1238.0, False, lt32=90.0, gt100=2288.0)})
    page = Page(htmlreport.render(doc, RECORDS, hand_lookup()))
    charts = re.findall(r'<svg class="plot".*?</svg>', page.text, re.S)
    assert [c.split('aria-label="')[1].split('"')[0] for c in charts] == [
        "detection_rate by slice", "false_positive_rate by slice", "mean_iou by slice",
        "attempts_to_success by slice", "latency_ms by slice", "latency distribution"]
    fp, latency = charts[1], charts[4]
    assert "accuracy" not in fp and "share of samples (%)" in fp and "lower is better" in fp
    assert "milliseconds per sample" in latency and "2288 ms" in latency and "\u25b6" not in latency  # not clipped
    ticks = [float(t) for t in re.findall(r'text-anchor="middle" fill="#555">([\d.]+)</text>', latency)]
    assert max(ticks) >= 2288.0 and max(ticks) < 2 * 2288  # the axis follows the data, not 0-110
    assert "baseline: 700 ms" in latency  # the stored baseline drawn as a tick
    counts = [float(t) for t in re.findall(r'text-anchor="middle" fill="#555">([\d.]+)</text>', charts[3])]
    assert max(counts) < 5  # 1.0 attempts is not flattened on a 0-100 axis
    assert "IoU (\u00d7100)" in charts[2]


def test_units_are_inferred_from_the_score_component() -> None:
    assert units.infer("latency_ms", "latency_ms") == "ms"
    assert units.infer("attempts_to_success", "attempts", [1, 2]) == "count"
    assert units.infer("mean_iou", "iou", [88.2]) == "iou"
    assert units.infer("false_positive_rate", "false_positive", [True, False]) == "rate"
    assert units.infer("grounding_accuracy", None) == "accuracy"
    assert units.by_name("iou_over_50") == "rate" and units.by_name("latency_ms") == "ms"
    assert pl.nice_max(2288 * 1.05) == 2500.0 and pl.nice_max(1.05) == 2.0


def test_latency_baseline_is_the_stored_snapshot_not_the_current_value(tmp_path: Path) -> None:
    """The per-sample baseline keeps scores, not timings, so a latency check's baseline is the value stored in
    its aggregate snapshot, read once with the baseline (build_checks), with no paired statistics; the summary
    and the page show that one (they never re-read the snapshot files, which an update run rewrites)."""
    from pytest_uiground.gate.baseline import Baseline
    from pytest_uiground.gate.checks import build_checks
    from pytest_uiground.gate.metrics import compute_all
    from pytest_uiground.report import summary as summary_mod
    from pytest_uiground.suite.config import SuiteConfig

    spec = MetricSpec(name="latency_ms", score="latency_ms", higher_is_better=False)
    timed = [replace(r, latency_ms=ms) for r, ms in zip(RECORDS, (700.0, 727.0, 713.5, 713.5, 713.5), strict=True)]
    base = Baseline(tmp_path, {r.id: BaselineEntry(True, 100.0) for r in timed}, {"model": "ocr"},
                    snapshots={"test_aggregate[latency_ms].json": {"metric": "latency_ms", "value": 144.06}})
    results = compute_all([spec], timed)
    config = SuiteConfig(name="hand", version="1", path=tmp_path / "suite.toml", loader="x", loader_options={},
                         metrics=(spec,))
    checks = build_checks(config, results, timed, base, partial=False,
                          updating=False, suite_file="suite.toml")
    doc = summary_mod.build("hand", None, timed, results, checks, None, {"model": "ocr"})
    out = details.complete(doc, [spec], timed, {"model": "ocr", "date": "2026-01-01", "packages": {"x": 1}})
    comp = out.comparison("latency_ms")
    value = sum(r.latency_ms or 0.0 for r in timed) / len(timed)
    assert comp is not None and comp.baseline == 144.06 and comp.delta == round(value - 144.06, 4)
    assert comp.mcnemar_p is None and comp.delta_interval is None  # no paired statistics without per-sample times
    assert comp.regressed is None and comp.fixed is None
    assert out.metrics["latency_ms"].unit == "ms" and out.metrics["latency_ms"].selection == {"score": "latency_ms"}
    assert out.baseline == {"model": "ocr", "date": "2026-01-01"}  # identity only, not the package list
    row = htmlreport.metric_rows(out, timed)[0]
    assert row[5:7] == ["144.1", f"{value - 144.06:+.1f}"]
    assert SuiteSummary.from_json(json.loads(json.dumps(out.to_json()))) == out


def test_large_runs_write_images_beside_the_page_and_load_them_lazily(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gallery, "INLINE_MAX_SAMPLES", 3)
    path = htmlreport.write(tmp_path / "report.html", SUMMARY, RECORDS, hand_lookup())
    page = read_page(path)
    thumbs = page.images("thumb")
    assert len(thumbs) == 2 and all(a["src"].startswith("report_files/crops/") for a in thumbs)
    assert all("loading" in a for a in thumbs)
    assert page.data()["screens"][0]["src"] == "report_files/screens/0.jpg"
    check_self_contained(page, tmp_path)  # every referenced file exists and decodes
    assert browse.inline_images(RECORDS[:3]) and not browse.inline_images(RECORDS)


def test_write_reports_lays_out_several_suites_and_survives_a_failing_page(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = SuiteSummary(suite="a", model="m", model_fingerprint=None, n_samples=0,
                         metrics={"acc": MetricSummary(value=50.0, n=0)}, baseline_comparison={}, latency_ms=None,
                         regressed=(), fixed=(), errors=(), format_errors=0, provenance={})
    pages = [htmlreport.SuitePage(plain, []), htmlreport.SuitePage(replace(plain, suite="b"), [])]
    written = htmlreport.write_reports(tmp_path, pages)
    assert written == [tmp_path / "a" / "report.html", tmp_path / "b" / "report.html", tmp_path / "report.html"]
    index = read_page(tmp_path / "report.html")
    assert index.urls == ["a/report.html", "b/report.html"] and "50.00" in index.text
    check_self_contained(read_page(tmp_path / "a" / "report.html"))

    def boom(*args: object) -> str:
        raise ValueError("no plots today")

    warnings: list[str] = []
    monkeypatch.setattr(htmlreport, "render", boom)
    (path,) = htmlreport.write_reports(tmp_path / "one", pages[:1], warn=warnings.append)
    assert path == tmp_path / "one" / "report.html"
    assert "ValueError: no plots today" in path.read_text() and "no plots today" in warnings[0]


def test_a_card_shows_only_the_fields_its_task_is_scored_on() -> None:
    """A grounder that also fills a default verdict and option shows only its point on a point task."""
    pred = Prediction(point=Point(0.5, 0.5), box=None, verdict="passed", option="A", attempts=2, raw="x")
    assert browse.prediction_fields(pred, "point") == {"point": [0.5, 0.5]}
    assert browse.prediction_fields(pred, "detect") == {"point": [0.5, 0.5], "attempts": 2}
    assert browse.prediction_fields(pred, "verdict") == {"verdict": "passed"}
    assert browse.prediction_fields(None, "point") == {}


def test_the_sample_table_shows_each_instruction_and_the_click_legend_only_where_clicks_exist() -> None:
    page = htmlreport.render(SUMMARY, RECORDS, hand_lookup())
    assert '<th class="l">instruction</th>' in page
    assert 'title="click &lt;the&gt; button &amp; reg-1">click &lt;the&gt; button &amp; reg-1</td>' in page
    assert "input click" not in page, "a grounding sample's leftover click (a loader's) is neither drawn nor named"

    def detecting(sid: str) -> Sample | None:
        found = hand_lookup()(sid)
        return replace(found, task="detect") if found is not None else None

    assert "input click" in htmlreport.render(SUMMARY, RECORDS, detecting), "detection samples carry an input click"

    def without_click(sid: str) -> Sample | None:
        found = detecting(sid)
        return replace(found, click=None) if found is not None else None

    assert "input click" not in htmlreport.render(SUMMARY, RECORDS, without_click), "no click, no legend"


def test_a_fingerprint_reads_as_json_not_a_python_repr() -> None:
    text = htmlreport.short({"engine": "rapidocr", "engine_options": {"use_cls": False}, "empty": None})
    assert text == 'engine=rapidocr, engine_options={"use_cls": false}'
    assert htmlreport.short(["a", 1]) == '["a", 1]' and htmlreport.short("plain") == "plain"


def test_a_tiny_target_is_zoomed_even_when_the_click_is_across_the_screen() -> None:
    tiny = Box(1000 / 1919, 500 / 1080, 1006 / 1919, 506 / 1080)  # a 6-pixel icon on a 1919x1080 screen
    sample = Sample(id="t", image=ImageRef.from_source("mem:t", screenshot), instruction="tap the icon",
                    task="point", target=Target(box=tiny))
    far = Prediction(point=Point(0.05, 0.05))
    x0, _, x1, _ = gallery.crop_rect(sample, far, 1919, 1080)
    assert x1 - x0 <= gallery.CROP_MIN_PX + 1 and x0 <= 1000 and x1 >= 1006, "the crop is the target, zoomed"
    assert gallery.CROP_SIZE / (x1 - x0) >= 5
    near = Prediction(point=Point(1030 / 1919, 503 / 1080))
    nx0, _, nx1, _ = gallery.crop_rect(sample, near, 1919, 1080)
    assert nx0 <= 1000 and nx1 >= 1030, "a click near the target shares its crop"
