"""pytest_uiground.benchmarks.openadapt.common: the helpers both OpenAdapt loaders share."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_uiground.benchmarks.openadapt import common
from pytest_uiground.record.geometry import Box
from pytest_uiground.suite.loading import LoaderContext


def test_resolve_path_reads_relative_paths_from_the_data_path_else_the_suite_folder(tmp_path: Path) -> None:
    suite_dir, data = tmp_path / "suite", tmp_path / "data"
    without = LoaderContext("s", suite_dir)
    with_data = LoaderContext("s", suite_dir, data_path=data)
    assert common.resolve_path("ann/x.json", without, "annotations") == suite_dir / "ann" / "x.json"
    assert common.resolve_path("ann/x.json", with_data, "annotations") == data / "ann" / "x.json"
    absolute = tmp_path / "abs.json"
    assert common.resolve_path(str(absolute), with_data, "annotations") == absolute
    assert str(suite_dir) in common.base_note(without) and "--uiground-data-path" in common.base_note(without)
    assert str(data) in common.base_note(with_data)
    for bad in ("", None, 3):
        with pytest.raises(ValueError, match="loader option annotations: expected a path"):
            common.resolve_path(bad, without, "annotations")


def test_unique_id_makes_ids_safe_and_numbers_repeats_in_order() -> None:
    used: set[str] = set()
    assert common.unique_id("login/button #1", used, "el") == "login_button__1"
    assert common.unique_id("__save", used, "el") == "save"  # ids start with a letter or digit
    assert common.unique_id("save", used, "el") == "save-2"
    assert common.unique_id("save", used, "el") == "save-3"
    assert common.unique_id("///", used, "el-7") == "el-7"  # nothing safe left: the fallback
    assert used == {"login_button__1", "save", "save-2", "save-3", "el-7"}


def test_finite_numbers_accepts_exactly_n_finite_numbers() -> None:
    assert common.finite_numbers([1, 2.5, 3, 4], 4, "bbox", hint="[x0, y0, x1, y1]") == [1.0, 2.5, 3.0, 4.0]
    for bad in ([1, 2, 3], [1, 2, 3, math.nan], [1, 2, 3, True], "1,2,3,4", None, [1, 2, 3, "4"]):
        with pytest.raises(common.BadValue, match=r"^bbox .* is not 4 numbers; expected \[x0, y0, x1, y1\]$"):
            common.finite_numbers(bad, 4, "bbox", hint="[x0, y0, x1, y1]")


def test_show_writes_values_as_in_the_file() -> None:
    assert common.show([1, "a", None]) == '[1, "a", null]'
    assert common.show({1, 2}) in ("{1, 2}", "{2, 1}")  # not JSON: its repr


def test_instruction_falls_back_to_the_text_then_the_type() -> None:
    assert common.instruction_for("  Click Save ", "Save", "button") == "Click Save"
    assert common.instruction_for("  ", " Save ", "button") == "Save"
    assert common.instruction_for(None, None, "icon") == "the icon"
    assert common.instruction_for(None, "", common.UNKNOWN_TYPE) == "the clicked element"
    assert common.nonblank(5) is None and common.nonblank(" x ") == "x"


def test_bucket_does_not_drop_a_32_px_element_into_lt32_on_rounding() -> None:
    box = Box(0.1, 0.1, 0.1 + 32 / 1920, 0.1 + 10 / 1920)
    assert box.width * 1920 < 32  # the float product really falls short
    assert common.bucket(box, 1920, 1080) == "32to100"
    assert common.bucket(Box(0.0, 0.0, 31 / 1920, 0.01), 1920, 1080) == "lt32"
    assert common.bucket(Box(0.0, 0.0, 0.5, 0.5), 1920, 1080) == "gt100"
