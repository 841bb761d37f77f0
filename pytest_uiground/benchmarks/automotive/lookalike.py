"""A small, deterministic AutomotiveUI-Bench-4K look-alike, written in the hub's exact on-disk schema.

Why this exists: the real set (``sparks-solutions/AutomotiveUI-Bench-4K``, ~10.8 GB decoded) cannot be
downloaded in CI or on air-gapped machines, yet the loader, the scoring and the benchmarks need parquet
shards that look *exactly* like the downloaded repository: ``<root>/data/test-0000K-of-0000N.parquet``,
one split ``test``, the Hugging Face ``Image`` and ``Array2D`` features, and the card's nulls. This module
draws dark infotainment (IVI) screens with Pillow and writes them with that schema, so anything that
reads the real set (``pyarrow``, ``datasets.load_dataset("parquet", ...)``, ``datasets.load_dataset(root)``)
reads the fixture the same way.

What is written (one row per annotation, several rows per screenshot, like the 998 images / 4,208 rows
of the real set):

* ``image``: ``struct<bytes: binary, path: string>`` (the ``Image`` feature's storage), PNG bytes. Every
  row carries its screenshot's bytes, as in the hub shards; ``path`` is the screenshot's file name.
* ``box``: ``Array2D(shape=(1, 4), dtype="float32")``, stored as ``list<list<float>>``:
  ``[[x0, y0, x1, y1]]`` normalized to 0..1.
* ``class`` (``"Test Action"``/``"Expected Result"``), ``test_action`` (null on Expected Result rows),
  ``expectation`` and ``conclusion`` (``"passed"``/``"failed"``; both null on Test Action rows),
  ``language`` (``"DE"``/``"EN"``, the language of the screen's UI), ``brand`` (made-up brand names).
  As on the card, annotations are English; German UI labels are quoted (``Tap on "Klima 21,5°C"``).

The parquet schema carries the ``huggingface`` metadata that ``datasets`` writes, so ``image`` decodes as
an ``Image`` and ``box`` as ``Array2D`` without passing features. Row groups hold ``rows_per_group`` rows
(default :data:`DEFAULT_ROWS_PER_GROUP` = 16) so a reader can fetch one screenshot's bytes without
reading a shard (the hub's shards, written by ``push_to_hub``, typically hold ~100 rows per group; the size
matters for memory only, not for the schema).

A reader caveat this fixture reproduces: the schema embeds the ``datasets`` Array2D extension type, so in a
process that has imported ``datasets`` pyarrow reads ``box`` as that extension type, whose ``to_pylist``
reshapes to 1x4 and raises on a malformed box (``bad="bad_box"``) for the whole batch; read its
``.storage`` to get plain ``list<list<float>>``.

Ground truth is exact by construction: every referenced element (a tile, a dock button, the clock) is a
rectangle laid out in normalized coordinates from the seed alone (no text measuring), so
:func:`expected_rows` knows every row without rendering, and boxes do not depend on the image size.
Pixels are drawn at ``round(fraction * size)``, i.e. within half a pixel of the stored box. Texts are
unique within a screen, so every instruction names exactly one element; Expected Result verdicts are true
to the pixels (the highlighted tile, the set temperature, the clock).

Determinism: each screen has its own ``random.Random`` seeded from a string of ``(seed, screen index)``
(never ``hash()``, which is salted per process), and the only font is Pillow's bundled one
(``ImageFont.load_default(size=...)``), so the same seed gives the same bytes with the same Pillow/zlib.
Row ``i`` of ``rows=n`` is the same for every ``n > i`` (screens are generated in order and only the last
one is cut short), so fixtures of different sizes share a prefix.

Speed: PNG encoding dominates (``compress_level=1``); screens are flat-coloured, so a 2000x1125 PNG is
small and fast. Nothing is printed.
"""


from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa
    from datasets import Features

__all__ = [
    "BAD_KINDS",
    "COLUMNS",
    "DEFAULT_BRANDS",
    "DEFAULT_ROWS_PER_GROUP",
    "expected_rows",
    "features",
    "write_fixture",
    "write_fixture_save_to_disk",
]

from pytest_uiground.benchmarks.automotive.plan import (
    _MAX_SIDE,
    _MIN_H,
    _MIN_W,
    BAD_KINDS,
    COLUMNS,
    DEFAULT_BRANDS,
    DEFAULT_ROWS_PER_GROUP,
    _apply_bad,
    _check,
    _screens,
    expected_rows,
)
from pytest_uiground.benchmarks.automotive.render import _render

#: the extra that brings what the writers need (pyarrow writes the shards, datasets' features give the
#: schema metadata); the [hf] extra includes it
EXTRA = "automotive"

# --------------------------------------------------------------------------- writing


def features() -> Features:
    """The hub dataset's features (from the card's ``dataset_info``), in its column order."""
    from datasets import Array2D, Features, Image, Value

    return Features({
        "image": Image(),
        "box": Array2D(shape=(1, 4), dtype="float32"),
        "class": Value("string"),
        "test_action": Value("string"),
        "expectation": Value("string"),
        "conclusion": Value("string"),
        "language": Value("string"),
        "brand": Value("string"),
    })


def _check_size(width: int, height: int, shards: int, rows_per_group: int, rows: int) -> None:
    for name, value, lo, hi in (("width", width, _MIN_W, _MAX_SIDE), ("height", height, _MIN_H, _MAX_SIDE)):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= rows:
        raise ValueError(f"shards must be an integer in 1..rows ({rows}), got {shards!r}")
    if isinstance(rows_per_group, bool) or not isinstance(rows_per_group, int) or rows_per_group < 1:
        raise ValueError(f"rows_per_group must be a positive integer, got {rows_per_group!r}")


def _records(rows: int, seed: int, width: int, height: int, bad: Mapping[int, str] | None,
             brands: Sequence[str] | None) -> Iterator[dict[str, Any]]:
    """Every row as written (columns only), rendering each screenshot once for all its rows."""
    bad_map, names = _check(rows, bad, brands)
    n = 0
    for screen, screen_rows in _screens(rows, seed, names):
        png = _render(screen, width, height)
        for row in screen_rows:
            kind = bad_map.get(n)
            row = _apply_bad(row, kind)
            image: dict[str, Any] | None = {"bytes": png, "path": screen.path}
            if kind == "no_image":
                image = None
            elif kind == "corrupt_image":
                image = {"bytes": png[: max(64, len(png) // 3)], "path": screen.path}
            yield {"image": image, **{c: row[c] for c in COLUMNS[1:]}}
            n += 1


def _table(schema: pa.Schema, batch: list[dict[str, Any]]) -> pa.Table:
    """A table in the features' arrow schema (``box`` as the Array2D extension type, as ``datasets`` has it)."""
    import pyarrow as pa

    arrays = []
    for field in schema:
        values = [r[field.name] for r in batch]
        if isinstance(field.type, pa.ExtensionType):
            arrays.append(pa.ExtensionArray.from_storage(field.type, pa.array(values, type=field.type.storage_type)))
        else:
            arrays.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _shard_sizes(rows: int, shards: int) -> list[int]:
    base, extra = divmod(rows, shards)
    return [base + (1 if k < extra else 0) for k in range(shards)]


def _parquet_options(schema: pa.Schema) -> dict[str, Any]:
    """The per-column options ``datasets`` uses: image leaves stored plain and uncompressed (PNG bytes do
    not compress), the rest snappy with dictionaries."""
    import pyarrow as pa

    compression: dict[str, str] = {}
    encoding: dict[str, str] = {}
    dictionary: list[str] = []

    def leaves(path: str, t: pa.DataType) -> list[str]:
        if isinstance(t, pa.ExtensionType):
            t = t.storage_type
        if pa.types.is_struct(t):
            return [leaf for f in t for leaf in leaves(f"{path}.{f.name}", f.type)]
        if pa.types.is_list(t):
            return leaves(f"{path}.list.element", t.value_type)
        return [path]

    for field in schema:
        for leaf in leaves(field.name, field.type):
            if field.name == "image":
                compression[leaf], encoding[leaf] = "none", "PLAIN"
            else:
                compression[leaf] = "snappy"
                dictionary.append(leaf)
    return {"compression": compression, "column_encoding": encoding, "use_dictionary": dictionary}


_CARD = """---
dataset_info:
  features:
    - name: image
      dtype: image
    - name: box
      dtype:
        array2_d:
          shape:
            - 1
            - 4
          dtype: float32
    - name: class
      dtype: string
    - name: test_action
      dtype: string
    - name: expectation
      dtype: string
    - name: conclusion
      dtype: string
    - name: language
      dtype: string
    - name: brand
      dtype: string
  splits:
    - name: test
      num_examples: {rows}
configs:
  - config_name: default
    data_files:
      - split: test
        path: data/test-*
---

# AutomotiveUI-Bench-4K fixture

Synthetic look-alike written by `pytest_uiground.benchmarks.automotive.lookalike` (seed {seed}, {rows} rows,
{width}x{height} images); not the real benchmark.
"""


def write_fixture(root: Path, *, rows: int = 40, seed: int = 0, width: int = 1280, height: int = 720,
                  shards: int = 1, rows_per_group: int = DEFAULT_ROWS_PER_GROUP,
                  bad: Mapping[int, str] | None = None, brands: Sequence[str] | None = None) -> Path:
    """Write ``root/data/test-0000K-of-0000N.parquet`` (and the card's ``README.md``); return ``root``.

    The layout of the downloaded hub repository, so a reader can be pointed at ``root`` exactly as at
    the real set. Rows are split into ``shards`` contiguous shards of near-equal size, each written with
    row groups of ``rows_per_group`` rows. Existing ``data/test-*-of-*.parquet`` files are removed first,
    so a stale shard of an earlier call cannot be globbed along. ``bad`` maps row indices to a kind of
    :data:`BAD_KINDS`; ``brands`` replaces :data:`DEFAULT_BRANDS`.
    """
    from pytest_uiground import extras

    extras.require(EXTRA, ("pyarrow", "datasets"), "write_fixture")
    import pyarrow.parquet as pq

    _check(rows, bad, brands)
    _check_size(width, height, shards, rows_per_group, rows)
    root = Path(root)
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    for old in data.glob("test-*-of-*.parquet"):
        old.unlink()
    schema = features().arrow_schema
    options = _parquet_options(schema)
    records = _records(rows, seed, width, height, bad, brands)
    for k, size in enumerate(_shard_sizes(rows, shards)):
        path = data / f"test-{k:05d}-of-{shards:05d}.parquet"
        with pq.ParquetWriter(path, schema, write_page_index=True, **options) as writer:
            left = size
            while left:
                batch = [next(records) for _ in range(min(rows_per_group, left))]
                writer.write_table(_table(schema, batch), row_group_size=rows_per_group)
                left -= len(batch)
    (root / "README.md").write_text(_CARD.format(rows=rows, seed=seed, width=width, height=height), encoding="utf-8")
    return root


def write_fixture_save_to_disk(root: Path, *, rows: int = 40, seed: int = 0, width: int = 1280, height: int = 720,
                               shards: int = 1, rows_per_group: int = DEFAULT_ROWS_PER_GROUP,
                               bad: Mapping[int, str] | None = None, brands: Sequence[str] | None = None,
                               split: str | None = "test") -> Path:
    """The same rows in ``datasets``' ``save_to_disk`` layout (for ``datasets.load_from_disk``); return ``root``.

    With ``split="test"`` (default) a ``DatasetDict`` with that one split is saved, mirroring the hub's
    single split; with ``split=None`` a bare ``Dataset``. ``shards`` is the number of arrow files of the
    split; ``rows_per_group`` is the record-batch size of the intermediate arrow stream. Rows are streamed
    through a temporary arrow file (memory-mapped by ``datasets``), never held in memory at once.
    """
    from pytest_uiground import extras

    extras.require(EXTRA, ("pyarrow", "datasets"), "write_fixture_save_to_disk")
    import pyarrow as pa
    from datasets import Dataset, DatasetDict, are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    _check(rows, bad, brands)
    _check_size(width, height, shards, rows_per_group, rows)
    root = Path(root)
    schema = features().arrow_schema
    records = _records(rows, seed, width, height, bad, brands)
    was_disabled = are_progress_bars_disabled()
    with tempfile.TemporaryDirectory(prefix="automotive-fixture-") as tmp:
        stream = Path(tmp) / "rows.arrow"
        with pa.OSFile(str(stream), "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
            left = rows
            while left:
                batch = [next(records) for _ in range(min(rows_per_group, left))]
                writer.write_table(_table(schema, batch))
                left -= len(batch)
        disable_progress_bars()
        try:
            ds = Dataset.from_file(str(stream))
            if split is None:
                ds.save_to_disk(str(root), num_shards=shards)
            else:
                DatasetDict({split: ds}).save_to_disk(str(root), num_shards={split: shards})
            del ds
        finally:
            if not was_disabled:
                enable_progress_bars()
    return root


def _main() -> None:  # pragma: no cover - a developer convenience
    """``python -m pytest_uiground.benchmarks.automotive.lookalike ROOT [ROWS [WIDTH HEIGHT]]``: write a fixture."""
    import sys

    args = sys.argv[1:]
    if not args:
        raise SystemExit("usage: python -m pytest_uiground.benchmarks.automotive.lookalike ROOT [ROWS [WIDTH HEIGHT]]")
    rows = int(args[1]) if len(args) > 1 else 40
    size = (int(args[2]), int(args[3])) if len(args) > 3 else (1280, 720)
    write_fixture(Path(args[0]), rows=rows, width=size[0], height=size[1])
    print(json.dumps({"root": args[0], "rows": rows, "width": size[0], "height": size[1]}))


if __name__ == "__main__":  # pragma: no cover
    _main()

