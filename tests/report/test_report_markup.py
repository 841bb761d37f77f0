"""pytest_uiground.report.markup: escaping, number formatting and self-contained pages."""

from __future__ import annotations

import math

from pytest_uiground.report.markup import CSS, esc, fmt, fmt_interval, img_tag, is_number, page


def test_esc_escapes_markup_and_quotes_and_shows_none_as_nothing() -> None:
    assert esc('<b a="1">\'x\' & y</b>') == "&lt;b a=&quot;1&quot;&gt;&#x27;x&#x27; &amp; y&lt;/b&gt;"
    assert esc(None) == ""
    assert esc(12.5) == "12.5"


def test_page_is_a_whole_document_with_everything_inline() -> None:
    doc = page("<run> & co", "<p>body</p>", script="var x = 1;", css=".extra{color:red}")
    assert doc.startswith("<!DOCTYPE html>") and doc.rstrip().endswith("</html>")
    assert "<title>&lt;run&gt; &amp; co</title>" in doc  # the title is text, not markup
    assert CSS in doc and ".extra{color:red}" in doc
    assert "<script>var x = 1;</script>" in doc
    assert "<link" not in doc and "src=" not in doc and "@import" not in doc  # nothing to fetch


def test_page_without_a_script_has_no_script_tag() -> None:
    assert "<script" not in page("t", "<p>b</p>")


def test_is_number_excludes_bools_nan_and_text() -> None:
    assert is_number(0) and is_number(2.5) and is_number(-1)
    assert not is_number(True) and not is_number(math.nan) and not is_number("3") and not is_number(None)


def test_fmt_shows_a_dash_for_what_is_not_a_number() -> None:
    assert fmt(12.345) == "12.35" and fmt(3, digits=0) == "3"
    assert fmt(1.5, signed=True) == "+1.50" and fmt(-1.5, signed=True) == "-1.50"
    for value in (math.nan, None, "12", True):
        assert fmt(value) == "-"


def test_fmt_interval() -> None:
    assert fmt_interval(None) == "-"
    assert fmt_interval((1.0, 2.25)) == "[1.00, 2.25]"
    assert fmt_interval((-1.0, 2.0), signed=True) == "[-1.00, +2.00]"


def test_img_tag_escapes_the_alt_text() -> None:
    tag = img_tag("data:image/png;base64,AAAA", 'a "quoted" <alt>', cls="thumb", extra=" loading=lazy")
    assert tag == ('<img class="thumb" alt="a &quot;quoted&quot; &lt;alt&gt;" src="data:image/png;base64,AAAA"'
                   " loading=lazy>")
