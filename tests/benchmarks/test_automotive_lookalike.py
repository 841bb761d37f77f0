"""The AutomotiveUI-Bench-4K fixture must be indistinguishable, schema-wise, from the hub's parquet shards.

Readers (the automotive loader, benchmarks) are tested against this fixture instead of the real 10.8 GB
set, so a drift here (a wrong type, a null where the card has a value, a row group holding a whole shard)
would let a reader pass here and fail on the real data. Images are small so the module stays fast.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from conftest import needs

# The AutomotiveUI parquet reader and the look-alike writer need the [automotive] extra (datasets, pyarrow).
pa = pytest.importorskip("pyarrow", reason=needs("automotive"))
pq = pytest.importorskip("pyarrow.parquet", reason=needs("automotive"))
_datasets = pytest.importorskip("datasets", reason=needs("automotive"))

from pytest_uiground.benchmarks.automotive.lookalike import (  # noqa: E402
    BAD_KINDS,
    COLUMNS,
    DEFAULT_BRANDS,
    expected_rows,
    write_fixture,
    write_fixture_save_to_disk,
)

W, H = 320, 180
STRING_COLUMNS = ("class", "test_action", "expectation", "conclusion", "language", "brand")


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One shared 40-row, 2-shard fixture: rendering is the slow part, so the read-only tests share it."""
    return write_fixture(tmp_path_factory.mktemp("aui") / "AutomotiveUI-Bench-4K", rows=40, seed=7, width=W,
                         height=H, shards=2, rows_per_group=8)


def _shards(root: Path) -> list[Path]:
    return sorted((root / "data").glob("test-*.parquet"))


def _plain(table: pa.Table) -> pa.Table:
    """Drop extension types to their storage: once ``datasets`` is imported, pyarrow reads ``box`` as its
    Array2D extension type, whose ``to_pylist`` reshapes every row to 1x4 and so raises on a malformed box."""
    for i, field in enumerate(table.schema):
        if isinstance(field.type, pa.ExtensionType):
            storage = pa.chunked_array([c.storage for c in table.column(i).chunks], type=field.type.storage_type)
            table = table.set_column(i, field.name, storage)
    return table


def _rows(root: Path, columns: list[str] | None = None) -> list[dict[str, Any]]:
    return [r for f in _shards(root) for r in _plain(pq.read_table(f, columns=columns)).to_pylist()]


def _storage(t: pa.DataType) -> pa.DataType:
    """``datasets`` registers its Array2D extension type when imported; the stored type is its storage."""
    return t.storage_type if isinstance(t, pa.ExtensionType) else t


def test_layout_and_arrow_schema(fixture_root: Path) -> None:
    assert [f.name for f in _shards(fixture_root)] == ["test-00000-of-00002.parquet", "test-00001-of-00002.parquet"]
    for f in _shards(fixture_root):
        schema = pq.read_schema(f)
        assert schema.names == list(COLUMNS)
        assert schema.field("image").type == pa.struct([("bytes", pa.binary()), ("path", pa.string())])
        assert _storage(schema.field("box").type) == pa.list_(pa.list_(pa.float32()))
        for name in STRING_COLUMNS:
            assert schema.field(name).type == pa.string(), name
        assert b"huggingface" in (schema.metadata or {})
        # The physical parquet schema (leaf paths and types), independent of any registered extension type.
        physical = pq.ParquetFile(f).schema
        leaves = {physical.column(i).path: physical.column(i).physical_type for i in range(len(physical))}
        assert leaves == {
            "image.bytes": "BYTE_ARRAY",
            "image.path": "BYTE_ARRAY",
            "box.list.element.list.element": "FLOAT",
            **dict.fromkeys(STRING_COLUMNS, "BYTE_ARRAY"),
        }


def test_values_and_nulls_follow_the_card(fixture_root: Path) -> None:
    rows = _rows(fixture_root)
    assert len(rows) == 40
    assert rows and all(r["image"]["bytes"][:8] == b"\x89PNG\r\n\x1a\n" for r in rows)
    for r in rows:
        (x0, y0, x1, y1), *rest = r["box"]
        assert not rest and 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
        assert r["language"] in {"DE", "EN"} and r["brand"] in DEFAULT_BRANDS
        if r["class"] == "Test Action":
            assert r["test_action"] and r["expectation"] is None and r["conclusion"] is None
        else:
            assert r["class"] == "Expected Result"
            assert r["test_action"] is None and r["expectation"] and r["conclusion"] in {"passed", "failed"}
    assert {r["class"] for r in rows} == {"Test Action", "Expected Result"}
    # Several rows per screenshot, as in the real set (998 images for 4,208 rows).
    assert len({r["image"]["path"] for r in rows}) < len(rows) / 2


def test_matches_expected_rows(fixture_root: Path) -> None:
    meta = expected_rows(40, 7)
    rows = _rows(fixture_root)
    for r, m in zip(rows, meta, strict=True):
        assert {c: r[c] for c in COLUMNS[1:]} == {c: m[c] for c in COLUMNS[1:]}
        assert r["image"]["path"] == m["image_path"]
    assert expected_rows(25, 7) == meta[:25]  # smaller fixtures are prefixes of larger ones


def test_row_groups_are_small(fixture_root: Path) -> None:
    for f in _shards(fixture_root):
        meta = pq.ParquetFile(f).metadata
        assert meta.num_rows == 20
        assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [8, 8, 4]


def test_datasets_reads_image_and_array2d(fixture_root: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets", reason=needs("automotive"))
    from PIL import Image

    ds = datasets.load_dataset("parquet", data_files=str(fixture_root / "data" / "*.parquet"), split="train",
                               cache_dir=str(tmp_path / "cache"))
    assert isinstance(ds.features["image"], datasets.Image)
    assert ds.features["box"] == datasets.Array2D(shape=(1, 4), dtype="float32")
    assert len(ds) == 40
    first = ds[0]
    assert isinstance(first["image"], Image.Image) and first["image"].size == (W, H)
    assert first["box"] == expected_rows(1, 7)[0]["box"]
    # The repository layout itself (README card with configs) loads as the hub set does: split "test".
    test = datasets.load_dataset(str(fixture_root), split="test", cache_dir=str(tmp_path / "cache2"))
    assert len(test) == 40 and test.features == ds.features


def test_deterministic_and_seed_dependent(tmp_path: Path) -> None:
    def shard(root: Path) -> bytes:
        return pq.read_table(_shards(root)[0]).column("image").combine_chunks().field("bytes")[0].as_py()

    a = write_fixture(tmp_path / "a", rows=6, seed=3, width=W, height=H)
    b = write_fixture(tmp_path / "b", rows=6, seed=3, width=W, height=H)
    c = write_fixture(tmp_path / "c", rows=6, seed=4, width=W, height=H)
    assert _shards(a)[0].read_bytes() == _shards(b)[0].read_bytes()
    assert shard(a) != shard(c)


def test_large_images_and_stale_shards(tmp_path: Path) -> None:
    from PIL import Image

    root = write_fixture(tmp_path / "r", rows=3, shards=3, width=2000, height=1125)
    root = write_fixture(root, rows=2, width=2000, height=1125)  # rewrites: the 3-shard files must go
    assert [f.name for f in _shards(root)] == ["test-00000-of-00001.parquet"]
    png = _rows(root)[0]["image"]["bytes"]
    assert Image.open(io.BytesIO(png)).size == (2000, 1125)


def test_save_to_disk_variant(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets", reason=needs("automotive"))

    root = write_fixture_save_to_disk(tmp_path / "disk", rows=10, seed=7, width=W, height=H, shards=2)
    dd = datasets.load_from_disk(str(root))
    assert list(dd) == ["test"]
    ds = dd["test"]
    assert len(ds) == 10 and ds.features["box"] == datasets.Array2D(shape=(1, 4), dtype="float32")
    assert len(list((root / "test").glob("data-*.arrow"))) == 2
    assert ds[3]["image"].size == (W, H)
    meta = expected_rows(10, 7)
    assert [r["class"] for r in meta] == ds["class"]
    assert [r["box"] for r in meta] == ds["box"]

    flat = datasets.load_from_disk(str(write_fixture_save_to_disk(tmp_path / "flat", rows=3, width=W, height=H,
                                                                  split=None)))
    assert isinstance(flat, datasets.Dataset) and len(flat) == 3


def test_bad_rows(tmp_path: Path) -> None:
    bad = dict(enumerate(BAD_KINDS))  # one row of each kind, rows 0..7
    root = write_fixture(tmp_path / "bad", rows=12, seed=1, width=W, height=H, bad=bad)
    rows = _rows(root)
    clean = expected_rows(12, 1)
    meta = expected_rows(12, 1, bad=bad)
    by_kind = {kind: i for i, kind in bad.items()}
    assert rows[by_kind["null_box"]]["box"] is None
    assert rows[by_kind["bad_box"]]["box"] == [clean[by_kind["bad_box"]]["box"][0][:3]]
    x0, y0, x1, y1 = rows[by_kind["inverted_box"]]["box"][0]
    assert x0 > x1 and y0 < y1
    assert rows[by_kind["no_image"]]["image"] is None
    assert rows[by_kind["bad_class"]]["class"] == "Other"
    i = by_kind["no_text"]
    assert rows[i]["test_action"] is None and rows[i]["expectation"] is None
    assert rows[by_kind["bad_conclusion"]]["conclusion"] in {"unknown", "passed"}
    corrupt = rows[by_kind["corrupt_image"]]["image"]["bytes"]
    from PIL import Image

    with pytest.raises(OSError):
        Image.open(io.BytesIO(corrupt)).load()
    # Everything else is untouched and expected_rows reports the damage.
    for j, (r, m) in enumerate(zip(rows, meta, strict=True)):
        assert {c: r[c] for c in COLUMNS[1:]} == {c: m[c] for c in COLUMNS[1:]}
        assert m["bad"] == bad.get(j)
    assert rows[8:] == _rows(write_fixture(tmp_path / "ok", rows=12, seed=1, width=W, height=H))[8:]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rows": 0}, "rows"),
        ({"bad": {99: "null_box"}}, "outside"),
        ({"bad": {0: "nope"}}, "unknown kind"),
        ({"shards": 50}, "shards"),
        ({"width": 10}, "width"),
        ({"rows_per_group": 0}, "rows_per_group"),
    ],
)
def test_rejects_bad_arguments(tmp_path: Path, kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        write_fixture(tmp_path / "x", **{"rows": 4, "width": W, "height": H, **kwargs})
