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
svg.plot{max-width:100%;height:auto;display:block}
figure.chart{margin:.8em 0 1.4em;max-width:1100px}
.banner{border-radius:6px;padding:.6em .9em;margin:.6em 0;border:2px solid;font-size:.95em}
.banner .headline{font-size:1.25em;font-weight:700;margin-bottom:.2em}
.banner.pass{background:#eaf7ee;border-color:#0a7d28}.banner.pass .headline{color:#0a7d28}
.banner.warn{background:#fff6e0;border-color:#b26b00}.banner.warn .headline{color:#8a5300}
.banner.fail{background:#fdecee;border-color:#b00020}.banner.fail .headline{color:#b00020}
.banner .extra{color:#444}details.prov{font-size:.9em;margin:.4em 0}
table.metrics td .unit{color:#666;font-size:.85em;font-weight:normal}
td.up{color:#0a7d28}td.down{color:#b00020}
.tag{display:inline-block;padding:0 .4em;border-radius:3px;background:#eee;font-weight:600}
.tag.regression,.tag.error{background:#fdd}.tag.fixed{background:#d8f5df}.tag.known-failure{background:#f3e8d0}
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
