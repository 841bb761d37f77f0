"""A suite's baseline is one thing, samples.json and snapshots/ together: a part that is missing,
unreadable, out of range or disagreeing fails the checks naming the file and the fix, and an update
that cannot finish (a full disk) leaves the previous pair whole. Filesystem faults are simulated
portably (a file where a folder should be, a fake ``os.fsync`` raising ENOSPC), so they run as root
in CI; lifecycle scenarios run with and without ``-n 2``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import FAULTS_CONFTEST, Project, no_crash, strict_json, verdict

from pytest_uiground.gate import baseline as baseline_mod

pytestmark = pytest.mark.slow


SNAP = "test_aggregate[grounding_accuracy].json"


def base_dir(project: Project) -> Path:
    return project.root / "baselines" / "mini"


def test_deleted_samples_json_fails_the_checks_instead_of_passing(project: Project, xdist: list[str]) -> None:
    """A baseline folder whose samples.json is gone (its snapshots still there) is damaged: the checks fail
    naming the file, so a 60-point drop cannot pass as "no baseline"."""
    ids = project.ids()
    assert project.run("--snapshot-update", xdist=xdist).ret == 0
    (base_dir(project) / "samples.json").unlink()
    result = project.run("-rx", wrong=ids[: len(ids) * 2 // 3], xdist=xdist)
    out = result.stdout.str()
    assert result.ret == 1, out
    assert "samples.json is missing" in out and "--snapshot-update" in out
    assert "no baseline yet" not in out
    assert verdict(out).startswith("uiground verdict for mini: FAIL")


def test_disk_full_during_update_leaves_the_previous_pair(project: Project, xdist: list[str]) -> None:
    """A disk that fills up during --snapshot-update leaves the previous samples.json and snapshots
    untouched and no staged file, and says so in one line with exit 1 (no traceback)."""
    project.pytester.makeconftest(FAULTS_CONFTEST)
    ids = project.ids()
    assert project.run("--snapshot-update", wrong=ids[:1], xdist=xdist).ret == 0
    before = project.baseline_files()
    project.monkeypatch.setenv("UIGROUND_FSYNC_OK", "1")  # samples.json staged, then the disk is full
    result = project.run("--snapshot-update", wrong=ids[:6], xdist=xdist)
    out = result.stdout.str()
    no_crash(out)
    assert result.ret == 1
    assert "baseline NOT written" in out and "No space left on device" in out
    assert "previous baseline is untouched" in out
    assert "FAIL" in verdict(out) and "baseline NOT written" in verdict(out)
    assert project.baseline_files() == before, "the failed update changed the baseline"
    assert not [p for p in base_dir(project).rglob("*.tmp")], "staged files were left behind"


def test_damaged_baseline_fails_and_the_advised_update_rewrites_it(project: Project, xdist: list[str]) -> None:
    """A truncated samples.json fails the run naming the file, and the fix the message advises
    (--snapshot-update) does rewrite it."""
    ids = project.ids()
    assert project.run("--snapshot-update", xdist=xdist).ret == 0
    samples = base_dir(project) / "samples.json"
    samples.write_text(samples.read_text()[:40])
    plain = project.run(wrong=ids[:3], xdist=xdist)
    out = plain.stdout.str()
    assert plain.ret == 1 and "not valid JSON" in out and str(samples) in out
    assert "error" not in out.splitlines()[-1]  # the samples ran: not a collection error
    assert "no baseline yet" not in out
    update = project.run("--snapshot-update", wrong=ids[:3], xdist=xdist)
    out = update.stdout.str()
    assert update.ret == 0, out
    assert "replacing a damaged baseline" in out and "baseline updated" in out
    stored = json.loads(samples.read_text())
    assert sum(not v["right"] for v in stored["samples"].values()) == 3
    assert project.run(wrong=ids[:3], xdist=xdist).ret == 0


@pytest.mark.parametrize("value", ["NaN", "1e308", "150", "-5", "Infinity"])
def test_out_of_range_or_non_finite_values_are_damage(tmp_path: Path, value: str) -> None:
    """A baseline value that is not a finite number in 0..100 (NaN, Infinity, 1e308, 150, -5) is damage,
    reported as a BaselineError naming the file, never read as a score."""
    folder = tmp_path / "s"
    (folder / "snapshots").mkdir(parents=True)
    (folder / "samples.json").write_text(f'{{"format": 1, "samples": {{"a": {{"right": true, "value": {value}}}}}}}')
    base = baseline_mod.load(tmp_path, "s")
    assert base is not None and base.damaged is not None
    assert str(folder / "samples.json") in base.damaged and "--snapshot-update" in base.damaged
    assert "samples.a.value" in base.damaged or f"{value} is not a number JSON allows" in base.damaged
    (folder / "samples.json").write_text('{"format": 1, "samples": {"a": {"right": true, "value": 50}}}')
    (folder / "snapshots" / SNAP).write_text(f'{{"metric": "m", "value": {value}, "samples": "x"}}')
    base = baseline_mod.load(tmp_path, "s")
    assert base is not None and base.damaged is not None and SNAP in base.damaged


def test_non_finite_baseline_fails_the_run_without_internal_error(project: Project) -> None:
    """A NaN in samples.json fails the run (exit 1, not INTERNALERROR's 3) naming the file and the fix, and
    summary.json stays standard JSON."""
    assert project.run("--snapshot-update").ret == 0
    samples = base_dir(project) / "samples.json"
    text = samples.read_text()
    first = text.index('"value": ') + len('"value": ')
    samples.write_text(text[:first] + "NaN" + text[text.index("}", first):])
    result = project.run("--uiground-report", "out")
    out = result.stdout.str()
    no_crash(out)
    assert result.ret == 1 and "NaN is not a number JSON allows" in out and "--snapshot-update" in out
    assert strict_json((project.root / "out" / "summary.json").read_text())


def test_deleted_snapshots_or_an_edited_one_never_summarised_as_pass(project: Project, xdist: list[str]) -> None:
    """A snapshot that disagrees with samples.json (edited to 99.5) or a deleted snapshots/ folder fails the
    run, and every summary says FAIL with it: the verdict line, the Markdown and the JUnit property; a
    deleted folder is a missing part, never "fell below"."""
    assert project.run("--snapshot-update", xdist=xdist).ret == 0
    snap = base_dir(project) / "snapshots" / SNAP
    data = json.loads(snap.read_text())
    data["value"] = 99.5
    snap.write_text(json.dumps(data, indent=2))
    edited = project.run("--uiground-markdown", "summary.md", "--junitxml", "junit.xml", xdist=xdist)
    out = edited.stdout.str()
    assert edited.ret == 1
    assert "two halves disagree" in out and "99.50" in out
    assert "FAIL" in verdict(out)
    md = (project.root / "summary.md").read_text()
    assert "— FAIL" in md and "PASS" not in md
    junit = (project.root / "junit.xml").read_text()
    assert 'name="verdict" value="FAIL"' in junit
    assert not re.search(r"\d+ snapshots? (passed|failed|unused|generated|updated)", out), \
        "syrupy's own counts are shown for uiground snapshots"
    # The whole folder deleted: a missing part, not a drop.
    for f in (base_dir(project) / "snapshots").iterdir():
        f.unlink()
    (base_dir(project) / "snapshots").rmdir()
    gone = project.run("--uiground-markdown", "summary.md", xdist=xdist)
    out = gone.stdout.str()
    assert gone.ret == 1 and "snapshots is missing" in out and "fell below" not in out
    assert "FAIL" in verdict(out) and "— FAIL" in (project.root / "summary.md").read_text()


def test_one_missing_snapshot_file_fails_its_check_only(project: Project) -> None:
    """One missing snapshot file fails its own check as missing, naming the fix; it is never reported as a
    drop, and the other checks are unaffected."""
    assert project.run("--snapshot-update").ret == 0
    (base_dir(project) / "snapshots" / SNAP).unlink()
    result = project.run("-rf")
    out = result.stdout.str()
    assert result.ret == 1 and f"its stored snapshot {base_dir(project) / 'snapshots' / SNAP} is missing" in out
    assert "1 of" in verdict(out) and "checks failed" in verdict(out)


def test_read_only_baselines_root_is_a_clear_start_up_error(project: Project) -> None:
    """A baselines root that cannot be written is a usage error at start-up with --snapshot-update, not an
    INTERNALERROR. Simulated with a file where the folder should be (chmod does not stop root)."""
    (project.root / "baselines").write_text("not a folder")
    result = project.run("--snapshot-update")
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "INTERNALERROR" not in result.stdout.str() + err
    assert "cannot write under the baselines folder" in err and "--uiground-baselines" in err


def test_update_removes_the_snapshots_of_removed_metrics(tmp_path: Path) -> None:
    """--snapshot-update deletes the snapshots of checks the suite no longer has (a metric removed from
    suite.toml), so a stale one is never compared again."""
    from pytest_uiground.record.result import SampleResult
    from pytest_uiground.record.score import Score

    rs = [SampleResult(suite="s", id="a", task="point", meta={}, score=Score(100.0, True))]
    snap = {"metric": "m", "slice": None, "value": 100.0, "n": 1, "samples": "x"}
    baseline_mod.write(tmp_path, "s", rs, {}, snapshots={"m": snap, "old": snap, "m.k=v": snap})
    folder = tmp_path / "s" / "snapshots"
    (folder / "notes.txt").write_text("a reviewer's file")
    baseline_mod.write(tmp_path, "s", rs, {}, snapshots={"m": snap})
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt", "test_aggregate[m].json"]
    loaded = baseline_mod.load(tmp_path, "s")
    assert loaded is not None and loaded.damaged is None and loaded.snapshots == {"test_aggregate[m].json": snap}


def test_snapshot_drop_without_paired_data_fails_and_is_shown_once() -> None:
    """A number below its stored snapshot by more than the tolerance fails even where no paired comparison
    exists (a mean of other metrics); a reason all checks share is printed once."""
    from pytest_uiground.gate.checks import Check, ids_digest
    from pytest_uiground.gate.metrics import Aggregate
    from pytest_uiground.report.terminal import limit_problems

    ids = tuple(f"s{i}" for i in range(10))
    agg = Aggregate(value=80.0, n=10, ids=ids)
    stored = {"metric": "m", "slice": None, "value": 90.0, "n": 10, "samples": ids_digest(ids)}
    check = Check("mini", "m", None, agg, None, 2.0, None, False, False, "s.toml", compared=True, stored=stored,
                  snapshot_file="snapshots/test_aggregate[m].json")
    assert check.verdict == "FAIL"
    assert check.problems() == ["m = 80.00 fell below its stored snapshot 90.0 by more than the allowed 2.00 "
                                "(snapshots/test_aggregate[m].json)"]
    within = Check("mini", "m", None, Aggregate(value=88.5, n=10, ids=ids), None, 2.0, None, False, False, "s.toml",
                   compared=True, stored=stored)
    assert within.verdict == "ok"
    damaged = [Check("mini", "m", s, agg, None, 2.0, None, False, False, "s.toml", compared=True,
                     damaged="damaged baseline: X") for s in (None, "k=a", "k=b")]
    assert limit_problems(damaged) == ["m: damaged baseline: X"]


# -- damaged answers and fields of one entry (issue 38) ---------------------------------------------------

DAMAGED_ENTRIES = [
    pytest.param('{"right": true, "value": 100, "a": {"point": "ab"}}', "samples.a.a.point", id="point-string"),
    pytest.param('{"right": true, "value": 100, "a": {"point": [1e400, 0.5]}}', "samples.a.a.point", id="point-inf"),
    pytest.param('{"right": true, "value": 100, "a": {"point": [0.5]}}', "samples.a.a.point", id="point-short"),
    pytest.param('{"right": true, "value": 100, "a": {"point": [true, 0.5]}}', "samples.a.a.point", id="point-bool"),
    pytest.param('{"right": true, "value": 100, "a": {"point": [1e300, 0.5]}}', "samples.a.a.point", id="point-far"),
    pytest.param('{"right": true, "value": 100, "a": {"box": "wxyz"}}', "samples.a.a.box", id="box-string"),
    pytest.param('{"right": true, "value": 100, "a": {"box": [0, 0, 1, 1e400]}}', "samples.a.a.box", id="box-inf"),
    pytest.param('{"right": true, "value": 100, "a": {"raw": 7}}', "samples.a.a.raw", id="raw-number"),
    pytest.param('{"right": true, "value": 100, "a": {"raw": "%s"}}' % ("x" * 10_001), "samples.a.a.raw",
                 id="raw-too-long"),
    pytest.param('{"right": true, "value": 100, "a": {"answer": "%s"}}' % ("x" * 10_001), "samples.a.a.answer",
                 id="answer-too-long"),
    pytest.param('{"right": true, "value": 100, "a": {"verdict": ["yes"]}}', "samples.a.a.verdict",
                 id="verdict-list"),
    pytest.param('{"right": true, "value": 100, "a": {"option": 3}}', "samples.a.a.option", id="option-number"),
    pytest.param('{"right": true, "value": 100, "a": {"answer": {"x": 1}}}', "samples.a.a.answer",
                 id="answer-object"),
    pytest.param('{"right": true, "value": 100, "a": {"refused": "no"}}', "samples.a.a.refused",
                 id="refused-string"),
    pytest.param('{"right": true, "value": 100, "a": {"format_error": 1}}', "samples.a.a.format_error",
                 id="format-error-number"),
    pytest.param('{"right": true, "value": 100, "a": {"raw": null}}', "samples.a.a.raw", id="raw-null"),
    pytest.param('{"right": true, "value": 100, "a": [0.5, 0.5]}', "samples.a.a", id="answer-list"),
    pytest.param('{"right": true, "value": 100, "c": {"iou": 1e400}}', "samples.a.c", id="component-inf"),
    pytest.param('{"right": true, "value": 100, "c": {"iou": "high"}}', "samples.a.c", id="component-string"),
    pytest.param('{"right": true, "value": 100, "c": {"%s": 1}}' % ("k" * 201), "samples.a.c",
                 id="component-name-too-long"),
    pytest.param('{"right": true, "value": 100, "s": [3, 2]}', "samples.a.s", id="stability-order"),
    pytest.param('{"right": true, "value": 1e400}', "samples.a.value", id="value-inf"),
    pytest.param('{"right": 1, "value": 100}', "samples.a.right", id="right-number"),
]


@pytest.mark.parametrize(("entry", "field"), DAMAGED_ENTRIES)
def test_every_damaged_field_of_an_entry_is_damage(tmp_path: Path, entry: str, field: str) -> None:
    """Every field of a baseline entry is checked by type and range on load: a damaged answer (a point of
    letters, an infinite or far-off coordinate, a raw output that is a number or longer than the writer keeps)
    is a damaged baseline naming the file, the sample and the field, never an answer a report later draws."""
    folder = tmp_path / "s"
    (folder / "snapshots").mkdir(parents=True)
    (folder / "samples.json").write_text(f'{{"format": 1, "samples": {{"a": {entry}}}}}')
    base = baseline_mod.load(tmp_path, "s")
    assert base is not None and base.damaged is not None, entry
    assert base.damaged.startswith("damaged baseline: ") and "\n" not in base.damaged
    assert str(folder / "samples.json") in base.damaged and field in base.damaged, base.damaged
    assert "--snapshot-update" in base.damaged


def test_a_damaged_entry_is_one_short_line_however_large(tmp_path: Path) -> None:
    """A damaged entry with a huge key and a huge value is still one line of bounded length."""
    folder = tmp_path / "s"
    (folder / "snapshots").mkdir(parents=True)
    big = "k" * 5000
    (folder / "samples.json").write_text(json.dumps({"format": 1, "samples": {big: {"right": "v" * 5000}}}))
    base = baseline_mod.load(tmp_path, "s")
    assert base is not None and base.damaged is not None and "\n" not in base.damaged
    assert len(base.damaged) < 400 + len(str(folder)) and f"samples.{big[:77]}....right" in base.damaged


@pytest.mark.parametrize("answer", [
    '{"point": [0.5, 0.5], "raw": "(0.5, 0.5)"}', '{"point": [-0.25, 3.5], "raw": "beyond the image"}',
    '{"box": [0.1, 0.2, 0.3, 0.4], "point": [0.2, 0.3]}', '{"verdict": "yes", "refused": true}',
    '{"option": "B", "answer": "Settings", "format_error": true, "raw": ""}', '{"point": [1, 0]}',
    '{"answer": "%s"}' % ("long answer kept by an older writer " * 100),
])
def test_sound_answers_still_load(tmp_path: Path, answer: str) -> None:
    """What the writer stores (and a point beyond the image, which stays a point; a free-text answer longer
    than the writer now keeps, which an older writer stored whole) loads as before."""
    folder = tmp_path / "s"
    (folder / "snapshots").mkdir(parents=True)
    (folder / "samples.json").write_text(f'{{"format": 1, "samples": {{"a": {{"right": true, "value": 100, '
                                         f'"a": {answer}}}}}}}')
    base = baseline_mod.load(tmp_path, "s")
    assert base is not None and base.damaged is None, base.damaged
    stored = base.entries["a"].answer
    assert stored is not None
    cut = baseline_mod.ANSWER_RAW_CHARS
    assert baseline_mod.answer_json(stored) == {k: v[:cut] if isinstance(v, str) else v
                                                for k, v in json.loads(answer).items() if v not in ("", False)}


def test_the_writer_keeps_only_what_the_reader_accepts(tmp_path: Path) -> None:
    """An answer the reader would refuse (a far-off point from a custom adapter, a long free-text answer) is
    cut or left out by the writer, so --snapshot-update never writes a baseline the next run calls damaged."""
    from pytest_uiground.record.geometry import Point
    from pytest_uiground.record.prediction import Prediction
    from pytest_uiground.record.result import SampleResult
    from pytest_uiground.record.score import Score

    pred = Prediction(point=Point(1e300, 0.5), answer="w" * 5000, raw="r" * 5000, latency_ms=1.0)
    rs = [SampleResult(suite="s", id="a", task="point", meta={}, score=Score(0.0, False), prediction=pred)]
    baseline_mod.write(tmp_path, "s", rs, {})
    (tmp_path / "s" / "snapshots").mkdir()
    base = baseline_mod.load(tmp_path, "s")
    assert base is not None and base.damaged is None, base.damaged
    stored = base.entries["a"].answer
    assert stored is not None and stored.point is None
    assert stored.raw == "r" * baseline_mod.ANSWER_RAW_CHARS and stored.answer == "w" * baseline_mod.ANSWER_RAW_CHARS


@pytest.mark.parametrize("answer", ['{"point": "ab"}', '{"point": [1e400, 0.5]}', '{"box": "wxyz"}'])
def test_a_regressed_sample_with_a_damaged_answer_fails_in_one_line(project: Project, xdist: list[str],
                                                                      answer: str) -> None:
    """The crash of issue 38: a sample whose stored answer is damaged, and which then regresses, used to crash
    the writers (TypeError, OverflowError) with no summary.json. Now the run fails with one damaged-baseline
    line naming the sample and the field, and every output is written."""
    ids = project.ids()
    assert project.run("--snapshot-update", xdist=xdist).ret == 0
    samples = base_dir(project) / "samples.json"
    data = json.loads(samples.read_text())
    assert "a" in data["samples"][ids[0]], "the baseline keeps each sample's answer"
    data["samples"][ids[0]]["a"] = json.loads(answer.replace("1e400", "1e999"))
    samples.write_text(json.dumps(data).replace("Infinity", "1e400"))
    result = project.run("--uiground-report", "out", "--uiground-markdown", "summary.md", "--junitxml", "junit.xml",
                         wrong=ids[:1], xdist=xdist)
    out = result.stdout.str()
    no_crash(out)
    assert result.ret == 1, out
    line = f"samples.{ids[0]}.a."
    damaged = [x for x in out.splitlines() if "damaged baseline" in x]
    assert damaged and all(line in x for x in damaged), damaged
    assert "FAIL" in verdict(out)
    summary = strict_json((project.root / "out" / "summary.json").read_text())
    assert summary["verdict"]["status"] == "FAIL" and summary["regressed"] == []
    assert (project.root / "out" / "report.html").is_file()
    assert "— FAIL" in (project.root / "summary.md").read_text()
