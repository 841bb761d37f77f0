"""The probe's pieces directly (pytest_uiground.probe.fit, .plugin, .cli): the fit's arithmetic, which
family a run is probed with, and the command's usage; the end-to-end diagnoses against a loopback
server are in test_probe.py."""

from __future__ import annotations

import pytest

from pytest_uiground.models.base import ModelOptions
from pytest_uiground.options import RunOptions
from pytest_uiground.probe import cli, fit
from pytest_uiground.probe import plugin as probe_plugin


def test_linear_fit_recovers_scale_and_offset_and_says_when_it_cannot() -> None:
    xs = [0.1, 0.4, 0.7, 0.9]
    got = fit.linear_fit(xs, [2.0 * x + 0.05 for x in xs])
    assert got == {"scale": 2.0, "offset": 0.05, "r2": 1.0}
    assert fit.linear_fit([0.5], [0.5]) == {"scale": None, "offset": None, "r2": None}, "one point fixes nothing"
    assert fit.linear_fit([0.3, 0.3], [0.1, 0.9])["scale"] is None, "no spread in the readings: no scale"


def test_a_run_is_probed_with_its_parser_or_a_model_that_is_a_family() -> None:
    assert probe_plugin.family_of(RunOptions(model=ModelOptions(name="openai", parser="ui-venus"))) == "ui-venus"
    assert probe_plugin.family_of(RunOptions(model=ModelOptions(name="qwen-vl"))) == "qwen-vl"
    with pytest.raises(pytest.UsageError, match="--uiground-parser NAME"):
        probe_plugin.family_of(RunOptions(model=ModelOptions(name="ocr")))
    with pytest.raises(pytest.UsageError, match="replay can only"):
        probe_plugin.family_of(RunOptions(model=ModelOptions(name="replay", replay_parser="uground")))


def test_the_command_prints_its_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    assert "calibration screens" in capsys.readouterr().out
    assert cli.main([]) == 2, "no arguments: the usage and a usage error's status"
