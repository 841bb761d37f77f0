"""Instruction variants (issue 43): a suite's own ``instruction_alts`` asked as the ``alt:N`` perturbation, the
image and the target unchanged; a run records and gates each ``perturb=alt:N`` slice, and the robustness table
pairs each wording with the original one. Never generated: a sample without the wording is left out, counted."""

from __future__ import annotations

import json

import pytest
from conftest import Project, no_crash
from PIL import Image

from pytest_uiground.perturb.derive import derive
from pytest_uiground.perturb.robustness import measure
from pytest_uiground.perturb.transforms import PerturbSpecError, parse, parse_list
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import PERTURB_KEY, Sample, Target
from pytest_uiground.scoring.rules import score_point


def _sample(sid: str, alts: tuple[str, ...], x: float = 0.1) -> Sample:
    ref = ImageRef(key="screen", source=lambda: Image.new("RGB", (40, 30)), size=(40, 30))
    return Sample(id=sid, image=ref, instruction="Open the menu", task="point",
                  target=Target(box=Box(x, 0.1, x + 0.2, 0.3)), meta={"app": "nav"}, instruction_alts=alts)


def test_alt_specs_parse_and_bad_ones_name_the_fix() -> None:
    assert [p.spec for p in parse_list("alt, alt:2,invert")] == ["alt", "alt:2", "invert"]
    assert parse("ALT:03").spec == "alt:3" and parse("alt").textual and not parse("alt:1").geometric
    for bad in ("alt:0", "alt:x", "alt:1.5", "alt:-1"):
        with pytest.raises(PerturbSpecError, match=rf"perturbation '{bad}': expected alt:\[N\].*alt:1 or alt"):
            parse(bad)


def test_each_wording_is_a_variant_with_the_same_image_and_target() -> None:
    a, b = _sample("a", ("Menü öffnen", "Show the menu")), _sample("b", ())
    derived = derive([a, b], parse_list("alt,alt:1,alt:3,scale:0.5"))
    alts = [s for s in derived.samples if s.meta[PERTURB_KEY].startswith("alt")]
    assert [(s.id, s.instruction, s.meta[PERTURB_KEY]) for s in alts] == [
        ("a@alt:1", "Menü öffnen", "alt:1"), ("a@alt:2", "Show the menu", "alt:2")]  # alt:1 asked twice, made once
    assert all(s.image is a.image and s.target == a.target and s.meta["app"] == "nav" for s in alts)
    assert derived.left_out == {"alt": ["b"], "alt:1": ["b"], "alt:3": ["a", "b"]}
    assert {s.id for s in derived.samples} >= {"a@scale:0.5", "b@scale:0.5"}


def test_the_robustness_row_of_a_wording_pairs_it_with_the_original() -> None:
    plain = [_sample(f"s{i}", ("Menü öffnen",) if i < 4 else (), x=0.1 * i) for i in range(6)]
    variants = derive(plain, parse_list("alt")).samples

    def result(s: Sample) -> SampleResult:  # right in English, lost in German on two samples
        wrong = s.instruction != "Open the menu" and s.id in ("s0@alt:1", "s1@alt:1")
        pred = Prediction(point=Point(0.99, 0.99) if wrong else s.target.box.center)  # type: ignore[union-attr]
        return SampleResult(suite="t", id=s.id, task="point", meta=dict(s.meta), score=score_point(s, pred),
                            prediction=pred)

    (row,) = measure([*plain, *variants], [result(s) for s in [*plain, *variants]], ["app"])
    assert (row.spec, row.n, row.broke, row.mended, row.left_out) == ("alt:1", 4, 2, 0, 2)
    assert row.drop == 50.0 and row.consistency == 50.0 and row.moved is None  # the image did not move
    assert row.slices["app=nav"].n == 4


# Stand-ins that know the target and read the instruction as a model does: one understands any wording, one only
# English (a model fine-tuned on English instructions), one only the suite's original wording (it memorised them).
STANDINS = '''
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.geometry import Point


class Any_:
    name = "any"

    def __init__(self, options):
        pass

    def close(self):
        pass

    def fingerprint(self):
        return {"model": self.name}

    def understands(self, text):
        return True

    def predict(self, samples):
        return [Prediction(point=s.target.box.center, raw=s.instruction) if self.understands(s.instruction)
                else Prediction(point=Point(0.99, 0.99), raw="?") for s in samples]


class English(Any_):
    name = "english"

    def understands(self, text):
        return text.isascii()


def any_(options):
    return Any_(options)


def english(options):
    return English(options)
'''

SUITE = """
[suite]
name = "mini"
version = "1"

[loader]
name = "grounding"

[[metrics]]
name = "grounding_accuracy"
tasks = ["point"]
slices = ["app"]
floor = 10.0

[baseline]
tolerance = 2.0
slice_tolerance = 5.0
min_slice = 3  # the tiny suite's wording slices are gated

[latency]
benchmark_samples = 2
"""


def _project(project: Project) -> Project:
    """A suite of one's own screens: 6 samples on 2 screens, 4 with a German and an English other wording."""
    project.pytester.makepyfile(standins=STANDINS)
    folder = project.root / "suites" / "mini"
    (folder / "suite.toml").write_text(SUITE)
    lines = []
    for i in range(6):
        image = f"s{i % 2}.png"
        if not (folder / image).exists():
            Image.new("RGB", (200, 100), (240, 240, 240)).save(folder / image)
        line = {"id": f"el{i}", "image": image, "instruction": f"Open item {i}",
                "bbox": [10 + 30 * i, 10, 35 + 30 * i, 40], "app": "nav" if i < 3 else "media"}
        if i < 4:
            line["instruction_alts"] = [f"Element {i} öffnen", f"Show item {i}"]
        lines.append(json.dumps(line))
    (folder / "annotations.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return project


def test_wordings_are_recorded_gated_and_paired(project: Project, xdist: list[str]) -> None:
    p = _project(project)
    p.record("--model", "standins:any_", "--uiground-perturb", "alt", xdist=xdist)
    ids = json.loads((p.root / "baselines" / "mini" / "samples.json").read_text())["samples"]
    assert {i for i in ids if "@" in i} == {f"el{i}@alt:{n}" for i in range(4) for n in (1, 2)}

    ok = p.run("--model", "standins:any_", "--uiground-perturb", "alt", "--uiground-report", "out", xdist=xdist)
    no_crash(ok.stdout.str())
    assert ok.ret == 0, ok.stdout.str()[-3000:]
    lines = {json.loads(x)["id"]: json.loads(x) for x in (p.root / "out" / "samples.jsonl").read_text().splitlines()}
    assert lines["el2@alt:1"]["prediction"]["raw"] == "Element 2 öffnen"  # the model was asked the other wording

    bad = p.run("--model", "standins:english", "--uiground-perturb", "alt", "--uiground-report", "out", xdist=xdist)
    out = bad.stdout.str()
    no_crash(out)
    assert bad.ret == 1, out[-3000:]
    bad.stdout.fnmatch_lines(["*perturb=alt:1 * FAIL (worse > 5)*"])  # the German wording's slice, by name
    assert "FAIL" not in "".join(line for line in out.splitlines() if "perturb=alt:2" in line)
    slices = p.summary()["metrics"]["grounding_accuracy"]["slices"]
    assert slices["perturb=alt:1"] == 0.0 and slices["perturb=alt:2"] == 100.0
    rob = p.summary()["robustness"]
    assert rob["alt:1"]["drop"] == 100.0 and rob["alt:1"]["broke"] == 4 and rob["alt:1"]["left_out"] == 2
    assert rob["alt:2"]["drop"] == 0.0 and rob["alt:1"]["moved_with_element"] is None
    assert "<h2>Robustness</h2>" in (p.root / "out" / "report.html").read_text()
