"""report.html and the compare page as a person sees them: rendered by headless Chromium.

Parsing the HTML proves the markup; only a browser proves the page *shows* something:
the script builds the detail view, the SVG charts lay out, the images decode. Each
test renders a page from disk (``file://``, no network), reads back the DOM after the
script ran (``--dump-dom``) and takes a screenshot that must not be blank.

Needs Debian's ``chromium`` at ``/usr/bin/chromium`` (``apt-get install -y chromium``);
skipped with that reason where it is missing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from chromium_pages import CHROMIUM, needs_chromium
from PIL import Image
from test_compare import write_run
from test_htmlreport import RECORDS, SUMMARY, Page, check_self_contained, hand_lookup

from pytest_uiground.report import compare
from pytest_uiground.report import html as htmlreport
from pytest_uiground.report.comparepage import render_html

pytestmark = needs_chromium

FLAGS = ["--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--allow-file-access-from-files",
         "--virtual-time-budget=5000"]


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CHROMIUM), *FLAGS, *args], check=True, capture_output=True, text=True, timeout=180)


def dom(url: str) -> Page:
    """The document after its script ran."""
    return Page(chromium("--dump-dom", url).stdout)


def screenshot(url: str, path: Path, size: str = "1400,2400") -> Image.Image:
    chromium(f"--screenshot={path}", f"--window-size={size}", url)
    img = Image.open(path).convert("RGB")
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, f"{path}: the screenshot is blank"
    return img


@pytest.mark.slow
def test_report_renders_with_banner_table_charts_every_sample_and_a_detail_view(tmp_path: Path) -> None:
    path = htmlreport.write(tmp_path / "report.html", SUMMARY, RECORDS, hand_lookup())
    check_self_contained(Page(path.read_text(encoding="utf-8")), tmp_path)
    url = path.as_uri() + "#sample=reg-1"
    page = dom(url)
    assert "verdict" in page.ids and "FAIL: 1 of 3 checks failed" in page.text
    assert '<table class="metrics sortable">' in page.text
    assert [s["aria-label"] for s in page.svgs] == ["acc by slice", "latency distribution"]
    assert len(page.rows) == len(RECORDS)
    assert '5 of 5 samples shown' in page.text  # the filter script ran over every row
    detail = page.text[page.text.index('id="detail"'):]
    assert "<h3>reg-1</h3>" in detail and 'class="full"' in detail and 'class="crop"' in detail
    assert "click &lt;the&gt; button &amp; reg-1" in detail  # inserted as text, not markup
    assert "&lt;/script&gt;&lt;script&gt;alert('x')&lt;/script&gt;" in detail
    assert 'class="m-truth"' in detail and 'class="m-pred"' in detail  # marks drawn over the screenshot
    assert "predicted point" in detail and "predicted box" not in detail and "truth verdict" not in detail

    shot = screenshot(url, tmp_path / "report.png")
    assert shot.width == 1400


@pytest.mark.slow
def test_compare_page_renders(tmp_path: Path) -> None:
    write_run(tmp_path, "a", "ocr", [True] * 6 + [False] * 2, 20.0)
    write_run(tmp_path, "b", "qwen", [True] * 4 + [False] * 2 + [True] * 2, 90.0)
    runs = compare.load_runs([tmp_path / "a", tmp_path / "b"], None)
    out = tmp_path / "cmp.html"
    out.write_text(render_html(runs), encoding="utf-8")
    page = dom(out.as_uri())
    assert [s["aria-label"] for s in page.svgs] == ["acc by run", "latency_ms by run", "accuracy vs latency"]
    assert page.text.count('class="flip"') == 4 and "fixed (wrong before, right now) (2)" in page.text
    screenshot(out.as_uri(), tmp_path / "cmp.png")
