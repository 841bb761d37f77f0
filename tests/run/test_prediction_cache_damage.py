"""A prediction cache entry is served as the model's answer without asking the model, so every field of it
is checked by type and range on the way back (issue 38): a damaged one (``{"point": null, "raw": 7}``, a point
of letters, an infinite coordinate) is reported once on its sample and predicted again, never scored as a
real answer; and the cache never writes what its reader would refuse."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from conftest import Project

from pytest_uiground.record.geometry import Point
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.run.prediction_cache import CACHE_TEXT_CHARS, PredictionCache

DAMAGED = [
    pytest.param({"point": None, "raw": 7}, "prediction.raw", id="raw-number"),
    pytest.param({"point": "ab", "raw": "x"}, "prediction.point", id="point-string"),
    pytest.param({"point": [float("inf"), 0.5]}, "prediction.point", id="point-inf"),
    pytest.param({"point": [1e300, 0.5]}, "prediction.point", id="point-far"),
    pytest.param({"point": [0.5, 0.5, 0.5]}, "prediction.point", id="point-three"),
    pytest.param({"box": "wxyz"}, "prediction.box", id="box-string"),
    pytest.param({"box": [0, 0, 1, None]}, "prediction.box", id="box-null"),
    pytest.param({"verdict": 1}, "prediction.verdict", id="verdict-number"),
    pytest.param({"option": ["A"]}, "prediction.option", id="option-list"),
    pytest.param({"answer": {"a": 1}}, "prediction.answer", id="answer-object"),
    pytest.param({"raw": None}, "prediction.raw", id="raw-null"),
    pytest.param({"raw": "x" * (CACHE_TEXT_CHARS + 1)}, "prediction.raw", id="raw-too-long"),
    pytest.param({"latency_ms": "fast"}, "prediction.latency_ms", id="latency-string"),
    pytest.param({"latency_ms": -3.0}, "prediction.latency_ms", id="latency-negative"),
    pytest.param({"error": "MemoryError: x"}, "prediction.error", id="an-error"),
    pytest.param({"format_error": "yes"}, "prediction.format_error", id="format-error-string"),
    pytest.param({"attempts": 1.5}, "prediction.attempts", id="attempts-float"),
    pytest.param({"attempts": -1}, "prediction.attempts", id="attempts-negative"),
    pytest.param({"refused": 0}, "prediction.refused", id="refused-number"),
    pytest.param({"note": ["n"]}, "prediction.note", id="note-list"),
    pytest.param({"route": "endpoint"}, "prediction.route", id="route-string"),
]


@pytest.mark.parametrize(("prediction", "field"), DAMAGED)
def test_every_damaged_field_is_a_reported_miss(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                prediction: dict[str, object], field: str) -> None:
    cache = PredictionCache(tmp_path, {"model": "m"})
    key = cache.key({"sample": "s1"})
    cache.put(key, Prediction(point=Point(0.5, 0.5), raw="(0.5, 0.5)"))
    path = cache.path(key)
    path.write_text(json.dumps({"format": 1, "key": key, "prediction": prediction}))
    with caplog.at_level(logging.WARNING, logger="pytest_uiground.cache"):
        found = cache.get(key)
    assert found.value is None, found.value
    assert found.problem is not None and f"corrupt prediction cache entry {path}" in found.problem
    assert field in found.problem and "predicting again" in found.problem
    assert len(found.problem) < 400 and "\n" not in found.problem
    assert [r.levelno for r in caplog.records] == [logging.WARNING]


@pytest.mark.parametrize("entry", [
    pytest.param({"format": True}, id="format-true"), pytest.param({"format": 1.0}, id="format-float"),
])
def test_the_entry_fields_are_checked_by_type(tmp_path: Path, entry: dict[str, object]) -> None:
    cache = PredictionCache(tmp_path, {"model": "m"})
    key = cache.key({"sample": "s1"})
    cache.put(key, Prediction(raw="r"))
    cache.path(key).write_text(json.dumps({"format": 1, "key": key, "prediction": {"raw": "r"}} | entry))
    found = cache.get(key)
    assert found.value is None and found.problem is not None and "format or key mismatch" in found.problem


def test_sound_entries_round_trip(tmp_path: Path) -> None:
    """What the cache writes reads back equal, a point beyond the image included; what its reader would
    refuse (an infinite or far-off coordinate from a custom adapter) is not written."""
    cache = PredictionCache(tmp_path, {"model": "m"})
    for i, pred in enumerate([Prediction(point=Point(0.25, 0.75), raw="(250, 750)", latency_ms=12.5),
                              Prediction(point=Point(-0.5, 2.5), raw="off", note="x=2500 is beyond 1000"),
                              Prediction(verdict="yes", refused=True, attempts=2, route={"endpoint": "a"}),
                              Prediction(raw="junk", format_error=True)]):
        key = cache.key({"sample": f"s{i}"})
        cache.put(key, pred)
        found = cache.get(key)
        assert found.problem is None and found.value == pred
    for pred in (Prediction(point=Point(1e300, 0.5)), Prediction(point=Point(float("inf"), 0.5))):
        key = cache.key({"sample": repr(pred.point)})
        cache.put(key, pred)
        assert not cache.path(key).exists()


@pytest.mark.slow
def test_a_damaged_entry_is_predicted_again_in_a_run(project: Project, xdist: list[str]) -> None:
    """End to end: an entry ``{"point": null, "raw": 7}`` is not served as the sample's answer (which would
    score it a miss and fail it as a regression): the sample is predicted again, its record notes the damaged
    entry once, and the rerun passes against the recorded baseline."""
    ids = project.ids()
    log = project.root / "calls.txt"
    project.monkeypatch.setenv("UIGROUND_BATCHLOG", str(log))
    args = ["--model", "fakemodels:create_cached", "--uiground-cache", "cache", "--uiground-report", "out",
            "--benchmark-disable"]
    assert project.run("--snapshot-update", *args, xdist=xdist).ret == 0
    log.unlink()
    entries = sorted((project.root / "cache").rglob("*.json"))
    assert len(entries) == len(ids)
    data = json.loads(entries[0].read_text())
    data["prediction"] = {"point": None, "raw": 7}
    entries[0].write_text(json.dumps(data))
    second = project.run(*args, xdist=xdist)
    out = second.stdout.str()
    assert second.ret == 0, out
    assert len(log.read_text().splitlines()) == 1, "only the damaged entry is predicted again"
    records = [json.loads(x) for x in (project.root / "out" / "samples.jsonl").read_text().splitlines()]
    notes = [r.get("cache") or "" for r in records]
    assert notes.count("hit") == len(ids) - 1
    damaged = [n for n in notes if "corrupt prediction cache entry" in n]
    assert len(damaged) == 1 and "prediction.raw" in damaged[0], notes
    assert json.loads(entries[0].read_text())["prediction"]["raw"] != 7, "the entry is rewritten"
