"""Gelato's and GTA1's published OSWorld-G runs, replayed: every figure, over 564 and over 510.

The logs (mlfoundations/Gelato@1f83dad ``evaluation/logs/``, in ``shared/data/paper-osworld-g`` beside the
checkout or ``$UIGROUND_PAPER_DATA``; read in place, never copied; the tests skip, saying so, where they
are absent) hold each answer, the authors' verdict (``is_correct``), the box (``[x1, y1, x2, y2]``
pixels; a polygon's flat vertex list; ``[0, 0, 0, 0]`` on a refusal sample) and the screenshot's size.
Each log becomes an OSWorld-G folder in the published layout (records ``<image>-<k>``, a bbox as
``[x, y, w, h]``, PNG *headers* only), its answers are replayed through the shipped suite with the
family the authors ran (``gelato``, ``gta1``), and:

* every sample's verdict equals the log's ``is_correct``;
* the suite's refusal policy gives both published denominators in one run: ``accuracy`` over all 564
  (refusals counted, the official rule and Gelato's README) and ``accuracy_refusals_excluded`` over
  the 510 (the logs' own ``accuracy``); ``--uiground-refusals exclude`` swaps them and changes the
  dataset fingerprint;
* each published figure is the computed one rounded *or* truncated (:mod:`.published` says which).

The logs run without refusals (``gelato``, ``gta1``) hold 510 rows: the 54 refusal samples were never
asked. Gelato's README still divides by 564 (67.19, 56.02): they count as wrong, here as an empty
answer (a format error) on each refusal record, whose text comes from the refusal-included log of the
same instructions.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, header_only_png

from pytest_uiground.models import families

from .published import assert_published, percent
from .test_parity_gui import install_suite

pytestmark = pytest.mark.slow
DATA = Path(os.environ.get("UIGROUND_PAPER_DATA")
            or Path(__file__).resolve().parents[3] / "shared" / "data" / "paper-osworld-g")
ORIGINAL_REFUSALS = "grounding_eval_osworld-g-gelato-30b-refusal_included.json.gz"
REFINED_REFUSALS = "grounding_eval_osworld-g-refined_gelato-30b_refusal_included.json.gz"

# log, family, refusal-record source, (correct, rows), the published figures: over 564 and over 510
RUNS = {
    "gelato-30b": ("grounding_eval_osworld-g-gelato-30b.json.gz", "gelato", ORIGINAL_REFUSALS, (379, 510),
                   "67.19", "74.31"),
    "gelato-30b-refusal": (ORIGINAL_REFUSALS, "gelato", ORIGINAL_REFUSALS, (390, 564), "69.15", None),
    "gelato-30b-refined-refusal": (REFINED_REFUSALS, "gelato", REFINED_REFUSALS, (421, 564), "74.65", None),
    "gta1-7b": ("grounding_eval_osworld-g-gta1-7b-2507.json.gz", "gta1", ORIGINAL_REFUSALS, (316, 510), "56.02",
                "61.96"),
    "gta1-7b-refined": ("grounding_eval_osworld-g-refined-gta1-7b-2507.json.gz", "gta1", REFINED_REFUSALS,
                        (374, 510), "66.31", "73.33"),
}


def log(name: str) -> dict[str, Any]:
    path = DATA / name
    if not path.is_file():
        pytest.skip(f"the published log {name} is not here ({DATA}): set UIGROUND_PAPER_DATA to the folder "
                    "holding shared/data/paper-osworld-g")
    data: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return data


def is_refusal_row(row: Mapping[str, Any]) -> bool:
    return list(row["bbox"]) == [0, 0, 0, 0]


def record_of(row: Mapping[str, Any], rid: str) -> dict[str, Any]:
    """The OSWorld-G record behind a log row (the log's box is Gelato's ``bbox_xyxy``)."""
    box = [float(v) for v in row["bbox"]]
    rec: dict[str, Any] = {"id": rid, "image_path": row["img_filename"], "image_size": list(row["original_resolution"]),
                           "instruction": row["instruction"]}
    if is_refusal_row(row):
        rec.update(box_type="refusal", box_coordinates=[0, 0, 0, 0])
    elif len(box) == 4:
        rec.update(box_type="bbox", box_coordinates=[box[0], box[1], box[2] - box[0], box[3] - box[1]])
    else:
        rec.update(box_type="polygon", box_coordinates=box)
    return rec


def write_benchmark(root: Path, rows: Sequence[Mapping[str, Any]], extra: Sequence[Mapping[str, Any]]
                    ) -> tuple[list[str], list[str]]:
    """``root/benchmark`` from the log's rows (and ``extra`` refusal rows it lacks); the sample ids of each."""
    folder = root / "benchmark"
    (folder / "images").mkdir(parents=True)
    per_image: dict[str, int] = {}
    records, ids = [], []
    for row in [*rows, *extra]:
        stem = row["img_filename"].rsplit(".", 1)[0]
        k = per_image[stem] = per_image.get(stem, -1) + 1
        records.append(record_of(row, f"{stem}-{k}"))
        ids.append(f"osworld-g-{stem}-{k}")
        image = folder / "images" / row["img_filename"]
        if not image.exists():
            header_only_png(image, tuple(row["original_resolution"]))
    for name in ("OSWorld-G.json", "OSWorld-G_refined.json"):
        (folder / name).write_text(json.dumps(records), encoding="utf-8")
    (folder / "classification_result.json").write_text(json.dumps({"classified": {}}), encoding="utf-8")
    return ids[:len(rows)], ids[len(rows):]


def replay(project: Project, root: Path, outputs: Mapping[str, str], family: str, *args: str, update: bool = True
           ) -> tuple[dict[str, Any], dict[str, dict[str, Any]], str]:
    """Replay ``outputs`` through the OSWorld-G suite; ``update``: record the baseline in the same run (a suite
    fails closed without one), off for a run that must leave a recorded baseline as it is."""
    name = install_suite(project, "osworld_g")
    preds = project.root / "outputs.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": k, "output": v}) + "\n" for k, v in outputs.items()))
    result = project.pytester.runpytest_subprocess(
        f"suites/{name}", "-p", "no:cacheprovider", "-p", "no:randomly", "--benchmark-disable",
        "--uiground-cache", "off", "--uiground-data-path", str(root / "benchmark"), "--uiground-report", "out",
        "--model", "replay", "--uiground-predictions", str(preds), "--uiground-replay-parser", family,
        *(["--snapshot-update"] if update else []), *args)
    out = result.stdout.str()
    assert result.ret == 0, out[-3000:]
    rows = {r["id"]: r for r in map(json.loads, (project.root / "out" / "samples.jsonl").read_text().splitlines())}
    return project.summary(), rows, out


def correct_of(metric: Mapping[str, Any]) -> int:
    return round(metric["value"] * metric["n"] / 100)


@pytest.mark.parametrize("run", list(RUNS))
def test_every_published_figure_and_verdict(project: Project, tmp_path: Path, run: str) -> None:
    file, family, refusal_file, (correct, n_rows), over_564, over_510 = RUNS[run]
    rows = log(file)["sample_results"]
    assert (sum(r["is_correct"] for r in rows), len(rows)) == (correct, n_rows)
    extra = [r for r in log(refusal_file)["sample_results"] if is_refusal_row(r)] if n_rows == 510 else []
    assert len(extra) in (0, 54) and sum(map(is_refusal_row, rows)) == (54 if n_rows == 564 else 0)
    fam = families.get(family)
    assert all(fam.input_size(tuple(r["original_resolution"])) == tuple(r["resized_resolution"]) for r in rows)
    ids, unasked = write_benchmark(tmp_path, rows, extra)
    outputs = {sid: row["response"] for sid, row in zip(ids, rows, strict=True)} | dict.fromkeys(unasked, "")
    summary, records, out = replay(project, tmp_path, outputs, family)

    got = {sid: bool(records[sid]["score"]["correct"]) for sid in ids}
    differ = [(sid, row["response"]) for sid, row in zip(ids, rows, strict=True) if got[sid] != row["is_correct"]]
    assert not differ, differ[:10]
    assert not any(records[sid]["score"]["correct"] for sid in unasked)

    counted, excluded = summary["metrics"]["accuracy"], summary["metrics"]["accuracy_refusals_excluded"]
    right_refusals = sum(r["is_correct"] and is_refusal_row(r) for r in rows)
    assert (correct_of(counted), counted["n"]) == (correct, 564)
    assert (correct_of(excluded), excluded["n"]) == (correct - right_refusals, 510)
    assert counted["value"] == pytest.approx(float(percent(correct, 564)), abs=1e-4)
    assert_published(percent(correct, 564), over_564, f"{run} over 564")
    if over_510 is not None:
        assert_published(percent(correct, 510), over_510, f"{run} over 510")
        assert log(file)["accuracy"] == pytest.approx(correct / 510)  # the log's own figure
    assert summary["provenance"]["refusals"] == "count"
    assert "refusal policy 'count': accuracy (564, refusals counted); accuracy_refusals_excluded (510, refusals " \
           "excluded)" in out
    if run == "gelato-30b-refusal":  # 15 answers 'refusal', 11 of them on refusal samples (no family read
        assert right_refusals == 11 and summary["refusals"] == 15  # them before: 67.20 instead of 69.15)
    if run == "gelato-30b-refined-refusal":
        assert right_refusals == 10 and summary["refusals"] == 12


def test_the_refusal_policy_swaps_the_denominators(project: Project, tmp_path: Path) -> None:
    """``--uiground-refusals exclude``: the headline over 510, the counted figure beside it, another fingerprint."""
    file, family, refusal_file, (correct, _), over_564, over_510 = RUNS["gelato-30b"]
    rows = log(file)["sample_results"]
    extra = [r for r in log(refusal_file)["sample_results"] if is_refusal_row(r)]
    ids, unasked = write_benchmark(tmp_path, rows, extra)
    outputs = {sid: row["response"] for sid, row in zip(ids, rows, strict=True)} | dict.fromkeys(unasked, "")
    counted, _, _ = replay(project, tmp_path, outputs, family)
    summary, _, out = replay(project, tmp_path, outputs, family, "--uiground-refusals", "exclude")
    m = summary["metrics"]
    assert (correct_of(m["accuracy"]), m["accuracy"]["n"]) == (correct, 510)
    assert (correct_of(m["accuracy_refusals_counted"]), m["accuracy_refusals_counted"]["n"]) == (correct, 564)
    assert "accuracy_refusals_excluded" not in m
    assert_published(Fraction(m["accuracy"]["value"]).limit_denominator(1000), over_510 or "", "excluded")
    assert summary["metrics"]["accuracy"]["selection"]["refusals"] == "exclude"
    assert summary["provenance"]["refusals"] == "exclude"
    assert summary["provenance"]["dataset_fingerprint"] != counted["provenance"]["dataset_fingerprint"]
    assert "refusal policy 'exclude': accuracy (510, refusals excluded); accuracy_refusals_counted (564" in out
    # The box_type slices stay over the samples each metric keeps: no refusal slice when they are left out.
    assert "box_type=refusal" not in m["accuracy"]["slices"]
    assert over_564 == "67.19"
