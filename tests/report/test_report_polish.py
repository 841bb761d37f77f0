"""report.html and the compare page: fingerprints side by side, sortable tables, the pinned id
column, instructions on the compare cards and latency plots that name their percentile."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_compare import write_run

from pytest_uiground.report import assets, compare
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


def test_the_id_column_stays_in_view_when_the_table_scrolls() -> None:
    css = assets.BROWSER_CSS
    assert "#samples td.id,#samples th.id{position:sticky;left:0" in css
    assert ".tablewrap{max-height:80vh;overflow:auto" in css  # the table scrolls inside its frame


SHIM = r"""
// The least of a DOM that SORT_JS touches: one table.sortable with a header row and body rows.
function cell(text) { return {textContent: text}; }
function makeTh(text) {
  var attrs = {}, handlers = [];
  return {textContent: text, title: "", classList: {add: function () {}},
          setAttribute: function (k, v) { attrs[k] = v; }, getAttribute: function (k) { return attrs[k] || null; },
          removeAttribute: function (k) { delete attrs[k]; },
          addEventListener: function (_, f) { handlers.push(f); },
          click: function () { handlers.forEach(function (f) { f(); }); }};
}
var data = JSON.parse(process.argv[2]);
var head = {cells: data.head.map(makeTh)};
var body = {rows: data.rows.map(function (r) { return {id: r[0], cells: r.map(cell)}; }),
            appendChild: function (row) { this.rows.splice(this.rows.indexOf(row), 1); this.rows.push(row); }};
var table = {tHead: {rows: [head]}, tBodies: [body]};
var document = {querySelectorAll: function () { return [table]; }};
eval(data.script);
var out = [];
data.clicks.forEach(function (c) { head.cells[c].click(); out.push(body.rows.map(function (r) { return r.id; })); });
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's script")
def test_a_header_click_sorts_numbers_as_numbers_and_a_second_click_reverses(tmp_path: Path) -> None:
    (tmp_path / "shim.js").write_text(SHIM)
    doc = {"script": assets.SORT_JS, "head": ["id", "ms"],
           "rows": [["a", "100.5"], ["b", "9"], ["c", "-"], ["d", "20"]], "clicks": [1, 1, 0]}
    done = subprocess.run(["node", str(tmp_path / "shim.js"), json.dumps(doc)], capture_output=True, text=True,
                          check=True)
    assert json.loads(done.stdout) == [["b", "d", "a", "c"], ["a", "d", "b", "c"], ["a", "b", "c", "d"]]


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
    assert page.count('class="sortable"') >= 2 and assets.SORT_JS in page


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
