"""The pages' front end: the scripts and stylesheets under ``report/static/``, inlined.

Why files and not Python strings: a ``.js`` file is linted (eslint, ``eslint.config.mjs``, run by
``.ci/run``) and a ``.css`` file read as what it is; the pages' behaviour is tested in Chromium
(``tests/report/test_report_front.py``). Why inlined: ``report.html`` is one self-contained file
that works from disk, mailed or attached to a CI run, with nothing fetched; so each page's
``<style>`` and ``<script>`` carry these files' text, read once through :mod:`importlib.resources`
(the files are package data: ``pyproject.toml``, ``MANIFEST.in``).

``browser.js`` reads the JSON block and the controls that :mod:`~pytest_uiground.report.browse`
writes and inserts every value with ``textContent`` or as an SVG attribute, never as markup: raw
model output is untrusted.
"""

from __future__ import annotations

import functools
from importlib import resources

#: every file under report/static/, by the page that inlines it
FILES = ("page.css", "sort.css", "sort.js", "browser.css", "browser.js", "compare.css", "validate.css")


@functools.cache
def static(name: str) -> str:
    """The text of ``report/static/NAME``; refused if it could end the inline element that holds it."""
    if name not in FILES:
        raise ValueError(f"report/static/{name}: not one of the report's static files {', '.join(FILES)}")
    text = resources.files("pytest_uiground.report").joinpath("static", name).read_text(encoding="utf-8")
    for closing in ("</script", "<!--") if name.endswith(".js") else ("</style",):
        if closing in text.lower():
            raise ValueError(f"report/static/{name} contains {closing!r}, which changes how the page parses its "
                             "inline element; write it as '<\\/' (or '<\\!--') in the file")
    return text


#: the stylesheet of every page (report.html, the index, compare, matrix)
PAGE_CSS = static("page.css")
#: sortable tables: a click on a header sorts its rows (every ``table.sortable``)
SORT_JS = static("sort.js")
SORT_CSS = static("sort.css")
#: the sample browser of report.html: filters, search, the detail view and the zoom
BROWSER_JS = static("browser.js")
BROWSER_CSS = static("browser.css")
#: the compare and matrix pages
COMPARE_CSS = static("compare.css")
