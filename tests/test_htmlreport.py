"""report.html: a self-contained page per run, from real runs and from hand-written records."""

from __future__ import annotations

import base64
import io
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

# matplotlib's modules are imported here, not first inside a test: pytester restores sys.modules after
# each test, and a second copy of matplotlib's classes breaks the next figure.
import pytest

pytest.importorskip("matplotlib", reason="the plots need the [report] extra (pip install 'pytest-uiground[report]')")
import matplotlib.backends.backend_agg
import matplotlib.figure  # noqa: F401
from conftest import Project
from PIL import Image

from pytest_uiground import stats
from pytest_uiground.geometry import Box, Point
from pytest_uiground.image import ImageRef
from pytest_uiground.loading import load_suite
from pytest_uiground.prediction import Prediction
from pytest_uiground.report import gallery
from pytest_uiground.report import html as htmlreport
from pytest_uiground.report.summary import Comparison, MetricSummary, SuiteSummary
from pytest_uiground.results import SampleResult
from pytest_uiground.sample import Sample, Target
from pytest_uiground.score import Score

GREEN = gallery.TRUTH_RGB
RED = gallery.PREDICTION_RGB


class Page(HTMLParser):
    """The parts of a page these tests check: images, scripts and every src/href."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.imgs: list[dict[str, str]] = []
        self.scripts: list[dict[str, str]] = []
        self.urls: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "img":
            self.imgs.append(a)
        if tag == "script":
            self.scripts.append(a)
        self.urls += [a[k] for k in ("src", "href") if k in a]

    def images(self, cls: str) -> list[dict[str, str]]:
        return [a for a in self.imgs if a.get("class") == cls]


def decode(uri: str) -> Image.Image:
    head, _, payload = uri.partition(",")
    assert head in ("data:image/png;base64", "data:image/jpeg;base64"), head
    img = Image.open(io.BytesIO(base64.b64decode(payload, validate=True)))
    img.load()
    return img.convert("RGB")


def check_self_contained(page: Page) -> list[Image.Image]:
    """No script, nothing fetched; every image decodes. Returns the decoded images."""
    assert page.scripts == []
    assert not [u for u in page.urls if u.startswith(("http://", "https://", "//"))]
    assert "url(" not in page.text and "@import" not in page.text
    assert page.imgs and all(a["src"].startswith("data:image/") for a in page.imgs)
    return [decode(a["src"]) for a in page.imgs]


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


def check_truth_box(thumb: Image.Image, sample: Sample) -> None:
    """The thumbnail has the ground-truth box drawn in green where the screenshot itself is not green."""
    box = sample.target.box
    assert box is not None
    w, h = thumb.size
    plain = sample.image.load().resize((w, h))
    edges = [((box.x0 + box.x1) / 2 * w, box.y0 * h), (box.x0 * w, (box.y0 + box.y1) / 2 * h)]
    for xy in edges:
        assert near(thumb, xy, GREEN), f"no ground-truth green at {xy} in {sample.id}"
        assert not near(plain, xy, GREEN, radius=0), "the screenshot is green there by itself"


# -- real runs ----------------------------------------------------------------------

@pytest.mark.slow
def test_report_of_real_runs_without_and_with_baseline(project: Project) -> None:
    ids = project.ids()
    first = project.run("--snapshot-update", "--uiground-report", "first", wrong=ids[:1])
    assert first.ret == 0, first.stdout.str()
    page = read_page(project.root / "first" / "report.html")
    check_self_contained(page)
    assert len(page.images("plot")) == 2  # accuracy by slice and latency: no baseline yet
    assert [a["data-id"] for a in page.images("thumb")] == ids[:1]

    regressed, garbled = ids[1:4], ids[5]
    worse = project.run("--uiground-report", "out", wrong=[ids[0], *regressed], garbled=[garbled])
    assert worse.ret == 1
    summary = project.summary()
    assert summary["regressed"] == sorted([*regressed, garbled])
    page = read_page(project.root / "out" / "report.html")
    images = check_self_contained(page)
    assert len(images) == 3 + 5  # accuracy, latency, baseline vs current; 4 regressions + 1 known failure
    assert len(page.images("plot")) == 3
    thumbs = page.images("thumb")
    assert [a["data-id"] for a in thumbs] == [*summary["regressed"], ids[0]]  # regressions first
    for sid in summary["regressed"]:
        assert f'id="sample-{sid}"' in page.text
    assert "&lt;&lt;garbage&gt;&gt;" in page.text and "<<garbage>>" not in page.text
    assert "mini" in page.text and "scripted" in page.text and "wrong-no-baseline" not in page.text

    samples = {s.id: s for s in load_suite(project.root / "suites" / "mini" / "suite.toml").samples}
    first_thumb = decode(thumbs[0]["src"])
    assert first_thumb.width <= gallery.THUMB_WIDTH
    check_truth_box(first_thumb, samples[thumbs[0]["data-id"]])


@pytest.mark.slow
def test_a_failing_renderer_leaves_the_json_and_says_so(project: Project) -> None:
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
    img = Image.new("RGB", (800, 600), (240, 240, 240))
    img.paste((60, 60, 200), (300, 200, 500, 260))
    return img


def make_sample(sid: str, image: ImageRef) -> Sample:
    return Sample(id=sid, image=image, instruction=f"click <the> button & {sid}", task="point",
                  target=Target(box=Box(0.375, 1 / 3, 0.625, 260 / 600)), meta={"size": "gt100"},
                  click=Point(0.1, 0.1))


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
    record("reg-1", "regression", "gt100", correct=False, raw="<script>alert('x')</script>", point=(0.05, 0.95)),
    record("err-1", "error", "gt100", correct=False, error="<img src=x onerror=alert(1)>", latency=5.0),
]

SUMMARY = SuiteSummary(
    suite="hand", model="m<1>", model_fingerprint=None, n_samples=5, format_errors=0, errors=("err-1",),
    regressed=("reg-1",), fixed=(), latency_ms=None, judge={"model": "judge-7b"},
    metrics={"acc": MetricSummary(value=40.0, n=5, interval=(11.8, 76.9),
                                  slices={"size=lt32": 50.0, "size=gt100": 33.3333},
                                  slice_n={"size=lt32": 2, "size=gt100": 3})},
    baseline_comparison={
        "acc": Comparison(value=40.0, baseline=60.0, delta=-20.0, delta_interval=(-40.0, 0.0), verdict="FAIL"),
        "acc.size=lt32": Comparison(value=50.0, baseline=50.0, delta=0.0, verdict="ok"),
        "acc.size=gt100": Comparison(value=33.3333, baseline=66.6667, delta=-33.3333, verdict="ok"),
    },
    provenance={"model": "m<1>", "date": "2024-01-01T00:00:00+00:00", "packages": {"pytest": "8"},
                "judge": {"model": "judge-7b"}},
    judge_parse_errors=("ok-2",), judge_stability={"samples": 2, "unstable": ["ok-1"]},
)


def hand_lookup() -> Callable[[str], Sample | None]:
    good = ImageRef.from_source("mem:good", screenshot)
    broken = ImageRef.from_path("/nonexistent/screen.png")
    samples = {"reg-1": make_sample("reg-1", good), "wrong-1": make_sample("wrong-1", broken)}
    return samples.get


def test_render_escapes_model_output_and_degrades_to_text_cards() -> None:
    page = Page(htmlreport.render(SUMMARY, RECORDS, hand_lookup()))
    images = check_self_contained(page)
    assert len(page.images("plot")) == 3 and len(images) == 4
    assert "<script>" not in page.text and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page.text
    assert "onerror=alert" not in page.text.replace("&lt;img src=x onerror=alert(1)&gt;", "")
    assert "<b>bold</b>" not in page.text and "click &lt;the&gt; button &amp; reg-1" in page.text
    assert "m&lt;1&gt;" in page.text and "FAIL" in page.text
    assert page.text.count("judge-7b") == 1 and "<dt>judge parse errors</dt><dd>1</dd>" in page.text
    assert "target box: [0.375, 0.333, 0.625, 0.433]" in page.text
    order = [page.text.index(f'id="sample-{sid}"') for sid in ("reg-1", "err-1", "wrong-1")]
    assert order == sorted(order)  # regressions, then errors, then wrong answers
    assert 'id="sample-ok-1"' not in page.text
    assert "image unavailable: ImageError" in page.text  # wrong-1's image is missing
    assert "the sample is not in the loaded suite" in page.text  # err-1 has no sample at all

    (thumb,) = page.images("thumb")
    img = decode(thumb["src"])
    assert img.size == (480, 360)
    assert near(img, (0.375 * 480, 0.39 * 360), GREEN) and near(img, (0.05 * 479, 0.95 * 359), RED)
    assert near(img, (0.1 * 480, 0.1 * 360), gallery.CLICK_RGB)


def test_slice_intervals_are_wilson_from_samples_or_from_the_value() -> None:
    lt32 = [r for r in RECORDS if r.meta["size"] == "lt32"]
    assert htmlreport.slice_interval(50.0, 2, lt32) == stats.wilson_interval(1, 2)
    assert htmlreport.slice_interval(33.3333, 3, []) == stats.wilson_interval(1, 3)
    assert htmlreport.slice_interval(41.7, 3, []) is None  # graded: no honest interval
    rows = htmlreport.metric_rows(SUMMARY, RECORDS)
    low, high = stats.wilson_interval(1, 3)
    assert rows[2][:5] == ["acc", "size=gt100", "33.33", "3", f"[{low:.2f}, {high:.2f}]"]
    assert rows[0][5:] == ["60.00", "-20.00", "[-40.00, +0.00]", "FAIL"]


def test_slice_intervals_the_metric_computed_are_shown() -> None:
    """``slice_intervals`` (what the terminal prints) win; a graded slice without one shows none."""
    iou = MetricSummary(value=41.7, n=3, interval=(20.1, 63.0), slices={"size=gt100": 41.7},
                        slice_n={"size=gt100": 3}, slice_intervals={"size=gt100": (12.5, 70.0)})
    acc = replace(SUMMARY.metrics["acc"], slice_intervals={"size=lt32": (9.45, 90.55), "size=gt100": None})
    graded = replace(SUMMARY, metrics={"acc": acc, "mean_iou": iou})
    rows = htmlreport.metric_rows(graded, RECORDS)
    assert rows[1][:5] == ["acc", "size=lt32", "50.00", "2", "[9.45, 90.55]"]  # the summary's, not Wilson(1, 2)
    low, high = stats.wilson_interval(1, 3)
    assert rows[2][:5] == ["acc", "size=gt100", "33.33", "3", f"[{low:.2f}, {high:.2f}]"]  # none given: Wilson
    assert rows[4][:5] == ["mean_iou", "size=gt100", "41.70", "3", "[12.50, 70.00]"]
    bare = replace(graded, metrics={"mean_iou": replace(iou, slice_intervals={})})
    assert htmlreport.metric_rows(bare, RECORDS)[1][4] == "-"  # graded: no honest Wilson interval

    page = Page(htmlreport.render(graded, RECORDS, hand_lookup()))
    check_self_contained(page)
    assert "<td>[12.50, 70.00]</td>" in page.text and "<td>[9.45, 90.55]</td>" in page.text
    assert [a["alt"] for a in page.images("plot")] == ["acc by slice", "mean_iou by slice", "latency distribution",
                                                       "acc baseline vs current"]


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

    def boom(*args: object) -> str:
        raise ValueError("no plots today")

    warnings: list[str] = []
    monkeypatch.setattr(htmlreport, "render", boom)
    (path,) = htmlreport.write_reports(tmp_path / "one", pages[:1], warn=warnings.append)
    assert path == tmp_path / "one" / "report.html"
    assert "ValueError: no plots today" in path.read_text() and "no plots today" in warnings[0]


def test_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium or chromium-browser on PATH to render the page headless")
    html_path = htmlreport.write(tmp_path / "report.html", SUMMARY, RECORDS, hand_lookup())
    shot = tmp_path / "shot.png"
    subprocess.run([browser, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
                    f"--screenshot={shot}", "--window-size=1280,2400", html_path.as_uri()],
                   check=True, capture_output=True, timeout=120)
    img = Image.open(shot).convert("RGB")
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "the screenshot is blank"
