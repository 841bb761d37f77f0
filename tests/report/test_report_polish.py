"""report.html and the compare page: fingerprints side by side, sortable tables, instructions on the
compare cards and latency plots that name their percentile (the sorting and the pinned id column are
driven in Chromium: test_report_front.py)."""

from __future__ import annotations

import json
from pathlib import Path

from test_compare import write_run

from pytest_uiground.report import compare
from pytest_uiground.report.comparepage import render_html
from pytest_uiground.report.markup import fingerprint_table


def test_equal_fingerprints_in_different_key_orders_read_the_same() -> None:
    table = fingerprint_table({"b": 1, "a": {"y": 2, "x": 1}}, {"a": {"x": 1, "y": 2}, "b": 1})
    assert table.index(">a<") < table.index(">b<")  # one order: sorted keys
    assert 'class="diff"' not in table and "0 of 2 fingerprint fields differ" in table


def test_a_differing_fingerprint_field_is_marked() -> None:
    table = fingerprint_table({"model": "ocr", "path": "new", "dtype": "bf16"}, {"model": "ocr", "path": "old"})
    rows = table.split("<tr")[2:]
    assert [r.split('class="')[1].split('"')[0] for r in rows] == ["diff", "same", "diff"]  # dtype, model, path
    assert "differs" in rows[2] and ">new<" in rows[2] and ">old<" in rows[2]
    assert "2 of 3 fingerprint fields differ" in table
    assert "no baseline fingerprint" in fingerprint_table({"model": "ocr"}, None)


def test_compare_cards_show_the_instruction_and_the_scatter_names_p50(tmp_path: Path) -> None:
    write_run(tmp_path, "a", "ocr", [True] * 4 + [False] * 2, 50.0)
    write_run(tmp_path, "b", "qwen", [False] * 2 + [True] * 4, 80.0)
    data = {"samples": [{"id": f"s{i}", "instruction": f"Tap the button number {i}"} for i in range(6)]}
    (tmp_path / "a" / "report.html").write_text(
        f'<html><script type="application/json" id="uig-data">{json.dumps(data)}</script></html>')
    page = render_html(compare.load_runs([tmp_path / "a", tmp_path / "b"], None))
    card = page.split('id="flip-s0"')[1].split("</figure>")[0]  # s0: right in a, wrong in b
    assert '<div class="instr">Tap the button number 0</div>' in card
    assert "mini: acc vs p50 latency" in page and "p50 latency per sample (ms)" in page
    assert page.count('class="sortable"') >= 2  # sorted in Chromium: test_report_front.py


def test_compare_cards_without_a_report_page_have_no_instruction(tmp_path: Path) -> None:
    write_run(tmp_path, "a", "ocr", [True, False], 50.0)
    write_run(tmp_path, "b", "qwen", [False, True], 80.0)
    page = render_html(compare.load_runs([tmp_path / "a", tmp_path / "b"], None))
    assert 'id="flip-s0"' in page and 'class="instr"' not in page



def test_a_zero_bar_is_drawn_as_a_visible_stub() -> None:
    """A 0 % bar used to be 0.8 px wide under the axis line: invisible. It is an outlined stub now, and a
    value of 50 still gets a filled bar of its own width."""
    import re

    from pytest_uiground.report.plots import ZERO_STUB, Chart, Row, bar_chart
    from pytest_uiground.report.units import UNITS

    svg = bar_chart(Chart("t", "t", UNITS["accuracy"], True, ["a", "b"], rows=[Row("", "all", [0.0, 50.0])]))
    bars = dict(re.findall(r'<rect x="[\d.]+" y="[\d.]+" (width="[^/]*?)><title>(\w): ', svg)[::-1][i][::-1]
                for i in range(2))
    zero, half = bars["a"], bars["b"]
    assert float(zero.split('"')[1]) >= ZERO_STUB and 'fill="#fff"' in zero and "stroke=" in zero
    assert float(half.split('"')[1]) > 100 and "stroke=" not in half
