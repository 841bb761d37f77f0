"""The gate under faults (issue 22): damaged baselines, full disks, signals, odd inputs.

Each test names the break it covers ("Break N"); every one failed on the code before the fix.
Filesystem faults are simulated portably, so they also run as root in CI: a file or folder in
the place of another (EISDIR, ENOTDIR), and a fake ``os.fsync`` raising ENOSPC after a given
number of calls (installed by the project's conftest.py when ``UIGROUND_FSYNC_OK`` is set).
Lifecycle scenarios run with and without ``-n 2``.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path
from typing import Any

import numpy  # noqa: F401  (imported before any pytester test: pytester's sys.modules snapshot then keeps
import pytest  # it, and numpy cannot be loaded twice in one process when a later file imports it)
from conftest import Project, interrupted_run

from pytest_uiground.gate import baseline as baseline_mod

pytestmark = pytest.mark.slow

SNAP = "test_aggregate[grounding_accuracy].json"

# The project's conftest: a disk that fills up after UIGROUND_FSYNC_OK successful fsyncs (every
# output of the plugin is fsync'd before it counts as written, so this is where ENOSPC shows).
FAULTS_CONFTEST = '''
import errno, os

_real_fsync = os.fsync
_calls = [0]


def _fsync(fd):
    limit = os.environ.get("UIGROUND_FSYNC_OK")
    if limit:
        _calls[0] += 1
        if _calls[0] > int(limit):
            raise OSError(errno.ENOSPC, "No space left on device")
    return _real_fsync(fd)


os.fsync = _fsync
'''


def strict_json(text: str) -> Any:
    """JSON as the standard has it (Python's parser accepts NaN and Infinity; CI tools do not)."""
    def reject(name: str) -> None:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=reject)


def base_dir(project: Project) -> Path:
    return project.root / "baselines" / "mini"


def verdict(out: str) -> str:
    lines = [line for line in out.splitlines() if line.startswith("uiground verdict for mini:")]
    assert len(lines) == 1, out
    return lines[0]


def no_crash(out: str) -> None:
    assert "INTERNALERROR" not in out and "Traceback" not in out, out


# -- the baseline is one thing ---------------------------------------------------------------------

def test_deleted_samples_json_fails_the_checks_instead_of_passing(project: Project, xdist: list[str]) -> None:
    """Break 1: a deleted samples.json with the snapshots still there passed a 60-point drop."""
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
    """Break 2: ENOSPC during --snapshot-update left the two halves disagreeing, and a traceback."""
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
    """Break 5: a truncated samples.json said "rewrite it with --snapshot-update", which then failed too."""
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
    """Break 6: NaN or 1e308 in samples.json was an INTERNALERROR; 150 and -5 were accepted."""
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
    """Break 6, end to end: the run fails naming the file and the fix; exit 1, not 3."""
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
    """Breaks 7 and 8: deleted snapshots/ failed 15 checks as "fell below" while the summaries said PASS;
    a snapshot edited to 99.5 exited 1 while the verdict line and the Markdown said PASS."""
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
    """Break 7: one missing snapshot is named as missing (with the fix), never as a drop."""
    assert project.run("--snapshot-update").ret == 0
    (base_dir(project) / "snapshots" / SNAP).unlink()
    result = project.run("-rf")
    out = result.stdout.str()
    assert result.ret == 1 and f"its stored snapshot {base_dir(project) / 'snapshots' / SNAP} is missing" in out
    assert "1 of" in verdict(out) and "checks failed" in verdict(out)


def test_read_only_baselines_root_is_a_clear_start_up_error(project: Project) -> None:
    """Break 16: an unwritable baselines root with --snapshot-update was an INTERNALERROR at configure.
    Simulated with a file where the folder should be (chmod does not stop root)."""
    (project.root / "baselines").write_text("not a folder")
    result = project.run("--snapshot-update")
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "INTERNALERROR" not in result.stdout.str() + err
    assert "cannot write under the baselines folder" in err and "--uiground-baselines" in err


def test_update_removes_the_snapshots_of_removed_metrics(tmp_path: Path) -> None:
    """Break 17: a metric removed from suite.toml kept its stale snapshot after --snapshot-update."""
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


# -- outputs under faults --------------------------------------------------------------------------

def test_disk_full_on_the_report_keeps_the_verdict_and_the_junit_xml(project: Project, xdist: list[str]) -> None:
    """Break 3: ENOSPC on the report folder turned a passing run into exit 1 with a traceback, no JUnit XML."""
    project.pytester.makeconftest(FAULTS_CONFTEST)
    project.monkeypatch.setenv("UIGROUND_FSYNC_OK", "3")
    result = project.run("--uiground-report", "out", "--junitxml", "junit.xml", xdist=xdist)
    out = result.stdout.str()
    no_crash(out)
    assert result.ret == 0, out
    # each output that could not be written is one line (samples.jsonl stops; the summary fails)
    assert out.count("uiground: could not write samples.jsonl") == 1 and "No space left on device" in out
    assert "Traceback" not in out
    assert "PASS" in verdict(out)
    assert (project.root / "junit.xml").is_file()
    lines = (project.root / "out" / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(strict_json(line)["id"] for line in lines)  # whole lines only


def test_unwritable_report_folder_is_one_line_and_every_sample_runs(project: Project, xdist: list[str]) -> None:
    """Break 3: a read-only report folder was an INTERNALERROR after the first sample (1 of 40 ran, exit 3).
    Simulated with a folder where samples.jsonl and summary.json should be (chmod does not stop root)."""
    ids = project.ids()
    (project.root / "out" / "samples.jsonl").mkdir(parents=True)
    (project.root / "out" / "summary.json").mkdir()
    result = project.run("--uiground-report", "out", "--junitxml", "junit.xml", xdist=xdist)
    out = result.stdout.str()
    no_crash(out)
    assert result.ret == 0, out
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] > len(ids) and "failed" not in outcomes  # every sample ran, and the checks
    assert out.count("uiground: could not write samples.jsonl") == 1
    assert out.count("uiground: could not write the report") == 1
    assert (project.root / "junit.xml").is_file()


def test_report_folder_in_use_is_refused_at_start_up(project: Project) -> None:
    """Break 13: two runs writing one report folder corrupted samples.jsonl (there was no lock)."""
    lock = baseline_mod.ReportLock(project.root / "out")
    assert lock.acquire() is None
    try:
        second = project.run("--uiground-report", "out")
        err = second.stderr.str()
        assert second.ret == pytest.ExitCode.USAGE_ERROR
        assert "another pytest run is writing the report folder" in err and str(os.getpid()) in err
        assert not (project.root / "out" / "samples.jsonl").exists()
    finally:
        lock.release()
    assert project.run("--uiground-report", "out").ret == 0
    assert not (project.root / "out" / baseline_mod.ReportLock.NAME).exists()




def test_sigterm_is_an_interrupt(project: Project, xdist: list[str]) -> None:
    """Break 4: SIGTERM (timeout, docker stop, a cancelled CI job) left a new samples.jsonl beside the
    previous run's summary, and no JUnit XML."""
    ids = project.ids()
    proc, out = interrupted_run(project, signal.SIGTERM, "--junitxml", "junit.xml", *xdist)
    log = project.root / "out" / "samples.jsonl"
    assert proc.returncode == 2, out
    assert "INTERNALERROR" not in out
    summary = strict_json((project.root / "out" / "summary.json").read_text())
    assert summary["interrupted"] is True
    done = [strict_json(line)["id"] for line in log.read_text().splitlines()]
    assert 3 <= summary["n_samples"] == len(done) < len(ids)
    assert (project.root / "junit.xml").is_file()


def test_sigterm_to_the_whole_process_group_is_an_interrupt(project: Project, xdist: list[str]) -> None:
    """Break 4, the other way it arrives: a CI runner or a shell stopping a job signals every process of
    the group, the xdist workers included. The workers' deaths must not read as crashes to replace, nor
    leave a summary of another run beside this run's records."""
    ids = project.ids()
    proc, out = interrupted_run(project, signal.SIGTERM, "--junitxml", "junit.xml", *xdist, group=True)
    log = project.root / "out" / "samples.jsonl"
    assert proc.returncode == 2, out
    assert "INTERNALERROR" not in out and "replacing crashed worker" not in out
    summary = strict_json((project.root / "out" / "summary.json").read_text())
    assert summary["interrupted"] is True
    done = [strict_json(line)["id"] for line in log.read_text().splitlines()]
    assert 3 <= summary["n_samples"] == len(done) < len(ids)
    assert (project.root / "junit.xml").is_file()


# -- numbers, images and inputs --------------------------------------------------------------------

NAN_MODEL = '''
import os
from fakemodels import Scripted
from pytest_uiground.record.geometry import Point
from pytest_uiground.record.prediction import Prediction

class NaNs(Scripted):
    def predict(self, samples):
        out = super().predict(samples)
        bad = set(os.environ["UIGROUND_NAN"].split(","))
        return [Prediction(point=Point(float("nan"), float("inf")), raw="") if s.id in bad else p
                for s, p in zip(samples, out)]

def create(options):
    return NaNs(options)
'''


def test_non_finite_prediction_is_a_format_error_and_outputs_are_standard_json(project: Project) -> None:
    """Break 11: a NaN or inf point wrote non-standard NaN/Infinity into samples.jsonl and broke report.html."""
    project.pytester.makepyfile(nanmodel=NAN_MODEL)
    ids = project.ids()
    project.monkeypatch.setenv("UIGROUND_NAN", ",".join(ids[:2]))
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "nanmodel:create", "-p", "no:cacheprovider", "--uiground-report", "out")
    out = result.stdout.str()
    assert "format errors: 2;" in out
    records = [strict_json(line) for line in (project.root / "out" / "samples.jsonl").read_text().splitlines()]
    bad = {r["id"]: r for r in records if r["id"] in ids[:2]}
    assert len(bad) == 2 and all(r["prediction"]["format_error"] and r["prediction"]["point"] is None
                                 for r in bad.values())
    assert "nan" in bad[ids[0]]["prediction"]["raw"]
    strict_json((project.root / "out" / "summary.json").read_text())
    assert "could not be rendered" not in out and (project.root / "out" / "report.html").is_file()


def test_truncated_png_is_refused_before_it_is_sent(tmp_path: Path) -> None:
    """Break 10: a truncated PNG was sent to the server without a decode check, and scored."""
    from PIL import Image

    from pytest_uiground.models.openai.wire import encode_image
    from pytest_uiground.record.image import ImageError, ImageRef

    path = tmp_path / "screen.png"
    Image.effect_noise((64, 48), 64).convert("RGB").save(path)  # noise: the pixel data spans the file
    whole = path.read_bytes()
    assert encode_image(ImageRef.from_path(path)).size == (64, 48)
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ImageError, match="could not be decoded"):
        encode_image(ImageRef.from_path(path))


def test_animated_gif_leaks_no_file_handle(tmp_path: Path) -> None:
    """Break 12: an animated GIF left its file open (a ResourceWarning, exit 1 under filterwarnings = error)."""
    import gc
    import warnings

    from PIL import Image

    from pytest_uiground.record.image import ImageRef

    path = tmp_path / "anim.gif"
    frames = [Image.new("P", (32, 24), i) for i in range(3)]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=50, loop=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        img = ImageRef.from_path(path).load()
        assert img.mode == "RGB" and img.size == (32, 24)
        del img
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)], [str(w.message) for w in caught]


def test_markdown_cells_are_escaped(tmp_path: Path) -> None:
    """Break 14: a slice value with '|' moved the FAIL cell out of its column; images and HTML from
    metadata passed into the CI job summary."""
    from pytest_uiground.report.markdown import cell, code

    hostile = "a|b ![t](https://x/y.png) <img src=x onerror=alert(1)> `tick`"
    escaped = cell(hostile)
    assert "|" not in escaped.replace("\\|", "")
    assert "![" not in escaped and "<img" not in escaped and "&lt;img" in escaped
    assert code("id`with`ticks").count("`") == 2
    row = f"| {cell('grounding_accuracy · os=a|b')} | 1 | FAIL |"
    assert row.replace("\\|", "").count("|") == 4  # the FAIL cell stays in its column


def test_markdown_summary_of_a_hostile_slice_keeps_its_columns(tmp_path: Path) -> None:
    """Break 14, rendered: a check whose slice value holds '|' and HTML keeps nine columns."""
    from pytest_uiground.gate.checks import Check
    from pytest_uiground.gate.metrics import Aggregate
    from pytest_uiground.report.markdown import SuiteSection, render

    agg = Aggregate(value=40.0, n=10, ids=tuple(f"s{i}" for i in range(10)))
    checks = [Check("mini", "grounding_accuracy", "os=a|b<img src=x>", agg, 50.0, 2.0, None, False, False, "s.toml")]
    text = render([SuiteSection("mini", "m![x](y)", None, checks, None, [], [])], env={})
    rows = [line for line in text.splitlines() if line.startswith("| grounding_accuracy")]
    assert len(rows) == 1 and rows[0].replace("\\|", "").count("|") == 10
    assert "**FAIL" in rows[0].split("|")[-2] and "<img" not in text
    assert "model `m![x](y)`" in text  # inside a code span: shown as text, never rendered as an image


def test_predictions_file_damage_fails_once_at_start_up(project: Project, xdist: list[str]) -> None:
    """Break 15: a damaged --uiground-predictions file failed every test with the same message."""
    ids = project.ids()
    good = [json.dumps({"sample_id": i, "output": "(500, 500)"}) for i in ids]
    preds = project.root / "preds.jsonl"
    args = ["--model", "replay", "--uiground-replay-parser", "uground", "--uiground-predictions", str(preds)]
    preds.write_text("\n".join([*good[:3], '{"sample_id": "x", "output": ', *good[3:]]) + "\n")
    result = project.pytester.runpytest_subprocess("suites/mini", "-p", "no:cacheprovider", *args, *xdist)
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert err.count(f"{preds}:4: not a replay record") == 1
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()
    preds.write_bytes(b"\xef\xbb\xbf" + ("\n".join(good) + "\n").encode())  # a BOM (PowerShell, Notepad)
    accepted = project.pytester.runpytest_subprocess("suites/mini", "-p", "no:cacheprovider", *args, *xdist)
    out = accepted.stdout.str()
    assert "sample errors: 0" in out and "missing: no record" not in out


def test_bom_in_suite_toml_is_named(tmp_path: Path) -> None:
    """Break 15: a BOM in suite.toml read "Invalid statement (at line 1, column 1)" without naming it."""
    from conftest import SUITE_TOML

    from pytest_uiground.suite.config import SuiteConfigError, load_suite_config

    path = tmp_path / "suite.toml"
    path.write_bytes(b"\xef\xbb\xbf" + SUITE_TOML.format(loader="synthetic", floor=10.0).encode())
    with pytest.raises(SuiteConfigError, match="byte-order mark"):
        load_suite_config(path)
    path.write_text(SUITE_TOML.format(loader="synthetic", floor=10.0))
    assert load_suite_config(path).name == "mini"


def test_sample_ids_are_checked_with_fullmatch() -> None:
    """Break 18: the id "trail\\n" passed the id check ('$' matches before a final newline)."""
    from pytest_uiground.record.geometry import Box
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample, Target, check_sample_ids

    def sample(sid: str) -> Sample:
        return Sample(sid, ImageRef.from_source("k", lambda: b""), "x", "point", Target(box=Box(0, 0, 1, 1)))

    check_sample_ids([sample("trail")], source="t")
    with pytest.raises(ValueError, match=r"sample id 'trail\\n' is not usable"):
        check_sample_ids([sample("trail\n")], source="t")


LOADERS = '''
from pytest_uiground.benchmarks.synthetic.loader import load

def gen(options, ctx):
    yield from load({"seed": 1, "screens": 1}, ctx)

def dicts(options, ctx):
    return [{"id": "a", "instruction": "x"}]
'''


@pytest.mark.parametrize(("loader", "message"), [
    ("gen", "returned generator, expected a list of pytest_uiground.record.sample.Sample"),
    ("dicts", "returned a dict at index 0, expected a pytest_uiground.record.sample.Sample"),
])
def test_loader_contract_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loader: str, message: str) -> None:
    """Break 19: a generator loader got "no sample has the key 'k'"; a dict loader a raw AttributeError."""
    from pytest_uiground.suite.loading import SuiteLoadError, load_suite

    (tmp_path / "faultloaders.py").write_text(LOADERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    suite = tmp_path / loader / "suite.toml"
    suite.parent.mkdir()
    suite.write_text(f'[suite]\nname = "{loader}"\nversion = "1"\n[loader]\nname = "faultloaders:{loader}"\n'
                     '[[metrics]]\nname = "acc"\ntasks = ["point"]\nslices = ["difficulty"]\n')
    with pytest.raises(SuiteLoadError, match=f"loader 'faultloaders:{loader}' {message}"):
        load_suite(suite)


def test_served_model_identity_is_checked_and_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Break 9: a server answering as another model was accepted; the fingerprint named what was asked for."""
    pytest.importorskip("openai")
    from chat_server import ChatServer, Reply

    from pytest_uiground.models.openai.client import OpenAIChatModel
    from pytest_uiground.record.geometry import Box
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample, Target

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    from PIL import Image

    Image.new("RGB", (40, 30)).save(tmp_path / "s.png")
    sample = Sample("s1", ImageRef.from_path(tmp_path / "s.png"), "the button", "point", Target(box=Box(0, 0, 1, 1)))

    def answering_as(name: str) -> Reply:
        body = {"id": "c", "object": "chat.completion", "model": name,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "(500, 500)"},
                             "finish_reason": "stop"}]}
        return Reply(body=json.dumps(body).encode())

    for reply_model, ok in ((None, False), ("m-2026-01-01", True)):
        with ChatServer(lambda body: answering_as("m-2026-01-01")) as srv:
            model = OpenAIChatModel(api_base=srv.url, api_key="k" * 12, served_model="m", parser="uground",
                                    request_timeout=5.0, max_retries=0, reply_model=reply_model)
            try:
                (pred,) = model.predict([sample])
                fingerprint = model.fingerprint()
            finally:
                model.close()
        assert fingerprint["answered_as"] == ["m-2026-01-01"]
        if ok:
            assert pred.error is None and pred.point is not None
        else:
            assert pred.error is not None and "answered as model 'm-2026-01-01'" in pred.error
            assert "--uiground-served-model-reply" in pred.error


def test_snapshot_drop_without_paired_data_fails_and_is_shown_once() -> None:
    """Break 8, the check itself: a number below its stored snapshot fails even where no paired
    comparison exists (a mean of other metrics); a reason all checks share is printed once."""
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
