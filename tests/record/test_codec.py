"""The one JSON mechanism of the records (pytest_uiground.record.codec): both directions come
from the dataclass, so a record read back equals the record written, a new field travels without
touching any reader or writer, and the lenient reading of older or hand-written records holds."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from pytest_uiground.record import codec
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import RECORD_VERSION, SampleResult
from pytest_uiground.record.score import Score


def test_every_record_reads_back_equal_through_standard_json() -> None:
    pred = Prediction(point=Point(0.25, 0.5), box=Box(0.1, 0.2, 0.3, 0.4), raw="(250, 500)", latency_ms=12.5,
                      format_error=False, attempts=3, refused=False)
    score = Score(100.0, True, components={"point_hit": True, "iou": 42.0}, component_format_errors={"iou": False},
                  notes={"reason": "x"})
    result = SampleResult("s", "s-1", "point", {"platform": "web"}, score=score, prediction=pred, latency_ms=12.5,
                          outcome=Outcome.PASS, cache="hit", model={"name": "m"})
    text = json.dumps(result.to_json(), allow_nan=False)  # standard JSON only
    back = SampleResult.from_json(json.loads(text))
    assert back == result
    assert isinstance(back.prediction, Prediction) and isinstance(back.prediction.point, Point)
    assert isinstance(back.prediction.box, Box)
    assert json.loads(text)["v"] == RECORD_VERSION
    assert back.outcome is Outcome.PASS and json.loads(text)["outcome"] == "pass"
    assert SampleResult.from_json({"suite": "s", "id": "i", "task": "point", "outcome": ""}).outcome is None


def test_omitted_keys_and_rounding_follow_the_field_rules() -> None:
    score = Score(0.0, False).to_json()
    assert set(score) == {"value", "correct", "format_error"}, "empty components/notes are left out"
    result = SampleResult("s", "i", "point", {}).to_json()
    assert not {"cache", "model", "judge"} & set(result), "None identity fields are left out"
    assert Prediction(latency_ms=1.23456).to_json()["latency_ms"] == 1.235


def test_missing_and_null_values_take_the_defaults_and_unknown_keys_are_ignored() -> None:
    pred = Prediction.from_json({"raw": None, "latency_ms": None, "format_error": None, "future_field": 1})
    assert (pred.raw, pred.latency_ms, pred.format_error, pred.point) == ("", 0.0, False, None)
    assert Score.from_json({}).value == 0.0
    with pytest.raises(KeyError, match="suite"):
        SampleResult.from_json({"id": "i", "task": "point"})


def test_a_new_field_travels_without_a_hand_written_reader() -> None:
    @dataclass
    class Extended:
        name: str
        point: Point | None = None
        tags: dict[str, str] = field(default_factory=dict, metadata=codec.json_field(omit="empty"))
        kind: Outcome = Outcome.NEW
        renamed: int = field(default=0, metadata=codec.json_field(key="n"))

    value = Extended("a", Point(1.0, 2.0), {"t": "v"}, Outcome.REGRESSION, 7)
    data = codec.to_json(value)
    assert data == {"name": "a", "point": [1.0, 2.0], "tags": {"t": "v"}, "kind": "regression", "n": 7}
    assert codec.from_json(Extended, data) == value


def test_a_failed_call_is_one_prediction_wording() -> None:
    from pytest_uiground.record.prediction import Prediction, error_text

    pred = Prediction.failed(MemoryError("CUDA out of memory"), latency_ms=12.5)
    assert pred.error == "MemoryError: CUDA out of memory" == error_text(MemoryError("CUDA out of memory"))
    assert pred.latency_ms == 12.5 and pred.point is None and pred.raw == ""
    assert Prediction.from_json(pred.to_json()) == pred


def test_an_outcome_prints_as_its_word() -> None:
    from pytest_uiground.report import browse
    from pytest_uiground.report.markup import esc

    assert str(Outcome.REGRESSION) == f"{Outcome.REGRESSION}" == esc(Outcome.REGRESSION) == "regression"
    record = SampleResult("s", "a", "point", outcome=Outcome.KNOWN_FAILURE)
    assert str(browse.outcome_of(record)) == "known-failure"


def test_a_sample_line_reads_boxes_in_pixels_and_labels_them(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from conftest import header_only_png

    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.result import sample_line
    from pytest_uiground.record.sample import Sample, Target

    box = Box(0.1, 0.2, 0.3, 0.4)
    seen = Sample(id="s", image=ImageRef.from_path(header_only_png(tmp_path / "s.png", (1000, 500))),
                  instruction="Open the comments", target=Target(box=box), task="point")
    result = SampleResult("x", "s", "point", prediction=Prediction(point=Point(0.5, 0.5)))
    assert sample_line(seen, result) == ("s: 'Open the comments' expected box [100, 100, 300, 200] px "
                                         "(x1, y1, x2, y2), got point (500, 250) px")
    unseen = Sample(id="s", image=ImageRef.from_path(tmp_path / "missing.png"), instruction="Open the comments",
                    target=Target(box=box), task="point")
    assert "box [0.100, 0.200, 0.300, 0.400] (x1, y1, x2, y2 as 0..1 of the screen)" in sample_line(unseen, result)
    assert "got point (0.500, 0.500) (0..1 of the screen)" in sample_line(unseen, result)


def test_strict_reading_reads_back_what_to_json_wrote() -> None:
    """The strict reading (stored answers, issue 38) accepts every record the writer produces, nested ones
    included, so checking a file never refuses what this package wrote."""
    pred = Prediction(point=Point(0.25, 0.5), box=Box(0.1, 0.2, 0.3, 0.4), raw="(250, 500)", latency_ms=12.5,
                      attempts=3, note="n", route={"endpoint": "a"})
    score = Score(100.0, True, components={"point_hit": True, "iou": 42.0}, component_format_errors={"iou": False})
    result = SampleResult("s", "s-1", "point", {"platform": "web"}, score=score, prediction=pred,
                          outcome=Outcome.PASS, cache="hit")
    for record in (pred, score, result):
        assert codec.from_json(type(record), json.loads(json.dumps(record.to_json())), strict=True) == record


@pytest.mark.parametrize(("cls", "data", "field"), [
    (Prediction, {"point": "ab"}, "point"),
    (Prediction, {"point": [0.5, float("nan")]}, "point"),
    (Prediction, {"raw": 7}, "raw"),
    (Prediction, {"raw": None}, "raw"),
    (Prediction, {"attempts": True}, "attempts"),
    (Score, {"components": {"iou": "high"}}, "components.iou"),
    (Score, {"component_format_errors": {"iou": 1}}, "component_format_errors.iou"),
    (SampleResult, {"suite": "s", "id": "i", "task": "point", "prediction": {"box": "wxyz"}}, "prediction.box"),
    (SampleResult, {"suite": "s", "id": "i", "task": "point", "outcome": "great"}, "outcome"),
])
def test_strict_reading_names_the_field_of_the_wrong_type(cls: type, data: dict[str, object], field: str) -> None:
    """The lenient reading turns ``"ab"`` into ``Point("a", "b")``; the strict one refuses it, naming the field
    by its path; the lenient one is unchanged."""
    with pytest.raises(codec.FieldError) as info:
        codec.from_json(cls, data, strict=True)
    assert info.value.field == field and str(info.value).startswith(f"{field}: expected ")
    assert Prediction.from_json({"point": "ab"}).point == Point("a", "b")  # type: ignore[arg-type]
