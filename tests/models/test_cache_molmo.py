"""Prediction cache and the Molmo v1 version gate, without any model weights."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_uiground.models.base import ModelLoadError, ModelOptions
from pytest_uiground.models.hf import molmo
from pytest_uiground.models.hf.loading import resolve_dtype, resolve_model_path
from pytest_uiground.record.geometry import Point
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.run.prediction_cache import PredictionCache


def test_cache_round_trip_and_keys(tmp_path: Path) -> None:
    cache = PredictionCache(tmp_path, {"model": "m", "config": "abc"})
    key = cache.key({"sample": "s1", "prompt": "click OK", "generation": {"max_new_tokens": 8}})
    assert cache.get(key).value is None
    cache.put(key, Prediction(point=Point(0.25, 0.75), raw="(250, 750)", latency_ms=12.5))
    got = cache.get(key).value
    assert got is not None and got.point == Point(0.25, 0.75) and got.raw == "(250, 750)" and got.latency_ms == 12.5
    # anything that changes the output changes the key
    assert key != cache.key({"sample": "s1", "prompt": "click OK", "generation": {"max_new_tokens": 9}})
    assert key != cache.key({"sample": "s1", "prompt": "click Ok", "generation": {"max_new_tokens": 8}})
    other = PredictionCache(tmp_path, {"model": "m", "config": "abd"})
    assert other.get(other.key({"sample": "s1", "prompt": "click OK", "generation": {"max_new_tokens": 8}})
                     ).value is None


def test_cache_never_stores_errors_and_ignores_corrupt_entries(tmp_path: Path) -> None:
    cache = PredictionCache(tmp_path, {"model": "m"})
    key = cache.key({"sample": "a"})
    cache.put(key, Prediction(error="CUDA out of memory"))
    assert cache.get(key).value is None
    cache.put(key, Prediction(raw="ok"))
    entry = next(tmp_path.rglob(f"{key}.json"))
    entry.write_text("{truncated")
    found = cache.get(key)
    assert found.value is None and found.problem is not None
    assert "corrupt prediction cache entry" in found.problem and str(entry) in found.problem


@pytest.mark.parametrize(("version", "restore"), [("4.48.2", False), ("4.49.0", True), ("4.53.3", True)])
def test_molmo_runs_on_the_versions_the_card_allows(version: str, restore: bool) -> None:
    assert molmo.check_transformers(version) is restore


@pytest.mark.parametrize("version", ["4.48.1", "4.57.0", "5.23.0"])
def test_molmo_refuses_other_versions_naming_the_fix(version: str) -> None:
    with pytest.raises(ModelLoadError) as info:
        molmo.check_transformers(version)
    msg = str(info.value)
    assert f"transformers {version}" in msg and "4.48.2" in msg and "4.49-4.53" in msg
    assert "vllm serve" in msg and "--model replay" in msg and "pytest-uiground[molmo]" in msg


def test_elam_fails_at_load_on_this_transformers_before_any_download() -> None:
    transformers = pytest.importorskip("transformers", reason="needs the [hf] extra")

    if not transformers.__version__.startswith("5."):
        pytest.skip("this environment has a Molmo-compatible transformers")
    with pytest.raises(ModelLoadError, match="does not run on transformers 5"):
        molmo.create_elam(ModelOptions(name="elam", path="/definitely/not/here"))


class _Output(dict):  # type: ignore[type-arg]
    """Like transformers' ModelOutput: keys are also attributes."""

    __getattr__ = dict.__getitem__


def test_restored_generation_helper_reads_past_key_values() -> None:
    name, past = molmo._extract_past_from_model_output(None, _Output(past_key_values="PKV"))
    assert (name, past) == ("past_key_values", "PKV")
    assert molmo._extract_past_from_model_output(None, _Output(cache_params="C")) == ("cache_params", "C")
    assert molmo._extract_past_from_model_output(None, _Output()) == ("past_key_values", None)


def test_model_path_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="'/no/such/model' does not exist"):
        resolve_model_path("/no/such/model")
    with pytest.raises(ModelLoadError, match=r"is not a model directory: it has no config\.json"):
        resolve_model_path(str(tmp_path))
    (tmp_path / "config.json").write_text("{}")
    assert resolve_model_path(str(tmp_path)) == str(tmp_path.resolve())
    assert resolve_model_path("osunlp/UGround-V1-7B") == "osunlp/UGround-V1-7B"


def test_dtype_defaults() -> None:
    assert resolve_dtype("auto", "cuda:1") == "bfloat16"
    assert resolve_dtype("auto", "cpu") == "float32"
    assert resolve_dtype("float16", "cpu") == "float16"
