"""Independent re-implementations of WebClick's and Showdown-clicks' scoring, for the parity tests.

Showdown-clicks (source read, rules rewritten here; no code copied): ``generalagents/showdown@86cbd20``
``clicks/eval.py`` ``evaluate_csv`` (every CSV row processed, ``image`` joined to the dev folder),
``clicks/src/clicks/evaluate/utils.py`` ``is_point_in_bbox`` (``None`` anywhere → False; else
``x1 <= x <= x2 and y1 <= y <= y2`` on integers) and ``analyze_results`` (``total_in_bbox /
total_processed * 100``), ``clicks/src/clicks/evaluate/models.py`` (``pred_x``/``pred_y`` and the box
are ``int``). The harness's clients turn an answer into that integer differently (``molmo/client.py``
and ``omniparser/client.py``: ``int(rel * size)``); this reference truncates, as they do.

WebClick: H company publishes no scorer; the card says the rows are "in the same format as the
widely-used screenspot benchmark" (``bbox`` ``[x1, y1, x2, y2]`` as fractions), so the reference is
ScreenSpot's rule: the normalized click inside the box, edges inclusive; no click is a miss. The
per-bucket figure is that rule over the bucket's rows.

The answers are read by :func:`parity.ref_families.holo_ours` (Holo1.5 reports both benchmarks).
Nothing here imports ``pytest_uiground``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import ref_families as rf


def read(text: str, size: tuple[int, int]) -> tuple[float, float] | None:
    reading = rf.holo_ours(text, size[0], size[1])
    if isinstance(reading, str):  # ERROR (Holo has no refusal form)
        return None
    return reading[0], reading[1]


def webclick(rows: Sequence[Mapping[str, Any]], texts: Sequence[str], size: tuple[int, int]) -> dict[str, Any]:
    """Per row: hit or not; accuracy overall and per bucket (0..100)."""
    hits: list[bool] = []
    for row, text in zip(rows, texts, strict=True):
        p = read(text, size)
        x1, y1, x2, y2 = row["bbox"]
        hits.append(p is not None and x1 <= p[0] <= x2 and y1 <= p[1] <= y2)
    buckets: dict[str, list[bool]] = {}
    for row, hit in zip(rows, hits, strict=True):
        buckets.setdefault(str(row.get("bucket")), []).append(hit)
    return {"hits": hits, "accuracy": 100 * sum(hits) / len(hits),
            "buckets": {b: 100 * sum(v) / len(v) for b, v in buckets.items()},
            "bucket_n": {b: len(v) for b, v in buckets.items()}}


def is_point_in_bbox(x: int | None, y: int | None, x1: int, y1: int, x2: int, y2: int) -> bool:
    if x is None or y is None:
        return False
    return x1 <= x <= x2 and y1 <= y <= y2


def showdown(rows: Sequence[Mapping[str, Any]], texts: Sequence[str]) -> dict[str, Any]:
    """Per row: ``is_in_bbox``; ``analyze_results``' accuracy (0..100)."""
    hits: list[bool] = []
    for row, text in zip(rows, texts, strict=True):
        w, h = int(row["width"]), int(row["height"])
        p = read(text, (w, h))
        px, py = (None, None) if p is None else (int(p[0] * w), int(p[1] * h))
        hits.append(is_point_in_bbox(px, py, int(row["x1"]), int(row["y1"]), int(row["x2"]), int(row["y2"])))
    return {"hits": hits, "accuracy": sum(hits) / len(hits) * 100}
