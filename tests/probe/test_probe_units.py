"""The probe's pieces directly (pytest_uiground.probe.fit, .plugin, .cli): the fit's arithmetic, which
family a run is probed with, and the command's usage; the end-to-end diagnoses against a loopback
server are in test_probe.py."""

from __future__ import annotations

import pytest

from pytest_uiground.models import families
from pytest_uiground.models.base import ModelOptions
from pytest_uiground.options import RunOptions
from pytest_uiground.probe import calibration, cli, fit
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


def test_a_server_resize_is_of_the_image_the_client_sent() -> None:
    """Holo1.5's client sends its own resize; a server limit shrinks that image, not the original. A family
    without a resize rule reads "pixels of the resized image" as the Qwen2.5-VL server default resizes."""
    size, small = (5120, 2880), 1024 * 28 * 28
    holo = families.get("holo")
    sent = holo.input_size(size)
    h, w = families.smart_resize(sent[1], sent[0], max_pixels=small)
    assert fit.FamilyView("holo").divisor("pixels-resized", size, max_pixels=small) == (w, h)
    assert fit.FamilyView("holo").divisor("pixels-resized", size) == sent
    h, w = families.smart_resize(size[1], size[0], max_pixels=fit.SERVER_MAX_PIXELS)
    assert (w, h) != size and fit.FamilyView("uground").divisor("pixels-resized", size) == (w, h)
    assert fit.FamilyView("uground").divisor("pixels-original", size) == size


def test_swapped_location_bins_are_named_as_the_familys_own_frame_swapped() -> None:
    """<loc_N> bins read like 0..1000: (y, x) bins are the family's frame swapped, not "0..1000 swapped"."""
    obs = []
    for s in calibration.SCREENS:
        x0, y0, x1, y1 = calibration.target_box(s)
        w, h = s.size
        truth = ((x0 + x1) / 2 / w, (y0 + y1) / 2 / h)
        obs.append(fit.Observation(s.name, s.size, truth, ((x1 - x0) / 2 / w, (y1 - y0) / 2 / h), "", None,
                                   (round(truth[1] * 1000), round(truth[0] * 1000))))
    got = fit.diagnose(fit.FamilyView("tinyclick"), obs, requests=len(obs))
    assert not got.passed
    assert got.diagnosis.startswith("x and y look swapped: the answers are (y, x) in 0..1000 location bins")
