"""``--uiground-against FILE``: this run beside a published run, sample by sample, never touching the gate.

End to end on real published runs (Gelato's evaluation logs, ``mlfoundations/Gelato@1f83dad
evaluation/logs/``, read in place from ``shared/data/paper-osworld-g``; skipped, saying so, where
absent): Gelato-30B's OSWorld-G answers (refusal prompt, all 564) are this run, replayed through the
shipped suite; GTA1-7B's published answers (510 rows, no refusal samples) are the run beside it. The
paired table and the flips each way must be exactly those of the two logs' own ``is_correct``; the
54 refusal samples GTA1 was never asked have no pair; the committed baseline stays byte for byte and
the verdict is the gate's alone. Also: the paired counts and McNemar on a small table, and the
start-up errors.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import Project
from parity.test_paper_osworld_g import DATA, ORIGINAL_REFUSALS, is_refusal_row, log, replay, write_benchmark
from parity.test_parity_gui import install_suite

from pytest_uiground.gate.against import pair
from pytest_uiground.gate.stats import mcnemar_exact
from pytest_uiground.models.base import ModelOptions
from pytest_uiground.options import RunOptions
from pytest_uiground.report.compare import main as compare
from pytest_uiground.run.against import parser_of

GTA1 = "grounding_eval_osworld-g-gta1-7b-2507.json.gz"


def test_pairs_flips_and_mcnemar() -> None:
    ours = {"a": True, "b": True, "c": False, "d": False, "e": True, "f": None, "g": True}
    theirs = {"a": True, "b": False, "c": True, "d": False, "e": False, "f": True}
    got = pair("their.jsonl", "gelato", ours, theirs, list("abcdefg"))
    assert (got.both, got.ours_only, got.theirs_only, got.neither, got.missing) == (1, ("b", "e"), ("c",), 1,
                                                                                     ("f", "g"))
    assert got.n == 5 and got.accuracy("ours") == 60.0 and got.accuracy("theirs") == 40.0
    assert got.p_value == mcnemar_exact(1, 2) == 1.0
    text = "\n".join(got.lines(shown=1))
    assert "only this run 2, only theirs 1" in text and "right here, wrong in theirs (2): b ... and 1 more" in text
    assert json.loads(json.dumps(got.to_json()))["ours_only"] == ["b", "e"]


def test_the_parser_defaults_to_the_replay_parser() -> None:
    replayed = RunOptions(model=ModelOptions(name="replay", replay_parser="gelato"), against=Path("x.jsonl"))
    assert parser_of(replayed) == "gelato"
    assert parser_of(RunOptions(model=ModelOptions(name="replay", replay_parser="gelato"), against=Path("x"),
                                against_parser="gta1")) == "gta1"


@pytest.mark.slow
def test_start_up_errors_name_the_fix(project: Project, tmp_path: Path) -> None:
    preds = tmp_path / "theirs.jsonl"
    preds.write_text('{"sample_id": "x", "output": "(1, 2)"}\n')
    no_parser = project.run("--uiground-against", str(preds))
    assert no_parser.ret == 4
    no_parser.stderr.fnmatch_lines(["*--uiground-against *theirs.jsonl: which family's reader reads its answers? "
                                    "Give --uiground-against-parser NAME*"])
    preds.write_text("not json\n")
    broken = project.run("--uiground-against", str(preds), "--uiground-against-parser", "gelato")
    assert broken.ret == 4
    broken.stderr.fnmatch_lines(["*--uiground-against: *theirs.jsonl: not a published run in a layout this reads "
                                 "(line 1 is not JSON*Known layouts: replay*screenspot-script*gelato-eval*"])
    preds.write_text('{"sample_id": "x", "output": "(1, 2)"}\n{"sample_id": "y"}\n')
    torn = project.run("--uiground-against", str(preds), "--uiground-against-parser", "gelato")
    assert torn.ret == 4
    torn.stderr.fnmatch_lines(["*--uiground-against: *theirs.jsonl:2: not a replay record (missing field 'output')*"])


@pytest.mark.slow
def test_a_published_run_beside_a_replayed_one(project: Project, tmp_path: Path) -> None:
    ours_rows = log(ORIGINAL_REFUSALS)["sample_results"]
    theirs_rows = log(GTA1)["sample_results"]
    ids, unasked = write_benchmark(tmp_path, ours_rows, [])
    assert not unasked and len(ids) == 564
    by_key = {(r["img_filename"], r["instruction"]): sid for r, sid in zip(ours_rows, ids, strict=True)}
    assert len(by_key) == 564, "each sample is known by its image and instruction"
    theirs_file = tmp_path / "gta1.jsonl"
    theirs_file.write_text("".join(json.dumps({"sample_id": by_key[(r["img_filename"], r["instruction"])],
                                               "output": r["response"]}) + "\n" for r in theirs_rows))
    outputs = {sid: row["response"] for sid, row in zip(ids, ours_rows, strict=True)}
    replay(project, tmp_path, outputs, "gelato", "--snapshot-update")
    baseline = {p: p.read_bytes() for p in sorted((project.root / "baselines").rglob("*")) if p.is_file()}
    assert baseline

    summary, _, out = replay(project, tmp_path, outputs, "gelato", "--uiground-against", str(theirs_file),
                             "--uiground-against-parser", "gta1", update=False)
    ours = {sid: bool(r["is_correct"]) for sid, r in zip(ids, ours_rows, strict=True)}
    theirs = {by_key[(r["img_filename"], r["instruction"])]: bool(r["is_correct"]) for r in theirs_rows}
    refusal_ids = {sid for sid, r in zip(ids, ours_rows, strict=True) if is_refusal_row(r)}
    paired = [sid for sid in ids if sid in theirs]
    want_ours_only = sorted(s for s in paired if ours[s] and not theirs[s])
    want_theirs_only = sorted(s for s in paired if theirs[s] and not ours[s])
    got = summary["against"]
    assert got["n"] == len(paired) == 510 and set(got["missing"]) == refusal_ids and len(refusal_ids) == 54
    assert sorted(got["ours_only"]) == want_ours_only and sorted(got["theirs_only"]) == want_theirs_only
    assert got["both"] == sum(ours[s] and theirs[s] for s in paired)
    assert got["theirs_accuracy"] == pytest.approx(100 * 316 / 510)  # GTA1's log: 316 right of its 510
    assert got["mcnemar_p"] == pytest.approx(mcnemar_exact(len(want_theirs_only), len(want_ours_only)))
    assert len(want_ours_only) > len(want_theirs_only) > 0  # Gelato-30B beats GTA1-7B, not on every sample
    assert (f"only this run {len(want_ours_only)}, only theirs {len(want_theirs_only)}") in out
    assert "uiground verdict for osworld_g: PASS" in out
    page = (project.root / "out" / "report.html").read_text()
    assert '<h2 id="against">Beside a published run</h2>' in page
    assert f"<tr><th>only this run</th><td>{len(want_ours_only)}</td></tr>" in page
    assert f"<tr><th>only theirs</th><td>{len(want_theirs_only)}</td></tr>" in page and want_theirs_only[0] in page
    assert {p: p.read_bytes() for p in sorted((project.root / "baselines").rglob("*")) if p.is_file()} == baseline


@pytest.mark.slow
@pytest.mark.parametrize("parser", [[], ["--uiground-against-parser", "gta1"]], ids=["own-reading", "gta1"])
def test_a_published_log_read_in_place(project: Project, tmp_path: Path, parser: list[str]) -> None:
    """GTA1-7B's log as Gelato published it (gzipped, ``sample_results``, no ids), given as it is: matched by
    screenshot and instruction; read by GTA1's family, its verdicts are the log's own on every sample, and
    the flips are those of the two logs; on the authors' own reading (``predicted_click``) too."""
    ours_rows = log(ORIGINAL_REFUSALS)["sample_results"]
    theirs_rows = log(GTA1)["sample_results"]
    ids, _ = write_benchmark(tmp_path, ours_rows, [])
    by_key = {(r["img_filename"], r["instruction"]): sid for r, sid in zip(ours_rows, ids, strict=True)}
    outputs = {sid: row["response"] for sid, row in zip(ids, ours_rows, strict=True)}
    summary, _, out = replay(project, tmp_path, outputs, "gelato", "--uiground-against", str(DATA / GTA1),
                                   *parser)
    got = summary["against"]
    ours = {sid: bool(r["is_correct"]) for sid, r in zip(ids, ours_rows, strict=True)}
    theirs = {by_key[(r["img_filename"], r["instruction"])]: bool(r["is_correct"]) for r in theirs_rows}
    assert got["layout"] == "gelato-eval" and got.get("unmatched", 0) == 0 and got["n"] == 510
    assert len(got["missing"]) == 54  # the refusal samples GTA1 was never asked
    # the authors' point (predicted_click) scored here gives the log's verdict on all 510: nothing differs
    assert "disagree" not in got
    assert sorted(got["ours_only"]) == sorted(s for s in theirs if ours[s] and not theirs[s])
    assert sorted(got["theirs_only"]) == sorted(s for s in theirs if theirs[s] and not ours[s])
    assert got["parser"] == ("gta1" if parser else "the log's own reading")
    assert "differs from this suite's scoring of the same answer on 0 sample(s)" in out
    assert "uiground verdict for osworld_g" in out


SIZES = {"vscode_windows/a.png": (2000, 1000), "vscode_windows/b.png": (1000, 500)}
DETAILS = [  # a ScreenSpot-Pro look-alike: (image, instruction, bbox in pixels)
    ("vscode_windows/a.png", "Open the file", [100, 100, 200, 200]),
    ("vscode_windows/a.png", "Save", [400, 100, 500, 200]),
    ("vscode_windows/b.png", "Save", [10, 10, 50, 50]),
    ("vscode_windows/b.png", "Close the tab", [900, 0, 1000, 40]),
]


@pytest.mark.slow
def test_a_screenspot_script_log_on_its_own_reading(project: Project, tmp_path: Path, xdist: list[str],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """An ``eval_screenspot_pro.py`` log (records one per line, gzipped, as OmniParser published its own), built
    here: matched by screenshot and instruction, the authors' ``pred`` scored by the suite; a record whose
    published verdict the suite's rule contradicts is listed, a ``wrong_format`` one is a miss, a record of
    a screenshot this run has not is counted as unmatched. Then ``compare`` puts the same log beside the
    finished run's report on the log's own verdicts, and refuses replay answers (no verdict) by name."""
    from parity.test_paper_screenspot import write_dataset

    details = [{"img_path": f"./ScreenSpot-Pro/images/{img}", "task_filename": img.split("/")[0], "group": "Dev",
                "platform": "windows", "application": "vscode", "ui_type": "text", "prompt_to_evaluate": text,
                "bbox": box} for img, text, box in DETAILS]
    ids = write_dataset(tmp_path, details, SIZES)
    # ours: right on samples 0 and 2 (0..1 points, read by the suite's `normalized` parser)
    ours = {f"sspro-{rid}": out for rid, out in zip(ids, ["pyautogui.click(x=0.075, y=0.15)",
                                                          "pyautogui.click(x=0.9, y=0.9)",
                                                          "pyautogui.click(x=0.03, y=0.06)",
                                                          "pyautogui.click(x=0.1, y=0.9)"], strict=True)}
    theirs = [  # (details index, pred in pixels, the log's verdict)
        (0, [10, 10], "wrong"), (1, [450, 150], "correct"), (2, None, "wrong_format"),
        (3, [10, 490], "correct"),  # outside the box, yet published as correct: listed as a disagreement
    ]
    lines = [json.dumps({**{k: v for k, v in details[i].items()}, "pred": pred, "raw_response": {"id": i},
                         "correctness": verdict}) for i, pred, verdict in theirs]
    lines.append(json.dumps({**details[0], "img_path": "./ScreenSpot-Pro/images/x/other.png", "pred": [1, 1],
                             "raw_response": "", "correctness": "wrong"}))
    log_file = tmp_path / "logs_sspro.json.gz"
    log_file.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    name = install_suite(project, "screenspot/pro")
    preds = tmp_path / "ours.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": k, "output": v}) + "\n" for k, v in ours.items()))
    result = project.pytester.runpytest_subprocess(
        f"suites/{name}", "-p", "no:cacheprovider", "-p", "no:randomly", "--benchmark-disable",
        "--uiground-cache", "off", "--uiground-data-path", str(tmp_path), "--uiground-report", "out",
        "--model", "replay", "--uiground-predictions", str(preds), "--uiground-replay-parser", "normalized",
        "--snapshot-update", "--uiground-against", str(log_file), *xdist)
    out = result.stdout.str()
    assert result.ret == 0, out[-3000:]
    got = project.summary()["against"]
    sid = [f"sspro-{rid}" for rid in ids]
    assert got["layout"] == "screenspot-script" and got["unmatched"] == 1 and got["n"] == 4
    assert (got["both"], got["ours_only"], got["theirs_only"], got["neither"]) == (0, [sid[0], sid[2]], [sid[1]], 1)
    assert got["disagree"] == [sid[3]]
    assert got["theirs_accuracy"] == 25.0 and got["ours_accuracy"] == 50.0
    assert "1 of its records matched no sample here" in out and f"their verdict differs from this suite's (1): " \
        f"{sid[3]}" in out
    page = (project.root / "out" / "report.html").read_text()
    assert "<tr><th>their records matched to no sample</th><td>1</td></tr>" in page
    assert "<tr><th>their verdict differs from this suite&#x27;s</th><td>1</td></tr>" in page
    assert f"their own verdict differs from this suite's: {sid[3]}</p>" in page
    assert "(screenspot-script), read as the log&#x27;s own reading" in page
    # compare: the same log beside the finished run, on its authors' own verdicts (no dataset needed), where
    # the record published as correct counts as theirs
    capsys.readouterr()
    assert compare([str(project.root / "out"), str(log_file)]) == 0
    text = capsys.readouterr().out
    assert "4 paired samples" in text and "read as its authors' own verdicts" in text
    assert "only this run 2, only theirs 2, neither 0" in text and f"wrong here, right in theirs (2): {sid[1]}, " \
        f"{sid[3]}" in text and "1 of its records matched no sample here" in text
    replay_file = tmp_path / "r.jsonl"
    replay_file.write_text('{"sample_id": "a", "output": "(1, 2)"}\n')
    assert compare([str(project.root / "out"), str(replay_file)]) == 2
    assert compare([str(log_file)]) == 2
    err = capsys.readouterr().err
    assert "replay answers carry no verdict" in err and "give a --uiground-report folder first" in err


@pytest.mark.slow
def test_a_published_screenspot_pro_log_read_in_place(project: Project, tmp_path: Path) -> None:
    """Aguvis-7B's published ScreenSpot-Pro log (``eval_screenspot_pro.py``'s ``details``, gzipped, no ids) beside
    a replay of Qwen2-VL-7B's published answers: all 1,581 records matched by screenshot and instruction, the
    authors' points scored by the suite give their own ``correctness`` on every sample, and the flips are
    those of the two logs."""
    from parity.test_paper_screenspot import DATA as SS_DATA
    from parity.test_paper_screenspot import log as ss_log
    from parity.test_paper_screenspot import sizes_from_aguvis, write_dataset

    ours_rows = ss_log("qwen2-vl-7b_screenspot-pro.json.gz")["details"]
    theirs_rows = ss_log("aguvis-7b_screenspot-pro.json.gz")["details"]
    ids = write_dataset(tmp_path, ours_rows, sizes_from_aguvis())
    name = install_suite(project, "screenspot/pro")
    preds = tmp_path / "ours.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": f"sspro-{rid}", "output": r["raw_response"]}) + "\n"
                             for rid, r in zip(ids, ours_rows, strict=True)))
    result = project.pytester.runpytest_subprocess(
        f"suites/{name}", "-p", "no:cacheprovider", "-p", "no:randomly", "--benchmark-disable", "-q",
        "--uiground-cache", "off", "--uiground-data-path", str(tmp_path), "--uiground-report", "out",
        "--model", "replay", "--uiground-predictions", str(preds), "--uiground-replay-parser", "uground",
        "--snapshot-update", "--uiground-against", str(SS_DATA / "aguvis-7b_screenspot-pro.json.gz"))
    assert result.ret == 0, result.stdout.str()[-3000:]
    got = project.summary()["against"]
    key = {(r["img_path"].rsplit("/", 1)[-1], r["prompt_to_evaluate"]): f"sspro-{rid}"
           for rid, r in zip(ids, ours_rows, strict=True)}
    ours = {f"sspro-{rid}": r["correctness"] == "correct" for rid, r in zip(ids, ours_rows, strict=True)}
    theirs = {key[(r["img_path"].rsplit("/", 1)[-1], r["prompt_to_evaluate"])]: r["correctness"] == "correct"
              for r in theirs_rows}
    assert got["layout"] == "screenspot-script" and got["n"] == 1581 and not got["missing"]
    assert "unmatched" not in got and "disagree" not in got
    assert sorted(got["ours_only"]) == sorted(s for s in ours if ours[s] and not theirs[s])
    assert sorted(got["theirs_only"]) == sorted(s for s in ours if theirs[s] and not ours[s])
    assert got["theirs_accuracy"] == pytest.approx(100 * 367 / 1581)  # Aguvis-7B's log: 367 right
