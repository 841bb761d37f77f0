"""Headless Chromium for the tests that look at pages: Debian's ``chromium`` (``apt-get install -y
chromium``), never a browser pytest-playwright downloads (the test machines reach no browser CDN).

The page tests take ``needs_chromium`` as their ``pytestmark`` and import the two fixtures by name, which
replace pytest-playwright's own for that module (one definition instead of one per test file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")

needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(),
                                    reason="headless Chromium not installed: apt-get install -y chromium")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright's launch arguments, with Debian's Chromium instead of a downloaded one."""
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM)}


@pytest.fixture(scope="session")
def base_url() -> None:
    """No base URL: pages are opened by their full URL (pytest-base-url's own fixture is an instance
    method, which pytest 9 deprecates with a warning, an error in these tests)."""
    return None
