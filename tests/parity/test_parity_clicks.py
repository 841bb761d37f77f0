"""Parity: the shipped WebClick and Showdown-clicks suites vs independent re-implementations of their scoring.

Each dataset is written in its PUBLISHED layout (WebClick's parquet shard, showdown-clicks-dev's
``data.csv`` and frames), messy Holo1.5 answers (Holo1.5 reports both benchmarks: its JSON
``click_absolute`` in pixels of the resized image, as well-formed, on every box edge, just beyond,
with the malformed forms of the family parity test) become a replay file, the suite runs end to end
(``--model replay --uiground-replay-parser holo``) with and without ``-n 2``, and every sample's hit
and the figures (overall, per bucket) are compared with :mod:`parity.ref_clicks`. Showdown's
whole-pixel rule is exercised where it differs from a normalized comparison (a click 0.x pixel right
of ``x2`` is a hit there).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import Project

# Pillow before pytester snapshots sys.modules (its extension modules must not load twice).
from PIL import Image  # noqa: F401

from pytest_uiground.benchmarks.showdown_clicks.lookalike import write_showdown_clicks
from pytest_uiground.benchmarks.webclick.lookalike import png_bytes, write_webclick

from . import ref_clicks as rc
from . import ref_families as rf
from .test_parity_families import HOLO_FIXED, make_holo
from .test_parity_gui import run_suite

EXACT = 5e-5
BUCKETS = ("agentbrowse", "humanbrowse", "calendars")


def frame(size: tuple[int, int]) -> tuple[int, int]:
    """Holo1.5's resized (width, height) for an image of ``size``."""
    h, w = rf.transformers_smart_resize(size[1], size[0], 28, 3136, rf.HOLO_MAX_PIXELS)
    return w, h


def click(x: int, y: int) -> str:
    return json.dumps({"action": "click_absolute", "x": x, "y": y})


def webclick_cases(size: tuple[int, int]) -> tuple[list[dict[str, Any]], list[str]]:
    """(rows without images, answers): targeted edge cases, the fixed malformed forms, random answers."""
    rw, rh = frame(size)
    rows: list[dict[str, Any]] = []
    texts: list[str] = []

    def add(box: tuple[float, float, float, float], text: str) -> None:
        rows.append({"instruction": f"case {len(rows)}", "bbox": list(box), "bucket": BUCKETS[len(rows) % 3]})
        texts.append(text)

    add((400 / rw, 300 / rh, 420 / rw, 320 / rh), click(410, 310))        # inside
    add((410 / rw, 310 / rh, 430 / rw, 330 / rh), click(410, 310))        # on the top-left corner: hit
    add((390 / rw, 290 / rh, 410 / rw, 310 / rh), click(410, 310))        # on the bottom-right corner: hit
    add((411 / rw, 300 / rh, 430 / rw, 320 / rh), click(410, 310))        # one frame pixel left: miss
    add((0.0, 0.0, 1 / rw, 1 / rh), click(0, 0))                          # the origin
    add((0.9, 0.9, 1.0, 1.0), click(rw, rh))                              # the far corner
    add((0.0, 0.0, 1.0, 1.0), click(rw + 5, 10))                          # beyond the frame: a point, miss
    add((0.0, 0.0, 1.0, 1.0), "")                                         # empty: miss
    add((0.0, 0.0, 1.0, 1.0), "I cannot see it")                          # free text: miss
    centre = (947 / rw, 338 / rh)
    for text in HOLO_FIXED:                                               # the family test's malformed forms
        add((centre[0] - 0.01, centre[1] - 0.01, centre[0] + 0.01, centre[1] + 0.01), text)
    rng = random.Random(41)
    for _ in range(24):
        text = make_holo(rng, size)
        x, y = rng.uniform(0, 0.8), rng.uniform(0, 0.8)
        add((x, y, x + rng.uniform(0.05, 0.2), y + rng.uniform(0.05, 0.2)), text)
    return rows, texts


@pytest.mark.slow
def test_webclick_every_sample_and_bucket(project: Project, tmp_path: Path, xdist: list[str]) -> None:
    size = (1280, 720)
    rows, texts = webclick_cases(size)
    image = png_bytes(size)
    write_webclick(tmp_path, rows=[{**r, "image": {"bytes": image, "path": None}} for r in rows])
    ref = rc.webclick(rows, texts, size)
    assert 5 < sum(ref["hits"]) < len(rows) - 5  # the cases are not all one way
    replay = {f"webclick-{i}": t for i, t in enumerate(texts)}
    metrics = run_suite(project, "webclick", tmp_path / "WebClick", replay, "holo", *xdist)
    m = metrics["accuracy"]
    assert m["n"] == len(rows)
    assert m["value"] == pytest.approx(ref["accuracy"], abs=EXACT)
    for bucket, value in ref["buckets"].items():
        assert m["slices"][f"bucket={bucket}"] == pytest.approx(value, abs=EXACT)
        assert m["slice_n"][f"bucket={bucket}"] == ref["bucket_n"][bucket]
    got = {r["id"]: bool(r["score"]["correct"])
           for r in map(json.loads, (project.root / "out" / "samples.jsonl").read_text().splitlines())}
    assert [got[f"webclick-{i}"] for i in range(len(rows))] == ref["hits"]


def showdown_cases() -> tuple[list[dict[str, Any]], list[str], dict[str, tuple[int, int]]]:
    sizes = {"frames/a/0.png": (1280, 800), "frames/b/0.png": (1680, 1050)}
    rows: list[dict[str, Any]] = []
    texts: list[str] = []

    def add(image: str, box: tuple[int, int, int, int], text: str) -> None:
        w, h = sizes[image]
        rows.append({"id": f"c{len(rows):03d}", "recording_id": image.split("/")[1], "instruction": f"case {len(rows)}",
                     "image": image, "x1": box[0], "y1": box[1], "x2": box[2], "y2": box[3], "width": w, "height": h})
        texts.append(text)

    between = 0
    for image, (w, h) in sizes.items():
        rw, rh = frame((w, h))
        x, y = 700, 420                                      # a frame click; its pixel, truncated
        px, py = int(x / rw * w), int(y / rh * h)
        between += 0 < x / rw * w - px < 1  # 1280x800's frame is 1288x812: the click falls between pixels
        add(image, (px - 10, py - 10, px + 10, py + 10), click(x, y))    # inside
        add(image, (px - 10, py - 10, px, py), click(x, y))              # its pixel is x2, y2: hit (a normalized
        #                                                                  comparison calls it a miss)
        add(image, (px, py, px + 10, py + 10), click(x, y))              # its pixel is x1, y1: hit
        add(image, (px + 1, py, px + 10, py + 10), click(x, y))          # one pixel right of it: miss
        add(image, (0, 0, 5, 5), click(0, 0))                            # the origin
        add(image, (w - 5, h - 5, w, h), click(rw, rh))                  # the far corner
        add(image, (0, 0, w, h), "")                                     # no click: miss, counted
        add(image, (0, 0, w, h), '{"x": 947, "y": 338')                  # cut off: miss
        add(image, (0, 0, w, h), '{"x": -5, "y": 0}')                    # a negative x: a point outside
        for text in HOLO_FIXED[:8]:
            cx, cy = int(947 / rw * w), int(338 / rh * h)
            add(image, (cx - 3, cy - 3, cx + 3, cy + 3), text)
    assert between, "the edge cases need a click that falls between pixels"
    rng = random.Random(7)
    for i in range(16):
        image = tuple(sizes)[i % 2]
        w, h = sizes[image]
        x, y = rng.randrange(0, w - 200), rng.randrange(0, h - 200)
        add(image, (x, y, x + rng.randrange(20, 200), y + rng.randrange(20, 200)), make_holo(rng, (w, h)))
    return rows, texts, sizes


@pytest.mark.slow
def test_showdown_every_sample(project: Project, tmp_path: Path, xdist: list[str]) -> None:
    rows, texts, sizes = showdown_cases()
    fx = write_showdown_clicks(tmp_path, rows=rows, sizes=sizes)
    ref = rc.showdown(rows, texts)
    assert 5 < sum(ref["hits"]) < len(rows) - 5
    replay = {f"showdown-{r['id']}": t for r, t in zip(rows, texts, strict=True)}
    metrics = run_suite(project, "showdown_clicks", fx.folder, replay, "holo", *xdist)
    m = metrics["accuracy"]
    assert m["n"] == len(rows)
    assert m["value"] == pytest.approx(ref["accuracy"], abs=EXACT)
    got = {r["id"]: bool(r["score"]["correct"])
           for r in map(json.loads, (project.root / "out" / "samples.jsonl").read_text().splitlines())}
    assert [got[f"showdown-{r['id']}"] for r in rows] == ref["hits"]
    assert m["slice_n"] == {"resolution=1280x800": len(rows) // 2, "resolution=1680x1050": len(rows) // 2}
