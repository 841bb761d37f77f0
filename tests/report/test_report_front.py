"""The report pages' front end driven in real headless Chromium (pytest-playwright): what a person
does on ``report.html`` and the compare page, asserted on the DOM the scripts leave.

``report/static/`` holds the pages' scripts and stylesheets (issue 42); these tests click column
headers (sorting, reversing, numbers as numbers, ``-`` last), use the outcome, slice and text
filters, follow j/k through the sorted order, open the detail view and its zoom (a drawn crop, and
the crop the page draws itself from a linked screenshot), scroll the sample table under its pinned
id column, and check that the stylesheets from the files apply (computed styles, not CSS text).
Every page is written in-process by the report writers and opened from disk (``file://``).

Needs Debian's ``chromium`` at ``/usr/bin/chromium`` (``apt-get install -y chromium``); skipped with
that reason where it is missing. Playwright drives it through ``executable_path`` (as
``tests/annotator/test_annotator_page.py`` does), so no browser download is needed.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from chromium_pages import base_url, browser_type_launch_args, needs_chromium  # noqa: F401 (fixtures)
from ownsuite import OwnSuite, grown
from PIL import Image
from playwright.sync_api import Page, expect
from test_compare import write_run
from test_htmlreport import RECORDS, SUMMARY, hand_lookup
from test_report_lazy import build, page_data, summary

from pytest_uiground.perturb.derive import derive
from pytest_uiground.perturb.transforms import parse_list
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.record.score import Score
from pytest_uiground.report import compare, gallery
from pytest_uiground.report import html as htmlreport
from pytest_uiground.report.comparepage import render_html
from pytest_uiground.report.gallery import FILES_DIR, safe_name

pytestmark = needs_chromium




@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1000}}


@pytest.fixture
def trouble(page: Page) -> Iterator[list[str]]:
    """Script errors, console errors and dialogs on the page: none may happen (an ``alert`` would mean
    model output ran as markup)."""
    seen: list[str] = []
    page.on("pageerror", lambda e: seen.append(f"page error: {e}"))
    page.on("console", lambda m: seen.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("dialog", lambda d: (seen.append(f"dialog: {d.message}"), d.dismiss()))
    yield seen
    assert seen == []


def column(page: Page, name: str) -> list[str]:
    """The text of one column of the sample table, rows in their current order (hidden ones too)."""
    index: int = page.eval_on_selector_all(
        "#samples thead th", f"ths => ths.findIndex(th => th.textContent.trim() === {name!r})")
    assert index >= 0, name
    texts: list[str] = page.eval_on_selector_all(
        "#samples tbody tr", f"rows => rows.map(r => r.cells[{index}].textContent.trim())")
    return texts


def shown_ids(page: Page) -> list[str]:
    ids: list[str] = page.eval_on_selector_all(
        "#samples tbody tr:not([hidden])", "rows => rows.map(r => r.querySelector('td.id').textContent)")
    return ids


def rgb(page: Page, selector: str, prop: str) -> str:
    value: str = page.eval_on_selector(selector, f"e => getComputedStyle(e).getPropertyValue({prop!r})")
    return value


@pytest.fixture
def report(tmp_path: Path) -> Path:
    return htmlreport.write(tmp_path / "report.html", SUMMARY, RECORDS, hand_lookup())


def test_sample_table_sorts_by_a_header_click_and_a_second_click_reverses(
        page: Page, report: Path, trouble: list[str]) -> None:
    page.goto(report.as_uri())
    expect(page.locator("#f-count")).to_have_text("5 of 5 samples shown")
    ms = page.locator("#samples thead th", has_text="ms")
    ms.click()
    expect(ms).to_have_attribute("aria-sort", "ascending")
    assert column(page, "ms") == ["5.0", "10.0", "10.0", "12.0", "30.0"]  # numbers as numbers, not "10" < "5"
    ms.click()
    expect(ms).to_have_attribute("aria-sort", "descending")
    assert column(page, "ms") == ["30.0", "12.0", "10.0", "10.0", "5.0"]
    page.locator("#samples thead th.id").click()
    expect(ms).not_to_have_attribute("aria-sort", re.compile(".*"))  # one sorted column at a time
    assert column(page, "id") == ["err-1", "ok-1", "ok-2", "reg-1", "wrong-1"]
    # j and k walk the table in the order it is shown now
    page.locator("#row-0").click()
    first = page.locator("#detail h3").text_content()
    order = column(page, "id")
    page.keyboard.press("j")
    expect(page.locator("#detail h3")).to_have_text(order[order.index(first or "") + 1])
    page.keyboard.press("k")
    expect(page.locator("#detail h3")).to_have_text(first or "")


def test_a_metrics_table_sorts_too(page: Page, report: Path, trouble: list[str]) -> None:
    page.goto(report.as_uri())
    table = page.locator("table.metrics")
    labels = table.locator("tr").first.locator("th")
    heads = [t.strip() for t in labels.all_text_contents()]
    col = heads.index("value")
    values = lambda: [r.strip() for r in table.locator(f"tbody tr td:nth-child({col + 1})").all_text_contents()]  # noqa: E731
    labels.nth(col).click()
    got = [float(v.split()[0]) for v in values()]
    assert got == sorted(got) and len(got) == 3  # acc 40 and its two slices, 33.33 and 50
    labels.nth(col).click()
    assert [float(v.split()[0]) for v in values()] == sorted(got, reverse=True)


def test_the_filters_hide_rows_by_outcome_slice_and_text(page: Page, report: Path, trouble: list[str]) -> None:
    page.goto(report.as_uri())
    page.select_option("#f-outcome", "!ok")
    expect(page.locator("#f-count")).to_have_text("3 of 5 samples shown")
    assert sorted(shown_ids(page)) == ["err-1", "reg-1", "wrong-1"]
    page.select_option(".f-slice[data-key=size]", "lt32")
    expect(page.locator("#f-count")).to_have_text("1 of 5 samples shown")  # not passing and small
    assert shown_ids(page) == ["wrong-1"]
    page.select_option("#f-outcome", "")
    expect(page.locator("#f-count")).to_have_text("2 of 5 samples shown")
    assert sorted(shown_ids(page)) == ["ok-1", "wrong-1"]
    page.select_option(".f-slice[data-key=size]", "")
    page.fill("#f-text", "BOLD")  # the raw output "<b>bold</b>", case-insensitive
    expect(page.locator("#f-count")).to_have_text("1 of 5 samples shown")
    assert shown_ids(page) == ["wrong-1"]
    page.fill("#f-text", "")
    expect(page.locator("#f-count")).to_have_text("5 of 5 samples shown")
    # a sort keeps the filter: the hidden rows stay hidden wherever they move
    page.select_option("#f-outcome", "pass")
    page.locator("#samples thead th", has_text="ms").click()
    assert shown_ids(page) == ["ok-1", "ok-2"]


def test_the_detail_view_draws_the_screenshot_the_marks_and_the_zoomed_crop(
        page: Page, report: Path, trouble: list[str], tmp_path: Path) -> None:
    page.goto(report.as_uri() + "#sample=reg-1")
    detail = page.locator("#detail")
    expect(detail.locator("h3")).to_have_text("reg-1")
    expect(page.locator("#samples tr.sel td.id")).to_have_text("reg-1")
    full, crop = detail.locator("img.full"), detail.locator("figure.zoom img.crop")
    expect(full).to_be_visible()
    expect(crop).to_be_visible()
    assert full.evaluate("i => i.naturalWidth") > 0 and crop.evaluate("i => i.naturalWidth") > 0  # decoded
    # the marks lie over the screenshot, styled by browser.css: truth green, prediction red
    marks, shot = detail.locator("svg.marks").bounding_box(), full.bounding_box()
    assert marks is not None and shot is not None
    assert [round(v) for v in marks.values()] == [round(v) for v in shot.values()]
    assert rgb(page, "#detail rect.m-truth", "stroke") == "rgb(0, 200, 0)"
    assert rgb(page, "#detail circle.m-pred", "stroke") == "rgb(230, 0, 0)"
    # the model's output is text in the page, never markup (no alert ran: ``trouble`` is empty)
    expect(detail.locator("pre.raw")).to_have_text("</script><script>alert('x')</script>")
    expect(detail.locator("p.instr")).to_have_text("click <the> button & reg-1")
    # the truth box is painted, on the screenshot and in the zoomed crop, not only present in the DOM
    detail.locator("div.screen").screenshot(path=str(tmp_path / "screen.png"))
    crop.screenshot(path=str(tmp_path / "crop.png"))
    assert green(Image.open(tmp_path / "screen.png")) and green(Image.open(tmp_path / "crop.png"))
    # another row, by a click
    page.locator("#samples td.id", has_text="ok-1").click()
    expect(detail.locator("h3")).to_have_text("ok-1")
    assert page.evaluate("location.hash") == "#sample=ok-1"


def pixels(img: Image.Image) -> np.ndarray[Any, np.dtype[np.int32]]:
    return np.asarray(img.convert("RGB"), dtype=np.int32).reshape(-1, 3)


def green(img: Image.Image) -> bool:
    """Some pixel is the truth box's green (browser.css: .m-truth, #00c800)."""
    px = pixels(img)
    return bool(((px[:, 1] > 160) & (px[:, 0] < 60) & (px[:, 2] < 60)).any())


def test_a_linked_sample_is_zoomed_by_the_page_from_its_screenshot(
        page: Page, trouble: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large run draws only the first samples; the page zooms the others itself (browser.js: zoomed),
    as an SVG window on the linked screenshot."""
    monkeypatch.setattr(gallery, "INLINE_MAX_SAMPLES", 4)
    monkeypatch.setattr(gallery, "DRAWN_MAX", 3)
    records, samples = build(tmp_path, n_right=2, n_wrong=5)
    out = tmp_path / "out"
    htmlreport.write_reports(out, [htmlreport.SuitePage(summary(len(records)), records, samples.get)])
    page.goto((out / "report.html").as_uri() + "#sample=bad-006")  # the last regression: not drawn
    detail = page.locator("#detail")
    expect(detail.locator("h3")).to_have_text("bad-006")
    assert page.locator("#samples tr.sel img.thumb").count() == 0
    zoom = detail.locator("figure.zoom svg.crop")
    expect(zoom).to_be_visible()
    view = [float(v) for v in (zoom.get_attribute("viewBox") or "").split()]
    assert view[2] < 640 and view[3] < 400  # a window on the 640 x 400 screenshot, not all of it
    assert zoom.locator("image").get_attribute("href") == "../data/bad-006.png"
    expect(zoom.locator("rect.m-truth")).to_have_count(1)
    zoom.screenshot(path=str(tmp_path / "zoom.png"))
    shot = Image.open(tmp_path / "zoom.png")
    screen = (np.abs(pixels(shot) - [200, 210, 220]).sum(axis=1) < 12).sum()
    assert screen > shot.width * shot.height // 4  # the screenshot's own colour fills the window: it loaded
    assert green(shot)  # and the truth box is drawn on it


def test_the_id_column_stays_in_view_when_the_table_scrolls_sideways(
        page: Page, report: Path, trouble: list[str]) -> None:
    page.set_viewport_size({"width": 400, "height": 900})  # a phone: the sample table cannot fit
    page.goto(report.as_uri())
    wrap = page.locator(".tablewrap")
    assert wrap.evaluate("w => w.scrollWidth > w.clientWidth")  # the table is wider than its frame
    cell, instr = page.locator("#row-0 td.id"), page.locator("#row-0 td.instr")
    before = (cell.bounding_box(), instr.bounding_box())
    # as far as the table reaches, up to 150 px (instructions wrap, so the table is only as wide as it must be)
    moved: float = wrap.evaluate("w => { w.scrollLeft = 150; return w.scrollLeft; }")
    after = (cell.bounding_box(), instr.bounding_box())
    frame = wrap.bounding_box()
    assert frame is not None and all(b is not None for b in (*before, *after))
    assert after[1]["x"] == pytest.approx(before[1]["x"] - moved, abs=1)  # type: ignore[index]  # the rest scrolled
    # the id cell, which would have scrolled out of the frame to the left, is pinned at its left edge
    assert before[0]["x"] - moved < frame["x"]  # type: ignore[index]
    assert after[0]["x"] == pytest.approx(frame["x"] + 1, abs=1)  # type: ignore[index]  # inside the 1 px border


def png(colour: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (60, 40), colour).save(buf, format="PNG")
    return buf.getvalue()


def test_compare_page_sorts_its_tables_and_shows_both_runs_crops(
        page: Page, trouble: list[str], tmp_path: Path) -> None:
    write_run(tmp_path, "a", "ocr", [True] * 6 + [False] * 2, 20.0)
    write_run(tmp_path, "b", "qwen", [True] * 4 + [False] * 2 + [True] * 2, 90.0)
    for run, colour in (("a", (0, 90, 200)), ("b", (200, 90, 0))):
        crops = tmp_path / run / FILES_DIR / "crops"
        crops.mkdir(parents=True)
        for i in range(8):
            (crops / f"{safe_name(f's{i}')}.png").write_bytes(png(colour))
    runs = compare.load_runs([tmp_path / "a", tmp_path / "b"], None)
    out = tmp_path / "cmp.html"
    out.write_text(render_html(runs), encoding="utf-8")
    page.goto(out.as_uri())
    table = page.locator("table.sortable").nth(1)  # acc: (all), size=gt100, size=lt32
    head = table.locator("tr").first.locator("th")
    slices = lambda: [t.strip() for t in table.locator("tr td:first-child").all_text_contents()]  # noqa: E731
    assert slices() == ["(all)", "size=gt100", "size=lt32"]
    head.first.click()
    expect(head.first).to_have_attribute("aria-sort", "ascending")
    head.first.click()
    expect(head.first).to_have_attribute("aria-sort", "descending")
    assert slices() == ["size=lt32", "size=gt100", "(all)"]
    assert rgb(page, "table.sortable th[aria-sort]", "cursor") == "pointer"  # sort.css applies
    # the flipped samples, each with both runs' crops decoded side by side
    cards = page.locator("figure.flip")
    expect(cards).to_have_count(4)
    for img in cards.locator("img.thumb").all():
        assert img.evaluate("i => i.complete && i.naturalWidth") == 60
    assert rgb(page, "figure.flip", "width") == "340px"  # compare.css applies


# -- an own suite's report at a laptop's width (issue 39) ---------------------------------------------------
@pytest.fixture
def own_report(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """report.html of a suite of one's own screenshots grown since its baseline (``ownsuite.grown``): its
    metrics table has the widest set of columns, its sample table three metadata columns."""
    own = OwnSuite(pytester, monkeypatch)
    result, _new, _wrong = grown(own)
    assert result.ret == 0, result.stdout.str()[-3000:]
    return own.report()


# Every table's header cells: in the viewport, or in a box of their own that scrolls sideways (itself inside
# the viewport) and brings the cell into that box when scrolled to its end. The cells that fail, as text.
CUT_CELLS = """() => {
  const W = document.documentElement.clientWidth, cut = [];
  for (const table of document.querySelectorAll("table")) {
    if (!table.offsetParent) continue;  // a closed <details>
    const head = table.tHead ? table.tHead.rows[0] : table.rows[0];
    let box = table.parentElement;
    while (box && !["auto", "scroll"].includes(getComputedStyle(box).overflowX)) box = box.parentElement;
    for (const cell of head.cells) {
      if (cell.getBoundingClientRect().right <= W + 0.5) continue;
      const frame = box ? box.getBoundingClientRect() : null;
      if (box && frame.right <= W + 0.5) {
        box.scrollLeft = box.scrollWidth;
        const reached = cell.getBoundingClientRect().right <= frame.right + 0.5;
        box.scrollLeft = 0;
        if (reached) continue;
      }
      cut.push((table.id || table.className) + ": " + cell.textContent.trim());
    }
  }
  return cut;
}"""


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 900])
def test_no_column_of_an_own_suite_s_report_is_cut(
        page: Page, own_report: Path, trouble: list[str], width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(own_report.as_uri())
    expect(page.locator("#detail h3")).to_be_visible()
    assert page.evaluate(CUT_CELLS) == []
    # and the page itself never scrolls sideways: what does not fit scrolls inside its own box
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    if width == 1280:  # at a laptop's width the two tables fit whole, no scrolling needed
        for box in (".scrollx:has(table.metrics)", ".tablewrap"):
            assert page.eval_on_selector(box, "b => b.scrollWidth <= b.clientWidth"), box


@pytest.mark.slow
def test_every_mark_drawn_in_the_detail_view_has_its_swatch_in_the_legend(
        page: Page, own_report: Path, trouble: list[str]) -> None:
    """The dashed amber box (the zoomed area) had none; each mark's swatch has the mark's own colour."""
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(own_report.as_uri())
    seen: set[str] = set()
    for i in range(page.locator("#samples tbody tr").count()):
        page.locator(f"#row-{i} td.id").click()
        expect(page.locator("#samples tr.sel")).to_have_id(f"row-{i}")
        marks: list[list[str]] = page.eval_on_selector_all(
            "#detail svg.marks *", """els => els.flatMap(e => Array.from(e.classList).filter(c => c.startsWith("m-"))
              .map(c => { const st = getComputedStyle(e);
                          return [c, st.fill !== "none" && st.fill !== "" ? st.fill : st.stroke]; }))""")
        for cls, colour in marks:
            swatch = page.locator(f".legend .sw[data-mark='{cls}']")
            assert swatch.count() == 1, f"{cls} is drawn but not in the legend"
            expect(swatch).to_be_visible()
            assert swatch.evaluate("s => getComputedStyle(s).borderTopColor") == colour, cls
            seen.add(cls)
    assert {"m-truth", "m-pred", "m-crop"} <= seen  # the run drew these at least


def perturbed_run(tmp_path: Path) -> Path:
    """A screen, its 1920x720 letterbox variant (bars left and right: the element moves) and its German wording:
    a model that answers the letterboxed screen in the original's coordinates misses; in German it is right."""
    path = tmp_path / "data" / "radio.png"
    path.parent.mkdir()
    img = Image.new("RGB", (640, 400), (200, 210, 220))
    img.paste((40, 60, 160), (64, 40, 128, 80))  # the element, where the truth box is
    img.save(path)
    truth = Box(64 / 640, 40 / 400, 128 / 640, 80 / 400)
    original = Sample(id="radio", image=ImageRef.from_path(path), instruction="Open the radio", task="point",
                      target=Target(box=truth), meta={"app": "media"}, instruction_alts=("Radio öffnen",))
    boxed, german = derive([original], parse_list("letterbox:1920x720,alt:1")).samples
    assert boxed.target.box is not None and boxed.target.box != truth  # the target moved with the letterbox

    def record(s: Sample, point: Point, right: bool, outcome: str) -> SampleResult:
        return SampleResult(suite="s", id=s.id, task="point", meta=dict(s.meta), score=Score(100.0 * right, right),
                            prediction=Prediction(point=point, raw=f"{point}"), latency_ms=1.0, outcome=outcome)

    records = [record(original, truth.center, True, "pass"), record(boxed, truth.center, False, "regression"),
               record(german, truth.center, True, "pass")]
    out = tmp_path / "out"
    samples = {s.id: s for s in (original, boxed, german)}
    htmlreport.write_reports(out, [htmlreport.SuitePage(summary(len(records)), records, samples.get)])
    return out / "report.html"


def marks(img: Image.Image) -> tuple[tuple[float, float, float, float], tuple[float, float]]:
    """The drawn truth's bounds (its green) and the answer's centre (its red, #e60000), in the picture's pixels."""
    px = np.asarray(img.convert("RGB"), dtype=np.int32)
    gy, gx = np.nonzero((px[..., 1] > 160) & (px[..., 0] < 60) & (px[..., 2] < 60))
    ry, rx = np.nonzero((px[..., 0] > 200) & (px[..., 1] < 60) & (px[..., 2] < 60))
    assert gx.size and rx.size, "the truth (green) and the answer (red) are both drawn"
    return (gx.min(), gy.min(), gx.max(), gy.max()), (float(rx.mean()), float(ry.mean()))


def test_a_perturbed_sample_shows_its_original_crop_beside_its_own(
        page: Page, trouble: list[str], tmp_path: Path) -> None:
    """Issue 43: the original's and the perturbed crop side by side, each answer drawn in its own image's
    coordinates (the letterboxed screen's own), each with its instruction; the original links its variants."""
    report = perturbed_run(tmp_path)
    entries = {e["id"]: e for e in page_data(report)["samples"]}  # type: ignore[attr-defined]
    ids = [e["id"] for e in page_data(report)["samples"]]  # type: ignore[attr-defined]
    assert ids[entries["radio@letterbox:1920x720"]["original"]] == "radio"
    assert sorted(ids[j] for j in entries["radio"]["variants"]) == ["radio@alt:1", "radio@letterbox:1920x720"]
    page.goto(report.as_uri() + "#sample=radio@letterbox:1920x720")
    detail = page.locator("#detail")
    expect(detail.locator("h3")).to_have_text("radio@letterbox:1920x720")
    sides = detail.locator(".pair figure.side")
    expect(sides).to_have_count(2)
    expect(detail.locator("figure.zoom:not(.side)")).to_have_count(0)  # the pair replaces the lone crop
    expect(sides.nth(0).locator("figcaption")).to_contain_text("original")
    expect(sides.nth(0).locator("figcaption .tag")).to_have_text("pass")
    expect(sides.nth(1).locator("figcaption")).to_contain_text("perturbed: letterbox:1920x720")
    expect(sides.nth(1).locator("figcaption .tag")).to_have_text("regression")
    crops = [sides.nth(k).locator("img.crop") for k in (0, 1)]
    for c in crops:
        expect(c).to_be_visible()
        assert c.evaluate("i => i.naturalWidth") > 0
    srcs = [c.get_attribute("src") for c in crops]
    assert srcs[0] != srcs[1]  # two pictures: the original's and the letterboxed one's
    detail.screenshot(path=str(tmp_path / "detail.png"))  # for a person to look at
    inside = []
    for k, c in enumerate(crops):
        c.screenshot(path=str(tmp_path / f"side{k}.png"))
        (x0, y0, x1, y1), (x, y) = marks(Image.open(tmp_path / f"side{k}.png"))
        inside.append(x0 <= x <= x1 and y0 <= y <= y1)
    # each answer in its own image's coordinates: the same normalized point is on the element in the original
    # and off it in the letterboxed screen, where the element moved
    assert inside == [True, False]
    # the German wording: the same picture, its own instruction
    page.goto(report.as_uri() + "#sample=radio@alt:1")
    expect(detail.locator("h3")).to_have_text("radio@alt:1")
    expect(detail.locator(".pair figure.side").nth(1).locator(".said")).to_have_text("Radio öffnen")
    expect(detail.locator(".pair figure.side").nth(0).locator(".said")).to_have_text("Open the radio")
    # the original lists its variants, and a click opens one
    page.goto(report.as_uri() + "#sample=radio")
    expect(detail.locator("h3")).to_have_text("radio")
    links = detail.locator("p.variants a")
    expect(links).to_have_text(["letterbox:1920x720", "alt:1"])
    links.nth(0).click()
    expect(detail.locator("h3")).to_have_text("radio@letterbox:1920x720")
