"""``run.build.build_model``: the one way the model fixture and the probe build ``--model``."""

from __future__ import annotations

import pytest

from pytest_uiground import registry
from pytest_uiground.models.base import ModelAdapter, ModelOptions
from pytest_uiground.options import RunOptions
from pytest_uiground.run.build import build_model


def test_build_model_gives_the_adapter_and_its_load_time() -> None:
    model, seconds = build_model(RunOptions(model=ModelOptions(name="center")), "gw3")
    try:
        assert isinstance(model, ModelAdapter)
        assert model.fingerprint()["model"] == "center"
        assert seconds >= 0.0
    finally:
        model.close()


def test_build_model_names_an_unknown_model() -> None:
    with pytest.raises(registry.UnknownNameError, match="no-such-model"):
        build_model(RunOptions(model=ModelOptions(name="no-such-model")), "master")


def test_the_model_is_built_from_the_target_resolved_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--model`` is looked up once (``options.model_target``): the build imports that target and asks the
    registry nothing more."""
    from pytest_uiground import options

    target = options.model_target("center")
    assert target.endswith(":create") or ":" in target
    monkeypatch.setattr(registry, "resolve", lambda *a, **k: pytest.fail("looked up again"))
    model, _ = build_model(RunOptions(model=ModelOptions(name="center"), model_target=target), "gw0")
    try:
        assert model.fingerprint()["model"] == "center"
    finally:
        model.close()
    with pytest.raises(pytest.UsageError, match="no model named 'nope'"):
        options.model_target("nope")
