"""Suites that grow (issue 30 item 5), through real pytest runs with and without ``-n 2``: added samples are
new (listed, run, not gated), ``--uiground-only-new`` records only them while every other entry stays
byte-identical, removed samples drop out, and the two halves of the baseline keep agreeing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Project
from PIL import Image

from pytest_uiground.suite.loading import load_suite

pytestmark = pytest.mark.slow

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
tolerance = "auto"
slice_tolerance = "auto"
min_slice = 3
"""


def lines(n: int, start: int = 0) -> list[dict]:
    return [{"id": f"s{i:02d}", "image": "a.png", "instruction": f"Item {i}", "bbox": [10 * i, 10, 10 * i + 8, 30],
             "app": "radio" if i % 2 else "nav"} for i in range(start, start + n)]


def grounding_suite(project: Project, records: list[dict]) -> Path:
    folder = project.root / "suites" / "mini"
    (folder / "suite.toml").write_text(SUITE)
    Image.new("RGB", (400, 100), "white").save(folder / "a.png")
    (folder / "annotations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    load_suite.cache_clear()
    return folder


def sample_lines(project: Project) -> list[str]:
    text = (project.root / "baselines" / "mini" / "samples.json").read_text()
    return [line.rstrip(",\n") for line in text.splitlines(keepends=True)
            if line.startswith('  "s') and not line.startswith(('  "suite', '  "setting'))]


def test_added_samples_are_new_then_only_new_adds_them_byte_identically(project: Project, xdist: list[str]) -> None:
    folder = grounding_suite(project, lines(8))
    assert project.run("--snapshot-update", wrong=["s01"], xdist=xdist).ret == 0
    before = sample_lines(project)
    snapshots = {p.name: p.read_text() for p in (project.root / "baselines" / "mini" / "snapshots").iterdir()}
    assert len(before) == 8
    # three samples added (one of them wrong): new, listed, run, not gated; the gate passes
    (folder / "annotations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines(11)))
    result = project.run("--uiground-report", "out", wrong=["s01", "s09"], xdist=xdist)
    out = result.stdout.str()
    assert result.ret == 0, out
    assert project.summary()["new"] == ["s08", "s09", "s10"] and "removed" not in project.summary()
    assert "new (not in the baseline: run, not gated)</dt><dd>3</dd>" in \
        (project.root / "out" / "report.html").read_text().replace("\n", "")
    assert "3 new samples (not in the baseline: run, not gated; --snapshot-update --uiground-only-new adds them): " \
        "s08, s09, s10" in out
    assert "sample set changed" not in out and "PASS" in out
    # --uiground-only-new runs the three alone and adds them; the old entries stay byte for byte
    log = project.root / "batches.log"
    project.monkeypatch.setenv("UIGROUND_BATCHLOG", str(log))
    result = project.run("--snapshot-update", "--uiground-only-new", wrong=["s01", "s09"], xdist=xdist)
    assert result.ret == 0, result.stdout.str()
    ran = {i for row in log.read_text().split() for i in row.split(",")}
    assert ran == {"s08", "s09", "s10"}
    after = sample_lines(project)
    assert len(after) == 11 and set(before) <= set(after)
    assert any(line.startswith('  "s09": {"right": false, "value": 0.0, "c": {"point_hit": false}, "a": {"point": ')
               for line in after), after
    # the snapshots are recomputed over all 11 from the stored values: 9 of 11 right
    overall = json.loads((project.root / "baselines" / "mini" / "snapshots" /
                          "test_aggregate[grounding_accuracy].json").read_text())
    assert (overall["n"], overall["value"]) == (11, round(100 * 9 / 11, 2))
    assert snapshots != {p.name: p.read_text() for p in (project.root / "baselines" / "mini" / "snapshots").iterdir()}
    log.unlink()
    # a plain run agrees with both halves (no "two halves disagree"), and nothing is new any more
    result = project.run(wrong=["s01", "s09"], xdist=xdist)
    out = result.stdout.str()
    assert result.ret == 0, out
    assert "disagree" not in out and "new sample" not in out
    # a removed sample drops out; a regression on a shared sample still fails
    (folder / "annotations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines(10)))
    result = project.run(wrong=["s01", "s09", "s02"], xdist=xdist)
    out = result.stdout.str()
    assert result.ret == 1
    assert "1 removed (dropped from the comparison): s10" in out and "1 sample regressed" in out


def test_only_new_with_nothing_new_writes_nothing(project: Project) -> None:
    grounding_suite(project, lines(4))
    assert project.run("--snapshot-update").ret == 0
    samples = project.root / "baselines" / "mini" / "samples.json"
    text = samples.read_text()
    result = project.run("--snapshot-update", "--uiground-only-new")
    assert result.ret in (0, 5), result.stdout.str()
    assert samples.read_text() == text
