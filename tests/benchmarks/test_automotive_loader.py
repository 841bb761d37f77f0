"""pytest_uiground.benchmarks.automotive.loader: rows to samples, and where the data is looked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_uiground.benchmarks.automotive import loader
from pytest_uiground.benchmarks.automotive.lookalike import write_fixture
from pytest_uiground.benchmarks.automotive.plan import expected_rows
from pytest_uiground.record.image import ImageRef
from pytest_uiground.suite.loading import LoaderContext

IMAGE = ImageRef.from_source("unused", lambda: b"")
BOX = [[0.1, 0.2, 0.3, 0.4]]


def _action(**changes: object) -> dict[str, object]:
    return {"box": BOX, "class": "Test Action", "test_action": "Tap on Media", "expectation": None,
            "conclusion": None, "language": "EN", "brand": "Aurelia", **changes}


def _result(**changes: object) -> dict[str, object]:
    return {"box": BOX, "class": "Expected Result", "test_action": None, "expectation": "The clock shows 10:00",
            "conclusion": "Passed", "language": "DE", "brand": "Lumen Motors", **changes}


def test_a_test_action_row_is_a_point_task_named_by_its_row() -> None:
    s = loader.row_to_sample(7, _action(), IMAGE)
    assert (s.id, s.task, s.instruction, s.invalid) == ("aui-00007", "point", "Tap on Media", None)
    assert s.meta == {"row_index": "7", "class": "Test Action", "language": "EN", "brand": "Aurelia"}
    assert s.target.box is not None and (s.target.box.x0, s.target.box.y1) == pytest.approx((0.1, 0.4))
    assert s.target.verdict is None


def test_an_expected_result_row_is_a_verdict_task_with_a_lowercase_conclusion() -> None:
    s = loader.row_to_sample(12, _result(), IMAGE)
    assert (s.task, s.instruction, s.target.verdict, s.invalid) == ("verdict", "The clock shows 10:00", "passed", None)
    assert s.meta["conclusion"] == "passed" and s.target.box is not None


@pytest.mark.parametrize(("row", "problem"), [
    (_action(box=None), "box is null"),
    (_action(box=[[0.1, 0.2, 0.3]]), "box"),
    (_action(box=5), "is not a 1x4 array"),
    (_action(**{"class": "Other"}), "unknown class 'Other'"),
    (_action(test_action=None), "no test_action text"),
    (_result(expectation=""), "no expectation text"),
    (_result(conclusion="unknown"), "conclusion 'unknown' is not passed/failed"),
])
def test_a_malformed_row_is_a_sample_that_fails_with_its_row_index(row: dict[str, object], problem: str) -> None:
    s = loader.row_to_sample(3, row, IMAGE)
    assert s.invalid is not None and s.invalid.startswith("row 3: ") and problem in s.invalid
    assert s.id == "aui-00003"


def test_load_reads_a_data_root_holding_the_dataset_folder(tmp_path: Path) -> None:
    write_fixture(tmp_path / loader.FOLDER, rows=6, seed=2, width=320, height=180, rows_per_group=4,
                  bad={4: "null_box"})
    samples = loader.load({"rows": 5, "download": False}, LoaderContext("aui", tmp_path, data_path=tmp_path))
    want = expected_rows(6, 2, bad={4: "null_box"})[:5]
    assert [s.id for s in samples] == [f"aui-{i:05d}" for i in range(5)]
    assert [s.instruction for s in samples] == [r["test_action"] or r["expectation"] for r in want]
    assert [s.invalid is not None for s in samples] == [False, False, False, False, True]
    assert samples[3].image.load().size == (320, 180)  # read from the second row group


def test_locate_prefers_the_pinned_revision_in_the_hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "hub" / f"datasets--{loader.HUB_ID.replace('/', '--')}"
    write_fixture(repo / "snapshots" / "aaaa", rows=2, seed=0, width=320, height=180)
    write_fixture(repo / "snapshots" / "bbbb", rows=3, seed=0, width=320, height=180)
    (repo / "refs").mkdir()
    (repo / "refs" / "v1").write_text("aaaa\n", encoding="utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    # unpinned, some snapshot is read; which one is not asserted (it goes by folder name, not refs/main)
    assert len(loader.locate(None, allow_download=False)) in (2, 3)
    assert len(loader.locate(None, allow_download=False, revision="v1")) == 2  # a ref names its commit
    assert len(loader.locate(None, allow_download=False, revision="aaaa")) == 2
    with pytest.raises(loader.DatasetNotFound, match="revision 'cccc'"):
        loader.locate(None, allow_download=False, revision="cccc")


def test_not_found_says_where_it_looked_and_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(loader.DatasetNotFound) as info:
        loader.locate(tmp_path, allow_download=False)
    message = str(info.value)
    assert str(tmp_path) in message and str(tmp_path / loader.FOLDER) in message
    assert "skipped: HF_HUB_OFFLINE is set or download = false" in message
    assert f"hf download {loader.HUB_ID}" in message


@pytest.mark.parametrize(("options", "match"), [
    ({"row": 3}, r"unknown loader option\(s\) \['row'\]"),
    ({"revision": ""}, "loader option revision"),
    ({"revision": 3}, "loader option revision"),
])
def test_load_refuses_bad_options_before_looking_for_data(tmp_path: Path, options: dict[str, object],
                                                          match: str) -> None:
    with pytest.raises(ValueError, match=match):
        loader.load(options, LoaderContext("aui", tmp_path, data_path=tmp_path))


def test_an_unpinned_cache_reads_the_snapshot_refs_main_names(tmp_path: Path) -> None:
    """Snapshot folders are named by commit hash: the one ``refs/main`` points to is read first,
    not whichever hash sorts last (an older snapshot named ``f9e8`` used to win over ``0a1b``)."""
    from pytest_uiground.benchmarks.automotive.loader import _snapshots

    cache = tmp_path / "datasets--x--y" / "snapshots"
    (cache / "f9e8").mkdir(parents=True)
    (cache / "0a1b").mkdir()
    (tmp_path / "datasets--x--y" / "refs").mkdir()
    (tmp_path / "datasets--x--y" / "refs" / "main").write_text("0a1b\n")
    assert [p.name for p in _snapshots(cache, None)] == ["0a1b", "f9e8"]
    assert [p.name for p in _snapshots(cache, "f9e8")] == ["f9e8"]


@pytest.mark.parametrize("rows", [-1, 0, True, "10", 2.5])
def test_a_rows_option_that_is_no_positive_whole_number_is_named(rows: object) -> None:
    """``rows = -1`` used to drop the last row silently (``rows[:-1]``), ``true`` meant 1."""
    ctx = LoaderContext(suite_name="automotive", suite_dir=Path("."), data_path=None)
    with pytest.raises(ValueError, match=r"loader option rows: expected a whole number of rows >= 1"):
        loader.load({"rows": rows, "download": False}, ctx)
