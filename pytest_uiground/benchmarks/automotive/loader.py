"""AutomotiveUI-Bench-4K (``sparks-solutions/AutomotiveUI-Bench-4K``), 4,208 rows, ~10.8 GB.

Each row becomes one sample, ``aui-<row>`` with ``meta["row_index"]`` = the row's index
in the test split (the id the card's script writes, so its outputs replay directly).
"Test Action" rows are point tasks; "Expected Result" rows are verdict tasks scored for
both the verdict and the point. Metadata is read without the image column; an image's
bytes are read only when its sample runs, one parquet row group at a time (a small LRU
keeps the group for the next rows of the same screenshot), so the set is never held in
memory. A malformed row (null or malformed box, no image, unknown class) becomes a
sample that fails with its row index; the other rows run.

Where the data is looked for, in order:
1. ``--uiground-data-path DIR``: ``DIR`` itself, then ``DIR/AutomotiveUI-Bench-4K`` (a data root
   shared by several suites). Each may be the downloaded repository layout
   (``data/test-*.parquet``), a folder of ``test-*.parquet`` files, or a
   ``save_to_disk`` folder.
2. The Hugging Face cache (``$HF_HUB_CACHE`` or ``~/.cache/huggingface/hub``).
3. The hub through ``datasets`` (skipped when ``HF_HUB_OFFLINE=1``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from pytest_uiground import extras
from pytest_uiground.record.geometry import Box, make_box
from pytest_uiground.record.image import ImageError, ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite.loading import LoaderContext

HUB_ID = "sparks-solutions/AutomotiveUI-Bench-4K"
FOLDER = "AutomotiveUI-Bench-4K"
META_COLUMNS = ["box", "class", "test_action", "expectation", "conclusion", "language", "brand"]
CLASSES = {"Test Action": "point", "Expected Result": "verdict"}
HOW_TO_GET = (
    f"download it with `hf download {HUB_ID} --repo-type dataset --local-dir /data/{FOLDER}` "
    f"and pass `--uiground-data-path /data/{FOLDER}` (or a folder that contains {FOLDER}/), or run online so that "
    "`datasets` fetches it into the Hugging Face cache"
)


class DatasetNotFound(FileNotFoundError):
    pass


# -- image access ---------------------------------------------------------------------------------
@lru_cache(maxsize=2)
def _row_group_images(path: str, group: int) -> list[Any]:
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).read_row_group(group, columns=["image"]).column("image").to_pylist()  # type: ignore[no-any-return]


def _parquet_image(path: str, group: int, index: int, row: int) -> Callable[[], bytes]:
    def read() -> bytes:
        cell = _row_group_images(path, group)[index]
        data = cell.get("bytes") if isinstance(cell, dict) else None
        if not data:
            raise ImageError(f"row {row}: the dataset has no image for this row ({Path(path).name})")
        return bytes(data)

    return read


# -- sources --------------------------------------------------------------------------------------
def _table_rows(table: Any) -> list[dict[str, Any]]:
    """Rows of an arrow table as dicts, reading extension columns from their storage.

    ``box`` is the datasets ``Array2D`` extension type; once datasets is imported,
    pyarrow converts it by reshaping every row to 1x4, so one malformed box would make
    the whole row group unreadable. The storage (nested lists) reads row by row.
    """
    import pyarrow as pa

    columns = {}
    for name in table.column_names:
        col = table.column(name)
        if isinstance(col.type, pa.ExtensionType):
            col = pa.chunked_array([c.storage for c in col.chunks], type=col.type.storage_type)
        columns[name] = col.to_pylist()
    names = list(columns)
    return [dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)]


def _parquet_rows(files: list[Path]) -> list[tuple[dict[str, Any], ImageRef]]:
    import pyarrow.parquet as pq

    out: list[tuple[dict[str, Any], ImageRef]] = []
    for f in files:
        pf = pq.ParquetFile(f)
        missing = [c for c in META_COLUMNS if c not in pf.schema_arrow.names]
        if missing:
            raise ValueError(f"{f}: not an AutomotiveUI-Bench-4K shard: no column(s) {', '.join(missing)}")
        for g in range(pf.num_row_groups):
            rows = _table_rows(pf.read_row_group(g, columns=META_COLUMNS))
            for i, row in enumerate(rows):
                n = len(out)
                out.append((row, ImageRef.from_source(f"{f.name}#{n}", _parquet_image(str(f), g, i, n))))
    return out


def _dataset_rows(ds: Any) -> list[tuple[dict[str, Any], ImageRef]]:
    meta = _table_rows(ds.data.table.select(META_COLUMNS))

    def image(i: int) -> Callable[[], Any]:
        def read() -> Any:
            img = ds[i]["image"]
            if img is None:
                raise ImageError(f"row {i}: the dataset has no image for this row")
            return img

        return read

    return [(row, ImageRef.from_source(f"{HUB_ID}#{i}", image(i))) for i, row in enumerate(meta)]


def _shards(folder: Path) -> list[Path]:
    for pattern in ("data/test-*.parquet", "test-*.parquet", "data/*.parquet"):
        files = sorted(folder.glob(pattern))
        if files:
            return files
    return []


def _from_folder(folder: Path) -> list[tuple[dict[str, Any], ImageRef]] | None:
    if not folder.is_dir():
        return None
    files = _shards(folder)
    if files:
        return _parquet_rows(files)
    if (folder / "dataset_dict.json").is_file() or (folder / "state.json").is_file():
        extras.require("automotive", ("datasets",), f"reading the saved dataset {folder}")
        import datasets

        ds = datasets.load_from_disk(str(folder))
        return _dataset_rows(ds["test"] if isinstance(ds, datasets.DatasetDict) else ds)
    return None


def _hf_cache() -> Path:
    hub = os.environ.get("HF_HUB_CACHE")
    if hub:
        return Path(hub)
    home = os.environ.get("HF_HOME")
    return (Path(home) if home else Path.home() / ".cache" / "huggingface") / "hub"


def _snapshots(cache: Path, revision: str | None) -> list[Path]:
    """The hub cache's snapshot folders to try: unpinned, the one ``refs/main`` names first, then the
    others newest first (snapshot folders are named by commit hash, so their names say nothing
    about age); pinned, only ``revision`` (a commit, or a branch/tag the cache's ``refs/`` maps to one)."""
    if revision is None:
        main = cache.parent / "refs" / "main"
        head = cache / main.read_text(encoding="utf-8").strip() if main.is_file() else None
        others = sorted((p for p in cache.glob("*") if p != head), key=lambda p: p.stat().st_mtime, reverse=True)
        return ([head] if head is not None and head.is_dir() else []) + others
    ref = cache.parent / "refs" / revision
    commit = ref.read_text(encoding="utf-8").strip() if ref.is_file() else revision
    return [cache / commit] if (cache / commit).is_dir() else []


def locate(data_path: Path | None, *, allow_download: bool = True, revision: str | None = None
           ) -> list[tuple[dict[str, Any], ImageRef]]:
    looked: list[str] = []
    if data_path is not None:
        for folder in (data_path, data_path / FOLDER):
            rows = _from_folder(folder)
            if rows is not None:
                return rows
            looked.append(f"{folder} (no data/test-*.parquet, test-*.parquet or save_to_disk folder)")
    cache = _hf_cache() / f"datasets--{HUB_ID.replace('/', '--')}" / "snapshots"
    for snapshot in _snapshots(cache, revision):
        files = _shards(snapshot)
        if files:
            return _parquet_rows(files)
    looked.append(f"the Hugging Face cache {cache}" + (f" (revision {revision!r})" if revision else ""))
    if allow_download and os.environ.get("HF_HUB_OFFLINE", "0") in ("", "0", "false", "False"):
        try:
            import datasets

            return _dataset_rows(datasets.load_dataset(HUB_ID, split="test", revision=revision))
        except Exception as exc:  # any hub failure ends in the same message
            looked.append(f"the hub ({type(exc).__name__}: {exc})")
    else:
        looked.append("the hub (skipped: HF_HUB_OFFLINE is set or download = false)")
    raise DatasetNotFound(
        f"dataset {HUB_ID} not found. Looked in: " + "; ".join(looked) + f". To get it: {HOW_TO_GET}"
    )


# -- rows → samples -------------------------------------------------------------------------------
def _box(value: Any) -> Box:
    if value is None:
        raise ValueError("box is null")
    try:
        first = value[0]
    except (TypeError, IndexError, KeyError):
        raise ValueError(f"box {value!r} is not a 1x4 array") from None
    return make_box(first, what="box")


def row_to_sample(i: int, row: Mapping[str, Any], image: ImageRef) -> Sample:
    cls = row.get("class")
    meta = {"row_index": str(i), "class": str(cls), "language": str(row.get("language")),
            "brand": str(row.get("brand"))}
    sid = f"aui-{i:05d}"
    problem = None
    task = CLASSES.get(cls) if isinstance(cls, str) else None
    text = row.get("test_action") if task == "point" else row.get("expectation")
    verdict = None
    box: Box | None = None
    if task is None:
        problem = f"unknown class {cls!r}; expected 'Test Action' or 'Expected Result'"
    else:
        try:
            box = _box(row.get("box"))
        except ValueError as exc:
            problem = str(exc)
        if not text:
            problem = problem or f"no {'test_action' if task == 'point' else 'expectation'} text"
        if task == "verdict":
            verdict = (row.get("conclusion") or "").lower()
            meta["conclusion"] = verdict
            if verdict not in ("passed", "failed"):
                problem = problem or f"conclusion {row.get('conclusion')!r} is not passed/failed"
    return Sample(
        id=sid, image=image, instruction=str(text or ""), task=task or "point",  # type: ignore[arg-type]
        target=Target(box=box, verdict=verdict), meta=meta,
        invalid=f"row {i}: {problem}" if problem else None,
    )


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    unknown = set(options) - {"download", "rows", "revision"}
    if unknown:
        raise ValueError(f"unknown loader option(s) {sorted(unknown)}; known: download, revision, rows")
    revision = options.get("revision")
    if revision is not None and (not isinstance(revision, str) or not revision.strip()):
        raise ValueError(f"loader option revision: expected a hub commit, tag or branch, got {revision!r}")
    limit = options.get("rows")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"loader option rows: expected a whole number of rows >= 1 (the first N rows), "
                         f"got {limit!r}; leave it out for every row")
    # The revision pins the hub download and cache; it is recorded in the baseline's provenance
    # (a local --uiground-data-path copy cannot be checked against it).
    extras.require("automotive", ("pyarrow",), "the automotive suite")
    rows = locate(ctx.data_path, allow_download=bool(options.get("download", True)), revision=revision)
    if limit is not None:
        rows = rows[:limit]
    return [row_to_sample(i, row, image) for i, (row, image) in enumerate(rows)]
