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

import json
from pathlib import Path

import pytest
from conftest import Project
from parity.test_paper_osworld_g import ORIGINAL_REFUSALS, is_refusal_row, log, replay, write_benchmark

from pytest_uiground.gate.against import pair
from pytest_uiground.gate.stats import mcnemar_exact
from pytest_uiground.models.base import ModelOptions
from pytest_uiground.options import RunOptions
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
    broken.stderr.fnmatch_lines(["*--uiground-against: *theirs.jsonl:1: not a replay record*"])


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
