"""pytest_uiground.benchmarks.automotive.plan: every row's ground truth from the seed alone."""

from __future__ import annotations

import re

import numpy as np
import pytest

from pytest_uiground.benchmarks.automotive import plan

SCREENS = [plan._plan_screen(seed, i, plan.DEFAULT_BRANDS) for seed in (0, 1) for i in range(20)]


def test_row_i_does_not_depend_on_how_many_rows_are_asked_for() -> None:
    rows = plan.expected_rows(30, seed=4)
    assert len(rows) == 30
    assert plan.expected_rows(7, seed=4) == rows[:7]
    assert plan.expected_rows(30, seed=4) == rows
    assert plan.expected_rows(30, seed=5) != rows


def test_rows_have_the_card_columns_and_float32_exact_boxes() -> None:
    for row in plan.expected_rows(40, seed=0):
        assert set(plan.COLUMNS) - {"image"} <= set(row)
        assert row["bad"] is None and row["language"] in ("DE", "EN") and row["brand"] in plan.DEFAULT_BRANDS
        (box,) = row["box"]
        assert all(float(np.float32(v)) == v for v in box)
        assert 0 <= box[0] < box[2] <= 1 and 0 <= box[1] < box[3] <= 1
        if row["class"] == plan.TEST_ACTION:
            assert row["test_action"] and row["expectation"] is None and row["conclusion"] is None
            quoted = f'"{row["target"]}"' if row["language"] == "DE" else row["target"]
            assert quoted in row["test_action"]
        else:
            assert row["class"] == plan.EXPECTED_RESULT
            assert row["expectation"] and row["test_action"] is None and row["conclusion"] in ("passed", "failed")


def test_texts_are_unique_within_a_screen() -> None:
    for screen in SCREENS:
        texts = [r["test_action"] or r["expectation"] for r in screen.rows]
        assert len(set(texts)) == len(texts)
        assert 2 <= len(screen.rows) <= 6


def test_expected_result_verdicts_are_true_to_the_screen() -> None:
    seen = set()
    for screen in SCREENS:
        climate = [t for t in screen.tiles if t.key == "climate"]
        for row in screen.rows:
            if row["class"] != plan.EXPECTED_RESULT:
                continue
            text, passed = row["expectation"], row["conclusion"] == "passed"
            if text.endswith("tile is highlighted"):
                seen.add("highlight")
                assert passed == (row["target"] == screen.tiles[screen.highlighted].label), text
            elif (m := re.fullmatch(r"The climate temperature is set to (\S+)°C", text)):
                seen.add("climate")
                assert passed == (f" {m.group(1)}°C" in climate[0].label), (text, climate[0].label)
            else:
                m = re.fullmatch(r"The status bar shows the time (\d\d:\d\d)", text)
                assert m is not None, text
                seen.add("clock")
                assert passed == (m.group(1) == screen.clock.label), (text, screen.clock.label)
    assert seen == {"highlight", "climate", "clock"}


def test_an_injected_fault_changes_only_its_row() -> None:
    clean = plan.expected_rows(12, seed=0)
    action = next(i for i, r in enumerate(clean) if r["class"] == plan.TEST_ACTION)
    result = next(i for i, r in enumerate(clean) if r["class"] == plan.EXPECTED_RESULT)
    last = 11
    assert last not in (action, result)
    bad = plan.expected_rows(12, seed=0, bad={action: "no_text", result: "bad_conclusion", last: "inverted_box"})
    for i, (a, b) in enumerate(zip(clean, bad, strict=True)):
        if i not in (last, action, result):
            assert b == {**a, "bad": None}
    assert bad[action]["test_action"] is None and bad[action]["bad"] == "no_text"
    assert bad[result]["conclusion"] == "unknown"
    x0, y0, x1, y1 = clean[last]["box"][0]
    assert bad[last]["box"] == [[x1, y0, x0, y1]]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"rows": 0}, "rows must be a positive integer"),
    ({"rows": True}, "rows must be a positive integer"),
    ({"rows": 3, "bad": {0: "melted"}}, "unknown kind"),
    ({"rows": 3, "bad": {3: "null_box"}}, r"outside 0\.\.2"),
    ({"rows": 3, "brands": []}, "brands must be non-empty strings"),
    ({"rows": 3, "brands": ["ok", ""]}, "brands must be non-empty strings"),
])
def test_bad_arguments_are_refused(kwargs: dict[str, object], match: str) -> None:
    rows = kwargs.pop("rows")
    with pytest.raises(ValueError, match=match):
        plan.expected_rows(rows, 0, **kwargs)  # type: ignore[arg-type]


def test_custom_brands_are_used() -> None:
    assert {r["brand"] for r in plan.expected_rows(20, seed=0, brands=["Solo"])} == {"Solo"}
