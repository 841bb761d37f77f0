"""The whole baseline lifecycle through real pytest runs, with and without xdist."""

from __future__ import annotations

import json

import pytest
from conftest import Project

pytestmark = pytest.mark.slow


def test_first_run_without_baseline_fails_closed_and_writes_nothing(project: Project, xdist: list[str]) -> None:
    """Without a baseline every sample runs and is scored (wrong ones xfail), the report is written, nothing
    is written under baselines/, and the run fails naming --snapshot-update (issue 38: it gates nothing)."""
    ids = project.ids()
    result = project.run("--uiground-report", "out", wrong=ids[:2], xdist=xdist)
    # test_latency skips: the serial benchmark runs only when asked for (--uiground-latency-benchmark).
    result.assert_outcomes(passed=len(ids) - 2 + 5, xfailed=2, skipped=1)
    assert result.ret == 1
    assert not (project.root / "baselines").exists()
    result.stdout.fnmatch_lines(["no baseline for 'mini' at *: nothing to gate against; record one with "
                                 "`pytest suites/mini/suite.toml --snapshot-update` and commit it"])
    summary = project.summary()
    assert summary["suite"] == "mini" and summary["n_samples"] == len(ids)
    metric = summary["metrics"]["grounding_accuracy"]
    assert metric["value"] == pytest.approx(100 * (len(ids) - 2) / len(ids), abs=1e-3)
    assert set(metric["slices"]) == {"difficulty=easy", "difficulty=medium", "difficulty=hard"}
    lines = (project.root / "out" / "samples.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == ids


def test_update_then_rerun_passes_then_worse_model_fails(project: Project, xdist: list[str]) -> None:
    ids = project.ids()
    update = project.run("--snapshot-update", wrong=ids[:1], xdist=xdist)
    assert update.ret == 0, update.stdout.str()
    files = project.baseline_files()
    assert "mini/samples.json" in files
    assert "mini/snapshots/test_aggregate[grounding_accuracy].json" in files
    stored = json.loads(files["mini/samples.json"])
    assert stored["provenance"]["model"] == "scripted"
    assert [k for k, v in stored["samples"].items() if not v["right"]] == ids[:1]

    rerun = project.run("-rx", wrong=ids[:1], xdist=xdist)
    assert rerun.ret == 0, rerun.stdout.str()
    rerun.stdout.fnmatch_lines([f"XFAIL*{ids[0]}*known failure*", "*1 xfailed*"])
    assert project.baseline_files() == files

    worse = project.run("-rfx", "--junitxml", "junit.xml", wrong=ids[:4], xdist=xdist)
    assert worse.ret == 1
    junit = (project.root / "junit.xml").read_text()
    assert 'name="test_aggregate[grounding_accuracy]"' in junit and f'name="test_sample[{ids[1]}]"' in junit
    # One line per regressed sample, in id order, then the verdict; pytest's FAILURES section does not
    # repeat them (they are "regressed" and "checks failed" in its closing line, and still fail the run).
    worse.stdout.fnmatch_lines(["regressed (right in the baseline, wrong now) (3):",
                                *[f"  {sid}: * expected box [[]*[]] px (x1, y1, x2, y2), got point (*) px"
                                  for sid in ids[1:4]],
                                "uiground verdict for mini: FAIL: * checks failed; 3 samples regressed",
                                "*3 regressed, * checks failed*"])
    out = worse.stdout.str()
    assert "REGRESSION" not in out and "FAILURES" not in out
    assert "exact McNemar p" in junit  # the full explanation stays with the failing check
    assert project.baseline_files() == files, "a failing run must not touch the baseline"


def test_fixed_samples_pass_and_are_reported(project: Project, xdist: list[str]) -> None:
    ids = project.ids()
    assert project.run("--snapshot-update", wrong=ids[:3], xdist=xdist).ret == 0
    better = project.run(wrong=ids[:1], xdist=xdist)
    assert better.ret == 0, better.stdout.str()
    better.stdout.fnmatch_lines([f"fixed (2): {ids[1]}, {ids[2]}"])


def test_snapshot_update_touches_nothing_else(project: Project, xdist: list[str]) -> None:
    base = project.root / "baselines"
    (base / "other").mkdir(parents=True)
    (base / "README.md").write_text("keep me")
    (base / "other" / "samples.json").write_text("{not even json")
    (base / "mini").mkdir()
    (base / "mini" / "notes.txt").write_text("keep me too")
    ids = project.ids()
    assert project.run("--snapshot-update", wrong=ids[:2], xdist=xdist).ret == 0
    assert (base / "README.md").read_text() == "keep me"
    assert (base / "other" / "samples.json").read_text() == "{not even json"
    assert (base / "mini" / "notes.txt").read_text() == "keep me too"
    assert (base / "mini" / "samples.json").is_file()
    # a second update with different numbers rewrites only the suite's own files
    assert project.run("--snapshot-update", wrong=ids[:5], xdist=xdist).ret == 0
    stored = json.loads((base / "mini" / "samples.json").read_text())
    assert sum(not v["right"] for v in stored["samples"].values()) == 5
    assert (base / "mini" / "notes.txt").read_text() == "keep me too"


def test_partial_update_is_refused(project: Project) -> None:
    ids = project.ids()
    assert project.run("--snapshot-update", wrong=ids[:1]).ret == 0
    before = project.baseline_files()
    partial = project.run("--snapshot-update", "--uiground-limit", "4", wrong=ids[:6])
    assert partial.ret == 1
    partial.stdout.fnmatch_lines(["*refusing to update the baseline*partial run*"])
    assert project.baseline_files() == before


def test_numbers_identical_with_and_without_xdist(project: Project) -> None:
    ids = project.ids()
    wrong, garbled = ids[::3], ids[1:2]
    project.record(wrong=[*wrong, *garbled])
    a = project.run("--uiground-report", "a", wrong=wrong, garbled=garbled)
    b = project.run("--uiground-report", "b", wrong=wrong, garbled=garbled, xdist=["-n", "2"])
    assert a.ret == b.ret == 0
    sa, sb = project.summary("a"), project.summary("b")
    assert sa["metrics"] == sb["metrics"]
    assert sa["metrics"]["grounding_accuracy"]["format_errors"] == 1


def test_limit_picks_a_stable_stratified_subset(project: Project) -> None:
    first = project.run("--collect-only", "-q", "--uiground-limit", "6")
    second = project.run("--collect-only", "-q", "--uiground-limit", "6", xdist=["-n", "2"])
    picked = [line for line in first.stdout.lines if "test_sample[" in line]
    assert len(picked) == 6
    again = project.run("--collect-only", "-q", "--uiground-limit", "6")
    assert [line for line in again.stdout.lines if "test_sample[" in line] == picked
    assert second.ret == 0


def test_floor_failure_names_the_suite_file(project: Project) -> None:
    project.write_suite(floor=95.0)
    ids = project.ids()
    result = project.run(wrong=ids[:3])
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*grounding_accuracy = *is below its floor 95.00 (set in suites/mini/suite.toml)*"])


def test_batches_look_ahead_and_a_raising_sample_fails_alone(project: Project) -> None:
    ids = project.ids()
    log = project.root / "batches.txt"
    project.monkeypatch.setenv("UIGROUND_BATCHLOG", str(log))
    project.monkeypatch.setenv("UIGROUND_RAISE", ids[5])
    result = project.run("--uiground-batch-size", "4", "--benchmark-disable", "--uiground-report", "out", "-rf",
                         wrong=ids[:1])
    assert result.ret == 1
    # A broken sample is an ordinary failure (pytest's FAILED line), and the uiground section names it.
    result.stdout.fnmatch_lines([f"FAILED *test_sample[[]{ids[5]}[]]*", "errors (1): " + ids[5]])
    assert "CUDA out of memory (scripted)" in result.stdout.str()
    batches = [line.split(",") for line in log.read_text().splitlines()]
    assert batches[0] == ids[:4], "the first call predicts the next four samples together"
    assert max(len(b) for b in batches) == 4
    # every sample but the raising one was predicted exactly once, in a batch or alone
    predicted = [sid for b in batches if ids[5] not in b for sid in b]
    assert sorted(predicted) == [i for i in ids if i != ids[5]]
    summary = project.summary()
    assert summary["metrics"]["grounding_accuracy"]["value"] == pytest.approx(100 * 10 / 12, abs=1e-3)


def test_a_crash_keeps_every_finished_record(project: Project) -> None:
    ids = project.ids()
    project.monkeypatch.setenv("UIGROUND_CRASH", ids[7])
    result = project.run("--uiground-report", "out", wrong=ids[:1])
    assert result.ret == 3
    lines = (project.root / "out" / "samples.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ids[:7]


def test_batches_under_xdist_predict_each_sample_once(project: Project) -> None:
    project.record()
    ids = project.ids()
    log = project.root / "batches.txt"
    project.monkeypatch.setenv("UIGROUND_BATCHLOG", str(log))
    result = project.run("--uiground-batch-size", "4", "--benchmark-disable", xdist=["-n", "2"])
    assert result.ret == 0, result.stdout.str()
    batches = [line.split(",") for line in log.read_text().splitlines()]
    predicted = sorted(sid for b in batches for sid in b)
    assert predicted == ids, "a worker must not predict samples that another worker runs"
    assert max(len(b) for b in batches) > 1, "workers still batch from their own queues"


def test_every_suite_of_a_session_records_the_model(project: Project, xdist: list[str]) -> None:
    """Two suites in one session (and one process): each baseline and summary names the model.

    The model's identity rides on the first record of each suite per process; it used to
    ride on the first record of the process only, so the second suite got ``model: null``.
    """
    second = project.root / "suites" / "mini2"
    second.mkdir()
    (second / "suite.toml").write_text((project.root / "suites" / "mini" / "suite.toml").read_text()
                                       .replace('name = "mini"', 'name = "mini2"'))
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "suites/mini2", "--model", "fakemodels:create", "-p", "no:cacheprovider",
        "--snapshot-update", "--uiground-report", "out", *xdist)
    assert result.ret == 0, result.stdout.str()
    for suite in ("mini", "mini2"):
        prov = json.loads((project.root / "baselines" / suite / "samples.json").read_text())["provenance"]
        assert prov["model"] == "scripted" and prov["model_fingerprint"] == {"model": "scripted"}, (suite, prov)
        summary = json.loads((project.root / "out" / suite / "summary.json").read_text())
        assert summary["model"] == "scripted" and summary["model_fingerprint"] == {"model": "scripted"}
