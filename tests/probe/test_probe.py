"""The coordinate-contract probe against a loopback server that answers in the right or a wrong frame.

The server plays a model that sees: it finds the magenta target in the image it received and
writes its centre in a chosen frame (pixels of its own resize, 0..1000, 0..1, swapped, or a
fixed point that ignores the image). The probe must pass the right frame and name each wrong
one, in under 30 requests.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai", reason="--model openai needs the [openai] extra (pip install 'pytest-uiground[openai]')")
import numpy as np
from chat_server import ChatServer, Reply, image_of
from conftest import Project
from PIL import Image

from pytest_uiground import probe
from pytest_uiground.models import families, openai_wire
from pytest_uiground.models.openai_client import OpenAIChatModel
from pytest_uiground.probe import calibration

KEY = "sk-probe"
QWEN_MAX = families.get("qwen-vl").resize.max_pixels  # type: ignore[union-attr]
SMALL_MAX = 1024 * 28 * 28


def target_of(body: dict[str, Any]) -> tuple[float, float, int, int]:
    """The magenta target's centre in the received image, normalized, and that image's size
    (the middle of a screen without one: a suite's own samples after the probe)."""
    img = Image.open(io.BytesIO(image_of(body))).convert("RGB")
    a = np.asarray(img)
    ys, xs = np.nonzero((a[:, :, 0] > 200) & (a[:, :, 1] < 60) & (a[:, :, 2] > 200))
    if not len(xs):
        return 0.5, 0.5, img.width, img.height
    return (xs.mean() + 0.5) / img.width, (ys.mean() + 0.5) / img.height, img.width, img.height


def seeing(frame: str, max_pixels: int = QWEN_MAX) -> Callable[[dict[str, Any]], Reply]:
    """A model that finds the target and answers in ``frame``."""
    def answer(body: dict[str, Any]) -> Reply:
        x, y, w, h = target_of(body)
        if frame == "pixels":  # pixels of the image as the server's processor resizes it
            rh, rw = families.smart_resize(h, w, max_pixels=max_pixels)
            return Reply.ok(f"({round(x * rw)}, {round(y * rh)})")
        if frame == "norm1000":
            return Reply.ok(f"({round(x * 1000)}, {round(y * 1000)})")
        if frame == "swapped":
            return Reply.ok(f"({round(y * 1000)}, {round(x * 1000)})")
        if frame == "norm1":
            return Reply.ok(f"({x:.4f}, {y:.4f})")
        raise AssertionError(frame)
    return answer


def blind(body: dict[str, Any]) -> Reply:
    return Reply.ok("(500, 500)")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (openai_wire.MIN_PIXELS_ENV, openai_wire.MAX_PIXELS_ENV):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def probed() -> Iterator[Callable[[Callable[[dict[str, Any]], Reply], str], tuple[probe.ProbeResult, int]]]:
    made: list[OpenAIChatModel] = []

    def run(script: Callable[[dict[str, Any]], Reply], family: str) -> tuple[probe.ProbeResult, int]:
        with ChatServer(script) as srv:
            model = OpenAIChatModel(api_base=srv.url, api_key=KEY, served_model="m", parser=family,
                                    request_timeout=10.0, max_retries=0,
                                    resize=openai_wire.resize_rule_from_env(parser=family))
            made.append(model)
            from pytest_uiground.models.base import ModelOptions

            view = probe.family_view(family, ModelOptions(name="openai", parser=family))
            return probe.run(model, view), srv.count

    yield run
    for m in made:
        m.close()


@pytest.mark.parametrize("family,frame", [("qwen-vl", "pixels"), ("uground", "norm1000")])
def test_the_right_frame_passes(probed: Any, family: str, frame: str) -> None:
    result, requests = probed(seeing(frame), family)
    assert result.passed, result.diagnosis
    assert result.hits == len(calibration.SCREENS) == requests < 30
    for axis in ("x", "y"):  # the fitted mapping is the identity
        assert result.mapping[axis]["scale"] == pytest.approx(1.0, abs=0.01)
        assert result.mapping[axis]["offset"] == pytest.approx(0.0, abs=0.005)
    assert result.to_json()["verdict"] == "pass"


@pytest.mark.parametrize("family,script,expected", [
    ("qwen-vl", seeing("norm1000"), "answers look like 0..1000 but the family reads pixels of the resized image"),
    ("uground", seeing("pixels"), "answers look like pixels of the resized image but the family reads 0..1000"),
    ("uground", seeing("norm1"), "answers look like 0..1 but the family reads 0..1000"),
    ("uground", seeing("swapped"), "x and y look swapped: the answers are (y, x) in 0..1000"),
    ("qwen-vl", seeing("pixels", SMALL_MAX), f"the server resizes with max_pixels ≈ {SMALL_MAX} (the family assumes "
                                             f"{QWEN_MAX}): set UIGROUND_OPENAI_MAX_PIXELS={SMALL_MAX}"),
    ("uground", blind, "the answers ignore the image"),
    ("qwen-vl", blind, "the answers ignore the image"),
])
def test_each_wrong_frame_is_named(probed: Any, family: str, script: Any, expected: str) -> None:
    result, requests = probed(script, family)
    assert not result.passed
    assert result.diagnosis.startswith(expected), result.diagnosis
    assert requests == len(calibration.SCREENS) < 30
    assert result.to_json()["verdict"] == "fail" and result.to_json()["diagnosis"] == result.diagnosis


def test_the_fix_the_probe_names_makes_it_pass(probed: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    result, _ = probed(seeing("pixels", SMALL_MAX), "qwen-vl")
    fix = result.diagnosis.split("set ")[1].split(" ")[0]
    var, _, value = fix.partition("=")
    monkeypatch.setenv(var, value)
    again, _ = probed(seeing("pixels", SMALL_MAX), "qwen-vl")
    assert again.passed, again.diagnosis


def test_the_calibration_set_covers_corners_aspects_and_a_high_resolution_screen() -> None:
    samples = calibration.samples()
    sizes = {s.image.dimensions() for s in samples}
    assert any(w / h > 3 for w, h in sizes) and any(h / w > 2 for w, h in sizes)  # wide and tall
    assert max(w * h for w, h in sizes) > QWEN_MAX  # above the family's max_pixels
    centres = [((s.target.box.x0 + s.target.box.x1) / 2, (s.target.box.y0 + s.target.box.y1) / 2)
               for s in samples if s.target.box is not None]
    for corner in ((0, 0), (1, 0), (0, 1), (1, 1), (0.5, 0.5)):
        assert min(abs(x - corner[0]) + abs(y - corner[1]) for x, y in centres) < 0.2
    img = samples[0].image.load()  # the target is drawn where its box says
    box = samples[0].target.box
    assert box is not None
    cx, cy = round((box.x0 + box.x1) / 2 * img.width), round((box.y0 + box.y1) / 2 * img.height)
    assert img.getpixel((cx, cy)) == calibration.TARGET_RGB


# -- the pytest session and the command line -----------------------------------------------------------
def session_args(url: str, family: str) -> list[str]:
    return ["--model", "openai", "--uiground-api-base", url, "--uiground-served-model", "m", "--uiground-parser",
            family, "--uiground-probe", "--uiground-report", "out", "--uiground-cache", "off"]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_wrong_frame_stops_the_session_before_any_sample(project: Project, monkeypatch: pytest.MonkeyPatch,
                                                          xdist: list[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ChatServer(seeing("norm1000")) as srv:
        result = project.pytester.runpytest_subprocess(*session_args(srv.url, "qwen-vl"), *xdist)
        requests = srv.count
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stdout.fnmatch_lines(["*uiground probe failed before the run: answers look like 0..1000 but the family "
                                 "reads pixels of the resized image*"])
    assert requests == len(calibration.SCREENS)  # no sample was sent
    assert "passed" not in result.stdout.str() and not (project.root / "out" / "summary.json").exists()
    doc = (project.root / "out" / "probe.json").read_text()
    assert '"verdict": "fail"' in doc and '"scale"' in doc


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_passing_probe_is_recorded_in_the_summary_and_the_report(project: Project, monkeypatch: pytest.MonkeyPatch,
                                                                    xdist: list[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    n = len(project.ids())
    with ChatServer(seeing("norm1000")) as srv:
        result = project.pytester.runpytest_subprocess(*session_args(srv.url, "uground"), *xdist)
        requests = srv.count
    assert result.ret in (0, 1), result.stdout.str()
    result.stdout.fnmatch_lines(["*uiground probe: PASS: the family's reading (0..1000) hits 13 of 13*"])
    assert requests == len(calibration.SCREENS) + n
    summary = project.summary()
    assert summary["provenance"]["probe"]["verdict"] == "pass"
    assert summary["provenance"]["probe"]["mapping"]["x"]["scale"] == pytest.approx(1.0, abs=0.01)
    assert summary["model_fingerprint"]["probe"]["verdict"] == "pass"
    page = (project.root / "out" / "report.html").read_text()  # the run details list the verdict and mapping
    assert "<dt>provenance: probe</dt>" in page and "hits 13 of 13 calibration targets" in page


def test_the_command_line_probe(tmp_path: Path) -> None:
    env = {**os.environ, "OPENAI_API_KEY": KEY, "NO_PROXY": "127.0.0.1,localhost"}
    with ChatServer(seeing("swapped")) as srv:
        cmd = [sys.executable, "-m", "pytest_uiground", "probe", "--model", "openai", "--uiground-api-base", srv.url,
               "--uiground-served-model", "m", "--uiground-parser", "uground"]
        bad = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 4, bad.stdout + bad.stderr
    assert "x and y look swapped" in bad.stdout + bad.stderr
    with ChatServer(seeing("norm1000")) as srv:
        cmd[cmd.index("--uiground-api-base") + 1] = srv.url
        good = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "uiground probe: PASS" in good.stdout


def test_the_probe_needs_a_live_model(project: Project) -> None:
    preds = project.root / "p.jsonl"
    preds.write_text("")
    result = project.pytester.runpytest_subprocess("--model", "replay", "--uiground-predictions", str(preds),
                                                   "--uiground-replay-parser", "uground", "--uiground-probe")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--uiground-probe asks the model about generated screens; --model replay*"])


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_probed_model_is_the_one_the_run_uses(project: Project, xdist: list[str]) -> None:
    """A local model is loaded once: the probe's copy runs the samples in a single process; under
    xdist the workers load their own and the controller's copy is closed right after the probe."""
    log = project.root / "loads.txt"
    project.monkeypatch.setenv("UIGROUND_LOADLOG", str(log))
    result = project.run("--uiground-probe", "--uiground-parser", "uground", xdist=xdist)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*uiground probe: PASS*"])
    events = [line.split() for line in log.read_text().splitlines()]
    loads = [pid for what, pid in events if what == "load"]
    closes = [pid for what, pid in events if what == "close"]
    if not xdist:
        assert len(loads) == 1 and closes == loads  # one model: probed, then used by every sample, closed once
    else:
        controller = loads[0]
        assert len(loads) == 3 and len(set(loads)) == 3  # the controller's for the probe, one per worker
        assert sorted(closes) == sorted(loads) and closes[0] == controller  # the probe's copy closed first
