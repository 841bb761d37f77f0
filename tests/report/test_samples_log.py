"""``samples.jsonl`` directly (pytest_uiground.report.samples_log): whole standard-JSON lines only,
even when a write fails half way, and never a NaN that a strict parser would reject."""

from __future__ import annotations

import errno
import json
import math
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground.report import samples_log
from pytest_uiground.report.samples_log import SampleLog, standard


def test_non_finite_numbers_become_null_at_any_depth() -> None:
    got = standard({"a": math.nan, "b": [1.0, math.inf, {"c": -math.inf}], "d": (2.5,), "e": "nan"})
    assert got == {"a": None, "b": [1.0, None, {"c": None}], "d": [2.5], "e": "nan"}


def test_each_record_is_one_sorted_standard_json_line(tmp_path: Path) -> None:
    log = SampleLog(tmp_path / "out" / "samples.jsonl")
    log.write({"id": "b", "value": math.nan})
    log.write({"id": "a", "value": 1.0})
    log.close()
    lines = (tmp_path / "out" / "samples.jsonl").read_text().splitlines()
    assert [json.loads(line, parse_constant=pytest.fail) for line in lines] == [
        {"id": "b", "value": None}, {"id": "a", "value": 1.0}]
    assert lines[1] == '{"id": "a", "value": 1.0}', "keys sorted"
    with pytest.raises(ValueError, match="is closed"):
        log.write({"id": "c"})


def test_a_write_that_fails_half_way_leaves_only_whole_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = SampleLog(tmp_path / "samples.jsonl")
    log.write({"id": "first"})
    real_write = samples_log.os.write

    def short_then_full_disk(fd: int, data: Any) -> int:
        if len(data) > 5:
            return real_write(fd, bytes(data[:5]))  # part of the line made it
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(samples_log.os, "write", short_then_full_disk)
    with pytest.raises(OSError, match="No space left"):
        log.write({"id": "second", "pad": "x" * 50})
    monkeypatch.setattr(samples_log.os, "write", real_write)
    log.write({"id": "third"})
    log.close()
    assert [json.loads(x)["id"] for x in (tmp_path / "samples.jsonl").read_text().splitlines()] == ["first", "third"]
