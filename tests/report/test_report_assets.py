"""pytest_uiground.report.assets: the sample browser's inline script and stylesheet.

The module's promises: the page works from disk (the script fetches nothing), every value is
inserted as text or an SVG attribute (raw model output is untrusted), and it reads the JSON
block and the controls that :mod:`pytest_uiground.report.browse` writes.
"""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_uiground.report import browse
from pytest_uiground.report.assets import BROWSER_CSS, BROWSER_JS


def test_the_script_never_inserts_markup_or_evaluates_text() -> None:
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in BROWSER_JS, sink
    assert "textContent" in BROWSER_JS


def test_the_script_fetches_nothing() -> None:
    for call in ("fetch(", "XMLHttpRequest", "import(", "WebSocket", "sendBeacon"):
        assert call not in BROWSER_JS, call
    urls = set(re.findall(r"https?://[^\"']+", BROWSER_JS))
    assert urls <= {"http://www.w3.org/2000/svg"}  # the SVG namespace name, not a request


def test_every_element_the_script_looks_up_is_written_by_the_browser_section() -> None:
    wanted = set(re.findall(r'getElementById\("([a-z-]+)"\)', BROWSER_JS))
    wanted |= set(re.findall(r'querySelectorAll\("#([a-z-]+)', BROWSER_JS))
    assert {"uig-data", "f-outcome", "f-text", "f-count", "detail", "samples"} <= wanted
    source = inspect.getsource(browse)
    for element_id in wanted:
        assert f'id="{element_id}' in source, element_id
    assert 'class="f-slice"' in source and 'data-key="' in source  # the slice filters the script reads


def test_every_mark_the_overlay_draws_is_styled() -> None:
    classes = set(re.findall(r'"class": "(m-[a-z]+)"', BROWSER_JS)) | set(re.findall(r'"(m-[a-z]+)"\)', BROWSER_JS))
    assert {"m-truth", "m-pred", "m-click", "m-crop"} <= classes
    for cls in classes:
        assert f".{cls}" in BROWSER_CSS, cls


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to check the script's syntax")
def test_the_script_parses(tmp_path: Path) -> None:
    script = tmp_path / "browser.js"
    script.write_text(BROWSER_JS, encoding="utf-8")
    done = subprocess.run(["node", "--check", str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
