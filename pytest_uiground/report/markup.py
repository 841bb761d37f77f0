"""HTML building blocks shared by every uiground page: the page skeleton, escaping,
number formatting and ``<img>`` tags.

The pages are built by small functions returning HTML text, every value from a summary,
a record or the model passed through :func:`esc` (one escaping helper, not a template
engine: no dependency added to the core install, and the pieces other modules add to a
page stay plain functions). Scripts and stylesheets are files under ``report/static/``
(:mod:`~pytest_uiground.report.assets`), inlined by :func:`page`.

They live apart from :mod:`pytest_uiground.report.html` so that the pieces of a page
(:mod:`~pytest_uiground.report.plots`, :mod:`~pytest_uiground.report.gallery`) and the
comparison page (:mod:`~pytest_uiground.report.compare`) can use them without
importing the suite page itself, which imports those pieces. Pages fetch nothing:
everything a page shows is inline (or, for very large runs, images beside the page).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping

from pytest_uiground.report.assets import PAGE_CSS

#: the stylesheet of every page (``report/static/page.css``)
CSS = PAGE_CSS


def esc(value: object) -> str:
    """Text made safe as HTML element content and as a quoted attribute value: the one escaping helper
    of every page (``tests/report/test_report_front.py`` holds that no other module escapes on its own)."""
    return html.escape("" if value is None else str(value), quote=True)


def page(title: str, body: str, script: str = "", css: str = "") -> str:
    """A complete HTML document: inline CSS and script, nothing to fetch."""
    tail = f"<script>{script}</script>\n" if script else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{esc(title)}</title><style>{CSS}{css}</style></head>\n<body>\n{body}\n{tail}</body></html>\n"
    )


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def fmt(value: object, signed: bool = False, digits: int = 2) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_interval(interval: tuple[float, float] | None, signed: bool = False) -> str:
    if interval is None:
        return "-"
    return f"[{fmt(interval[0], signed)}, {fmt(interval[1], signed)}]"


def img_tag(uri: str, alt: str, cls: str = "plot", extra: str = "") -> str:
    return f'<img class="{cls}" alt="{esc(alt)}" src="{uri}"{extra}>'


def plain(value: object) -> object:
    """A mapping or list as sorted JSON text (one line in a table cell); anything else as is."""
    return json.dumps(value, sort_keys=True) if isinstance(value, (Mapping, list)) else value


def fingerprint_table(current: object, baseline: object) -> str:
    """The model fingerprints as one key/value table, current beside baseline, keys in one order.

    Why: two dicts printed in their own key orders look different when they are equal; here
    every key is a row (sorted), and a row whose values differ is marked and highlighted.
    """
    cur = dict(current) if isinstance(current, Mapping) else ({"value": current} if current else {})
    base = dict(baseline) if isinstance(baseline, Mapping) else ({"value": baseline} if baseline else {})
    if not cur and not base:
        return ""
    missing = "\u2014"
    rows = []
    for key in sorted(set(cur) | set(base), key=str):
        a, b = plain(cur.get(key, missing)), plain(base.get(key, missing))
        diff = bool(base) and a != b
        rows.append(f'<tr class="{"diff" if diff else "same"}"><td class="l">{esc(key)}</td>'
                    f'<td class="l">{esc(a)}</td>' + (f'<td class="l">{esc(b)}</td>' if base else "")
                    + (f'<td class="l">{"differs" if diff else "same"}</td>' if base else "") + "</tr>")
    # Without a baseline the table is two columns: an empty "baseline" and an unnamed last column read as
    # cut columns (issue 39).
    head = ('<tr><th class="l">model fingerprint</th><th class="l">this run</th>'
            + ('<th class="l">baseline</th><th class="l">same?</th>' if base else "") + "</tr>")
    n_diff = sum('class="diff"' in r for r in rows)
    note = (f'<p class="note">{n_diff} of {len(rows)} fingerprint fields differ from the baseline</p>' if base
            else '<p class="note">no baseline fingerprint to compare with</p>')
    return f'<table class="fingerprint sortable">{head}{"".join(rows)}</table>{note}'
