"""The gate cannot be fooled: baseline integrity through real pytest runs, each lifecycle
scenario with and without ``-n 2``. Each test's docstring states the rule it holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from conftest import Project, interrupted_run

from pytest_uiground.suite.loading import load_suite

pytestmark = pytest.mark.slow


def stored(project: Project) -> dict:
    return json.loads((project.root / "baselines" / "mini" / "samples.json").read_text())


def test_update_with_sample_errors_is_refused_naming_them(project: Project, xdist: list[str]) -> None:
    """An update from a run with sample errors (a dead server) is refused, naming the samples and
    --uiground-keep-errored, and leaves the baseline as it was: an error is never recorded as a wrong answer."""
    ids = project.ids()
    assert project.run("--snapshot-update", "--uiground-model-revision", "abc123", wrong=ids[:1], xdist=xdist).ret == 0
    assert stored(project)["provenance"]["model_revision"] == "abc123"
    before = project.baseline_files()
    project.monkeypatch.setenv("UIGROUND_RAISE", f"{ids[2]},{ids[3]}")
    refused = project.run("--snapshot-update", xdist=xdist)
    assert refused.ret == 1
    out = refused.stdout.str()
    assert "refusing to update the baseline of 'mini': 2 sample(s) errored" in out
    assert f"{ids[2]}, {ids[3]}" in out and "--uiground-keep-errored" in out
    assert "baseline NOT updated" in out and "baseline updated" not in out
    assert project.baseline_files() == before, "the refused update touched the baseline"


def test_keep_errored_keeps_their_previous_entries(project: Project, xdist: list[str]) -> None:
    """With --uiground-keep-errored, errored samples keep their previous baseline entries and none is recorded
    as wrong; the answers that did come are recorded."""
    ids = project.ids()
    assert project.run("--snapshot-update", wrong=ids[:1], xdist=xdist).ret == 0
    old = stored(project)["samples"]
    project.monkeypatch.setenv("UIGROUND_RAISE", f"{ids[2]},{ids[3]}")
    kept = project.run("--snapshot-update", "--uiground-keep-errored", wrong=ids[4:5], xdist=xdist)
    assert kept.ret == 1  # the errored samples still fail their tests
    new = stored(project)
    assert new["samples"][ids[2]] == old[ids[2]] and new["samples"][ids[2]]["right"] is True
    assert new["samples"][ids[3]] == old[ids[3]]
    assert new["samples"][ids[4]]["right"] is False and new["samples"][ids[0]]["right"] is True
    assert "unrecorded" not in new["provenance"]


def test_keep_errored_without_previous_entry_records_nothing(project: Project) -> None:
    ids = project.ids()
    project.monkeypatch.setenv("UIGROUND_RAISE", ids[2])
    assert project.run("--snapshot-update", "--uiground-keep-errored").ret == 1
    new = stored(project)
    assert ids[2] not in new["samples"] and new["provenance"]["unrecorded"] == [ids[2]]
    project.monkeypatch.delenv("UIGROUND_RAISE")
    # A later wrong answer on it is not a "known failure", and the sample set still matches.
    rerun = project.run("-rx", wrong=ids[2:3])
    assert rerun.ret == 0, rerun.stdout.str()
    rerun.stdout.fnmatch_lines([f"XFAIL*{ids[2]}*no baseline yet*"])


def test_update_whose_floors_fail_is_refused_unless_forced(project: Project, xdist: list[str]) -> None:
    """An update whose absolute floors fail writes no baseline; --uiground-force-update writes it anyway (and
    the run still fails)."""
    project.write_suite(floor=95.0)
    ids = project.ids()
    refused = project.run("--snapshot-update", wrong=ids[:3], xdist=xdist)
    assert refused.ret == 1
    refused.stdout.fnmatch_lines(["*refusing to update the baseline of 'mini'*floors fail*below its floor 95.00*"
                                  "--uiground-force-update*"])
    assert not (project.root / "baselines" / "mini").exists()
    forced = project.run("--snapshot-update", "--uiground-force-update", wrong=ids[:3], xdist=xdist)
    assert forced.ret == 1  # the floor still fails, but the baseline is recorded as asked
    assert sum(not v["right"] for v in stored(project)["samples"].values()) == 3
    assert "mini/snapshots/test_aggregate[grounding_accuracy].json" in project.baseline_files()


def test_mistyped_baseline_folder_fails_at_start_up(project: Project, xdist: list[str]) -> None:
    """A --uiground-baselines folder that does not exist is a usage error at start-up, never "no baseline
    yet" and a pass."""
    ids = project.ids()
    assert project.run("--snapshot-update", xdist=xdist).ret == 0
    result = project.run("--uiground-baselines", "baselnes", wrong=ids[:6], xdist=xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--uiground-baselines" in result.stderr.str() and "does not exist" in result.stderr.str()
    assert project.run("--uiground-baselines", "baselines", wrong=ids[:6], xdist=xdist).ret == 1


def test_a_run_of_nothing_keeps_the_previous_report(project: Project, xdist: list[str]) -> None:
    """A run that tests nothing (--collect-only, a mistyped path, a collection error) leaves the previous
    report byte for byte."""
    project.record(xdist=xdist)
    assert project.run("--uiground-report", "out", xdist=xdist).ret == 0
    report = project.root / "out"
    before = {p.name: p.read_bytes() for p in report.iterdir() if p.is_file()}
    assert before["samples.jsonl"] and b'"suites": {}' not in before["summary.json"]
    project.run("--uiground-report", "out", "--collect-only", xdist=xdist)
    project.run("--uiground-report", "out", "suites/typo", xdist=xdist)
    suite = project.root / "suites" / "mini" / "suite.toml"
    good = suite.read_text()
    suite.write_text(good + "\n[broken\n")
    assert project.run("--uiground-report", "out", xdist=xdist).ret != 0
    suite.write_text(good)
    assert {p.name: p.read_bytes() for p in report.iterdir() if p.is_file()} == before


def test_baseline_of_another_suite_version_or_dataset_fails_naming_the_change(project: Project,
                                                                              xdist: list[str]) -> None:
    """A baseline recorded for another suite version fails the checks naming what changed instead of being
    compared; removed samples drop out (issue 30: a suite that shrinks is compared on what both have), named."""
    ids = project.ids()
    assert project.run("--snapshot-update", xdist=xdist).ret == 0
    suite = project.root / "suites" / "mini" / "suite.toml"
    good = suite.read_text()
    suite.write_text(good.replace('version = "1"', 'version = "2"'))
    result = project.run(xdist=xdist)
    assert result.ret == 1
    assert "suite version '1' in the baseline, '2' now" in result.stdout.str()
    suite.write_text(good.replace("screens = 4", "screens = 3"))
    load_suite.cache_clear()
    smaller = project.ids()
    removed = sorted(set(ids) - set(smaller))
    assert removed
    result = project.run("-rf", wrong=smaller[:1], xdist=xdist)
    out = result.stdout.str()
    assert result.ret == 1
    assert f"{len(removed)} removed (dropped from the comparison): {', '.join(removed[:10])}" in out
    # shared samples are still compared one by one: the regressed one is named
    assert "1 sample regressed" in out and smaller[0] in out


def test_two_suites_with_one_name_is_a_collection_error(project: Project) -> None:
    """Two suites with one [suite] name are a collection error naming both, and no baseline is written (one
    would overwrite the other's)."""
    copy = project.root / "suites" / "copy"
    copy.mkdir()
    (copy / "suite.toml").write_text((project.root / "suites" / "mini" / "suite.toml").read_text())
    result = project.run("suites/copy", "--snapshot-update")
    assert result.ret != 0
    assert "[suite] name 'mini' is already used by" in result.stdout.str()
    assert not (project.root / "baselines" / "mini").exists()


def test_concurrent_update_is_refused_while_one_holds_the_lock(project: Project) -> None:
    """A second --snapshot-update while another holds the baselines lock is a usage error at start-up and
    writes nothing; the lock file is gone after a normal update."""
    from pytest_uiground.gate.baseline import UpdateLock

    ids = project.ids()
    lock = UpdateLock(project.root / "baselines")
    assert lock.acquire() is None
    try:
        second = project.run("--snapshot-update")
        assert second.ret == pytest.ExitCode.USAGE_ERROR
        assert "another --snapshot-update is writing baselines" in second.stderr.str()
        assert not (project.root / "baselines" / "mini").exists()
    finally:
        lock.release()
    assert project.run("--snapshot-update", wrong=ids[:2]).ret == 0
    assert not (project.root / "baselines" / UpdateLock.NAME).exists()


def test_concurrent_updates_never_mix(project: Project) -> None:
    """Two real updates at the same time: whatever the order, the baseline's files all come from one run."""
    ids = project.ids()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project.root), *sys.path])}
    procs = []
    for wrong in (ids[:2], ids[:5]):
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "pytest", "suites/mini", "--model", "fakemodels:create", "-p", "no:cacheprovider",
             "--snapshot-update"], cwd=project.root, env={**env, "UIGROUND_WRONG": ",".join(wrong)},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    outs = [p.communicate(timeout=300)[0].decode() for p in procs]
    updated = [o for o in outs if "baseline updated" in o]
    assert len(updated) >= 1
    n_wrong = sum(not v["right"] for v in stored(project)["samples"].values())
    snap = json.loads((project.root / "baselines" / "mini" / "snapshots"
                       / "test_aggregate[grounding_accuracy].json").read_text())
    assert n_wrong in (2, 5)
    assert snap["value"] == pytest.approx(100 * (len(ids) - n_wrong) / len(ids), abs=0.01)


def test_report_on_an_existing_file_is_a_usage_error(project: Project) -> None:
    """--uiground-report naming an existing file is a usage error, not an INTERNALERROR."""
    (project.root / "afile").write_text("x")
    result = project.run("--uiground-report", "afile")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "is an existing file" in result.stderr.str() and "INTERNALERROR" not in result.stdout.str()


def test_missing_gpu_fails_once_at_start_up(project: Project) -> None:
    """--uiground-device cuda:7 without that GPU is one usage error at start-up, not a failure per test."""
    from pytest_uiground.models.hf.device import cuda_device_count

    if cuda_device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    result = project.run("--uiground-device", "cuda:7")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().count("--uiground-device cuda:7") == 1
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()




def test_ctrl_c_writes_an_interrupted_summary(project: Project, xdist: list[str]) -> None:
    """Ctrl-C writes an "interrupted" summary of the samples that finished, with exit 2 (under -n 2 too,
    where syrupy's warning must not become an error)."""
    ids = project.ids()
    proc, out = interrupted_run(project, signal.SIGINT, *xdist, group=True, env={"UIGROUND_WRONG": ids[0]})
    log = project.root / "out" / "samples.jsonl"
    assert proc.returncode == 2, out
    assert "INTERNALERROR" not in out
    summary = json.loads((project.root / "out" / "summary.json").read_text())
    assert summary["interrupted"] is True
    done = [json.loads(line)["id"] for line in log.read_text().splitlines()]
    assert 3 <= summary["n_samples"] == len(done) < len(ids)


def test_unwritable_cache_is_a_note_and_nothing_is_requested_twice(project: Project, xdist: list[str]) -> None:
    """A prediction cache that cannot be written is a note on each record: the batch's predictions are kept
    and scored, and no sample is requested twice."""
    ids = project.ids()
    project.record(xdist=xdist)
    (project.root / "notadir").write_text("a file where the cache folder should be")

    def run(cache: str) -> list[str]:
        log = project.root / f"batches-{cache}.log"
        project.monkeypatch.setenv("UIGROUND_BATCHLOG", str(log))
        result = project.pytester.runpytest_subprocess(
            "suites/mini", "--model", "fakemodels:create_cached", "-p", "no:cacheprovider", "--uiground-cache",
            cache, "--uiground-batch-size", "4", "--uiground-report", "out", *xdist)
        assert result.ret == 0, result.stdout.str()
        return [i for line in log.read_text().splitlines() for i in line.split(",") if i]

    fresh = run("freshdir")  # a writable, empty cache: what one pass over the suite asks
    asked = run("notadir")
    assert sorted(set(asked)) == ids and len(asked) == len(fresh)
    records = [json.loads(line) for line in (project.root / "out" / "samples.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in records) == ids
    assert all("prediction cache could not be written" in r["cache"] for r in records)
    assert all(r["error"] is None for r in records)


def test_api_key_never_printed_with_locals_or_junit(project: Project) -> None:
    """The API key never appears in the output or the JUnit XML, even with -l showing locals when the client
    cannot be created."""
    key = "sk-gate-test-0123456789abcdef"
    project.monkeypatch.setenv("GATE_KEY", key)
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "openai", "--uiground-api-base", "http://h:abc/v1", "--uiground-served-model",
        "m", "--uiground-parser", "uground", "--uiground-api-key-env", "GATE_KEY", "-l", "--tb=long",
        "--junitxml", "junit.xml", "-p", "no:cacheprovider", "--uiground-limit", "2")
    assert result.ret == 1
    out = result.stdout.str() + result.stderr.str()
    assert "could not create the client" in out and "[REDACTED]" in out  # -l did print the locals
    assert key not in out
    assert key not in (project.root / "junit.xml").read_text()
