"""``python -m pytest_uiground matrix``: every model x cropping cell is a pytest run with its own report;
one comparison (terminal, Markdown, HTML); finished cells are reused; a failed cell is reported, not fatal."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_uiground.__main__ import COMMANDS
from pytest_uiground.report import matrix

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tiny_detection(pytester: pytest.Pytester) -> Path:
    suite = (ROOT / "suites" / "detection" / "suite.toml").read_text()
    suite = suite.replace("screens = 40", "screens = 2").replace("targets_per_screen = 6", "targets_per_screen = 3")
    (pytester.path / "suites" / "detection").mkdir(parents=True)
    (pytester.path / "suites" / "detection" / "suite.toml").write_text(suite)
    pytester.makeini("[pytest]\n")
    return pytester.path


@pytest.mark.slow
def test_matrix_runs_every_cell_and_compares_them(tiny_detection: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert COMMANDS["matrix"][0] == "pytest_uiground.report.matrix"
    out = tiny_detection / "m"
    argv = ["suites/detection", "--model", "ocr", "--model", "center", "--model", "no-such-model",
            "--cropping", "none,fixed", "--out", str(out), "--", "-p", "no:randomly"]
    assert matrix.main(argv) == 1  # the unknown model's cells failed; the others ran
    text = capsys.readouterr().out
    cells = sorted(p.name for p in (out / "cells").iterdir())
    assert cells == ["center-fixed", "center-none", "no-such-model-fixed", "no-such-model-none", "ocr-fixed",
                     "ocr-none"]
    for name in ("ocr-none", "ocr-fixed", "center-none", "center-fixed"):
        summary = json.loads((out / "cells" / name / "summary.json").read_text())
        assert summary["n_samples"] == 6
        assert summary["model_fingerprint"].get("cropping", "none") == name.split("-")[1]
    assert not (out / "cells" / "no-such-model-none" / "summary.json").exists()
    assert "4 of 6 cells ran" in text and "failed: no-such-model \u00b7 none, no-such-model \u00b7 fixed" in text
    # The terminal table: one row per cell, the detection rate by size, attempts, latency; the cropping gains.
    rows = {tuple(line.split()[:2]) for line in text.splitlines()}
    assert {("ocr", "none"), ("ocr", "fixed"), ("center", "fixed")} <= rows
    header = next(line for line in text.splitlines() if line.startswith("model"))
    assert "size=32to100" in header and header.index("dataset=") < header.index("size=")
    for column in ("detection_rate", "mean_iou", "attempts_to_success", "p50 ms", "p95 ms"):
        assert column in header
    assert "what cropping adds over none" in text
    ocr_fixed = json.loads((out / "cells" / "ocr-fixed" / "summary.json").read_text())
    ocr_none = json.loads((out / "cells" / "ocr-none" / "summary.json").read_text())
    gain = ocr_fixed["metrics"]["detection_rate"]["value"] - ocr_none["metrics"]["detection_rate"]["value"]
    gain_row = next(line for line in text.split("what cropping adds over none")[1].splitlines()
                    if line.startswith("ocr "))
    assert gain_row.split()[2] == f"{gain:+.1f}"
    md = (out / "matrix.md").read_text()
    assert "| ocr | fixed | ran |" in md and "no-such-model \u00b7 none: failed (exit 4)" in md
    html = (out / "matrix.html").read_text()
    assert "accuracy vs latency" in html and html.count('<svg class="plot"') >= 7
    # Again: every finished cell is reused, not run.
    assert matrix.main(argv) == 1
    again = capsys.readouterr().out
    assert again.count("reused in") == 4 and re.search(r"ocr\s+none\s+reused \(cached\)", again)


def test_bad_cropping_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        matrix.main(["s", "--model", "ocr", "--cropping", "none,zoom", "--out", "x"])
    assert exc.value.code == 2
    assert "--cropping 'none,zoom': zoom is not one of none, fixed, screenseeker" in capsys.readouterr().err


def test_cell_names_are_stable_and_tell_options_apart() -> None:
    a = matrix._cell_name("omniparser", ["--model-path", "w1"], "none")
    assert a == matrix._cell_name("omniparser", ["--model-path", "w1"], "none")
    assert a != matrix._cell_name("omniparser", ["--model-path", "w2"], "none")
    assert matrix._cell_name("pkg.mod:create", [], "fixed") == "pkg_mod_create-fixed"
