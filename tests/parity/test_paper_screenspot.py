"""Published ScreenSpot-Pro tables, reproduced by replaying the real per-sample outputs behind them.

Two real logs (the project's reference material, ``shared/data/paper-screenspot/`` beside the
checkout, or ``$UIGROUND_PAPER_DATA``; its README names each log's source and blob id; the logs
are not copied into this repository, and the tests skip saying so where they are absent):
Aguvis-7B (0..1 ``pyautogui.click``, read by the
suite's ``normalized`` parser) and Qwen2-VL-7B (0..1000, ``uground``). Each log's 1,581
records become a ScreenSpot-Pro folder in the published layout (annotations per
``{app}_{platform}``, ``img_size``, ``images/``) whose images are PNG *headers* only: any
attempt to decode one fails its sample, so a green run also shows that replay reads sizes
without decoding. The raw outputs are replayed through the shipped suite and every table
``eval_screenspot_pro.py`` wrote (overall, per group, per application, per platform, per
platform and application, with text/icon accuracy and wrong-format counts) must come out
exactly (counts) and to 0.1 points (accuracies).
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, header_only_png

from .test_parity_gui import assert_fraction_slice, correct_num, install_suite, pct

pytestmark = pytest.mark.slow
DATA = Path(os.environ.get("UIGROUND_PAPER_DATA")
            or Path(__file__).resolve().parents[3] / "shared" / "data" / "paper-screenspot")
TOL = 0.1
_AGUVIS = re.compile(r"pyautogui\.click\((?:x=)?(\d+\.\d+)(?:,\s*y=|,\s*)(\d+\.\d+)\)")


def log(name: str) -> dict[str, Any]:
    path = DATA / name
    if not path.is_file():
        pytest.skip(f"the published log {name} is not here ({DATA}): set UIGROUND_PAPER_DATA to the folder "
                    "holding shared/data/paper-screenspot")
    data: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return data


def image_key(path: str) -> str:
    """``{app}_{platform}/{file}``: the logs' image paths differ only in the folder above."""
    return "/".join(path.split("/")[-2:])


def sizes_from_aguvis() -> dict[str, tuple[int, int]]:
    """Every screenshot's size, recovered as ``pred`` / the Aguvis point (all whole numbers)."""
    out = {}
    for rec in log("aguvis-7b_screenspot-pro.json.gz")["details"]:
        m = _AGUVIS.search(rec["raw_response"])
        assert m is not None
        w, h = rec["pred"][0] / float(m[1]), rec["pred"][1] / float(m[2])
        assert abs(w - round(w)) < 1e-3 and abs(h - round(h)) < 1e-3
        out[image_key(rec["img_path"])] = (round(w), round(h))
    return out



def write_dataset(root: Path, details: Sequence[Mapping[str, Any]], sizes: Mapping[str, tuple[int, int]]
                  ) -> list[str]:
    """The ScreenSpot-Pro layout of the log's samples; the dataset's own id of each, in log order."""
    folder = root / "ScreenSpot-Pro"
    per_file: dict[str, list[dict[str, Any]]] = {}
    ids = []
    for rec in details:
        key = image_key(rec["img_path"])
        recs = per_file.setdefault(rec["task_filename"], [])
        rid = f"{rec['task_filename']}_{len(recs)}"
        recs.append({"img_filename": key, "bbox": rec["bbox"], "instruction": rec["prompt_to_evaluate"],
                     "instruction_cn": rec["prompt_to_evaluate"], "id": rid, "application": rec["application"],
                     "platform": rec["platform"], "img_size": list(sizes[key]), "ui_type": rec["ui_type"],
                     "group": rec["group"]})
        image = folder / "images" / key
        image.parent.mkdir(parents=True, exist_ok=True)
        header_only_png(image, sizes[key])
        ids.append(rid)
    (folder / "annotations").mkdir(parents=True)
    for stem, recs in per_file.items():
        (folder / "annotations" / f"{stem}.json").write_text(json.dumps(recs))
    return ids


def replay(project: Project, root: Path, records: Mapping[str, str], parser: str, misses: int,
           *args: str) -> dict[str, Any]:
    name = install_suite(project, "screenspot/pro")
    preds = root / "outputs.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": k, "output": v}) + "\n" for k, v in records.items()))
    result = project.pytester.runpytest_subprocess(
        f"suites/{name}", "-p", "no:cacheprovider", "-p", "no:randomly", "--benchmark-disable", "-q",
        "--uiground-cache", "off", "--uiground-data-path", str(root), "--uiground-report", "out",
        "--model", "replay", "--uiground-predictions", str(preds), "--uiground-replay-parser", parser,
        "--snapshot-update", *args)  # records the baseline (a suite fails closed without one)
    assert result.ret == 0, result.stdout.str()[-3000:]
    outcomes = result.parseoutcomes()  # a wrong answer with no baseline is an expected failure
    assert outcomes["xfailed"] == misses and "errors" not in outcomes and "failed" not in outcomes, outcomes
    metrics: dict[str, Any] = project.summary()["metrics"]["accuracy"]
    return metrics


def check_every_table(m: Mapping[str, Any], published: Mapping[str, Any], details: Sequence[Mapping[str, Any]]
                      ) -> int:
    """Every table of the log against the suite's metric; the number of table entries compared."""
    overall = published["overall"]
    assert m["n"] == overall["num_total"] == 1581
    assert round(m["value"] * m["n"] / 100) == overall["num_correct_action"]
    assert m["value"] == pytest.approx(pct(overall["action_acc"]), abs=TOL)
    assert m["format_errors"] == overall["wrong_format_num"]
    for ui in ("text", "icon"):
        assert m["slices"][f"ui_type={ui}"] == pytest.approx(pct(overall[f"{ui}_acc"]), abs=TOL)
    compared = 1

    def check(label: str, entry: Mapping[str, Any], subset: Sequence[Mapping[str, Any]], typed: str) -> None:
        assert m["slices"][label] == pytest.approx(pct(entry["action_acc"]), abs=TOL), label
        assert m["slice_n"][label] == entry["num_total"], label
        assert correct_num(m, label) == entry["num_correct_action"], label
        assert m["slice_format_errors"][label] == entry["wrong_format_num"], label
        for ui in ("text", "icon"):
            assert_fraction_slice(m, f"{typed}/{ui}", pct(entry[f"{ui}_acc"]),
                                  sum(r["ui_type"] == ui for r in subset))

    for key, entry in published["leaderboard_simple_style"].items():
        g = key.removeprefix("group:")
        check(f"group={g}", entry, [r for r in details if r["group"] == g], f"cell={g}")
        compared += 1
    for key, entry in published["leaderboard_detailed_style"].items():
        a = key.removeprefix("app:")
        check(f"application={a}", entry, [r for r in details if r["application"] == a], f"application_type={a}")
        compared += 1
    for key, entry in published["seeclick_style"].items():
        p = key.split()[0].removeprefix("plat:")
        check(f"platform={p}", entry, [r for r in details if r["platform"] == p], f"platform_type={p}")
        compared += 1
    for key, entry in published["fine_grained"].items():
        p, a = key.split()[0].removeprefix("plat:"), key.split()[1].removeprefix("app:")
        subset = [r for r in details if r["platform"] == p and r["application"] == a]
        check(f"platform_application={p}/{a}", entry, subset, f"platform_application_type={p}/{a}")
        compared += 1
    return compared


def test_aguvis_7b_every_published_table_from_dataset_ids(project: Project, tmp_path: Path) -> None:
    """0..1 answers through ``[models.normalized]``, the file keyed by the dataset's own ids."""
    data = log("aguvis-7b_screenspot-pro.json.gz")
    details = data["details"]
    ids = write_dataset(tmp_path, details, sizes_from_aguvis())
    m = replay(project, tmp_path, {rid: rec["raw_response"] for rid, rec in zip(ids, details, strict=True)},
               "normalized", sum(r["correctness"] != "correct" for r in details))
    assert check_every_table(m, data["metrics"], details) == 1 + 6 + 26 + 3 + 26
    assert m["value"] == pytest.approx(23.21, abs=0.01)  # Aguvis-7B's published 23.2 on ScreenSpot-Pro


def test_qwen2_vl_7b_every_published_table(project: Project, tmp_path: Path, xdist: list[str]) -> None:
    """0..1000 answers with their format errors through ``[models.uground]``, keyed by the suite's ids."""
    data = log("qwen2-vl-7b_screenspot-pro.json.gz")
    details = data["details"]
    ids = write_dataset(tmp_path, details, sizes_from_aguvis())
    m = replay(project, tmp_path, {f"sspro-{rid}": rec["raw_response"] for rid, rec in zip(ids, details, strict=True)},
               "uground", sum(r["correctness"] != "correct" for r in details), *xdist)
    assert check_every_table(m, data["metrics"], details) == 1 + 6 + 26 + 3 + 26
    assert m["value"] == pytest.approx(1.45, abs=0.01)  # 23 of 1,581, 139 of them unreadable
