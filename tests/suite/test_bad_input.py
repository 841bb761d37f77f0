"""Bad input fails the thing that is bad, with a message naming it, and nothing else."""

from __future__ import annotations

import json

import pytest
from conftest import Project

pytestmark = pytest.mark.slow

FAKE_LOADER = '''
from pathlib import Path
from PIL import Image
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target


def load(options, ctx):
    root = ctx.suite_dir
    Image.new("RGB", (40, 30), "white").save(root / "good.png")
    (root / "corrupt.png").write_bytes(b"not a png at all")
    box = Box(0.1, 0.1, 0.5, 0.5)
    def sample(sid, path, invalid=None):
        return Sample(sid, ImageRef.from_path(root / path), "click it", "point", Target(box=box),
                      {"kind": "x", "difficulty": "easy"}, invalid=invalid)
    samples = [sample(f"ok-{i}", "good.png") for i in range(3)]
    samples += [sample("missing", "nope.png"), sample("corrupt", "corrupt.png"),
                sample("nullbox", "good.png", invalid="row 7: box is null")]
    if options.get("duplicate"):
        samples.append(sample("ok-1", "good.png"))
    return samples
'''


@pytest.fixture
def broken(project: Project) -> Project:
    project.pytester.makepyfile(fakeloaders=FAKE_LOADER)
    project.write_suite(loader="fakeloaders:load", floor=0.0)
    return project


def test_broken_samples_fail_alone(broken: Project, xdist: list[str]) -> None:
    result = broken.run("-rf", "--uiground-report", "out", xdist=xdist)
    assert result.ret == 1
    out = result.stdout.str()
    for sid in ("corrupt", "missing", "nullbox"):
        result.stdout.fnmatch_lines([f"FAILED *test_sample[[]{sid}[]]*"])
    result.stdout.fnmatch_lines(["errors (3): corrupt, missing, nullbox"])
    assert "image '" in out and "nope.png' does not exist" in out
    assert "corrupt.png' could not be decoded" in out
    assert "row 7: box is null" in out
    summary = broken.summary()
    assert summary["errors"] == ["corrupt", "missing", "nullbox"]
    assert summary["metrics"]["grounding_accuracy"]["value"] == pytest.approx(50.0)
    assert summary["metrics"]["grounding_accuracy"]["errors"] == 3
    records = [json.loads(x) for x in (broken.root / "out" / "samples.jsonl").read_text().splitlines()]
    assert {r["id"]: r["error"] is None for r in records} == {
        "ok-0": True, "ok-1": True, "ok-2": True, "missing": False, "corrupt": False, "nullbox": False}


def test_duplicate_ids_are_a_collection_error(broken: Project) -> None:
    path = broken.root / "suites" / "mini" / "suite.toml"
    path.write_text(path.read_text().replace("seed = 3", "seed = 3\nduplicate = true"))
    result = broken.run()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*duplicate sample id 'ok-1'*"])


def test_unknown_model_fails_at_start_listing_known(project: Project) -> None:
    result = project.pytester.runpytest_subprocess("suites/mini", "--model", "elma")
    assert result.ret == 4  # usage error
    result.stderr.fnmatch_lines(["*--model: no model named 'elma'; known: *center*ocr*"])


@pytest.mark.parametrize("value", ["0", "many"])
def test_bad_option_values_fail_at_start(project: Project, value: str) -> None:
    result = project.pytester.runpytest_subprocess("suites/mini", "--uiground-batch-size", value)
    assert result.ret == 4
    result.stderr.fnmatch_lines([f"*--uiground-batch-size*expected a whole number >= 1, got '{value}'*"])


def test_malformed_suite_file_names_file_and_field(project: Project) -> None:
    path = project.root / "suites" / "mini" / "suite.toml"
    path.write_text(path.read_text().replace('tasks = ["point"]', 'tasks = ["point"]\naverage = "mean"'))
    result = project.run()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*suite.toml: metrics[[]0[]].average: 'mean' is not one of micro, macro*"])


def test_malformed_baseline_names_file_and_field(project: Project) -> None:
    bad = project.root / "baselines" / "mini" / "samples.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(json.dumps({"format": 1, "samples": {"syn-3-00000-00": {"right": "yes"}}}))
    result = project.run()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*samples.json: samples.syn-3-00000-00.right must be true or false*"])


def test_format_errors_are_wrong_and_counted(project: Project) -> None:
    ids = project.ids()
    project.record(wrong=ids[:2])
    result = project.run("--uiground-report", "out", garbled=ids[:2])
    assert result.ret == 0
    result.stdout.fnmatch_lines(["format errors: 2; sample errors: 0; *"])
    metric = project.summary()["metrics"]["grounding_accuracy"]
    assert metric["format_errors"] == 2
    assert metric["value"] == pytest.approx(100 * (len(ids) - 2) / len(ids), abs=1e-3)
