"""Replay of outputs made elsewhere, and the prediction cache, through real pytest runs."""

from __future__ import annotations

import json

import pytest
from conftest import Project

from pytest_uiground.suite.loading import load_suite

pytestmark = pytest.mark.slow


def _samples(project: Project) -> list:  # type: ignore[type-arg]
    return sorted(load_suite(project.root / "suites" / "mini" / "suite.toml").samples, key=lambda s: s.id)


def test_replay_scores_outputs_with_the_named_parser(project: Project, xdist: list[str]) -> None:
    samples = _samples(project)
    lines = []
    for i, s in enumerate(samples[:-1]):  # the last sample has no record
        c = s.target.box.center
        x, y = (round(c.x * 1000), round(c.y * 1000)) if i % 4 else (999, 999)  # every 4th is wrong
        if i == 1:
            lines.append({"sample_id": s.id, "output": "I cannot tell."})  # a format error
            continue
        lines.append({"sample_id": s.id, "output": f"({x}, {y})"})
    preds = project.root / "outputs.jsonl"
    preds.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "replay", "--uiground-predictions", str(preds), "--uiground-replay-parser", "uground",
        "-p", "no:cacheprovider", "--uiground-report", "out", "-rf", *xdist)
    assert result.ret == 1  # the missing sample fails
    result.stdout.fnmatch_lines([f"*missing: no record for sample '{samples[-1].id}'*"])
    summary = project.summary()
    # 12 samples: 3 wrong on purpose (i = 0, 4, 8), 1 format error, 1 missing → 7 right
    metric = summary["metrics"]["grounding_accuracy"]
    assert metric["value"] == pytest.approx(100 * 7 / 12, abs=1e-3)
    assert metric["format_errors"] == 1 and metric["errors"] == 1
    assert summary["errors"] == [samples[-1].id]


def test_replay_needs_its_options(project: Project) -> None:
    result = project.pytester.runpytest_subprocess("suites/mini", "--model", "replay", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--model replay needs --uiground-predictions FILE.jsonl*"])


def test_cache_reuses_predictions_and_survives_a_corrupt_entry(project: Project, xdist: list[str]) -> None:
    ids = project.ids()
    project.record(wrong=ids[:4], xdist=xdist)
    log = project.root / "calls.txt"
    project.monkeypatch.setenv("UIGROUND_BATCHLOG", str(log))
    args = ["--model", "fakemodels:create_cached", "--uiground-cache", "cache", "--uiground-report", "out",
            "--benchmark-disable"]
    first = project.run(*args, wrong=ids[:2], xdist=xdist)
    assert first.ret == 0
    assert sorted(x for line in log.read_text().splitlines() for x in line.split(",")) == ids
    log.unlink()
    entries = sorted((project.root / "cache").rglob("*.json"))
    assert len(entries) == len(ids)
    entries[0].write_text("{half a json")
    # Rerun: every sample but the corrupt one comes from the cache (the env change that would
    # make the model answer differently is not seen: the cache is keyed by what the model declares)
    second = project.run(*args, wrong=ids[:4], xdist=xdist)
    assert second.ret == 0, second.stdout.str()
    assert len(log.read_text().splitlines()) == 1, "only the corrupt entry is predicted again"
    records = [json.loads(x) for x in (project.root / "out" / "samples.jsonl").read_text().splitlines()]
    notes = [r.get("cache") or "" for r in records]
    assert notes.count("hit") == len(ids) - 1
    assert sum("corrupt prediction cache entry" in n for n in notes) == 1
