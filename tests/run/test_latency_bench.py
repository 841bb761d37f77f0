"""pytest_uiground.run.latency: which samples the serial latency benchmark times, and when it skips."""

from __future__ import annotations

import io
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from PIL import Image

from pytest_uiground.models.base import ModelOptions
from pytest_uiground.options import RunOptions
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.run import STATE
from pytest_uiground.run.latency import _loadable, run_latency_benchmark
from pytest_uiground.run.state import WorkerState

PNG = io.BytesIO()
Image.new("RGB", (40, 30), "gray").save(PNG, format="PNG")


def _sample(sid: str, data: bytes, loads: list[str], invalid: str | None = None) -> Sample:
    def source() -> bytes:
        loads.append(sid)
        return data

    return Sample(sid, ImageRef.from_source(sid, source), "Click", "point", Target(box=Box(0, 0, 1, 1)),
                  invalid=invalid)


def test_loadable_skips_invalid_samples_and_broken_images_and_stops_at_n() -> None:
    loads: list[str] = []
    good, broken = PNG.getvalue(), PNG.getvalue()[:30]
    samples = [_sample("a", good, loads), _sample("bad-row", good, loads, invalid="row 1: box is null"),
               _sample("torn", broken, loads), _sample("b", good, loads), _sample("c", good, loads),
               _sample("d", good, loads)]
    got = _loadable(samples, 3)
    assert [s.id for s in got] == ["a", "b", "c"]
    assert "bad-row" not in loads  # an invalid sample is not even decoded
    assert "d" not in loads  # nothing past the n-th loadable sample is decoded
    assert _loadable(samples, 0) == []
    assert [s.id for s in _loadable(samples, 10)] == ["a", "b", "c", "d"]


def _item(**options: Any) -> Any:
    state = WorkerState(options=RunOptions(model=ModelOptions(name="m"), **options))
    return SimpleNamespace(config=SimpleNamespace(stash={STATE: state}))


def _skip_message(call: Callable[[], None]) -> str:
    with pytest.raises(pytest.skip.Exception) as info:
        call()
    return str(info.value.msg)


def test_it_skips_unless_asked_for_and_says_how_to_ask() -> None:
    bench = SimpleNamespace(disabled=False)
    message = _skip_message(lambda: run_latency_benchmark(_item(), bench, model=None))  # type: ignore[arg-type]
    assert "--uiground-latency-benchmark" in message


def test_it_skips_when_pytest_benchmark_is_disabled_naming_xdist() -> None:
    bench = SimpleNamespace(disabled=True)
    message = _skip_message(
        lambda: run_latency_benchmark(_item(latency_benchmark=True), bench, model=None))  # type: ignore[arg-type]
    assert "pytest-benchmark is disabled" in message and "-n" in message
