"""Records the reference scores although they look wrong are samples here, with a note naming them.

Replaying MAI-UI-8B's published runs over the real annotations showed two such quirks: OSWorld-G's
refined file has record ``9bQOfLzvdu-0`` with an empty instruction (so every refined run had a
sample error, which also blocked ``--snapshot-update``), and MMBench-GUI L2 records 197 and 2331
have an empty ``app_name`` (two answers the authors scored right became errors). The look-alike
writers produce both quirks with ``quirks=True``; a missing field is still a record error. The note is
the plugin's own (terminal, ``summary.json``), never a Python warning: this repository, like many, sets
``filterwarnings = ["error"]``, under which a warning stopped the whole suite at collection (issue 38).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Project

# Pillow before pytester snapshots sys.modules (its extension modules must not load twice).
from PIL import Image  # noqa: F401

from pytest_uiground.benchmarks.mmbench_gui import loader as mm
from pytest_uiground.benchmarks.mmbench_gui.lookalike import write_mmbench_gui
from pytest_uiground.benchmarks.osworld_g import loader as og
from pytest_uiground.benchmarks.osworld_g.lookalike import write_osworld_g
from pytest_uiground.suite.loading import LoaderContext, collecting_quirks

SUITES = Path(__file__).parents[2] / "suites"


def ctx(data: Path) -> LoaderContext:
    return LoaderContext("t", Path("."), data)


def test_osworld_g_refined_empty_instruction_is_a_sample_with_a_note(tmp_path: Path) -> None:
    fx = write_osworld_g(tmp_path, records=8, quirks=True)
    first = fx.written[0].record["id"]
    with collecting_quirks() as notes:
        refined = og.load({"instructions": "refined"}, ctx(tmp_path))
    assert len(notes) == 1, notes
    assert (f"OSWorld-G_refined.json record 0 (id '{first}'): field 'instruction' is ''; scored as the official "
            "runners") in notes[0], notes
    assert all(s.invalid is None for s in refined), [s.invalid for s in refined if s.invalid]
    assert refined[0].instruction == "" and refined[0].target.box is not None
    assert all(s.instruction for s in refined[1:])
    # The original file has no quirk, so no note.
    with collecting_quirks() as notes:
        original = og.load({}, ctx(tmp_path))
    assert notes == []
    assert all(s.invalid is None and s.instruction for s in original)


def test_osworld_g_missing_instruction_is_still_a_record_error(tmp_path: Path) -> None:
    good = {"id": "A-0", "image_path": "A.png", "image_size": [64, 48], "instruction": "x", "box_type": "bbox",
            "box_coordinates": [1, 1, 5, 5]}
    write_osworld_g(tmp_path, records=[good, {**good, "id": "A-1", "instruction": None},
                                       {**{k: v for k, v in good.items() if k != "instruction"}, "id": "A-2"}])
    samples = {s.id: s for s in og.load({}, ctx(tmp_path))}
    assert samples["osworld-g-A-0"].invalid is None
    assert "record 1 (id 'A-1'): field 'instruction': expected text, got None" in (samples["osworld-g-A-1"].invalid
                                                                                     or "")
    assert "field 'instruction': expected text, got None" in (samples["osworld-g-A-2"].invalid or "")


def test_mmbench_l2_empty_app_name_is_a_sample_with_a_note(tmp_path: Path) -> None:
    fx = write_mmbench_gui(tmp_path, quirks=True)
    quirky = [w for w in fx.l2 if w.record["app_name"] == ""]
    assert len(quirky) == 2 and all("d41d8cd9" in w.record["image_path"] for w in quirky)
    with collecting_quirks() as texts:
        samples = {s.id: s for s in mm.load_l2({}, ctx(fx.folder))}
    assert len(texts) == len(quirky)
    for w in quirky:
        index = w.record["index"]
        assert any(f"(index {index}, image '{w.record['image_path']}'): field 'app_name' is ''" in t for t in texts)
        s = samples[w.sample_id]
        assert s.invalid is None and s.target.box is not None and "app_name" not in s.meta
        assert s.meta["grounding_type"] == w.record["grounding_type"]
    assert all(s.invalid is None for s in samples.values())
    assert {w.record["grounding_type"] for w in quirky} == {"basic", "advanced"}


def test_mmbench_missing_app_name_is_still_a_record_error(tmp_path: Path) -> None:
    good = {"index": 0, "image_path": "a.png", "instruction": "click OK", "bbox": [0.1, 0.1, 0.3, 0.2],
            "image_size": [200, 100], "data_type": "text", "platform": "os_web", "app_name": "shop",
            "grounding_type": "basic"}
    records = [good, {**{k: v for k, v in good.items() if k != "app_name"}, "index": 1},
               {**good, "index": 2, "app_name": 7}]
    fx = write_mmbench_gui(tmp_path, l1_records=1, l2_records=records)
    samples = {s.id: s for s in mm.load_l2({}, ctx(fx.folder))}
    assert samples["l2-0"].invalid is None
    assert "field 'app_name': expected text, got None" in (samples["l2-1"].invalid or "")
    assert "field 'app_name': expected text, got 7" in (samples["l2-2"].invalid or "")


def _install(project: Project, folder: str, shipped: str, edit: tuple[str, str] | None = None) -> None:
    dest = project.root / "suites" / folder
    dest.mkdir(parents=True)
    text = (SUITES / shipped / "suite.toml").read_text()
    if edit:
        assert edit[0] in text
        text = text.replace(*edit)
    (dest / "suite.toml").write_text(text)
    shutil.rmtree(project.root / "suites" / "mini", ignore_errors=True)


def _replay(project: Project, answers: dict[str, str]) -> Path:
    path = project.root / "p.jsonl"
    path.write_text("".join(json.dumps({"sample_id": k, "output": v}) + "\n" for k, v in answers.items()))
    return path


@pytest.mark.slow
def test_quirky_records_run_and_update_the_baseline(project: Project, tmp_path: Path, xdist: list[str]) -> None:
    """Both quirks end to end in a strict project (``filterwarnings = error``): ``--snapshot-update``
    succeeds (a sample error would refuse it), then the gate passes, the note naming the record in the
    terminal and in ``summary.json``, no sample error and no warning turned into a collection error."""
    og_fx = write_osworld_g(tmp_path / "og", records=8, quirks=True)
    mm_fx = write_mmbench_gui(tmp_path / "mm", quirks=True)
    _install(project, "osworld_g", "osworld_g", ('instructions = "original"', 'instructions = "refined"'))
    _install(project, "mmbench_gui_l2", "mmbench_gui/l2")
    assert "error" in (project.root / "tox.ini").read_text()  # the project is strict
    project.monkeypatch.setenv("LMUData", str(project.root / "no-lmudata"))
    for suite, data, written, parser in (("osworld_g", og_fx.folder, og_fx.written, "qwen3-vl"),
                                         ("mmbench_gui_l2", mm_fx.folder, mm_fx.l2, "uground")):
        preds = _replay(project, {w.sample_id: "(500, 500)" for w in written})
        args = [f"suites/{suite}", "-p", "no:cacheprovider", "-p", "no:randomly", "--benchmark-disable",
                "--uiground-cache", "off", "--uiground-data-path", str(data), "--model", "replay",
                "--uiground-predictions", str(preds), "--uiground-replay-parser", parser, "--uiground-report", "out",
                *xdist]
        update = project.pytester.runpytest_subprocess(*args, "--snapshot-update")
        assert update.ret == 0, update.stdout.str()[-3000:]
        result = project.pytester.runpytest_subprocess(*args)
        out = result.stdout.str()
        assert result.ret == 0, out[-3000:]
        assert "sample errors: 0" in out and "error during collection" not in out, out[-3000:]
        quirk = "'instruction' is ''" if suite == "osworld_g" else "'app_name' is ''"
        assert "data quirks:" in out and quirk in out and "Warning" not in out, out[-3000:]
        summary = json.loads((project.root / "out" / suite / "summary.json").read_text()) \
            if (project.root / "out" / suite).is_dir() else project.summary()
        assert any(quirk in q for q in summary["quirks"]), summary.get("quirks")
        rows = [json.loads(line) for line in (project.root / "out" / "samples.jsonl").read_text().splitlines()]
        assert len(rows) == len(written) and not [r["id"] for r in rows if r.get("error")]


REPO = Path(__file__).parents[2]


@pytest.mark.slow
def test_quirky_look_alikes_collect_and_score_from_this_repository_root(tmp_path: Path) -> None:
    """From this repository's root, under its own ``filterwarnings = ["error"]``: the quirky MMBench-GUI L2
    look-alike collects and scores (no collection error, no sample error); the only reason the run fails
    is the missing baseline (none is committed for it here). OSWorld-G's refined file is chosen in
    suite.toml, so its strict run is the pytester project's above."""
    mm_fx = write_mmbench_gui(tmp_path / "mm", quirks=True)
    assert '"error"' in (REPO / "pyproject.toml").read_text()
    for suite, data, written, parser in (("mmbench_gui/l2", mm_fx.folder, mm_fx.l2, "uground"),):
        preds = tmp_path / f"{suite.replace('/', '-')}.jsonl"
        preds.write_text("".join(json.dumps({"sample_id": w.sample_id, "output": "(500, 500)"}) + "\n"
                                 for w in written))
        assert not (REPO / "baselines" / "mmbench_gui_l2").exists()  # else the run below would pass
        run = subprocess.run(
            [sys.executable, "-m", "pytest", f"suites/{suite}", "-p", "no:cacheprovider", "-p", "no:randomly",
             "--benchmark-disable", "--uiground-cache", "off", "--uiground-data-path", str(data), "--model", "replay",
             "--uiground-predictions", str(preds), "--uiground-replay-parser", parser, "-q"],
            cwd=REPO, capture_output=True, text=True, timeout=600, env={**os.environ, "LMUData": str(tmp_path)})
        out = run.stdout + run.stderr
        assert "error during collection" not in out and "Traceback" not in out, out[-3000:]
        assert "sample errors: 0" in out and "data quirks:" in out, out[-3000:]
        assert run.returncode == 1 and "FAIL: no baseline (record one with --snapshot-update)" in out, out[-3000:]
