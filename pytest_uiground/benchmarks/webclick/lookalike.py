"""A small, deterministic look-alike of WebClick in its published layout (see
:mod:`pytest_uiground.suite.lookalike`).

:func:`write_webclick` → ``<root>/WebClick/test-00000-of-00001.parquet`` with the card's columns:
``image`` (``{"bytes", "path"}``, PNG), ``instruction``, ``bbox`` (``[x1, y1, x2, y2]`` as fractions of
the image) and ``bucket`` (``agentbrowse``, ``humanbrowse``, ``calendars``). Each screen draws its
elements, so the offline model can find some. ``rows`` replaces the generated rows verbatim (each
needs an ``image`` cell or gets a blank one), for parity and malformed-row tests.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

from pytest_uiground.suite.lookalike import WORDS, Screen, Written

BUCKETS = ("agentbrowse", "humanbrowse", "calendars")
SIZE = (480, 300)


@dataclass(frozen=True)
class WebClickFixture:
    folder: Path
    written: list[Written]


def png_bytes(size: tuple[int, int], colour: tuple[int, int, int] = (240, 240, 240)) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, format="PNG")
    return buf.getvalue()


def write_parquet(path: Path, rows: Sequence[Mapping[str, Any]], row_group_size: int = 4) -> None:
    """``rows`` as one parquet shard, with the card's column types (``bbox`` a list of doubles)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    order = ("image", "instruction", "bbox", "bucket")
    present = {k for r in rows for k in r} | {"image"}
    names = [k for k in order if k in present] + sorted(present - set(order))
    types = {"image": image, "instruction": pa.string(), "bbox": pa.list_(pa.float64()), "bucket": pa.string()}
    arrays = [pa.array([r.get(n) for r in rows], type=types.get(n, pa.string())) for n in names]
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_arrays(arrays, names=names), path, row_group_size=row_group_size)


def write_webclick(root: Path, *, n: int = 9, seed: int = 0, rows: Sequence[Mapping[str, Any]] | None = None,
                   folder_name: str = "WebClick") -> WebClickFixture:
    """Write ``root/WebClick`` and return what the loader must produce (sample id, row, size)."""
    folder = Path(root) / folder_name if folder_name else Path(root)
    shard = folder / "test-00000-of-00001.parquet"
    if rows is not None:
        given = [dict(r) for r in rows]
        for r in given:
            r.setdefault("image", {"bytes": png_bytes(SIZE), "path": None})
        write_parquet(shard, given)
        return WebClickFixture(folder, [Written(f"webclick-{i}", r, shard, SIZE) for i, r in enumerate(given)])
    rng = Random(f"webclick:{seed}")
    written: list[Written] = []
    out: list[dict[str, Any]] = []
    tmp = folder / ".screens"
    for i in range(n):
        screen = Screen(tmp / f"s{i}.png", SIZE, cols=3, rows=3)
        label = rng.choice(WORDS)
        x0, y0, x1, y1 = screen.place(rng, label, "text")
        screen.save()
        w, h = SIZE
        row = {"image": {"bytes": screen.path.read_bytes(), "path": f"{i}.png"}, "instruction": f"click {label}",
               "bbox": [x0 / w, y0 / h, x1 / w, y1 / h], "bucket": BUCKETS[i % 3]}
        screen.path.unlink()
        out.append(row)
        written.append(Written(f"webclick-{i}", {k: v for k, v in row.items() if k != "image"}, shard, SIZE))
    tmp.rmdir()
    write_parquet(shard, out)
    return WebClickFixture(folder, written)
