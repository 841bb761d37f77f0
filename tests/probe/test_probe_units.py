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


def _answers(family: str, screens: tuple[calibration.Screen, ...], server_max: int | None = None,
             bias: tuple[float, float] = (0.0, 0.0), wild: int = 0) -> list[fit.Observation]:
    """Exact answers of a model that finds every target, in ``family``'s pixels as a server resizing with
    ``server_max`` (the family's own limit by default) gives them; ``bias`` added to the aim, and the
    first ``wild`` answers at the opposite corner of the screen (a model clicking something else)."""
    view = fit.FamilyView(family)
    out = []
    for i, s in enumerate(screens):
        x0, y0, x1, y1 = calibration.target_box(s)
        w, h = s.size
        truth = ((x0 + x1) / 2 / w, (y0 + y1) / 2 / h)
        aim = (1 - truth[0], 1 - truth[1]) if i < wild else (truth[0] + bias[0], truth[1] + bias[1])
        sent = view.sent_size(s.size)
        rh, rw = families.smart_resize(sent[1], sent[0], factor=view.factor, min_pixels=view.min_pixels,
                                       max_pixels=server_max or view.max_pixels or families.QWEN25_MAX_PIXELS)
        written = (float(round(aim[0] * rw)), float(round(aim[1] * rh)))
        dx, dy = view.divisor(view.frame, s.size)
        out.append(fit.Observation(s.name, s.size, truth, ((x1 - x0) / 2 / w, (y1 - y0) / 2 / h), "",
                                   (written[0] / dx, written[1] / dy), written))
    return out


S = calibration.Screen
FIRST_SET = (*calibration.SCREENS[:5], S("wide-left", (2560, 720), (0.2, 0.3)),
             S("wide-right", (2560, 720), (0.85, 0.75)),
             S("tall-top", (720, 1600), (0.7, 0.15)), S("tall-bottom", (720, 1600), (0.25, 0.8)),
             S("odd-a", (1111, 555), (0.35, 0.65)), S("odd-b", (1111, 555), (0.75, 0.25)),
             S("hires-a", (5120, 2880), (0.3, 0.2)), S("hires-b", (5120, 2880), (0.8, 0.7)))
"""The calibration set as issue 34 found it: two large screens among thirteen."""


@pytest.mark.parametrize("family,server_max", [("qwen-vl", 2_600_000), ("qwen-vl", 4_000_000), ("gta1", 2_600_000)])
def test_misses_a_server_limit_explains_fail_even_within_the_allowed_misses(family: str, server_max: int) -> None:
    """The rule beside the larger calibration set: on the first set these servers miss only the two large
    screens, as many as a pass allows (the family's reading hits 11 of 13); another limit hitting all 13
    names the resize."""
    obs = _answers(family, FIRST_SET, server_max)
    view = fit.FamilyView(family)
    assert fit.hits(view, obs, view.frame) == 11
    got = fit.diagnose(view, obs, requests=len(obs))
    assert not got.passed and "max_pixels ≈ " in got.diagnosis and got.hits == 13, got.diagnosis


@pytest.mark.parametrize("family", ["qwen-vl", "uitars", "holo", "gta1"])
def test_a_correct_setup_fits_the_identity_within_the_resize_rounding(family: str) -> None:
    """What SCALE_TOLERANCE and OFFSET_TOLERANCE start from: exact answers through the family's own
    resize fit within 0.001 of the identity, and one wild miss (allowed by the hit count) does not fail."""
    view = fit.FamilyView(family)
    got = fit.diagnose(view, _answers(family, calibration.SCREENS), requests=13)
    assert got.passed and fit.identity(got.mapping), got.diagnosis
    for axis in ("x", "y"):
        scale, offset = got.mapping[axis]["scale"], got.mapping[axis]["offset"]
        assert scale is not None and offset is not None
        assert abs(scale - 1) <= 0.001 and abs(offset) <= 0.001, got.mapping
    wild = fit.diagnose(view, _answers(family, calibration.SCREENS, wild=1), requests=13)
    assert wild.passed and wild.hits == 12, wild.diagnosis
    assert not fit.identity(wild.mapping), "the recorded all-answer fit shows the wild miss"


def test_hits_enough_but_a_bias_beyond_the_tolerance_fails() -> None:
    """A reading 0.028 low on every screen still lands on 11 targets (2.0 % half-sides plus 1 % slack; the
    tall screens' 0.9 % ones miss), but the fit over those 11 is offset by more than OFFSET_TOLERANCE."""
    obs = _answers("qwen-vl", calibration.SCREENS, bias=(0.0, 0.028))
    view = fit.FamilyView("qwen-vl")
    assert fit.hits(view, obs, view.frame) == 11
    got = fit.diagnose(view, obs, requests=13)
    assert not got.passed
    assert got.diagnosis.startswith("the family's reading hits 11 of 13 calibration targets but the mapping fitted "
                                    "over them is not the identity"), got.diagnosis
    assert "tall-top 720x1600" in got.diagnosis
