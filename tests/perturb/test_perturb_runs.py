"""``--uiground-perturb`` end to end (pytester, with and without ``-n 2``): the variants are tests of their own,
gated as ``perturb=<spec>`` slices against a baseline recorded with them; stand-in models with a known flaw are
caught by the perturbation that exposes it (a fixed input resolution by ``scale``, a colour threshold by
``invert``) and an oracle that is robust passes every perturbation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import Project, no_crash, verdict

# Stand-ins that know the (perturbed) target, each with one flaw a real model can have. They read the image as a
# model does, so a perturbation reaches them only through the pixels they are given.
STANDINS = '''
from pytest_uiground.record.geometry import Point
from pytest_uiground.record.prediction import Prediction


class Robust:
    name = "robust"

    def __init__(self, options):
        pass

    def close(self):
        pass

    def fingerprint(self):
        return {"model": self.name}

    def answer(self, sample, img):
        return sample.target.box.center

    def predict(self, samples):
        out = []
        for s in samples:
            p = self.answer(s, s.image.load())
            out.append(Prediction(point=p, raw=f"{self.name} {p}") if p else Prediction(raw="none"))
        return out


class FixedResolution(Robust):
    """Answers in pixels of the image it is shown, read back as if every screen were 800x600 (the
    screenshot resized, the coordinates never scaled back: trycua/cua#898)."""
    name = "fixed-resolution"

    def answer(self, sample, img):
        c = sample.target.box.center
        return Point(c.x * img.size[0] / 800, c.y * img.size[1] / 600)


class ColourThreshold(Robust):
    """Finds elements by a threshold tuned on light screens: a dark background (a dark theme, night mode)
    hides everything."""
    name = "colour-threshold"

    def answer(self, sample, img):
        r, g, b = img.getpixel((2, 2))
        return sample.target.box.center if (r + g + b) / 3 > 128 else None


def robust(options):
    return Robust(options)


def fixed_resolution(options):
    return FixedResolution(options)


def colour_threshold(options):
    return ColourThreshold(options)
'''

PERTURB = "scale:0.75,invert,perspective:0.05,zoom:1.5"


def _project(project: Project) -> Project:
    """The mini suite, its slices gated as a real suite's are (the fixture's tolerates any slice drop)."""
    project.pytester.makepyfile(standins=STANDINS)
    suite = project.root / "suites" / "mini" / "suite.toml"
    suite.write_text(suite.read_text().replace("slice_tolerance = 100.0", "slice_tolerance = 5.0"))
    return project


def _rows(summary: dict, metric: str = "grounding_accuracy") -> dict[str, float]:
    slices = summary["metrics"][metric]["slices"]
    return {label: value for label, value in slices.items() if label.startswith("perturb=")}


def test_perturbed_variants_are_tests_recorded_and_gated(project: Project, xdist: list[str]) -> None:
    p = _project(project)
    p.record("--model", "standins:robust", "--uiground-perturb", PERTURB, xdist=xdist)
    samples = json.loads((p.root / "baselines" / "mini" / "samples.json").read_text())["samples"]
    assert {i.partition("@")[2] for i in samples} == {"", "scale:0.75", "invert", "perspective:0.05", "zoom:1.5"}
    assert "syn-3-00000-00@scale:0.75" in samples
    snaps = {f.name for f in (p.root / "baselines" / "mini" / "snapshots").iterdir()}
    assert "test_aggregate[grounding_accuracy.perturb=scale0.75].json" in snaps

    ok = p.run("--model", "standins:robust", "--uiground-perturb", PERTURB, "--uiground-report", "out", xdist=xdist)
    no_crash(ok.stdout.str())
    assert ok.ret == 0, ok.stdout.str()[-3000:]
    rows = _rows(p.summary())
    assert rows == {"perturb=invert": 100.0, "perturb=perspective:0.05": 100.0, "perturb=scale:0.75": 100.0,
                    "perturb=zoom:1.5": 100.0}
    ok.stdout.fnmatch_lines(["*62 passed*"])  # 12 samples + 41 variants (7 of zoom:1.5's out of view) + 9 checks
    assert '"id": "syn-3-00000-00@scale:0.75"' in (p.root / "out" / "samples.jsonl").read_text()

    bad = p.run("--model", "standins:fixed_resolution", "--uiground-perturb", PERTURB, "--uiground-report", "out",
                xdist=xdist)
    out = bad.stdout.str()
    no_crash(out)
    assert bad.ret == 1
    assert "FAIL" in verdict(out)
    rows = _rows(p.summary())
    assert rows["perturb=scale:0.75"] < 50 and rows["perturb=invert"] == 100.0
    bad.stdout.fnmatch_lines(["*perturb=scale:0.75 * FAIL (worse > 5)*"])  # the failing slice, as any slice
    assert "FAIL" not in "".join(line for line in out.splitlines() if "perturb=invert" in line)
    assert "syn-3-00000-00@scale:0.75" in out  # and its regressed samples
    regressed = [line for line in out.splitlines() if line.startswith("  syn-") and "the baseline got" in line]
    assert regressed and all("@scale:0.75" in line for line in regressed), regressed
    headline = [line for line in out.splitlines() if line.startswith("grounding_accuracy ")]
    assert headline and " 100.00 " in headline[0], headline  # the headline is the unperturbed suite's


@pytest.mark.parametrize(("model", "caught", "spared"), [
    ("fixed_resolution", "scale:0.75", "invert"),
    ("colour_threshold", "invert", "scale:0.75"),
])
def test_each_flawed_stand_in_is_caught_by_its_perturbation(project: Project, model: str, caught: str,
                                                             spared: str) -> None:
    """The robustness table pairs each model's perturbed answers with its own unperturbed ones: the flaw shows
    as a drop under the perturbation that exposes it and none under the other (the colour-threshold model
    already misses the mini suite's 3 dark screens unperturbed, so the gate alone would blame both)."""
    p = _project(project)
    result = p.run("--model", f"standins:{model}", "--uiground-perturb", "scale:0.75,invert", "--snapshot-update",
                   "--uiground-report", "out")
    out = result.stdout.str()
    no_crash(out)
    rob = p.summary()["robustness"]
    assert rob[caught]["drop"] >= 50 and rob[caught]["broke"] >= 6, rob
    assert rob[spared]["drop"] == 0 and rob[spared]["consistency"] == 100.0, rob
    assert rob[caught]["n"] == rob[spared]["n"] == 12
    if model == "fixed_resolution":  # its answers did not move with the element: mapped back, they miss
        assert rob["scale:0.75"]["moved_with_element"] < 50 and rob["invert"]["moved_with_element"] is None
    assert rob[caught]["slices"]["difficulty=easy"]["n"] == 6
    out_lines = [line for line in out.splitlines() if line.startswith(f"  {caught} ")]
    assert len(out_lines) == 1 and f" {rob[caught]['drop']:.1f} " in out_lines[0], out_lines  # the terminal table
    html = (p.root / "out" / "report.html").read_text()
    assert "<h2>Robustness</h2>" in html and "rgba(217,48,37" in html


def test_a_robust_stand_in_passes_every_perturbation(project: Project) -> None:
    every = ("scale:0.5,scale:1.5,zoom:1.3,zoom:0.8,translate:0.05,-0.05,letterbox:1920x720,pad:4x3,perspective:0.08,"
             "invert,grayscale,contrast:0.5,brightness:1.5,jpeg:30,blur:1.5")
    p = _project(project)
    p.record("--model", "standins:robust", "--uiground-perturb", every)
    result = p.run("--model", "standins:robust", "--uiground-perturb", every, "--uiground-report", "out")
    no_crash(result.stdout.str())
    assert result.ret == 0, result.stdout.str()[-3000:]
    rob = p.summary()["robustness"]
    assert len(rob) == 14 and all(r["after"] == 100.0 and r["drop"] == 0 for r in rob.values()), rob
    assert all(r["moved_with_element"] in (None, 100.0) for r in rob.values())
    assert set(_rows(p.summary()).values()) == {100.0}


def test_a_baseline_without_perturbations_leaves_new_variants_ungated(project: Project) -> None:
    p = _project(project)
    p.record("--model", "standins:robust")
    result = p.run("--model", "standins:fixed_resolution", "--uiground-perturb", "scale:0.75")
    out = result.stdout.str()
    no_crash(out)
    assert result.ret == 0, out[-3000:]  # new samples: run, listed, not gated (as for a suite that grew)
    assert "new samples" in out


def test_suite_toml_perturb_table_and_a_bad_spec(project: Project) -> None:
    p = _project(project)
    suite = p.root / "suites" / "mini" / "suite.toml"
    suite.write_text(suite.read_text() + '\n[perturb]\nvariants = ["letterbox:1920x720", "grayscale"]\n')
    p.record("--model", "standins:robust")
    samples = json.loads((p.root / "baselines" / "mini" / "samples.json").read_text())["samples"]
    assert "syn-3-00000-00@letterbox:1920x720" in samples and "syn-3-00000-00@grayscale" in samples
    suite.write_text(suite.read_text().replace('"grayscale"', '"greyscale"'))
    result = p.run("--model", "standins:robust")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*[perturb].variants: unknown perturbation 'greyscale'; known: *"])
    cli = p.run("--uiground-perturb", "scale:0")
    assert cli.ret != 0
    cli.stderr.fnmatch_lines(["*--uiground-perturb: perturbation 'scale:0': expected scale:F*"])


@pytest.fixture(scope="module")
def automotive_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Written once per module: the writer registers pyarrow extension types, which a second import in this
    process (pytester restores sys.modules between runs) would register twice."""
    pytest.importorskip("pyarrow", reason="needs the [automotive] extra (pip install 'pytest-uiground[automotive]')")
    from pytest_uiground.benchmarks.automotive.lookalike import write_fixture

    return write_fixture(tmp_path_factory.mktemp("aui") / "AutomotiveUI-Bench-4K", rows=12, seed=1, width=640,
                         height=360)


def test_the_automotive_look_alike_under_head_unit_variants(project: Project, automotive_data: Path,
                                                            xdist: list[str]) -> None:
    """The AutomotiveUI look-alike (point and verdict rows): its point rows run as the 1920x720 head unit and at
    night, recorded and gated; its verdict rows are not perturbed."""
    data = automotive_data
    p = _project(project)
    dest = p.root / "suites" / "automotive"
    dest.mkdir(parents=True)
    shutil.copy(Path(__file__).parents[2] / "suites" / "automotive" / "suite.toml", dest / "suite.toml")
    shutil.rmtree(p.root / "suites" / "mini")
    args = ("suites/automotive", "-p", "no:cacheprovider", "--benchmark-disable", "--uiground-cache", "off",
            "--uiground-data-path", str(data), "--model", "standins:robust",
            "--uiground-perturb", "letterbox:1920x720,invert", *xdist)
    first = p.pytester.runpytest_subprocess(*args, "--snapshot-update")
    assert first.ret == 0, first.stdout.str()[-3000:]
    result = p.pytester.runpytest_subprocess(*args, "--uiground-report", "out")
    out = result.stdout.str()
    no_crash(out)
    assert result.ret == 0, out[-3000:]
    summary = p.summary()
    points = summary["metrics"]["test_action_grounding"]
    assert points["slices"]["perturb=letterbox:1920x720"] == points["slices"]["perturb=invert"] == 100.0
    assert summary["robustness"]["letterbox:1920x720"]["moved_with_element"] == 100.0
    assert not any(k.startswith("perturb=") for k in summary["metrics"]["expected_result_evaluation"]["slices"])
    ids = json.loads((p.root / "baselines" / "automotive" / "samples.json").read_text())["samples"]
    assert sum("@letterbox:1920x720" in i for i in ids) == summary["robustness"]["invert"]["n"] > 0
