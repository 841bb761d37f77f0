"""``--uiground-shard I/N`` runs merged by ``python -m pytest_uiground merge`` make the run one machine makes.

The suite runs as 4 shards in separate processes (two of them with ``-n 2``); the merge's
``summary.json`` (figures, verdict, regressed and fixed ids), exit status and, with
``--snapshot-update``, baseline equal a single run's, times aside. Shards that do not make one
run (one missing, one of another model, one given twice) are each one clear error.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Project

from pytest_uiground import registry
from pytest_uiground.models.base import ModelOptions
from pytest_uiground.shard import manifest, replay
from pytest_uiground.shard.merge import RECORDED
from pytest_uiground.shard.shards import MergeError, read_shard

pytestmark = pytest.mark.slow

TIMES = ("date", "latency_ms", "load_s", "packages")


def timeless(value: Any) -> Any:
    """``value`` without what a clock decides (dates, latencies, load times, the installed versions)."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def junit_cases(path: Path) -> dict[str, str]:
    """Each JUnit test case's name and how it ended (passed, failure, skipped)."""
    import xml.etree.ElementTree as ET

    return {case.get("name", ""): next((child.tag for child in case if child.tag in ("failure", "skipped", "error")),
                                       "passed") for case in ET.parse(path).iter("testcase")}


def merge(project: Project, *args: str) -> pytest.RunResult:
    return project.pytester.run(sys.executable, "-m", "pytest_uiground", "merge", *args)


def baseline_of(project: Project, folder: str) -> dict[str, Any]:
    root = project.root / folder / "mini"
    return {str(p.relative_to(root)): timeless(json.loads(p.read_text())) if p.suffix == ".json" else p.read_text()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_four_shards_merged_are_the_single_run(project: Project) -> None:
    ids = project.ids()
    first = project.run("--snapshot-update", wrong=ids[:2])  # the baseline: two wrong answers
    assert first.ret == 0, first.stdout.str()
    for copy in ("b-single", "b-shards"):
        shutil.copytree(project.root / "baselines", project.root / copy)
    wrong = [ids[0], ids[5], ids[9]]  # ids[1] is fixed, ids[5] and ids[9] regress
    single = project.run("--uiground-baselines", "b-single", "--uiground-report", "single", "--junitxml", "single.xml",
                         wrong=wrong)
    assert single.ret == 1
    for i in range(1, 5):
        shard = project.run("--uiground-baselines", "b-shards", "--uiground-shard", f"{i}/4", "--uiground-report",
                            f"s{i}", wrong=wrong, xdist=["-n", "2"] if i % 2 == 0 else [])
        doc = json.loads((project.root / f"s{i}" / manifest.NAME).read_text())
        assert doc["index"] == i and doc["count"] == 4
        assert doc["suites"]["mini"]["ran"] == sorted(doc["suites"]["mini"]["planned"]), "with -n 2 too"
        summary = project.summary(f"s{i}")
        assert summary["verdict"]["n_checks"] == 0 and summary["baseline_comparison"] == {}, \
            "a shard alone runs no aggregate check"
        assert "test_aggregate" not in shard.stdout.str()
        assert f"uiground shard {i}/4: aggregate checks and the baseline are left to" in shard.stdout.str()
    planned = [json.loads((project.root / f"s{i}" / manifest.NAME).read_text())["suites"]["mini"]["planned"]
               for i in range(1, 5)]
    assert sorted(x for p in planned for x in p) == ids and all(len(p) == 3 for p in planned)

    merged = merge(project, "s1", "s2", "s3", "s4", "--out", "merged")
    assert merged.ret == single.ret == 1, merged.stdout.str() + merged.stderr.str()
    one, many = project.summary("single"), project.summary("merged")
    assert many["regressed"] == [ids[5], ids[9]] and many["fixed"] == [ids[1]]
    assert many["verdict"]["status"] == "FAIL"
    assert timeless(many) == timeless(one)
    assert many["latency_ms"]["n"] == one["latency_ms"]["n"] == 12
    records = [json.loads(line) for line in (project.root / "merged" / "samples.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in records) == ids
    cases = {name: junit_cases(project.root / name) for name in ("single.xml", "merged/junit.xml")}
    assert cases["merged/junit.xml"] == {k: v for k, v in cases["single.xml"].items() if k != "test_latency"}
    assert len(cases["merged/junit.xml"]) == 12 + 4 + 1  # the samples, the checks, the latency check
    assert "uiground verdict for mini: FAIL" in (project.root / "merged" / "summary.md").read_text() or \
        many["verdict"]["text"] in (project.root / "merged" / "summary.md").read_text()
    assert (project.root / "merged" / "report.html").is_file()

    # The baseline: a single run's --snapshot-update and the merge's write the same files.
    assert project.run("--uiground-baselines", "b-single", "--snapshot-update", wrong=wrong).ret == 0
    updated = merge(project, "s4", "s3", "s2", "s1", "--out", "merged-update", "--snapshot-update")
    assert updated.ret == 0, updated.stdout.str() + updated.stderr.str()
    assert baseline_of(project, "b-shards") == baseline_of(project, "b-single")
    assert baseline_of(project, "b-shards") != baseline_of(project, "baselines")

    # Shards that do not make one run: each is one error, naming the shard, and no report.
    missing = merge(project, "s1", "s2", "s4", "--out", "bad")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["merge: shard 3/4 missing: 3 of 4 given*give every shard's folder*"])
    assert project.run("--uiground-baselines", "b-shards", "--uiground-shard", "2/4", "--uiground-report", "s2-again",
                       wrong=wrong).ret == 0
    twice = merge(project, "s1", "s2", "s2-again", "s3", "s4", "--out", "bad")
    assert twice.ret == pytest.ExitCode.USAGE_ERROR
    twice.stderr.fnmatch_lines(["merge: shard 2/4 is given twice: *s2 and *s2-again*"])
    assert project.run("--uiground-baselines", "b-shards", "--uiground-shard", "4/4", "--uiground-report", "s4-center",
                       "--model", "center").ret in (0, 1)
    other = merge(project, "s1", "s2", "s3", "s4-center", "--out", "bad")
    assert other.ret == pytest.ExitCode.USAGE_ERROR
    other.stderr.fnmatch_lines(["merge: shard 4/4 (*s4-center) ran 'mini' with another model than shard 1/4*"
                                "'center'*'scripted'*"])
    assert not (project.root / "bad" / "summary.json").exists()


def test_a_shard_needs_a_report_folder_and_no_update(project: Project) -> None:
    no_report = project.run("--uiground-shard", "1/2")
    assert no_report.ret == pytest.ExitCode.USAGE_ERROR
    no_report.stderr.fnmatch_lines(["*--uiground-shard 1/2 needs --uiground-report DIR*"])
    update = project.run("--uiground-shard", "1/2", "--uiground-report", "s", "--snapshot-update")
    assert update.ret == pytest.ExitCode.USAGE_ERROR
    update.stderr.fnmatch_lines(["*update at the merge: python -m pytest_uiground merge*--snapshot-update*"])
    bad = project.run("--uiground-shard", "3/2")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*expected I/N with 1 <= I <= N*"])


def test_an_unfinished_shard_and_own_options(tmp_path: Path) -> None:
    """A folder without a manifest is named; the shard's own options never reach the merged run."""
    with pytest.raises(MergeError, match=r"has no shard\.json.*did not finish"):
        read_shard(tmp_path)
    args = ["suites/x", "-n", "2", "--uiground-shard=1/4", "--uiground-report", "r", "-n2", "--model", "m", "-k", "a",
            "--snapshot-update", "--basetemp=/tmp/x", "--uiground-api-base", "http://a/v1"]
    assert manifest.replayable(args) == ["suites/x", "-k", "a", "--uiground-api-base", "http://a/v1"]
    assert manifest.comparable(manifest.replayable(args)) == ["suites/x", "-k", "a"]


def test_the_merged_runs_model_resolves_to_its_stand_in() -> None:
    """The merged run's ``--model`` (:data:`RECORDED`) is resolved like any ``--model`` at its start-up, so it
    must name an importable factory: the stand-in, which refuses to be built (the shards' records answer
    for the model, :class:`~pytest_uiground.shard.replay.RecordedModel`), saying which command to run."""
    stand_in = registry.resolve(registry.MODEL_GROUP, RECORDED, what="model", option="--model")
    assert stand_in is replay.recorded
    with pytest.raises(RuntimeError, match=r"merge's stand-in: use python -m pytest_uiground merge"):
        stand_in(ModelOptions(name=RECORDED))
