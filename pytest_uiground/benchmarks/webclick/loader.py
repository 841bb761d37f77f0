"""WebClick (``Hcompany/WebClick``, Apache-2.0), read in the layout H company publishes.

Why this exists: Holo1, Holo1.5 and duvo-eye-1 report WebClick (1,639 English web screenshots) beside
ScreenSpot; a figure is only comparable when every row is read and scored as the dataset card says.

Layout (the dataset repository; ``--uiground-data-path`` names it, or a folder holding ``WebClick/``)::

    WebClick/
      test-00000-of-0000N.parquet ...     (the card's ``configs``: split test, ``path: test*``)

also accepted under ``data/``. Each row: ``image`` (a ``datasets`` Image, ``{"bytes", "path"}``),
``instruction``, ``bbox`` (4 floats) and ``bucket`` (``agentbrowse``, ``humanbrowse``,
``calendars``). The card says the data is "in the same format as the widely-used screenspot
benchmark": ``bbox`` is ``[x1, y1, x2, y2]`` as fractions of the image, which is how third-party
loaders read it. A row whose box has a coordinate beyond 1 is refused with a record error (it is
not in that format), not rescaled by a guess.

Scoring: a click inside the box, edges inclusive, on the normalized point (ScreenSpot's rule; H
company publishes no scorer of its own; see ``suites/webclick/README.md``). No point is a miss.

Samples: ``webclick-<i>``, ``i`` the row's index over the shards in name order (the rows carry no
id). Meta: ``bucket`` (``none`` on a row without one; the card's three groups are the slices).
Without ``--uiground-data-path`` the parquet files are fetched from the hub into the HF cache.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from pytest_uiground import extras
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageError, ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite import hub
from pytest_uiground.suite.loading import (
    LayoutError,
    LoaderContext,
    RecordError,
    candidates,
    check_options,
    invalid_sample,
    numbers,
    optional_meta,
    text_field,
)

FOLDER = "WebClick"
HUB_ID = "Hcompany/WebClick"
COLUMNS = ("instruction", "bbox", "bucket")
PATTERNS = ("test-*.parquet", "test*.parquet", "data/test-*.parquet", "data/test*.parquet")
HOW_TO_GET = hub.download_hint(HUB_ID, FOLDER)


@lru_cache(maxsize=2)
def _row_group_images(path: str, group: int) -> list[Any]:
    """One row group's image cells, the last two kept (the pattern of benchmarks/automotive/loader.py)."""
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).read_row_group(group, columns=["image"]).column("image").to_pylist()  # type: ignore[no-any-return]


def _image(path: Path, group: int, index: int, row: int) -> Callable[[], bytes]:
    def read() -> bytes:
        cell = _row_group_images(str(path), group)[index]
        data = cell.get("bytes") if isinstance(cell, dict) else None
        if not data:
            raise ImageError(f"row {row}: the dataset has no image bytes for this row ({path.name})")
        return bytes(data)

    return read


def shards(folder: Path) -> list[Path]:
    for pattern in PATTERNS:
        found = sorted(folder.glob(pattern))
        if found:
            return found
    return []


def locate(data_path: Path | None) -> list[Path]:
    """The parquet shards of the test split, or a :class:`LayoutError` naming every place looked."""
    if data_path is None:
        try:
            folder = hub.dataset_dir(HUB_ID, allow_patterns=["*.parquet", "data/*.parquet", "README.md"])
        except hub.HubError as exc:
            raise LayoutError(f"WebClick: {exc}. To get it: {HOW_TO_GET}") from None
        found = shards(folder)
        if found:
            return found
        raise LayoutError(f"WebClick: the hub snapshot {folder} has no test*.parquet. To get it: {HOW_TO_GET}")
    looked = []
    for folder in candidates(data_path, FOLDER):
        found = shards(folder)
        if found:
            return found
        looked.append(str(folder))
    raise LayoutError(f"dataset WebClick not found: expected test-*.parquet (or data/test-*.parquet). Looked in: "
                      f"{'; '.join(looked)}. To get it: {HOW_TO_GET}")


def row_to_sample(i: int, row: Mapping[str, Any], image: ImageRef, where: str) -> Sample:
    sid = f"webclick-{i}"
    meta = optional_meta(row, ("bucket",))
    try:
        instruction = text_field(row, "instruction")
        x0, y0, x1, y1 = numbers(row.get("bbox"), 4, "bbox")
        if max(x0, y0, x1, y1) > 1.0 or min(x0, y0, x1, y1) < 0.0:
            raise RecordError("bbox", f"expected [x1, y1, x2, y2] as fractions of the image (0..1, the card's "
                                      f"ScreenSpot format), got {[x0, y0, x1, y1]!r}")
        if x1 < x0 or y1 < y0:
            raise RecordError("bbox", f"expected x1 <= x2 and y1 <= y2, got {[x0, y0, x1, y1]!r}")
    except RecordError as exc:
        return invalid_sample(sid, image, "point", meta, f"{where}: {exc}")
    return Sample(id=sid, image=image, instruction=instruction, task="point", target=Target(box=Box(x0, y0, x1, y1)),
                  meta=meta)


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """Every row of the test split (see the module docstring). No options."""
    check_options(options, set())
    extras.require("automotive", ("pyarrow",), "the WebClick suite (its parquet files)")
    import pyarrow.parquet as pq

    samples: list[Sample] = []
    for path in locate(ctx.data_path):
        pf = pq.ParquetFile(path)
        missing = [c for c in ("image", "instruction", "bbox") if c not in pf.schema_arrow.names]
        if missing:
            raise LayoutError(f"{path}: not a WebClick shard: no column(s) {', '.join(missing)} (expected image, "
                              "instruction, bbox, bucket)")
        columns = [c for c in COLUMNS if c in pf.schema_arrow.names]
        for g in range(pf.num_row_groups):
            rows = pf.read_row_group(g, columns=columns).to_pylist()
            for j, row in enumerate(rows):
                n = len(samples)
                image = ImageRef.from_source(f"{path.name}#{n}", _image(path, g, j, n))
                samples.append(row_to_sample(n, row, image, f"{path.name} row {n}"))
    return samples
