"""One disk cache for predictions and judge replies, with one policy for a damaged entry: it is
reported (a warning naming the file, and the problem handed to the caller for the sample's record)
and treated as a miss, so the value is computed again; never ignored silently, never a crash."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_uiground.judges.base import Judge, JudgeOptions, reply_cache
from pytest_uiground.judges.pool import JudgedScorer
from pytest_uiground.record.disk_cache import DiskCache
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import Score
from pytest_uiground.run.prediction_cache import PredictionCache

DAMAGED = [
    pytest.param(b"{half a json", id="truncated"),
    pytest.param(b"\xff\xfe not utf-8", id="not-utf8"),
    # Valid JSON that is not an object: these crashed the prediction cache with AttributeError.
    pytest.param(b"[]", id="list"), pytest.param(b"null", id="null"), pytest.param(b'"x"', id="string"),
    pytest.param(b"5", id="number"),
    pytest.param(b'{"format": 2, "key": "KEY", "prediction": {}, "reply": "r"}', id="other-format"),
    pytest.param(b'{"format": 1, "key": "another", "prediction": {}, "reply": "r"}', id="other-key"),
    pytest.param(b'{"format": 1, "key": "KEY"}', id="no-value"),
    pytest.param(b'{"format": 1, "key": "KEY", "prediction": [1], "reply": [1]}', id="value-of-wrong-type"),
]


def _caches(root: Path) -> list[tuple[DiskCache[Any], Any]]:
    """Both caches, each with a value it stores."""
    return [(PredictionCache(root / "p", {"model": "m"}), Prediction(raw="(1, 2)")),
            (reply_cache(root / "j", {"judge": "j"}), '{"score": 80}')]


@pytest.mark.parametrize("content", DAMAGED)
def test_a_damaged_entry_is_reported_and_recomputed_in_both_caches(tmp_path: Path, content: bytes,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    for cache, stored in _caches(tmp_path):
        key = cache.key({"sample": "s1"})
        cache.put(key, stored)
        path = cache.path(key)
        path.write_bytes(content.replace(b"KEY", key.encode()))
        with caplog.at_level(logging.WARNING, logger="pytest_uiground.cache"):
            found = cache.get(key)
        assert found.value is None, cache.what
        assert found.problem is not None and f"corrupt {cache.what} cache entry {path}" in found.problem
        assert any(str(path) in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)
        caplog.clear()
        cache.put(key, stored)  # computed again: the entry is rewritten and read back whole
        assert cache.get(key).value == stored and cache.get(key).problem is None


def test_a_missing_entry_is_a_quiet_miss(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    for cache, _ in _caches(tmp_path):
        with caplog.at_level(logging.WARNING):
            found = cache.get(cache.key({"sample": "never"}))
        assert (found.value, found.problem) == (None, None)
    assert not caplog.records


def test_both_caches_keep_their_on_disk_layout(tmp_path: Path) -> None:
    """Entries written before the two caches became one stay readable: same folders, same fields."""
    for cache, stored in _caches(tmp_path):
        key = cache.key({"sample": "s1"})
        cache.put(key, stored)
        assert cache.path(key).relative_to(tmp_path).parts[2:] == (key[:2], f"{key}.json")
        assert set(json.loads(cache.path(key).read_text())) == {"format", "key", cache.field}


class _Backend:
    def __init__(self) -> None:
        self.calls = 0

    def chat(self, messages: Any, request_id: str) -> str:
        self.calls += 1
        return "fresh"

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "counting"}


def _score(sample: Sample, pred: Prediction, judge: Judge, repeat: int) -> Score:
    return Score(100.0 if judge.ask([{"role": "user", "content": sample.id}], sample.id) == "fresh" else 0.0)


def test_a_damaged_judge_reply_is_asked_again_and_noted_on_its_sample(tmp_path: Path) -> None:
    backend = _Backend()
    judge = Judge(backend=backend, options=JudgeOptions(name="counting"), prompt_hash="h", cache_root=tmp_path)
    scorer = JudgedScorer(judge, _score)
    sample: Any = SimpleNamespace(id="s1")  # the scorer reads only the id
    pred = Prediction(answer="a")
    assert scorer.judge_one(sample, pred).score == Score(100.0)
    entry = next(tmp_path.rglob("*.json"))
    entry.write_text("[]")
    judged = scorer.judge_one(sample, pred)
    assert backend.calls == 2 and judged.score is not None and judged.score.value == 100.0
    assert [f"corrupt judge reply cache entry {entry}" in p for p in judged.score.notes["judge_cache"]] == [True]
    assert "judge_cache" not in scorer.judge_one(sample, pred).score.notes  # type: ignore[union-attr]
    assert backend.calls == 2  # the rewritten entry is a hit
