"""HTML building blocks shared by every uiground page: the stylesheet, escaping,
number formatting and ``<img>`` tags.

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

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:1.5em;color:#1d1d1f;
background:#fff;line-height:1.35}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:right;white-space:nowrap}
th{background:#f4f4f6}td.l,th.l{text-align:left}tr.slice td.l{padding-left:1.6em;color:#444}
.FAIL{color:#b00020;font-weight:bold}.improved{color:#0a7d28;font-weight:bold}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:.15em 1em;font-size:.92em}
dl.meta dt{font-weight:600}dl.meta dd{margin:0;word-break:break-all}
svg.plot{max-width:100%;height:auto;display:block}
figure.chart{margin:.8em 0 1.4em;max-width:1100px}
.banner{border-radius:6px;padding:.6em .9em;margin:.6em 0;border:2px solid;font-size:.95em}
.banner .headline{font-size:1.25em;font-weight:700;margin-bottom:.2em}
.banner.pass{background:#eaf7ee;border-color:#0a7d28}.banner.pass .headline{color:#0a7d28}
.banner.warn{background:#fff6e0;border-color:#b26b00}.banner.warn .headline{color:#8a5300}
.banner.fail{background:#fdecee;border-color:#b00020}.banner.fail .headline{color:#b00020}
.banner .extra{color:#444}.banner .failed{color:#6b0012;font-size:.9em;margin-bottom:.2em}
td.verdict.pass{color:#0a7d28;font-weight:700}td.verdict.fail{color:#b00020;font-weight:700}td.verdict.warn{color:#8a5300}
details.prov{font-size:.9em;margin:.4em 0}
table.metrics td .unit{color:#666;font-size:.85em;font-weight:normal}
td.up{color:#0a7d28}td.down{color:#b00020}
.tag{display:inline-block;padding:0 .4em;border-radius:3px;background:#eee;font-weight:600}
.tag.regression,.tag.error{background:#fdd}.tag.fixed{background:#d8f5df}.tag.known-failure{background:#f3e8d0}.tag.unstable{background:#eadcf8}
.note{color:#666;font-size:.9em}
"""


def esc(value: object) -> str:
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
                    f'<td class="l">{esc(a)}</td><td class="l">{esc(b) if base else ""}</td>'
                    f'<td>{"differs" if diff else ""}</td></tr>')
    head = ('<tr><th class="l">model fingerprint</th><th class="l">this run</th><th class="l">baseline</th>'
            "<th></th></tr>")
    n_diff = sum('class="diff"' in r for r in rows)
    note = (f'<p class="note">{n_diff} of {len(rows)} fingerprint fields differ from the baseline</p>' if base
            else '<p class="note">no baseline fingerprint to compare with</p>')
    return f'<table class="fingerprint sortable">{head}{"".join(rows)}</table>{note}'
