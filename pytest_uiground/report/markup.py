"""HTML building blocks shared by every uiground page: the stylesheet, escaping,
number formatting and ``<img>`` tags.

They live apart from :mod:`pytest_uiground.report.html` so that the pieces of a page
(:mod:`~pytest_uiground.report.plots`, :mod:`~pytest_uiground.report.gallery`) and the
comparison page (:mod:`~pytest_uiground.report.compare`) can use them without
importing the suite page itself, which imports those pieces. Pages carry no script
and fetch nothing: everything a page shows is inline.
"""

from __future__ import annotations

import html
import math

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
img.plot{max-width:100%;display:block;margin:.5em 0}
.gallery{display:flex;flex-wrap:wrap;gap:1em}
.card{border:1px solid #ccc;border-radius:6px;padding:.6em;width:480px;margin:0;font-size:.88em}
.card img{max-width:100%;display:block}.card.text{background:#fafafa}
.card pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f6;padding:.4em;max-height:12em;overflow:auto}
.tag{display:inline-block;padding:0 .4em;border-radius:3px;background:#eee;font-weight:600}
.tag.regression,.tag.error{background:#fdd}.legend span{margin-right:1em}
.note{color:#666;font-size:.9em}
"""


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def page(title: str, body: str) -> str:
    """A complete HTML document: inline CSS, no script, nothing to fetch."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body>\n{body}\n</body></html>\n"
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
