"""Fixtures of the annotator's tests (imported by name: a second ``conftest.py`` under tests/ would shadow the
shared one for ``from conftest import ...`` under xdist): screenshots drawn here, a deterministic detector, and a
server running on a thread of the test process (its URL, its folder, its annotations file)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from pytest_uiground.screens.annotator.server import Annotator, AnnotatorServer, Proposals, find_images
from pytest_uiground.screens.annotator.store import Store

W, H = 400, 300
DETECTOR_MODULE = "uiground_annotator_detector"
# Three proposals per screenshot, in pixels of a 400x300 image (reading order: Login, Email, Help).
DETECTOR_SOURCE = '''
from pytest_uiground.record.geometry import Box
from pytest_uiground.models.offline.ocr import OcrItem

PIXELS = [("Login", 0.99, (40, 40, 160, 80)), ("Help", 0.9, (40, 200, 100, 220)),
          ("Email", 0.95, (42, 122, 200, 148)), ("noise", 0.1, (0, 0, 10, 10))]


def detect(img):
    w, h = img.size
    return [OcrItem(t, s, Box(x0 / w, y0 / h, x1 / w, y1 / h)) for t, s, (x0, y0, x1, y1) in PIXELS]
'''


@dataclass
class Running:
    """A served annotator: the page's URL, the annotations file and its folder."""

    server: AnnotatorServer
    file: Path

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def lines(self) -> list[str]:
        return self.file.read_text(encoding="utf-8").splitlines() if self.file.exists() else []


@pytest.fixture
def detector(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``module:function`` of the deterministic detector, importable for this test only."""
    folder = tmp_path / "detector"
    folder.mkdir()
    (folder / f"{DETECTOR_MODULE}.py").write_text(DETECTOR_SOURCE)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, DETECTOR_MODULE, raising=False)
    return f"{DETECTOR_MODULE}:detect"


def draw_screen(path: Path) -> Path:
    img = Image.new("RGB", (W, H), "white")
    draw = ImageDraw.Draw(img)
    draw.rectangle((40, 40, 160, 80), outline="navy", width=2)
    draw.text((60, 52), "Login", fill="black")
    draw.rectangle((42, 122, 200, 148), outline="gray")
    draw.text((50, 128), "Email", fill="black")
    draw.text((45, 203), "Help", fill="blue")
    draw.ellipse((300, 30, 324, 54), fill="orange")  # an icon no detector proposes
    img.save(path)
    return path


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = tmp_path / "shots"
    folder.mkdir()
    draw_screen(folder / "a.png")
    draw_screen(folder / "b.png")
    return folder


@pytest.fixture
def serve() -> Iterator[Callable[..., Running]]:
    """``serve(file, folder=None, detector=None)``: an annotator on a free port for this test."""
    started: list[tuple[AnnotatorServer, threading.Thread]] = []

    def start(file: Path, folder: Path | None = None, detector: str | None = None,
              min_score: float = 0.5) -> Running:
        store = Store(file)
        root = file.resolve().parent
        snap = store.read()
        images = find_images((folder or file.parent).resolve(), root,
                             [e.data["image"] for e in snap.entries if e.data and isinstance(e.data.get("image"), str)])
        proposals = Proposals(store, images, detector, min_score) if detector else None
        server = AnnotatorServer(Annotator(store, images, proposals))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        started.append((server, thread))
        return Running(server, file)

    yield start
    for server, thread in started:
        server.shutdown()
        server.server_close()
        thread.join(10)
