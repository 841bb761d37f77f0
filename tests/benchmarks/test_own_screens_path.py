"""The newcomer's path on nine real screenshots (issue 30), in an empty git repository: ``init --from``,
annotations (OCR proposals accepted, one box drawn by hand, instructions typed; written through
:mod:`pytest_uiground.benchmarks.grounding.format`, the module the browser annotator saves with),
``validate`` flags a planted error and is clean once it is fixed, the suite is baselined with ``ocr``,
three samples are added and baselined with ``--uiground-only-new`` (old entries byte-identical) and the
gate passes. Skipped, saying so, where the screenshots are absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from pytest_uiground.benchmarks.grounding import format as fmt

pytestmark = pytest.mark.slow
SCREENS = Path(__file__).resolve().parents[3] / "shared" / "data" / "real-screens"
if not SCREENS.is_dir():
    SCREENS = Path("/work/shared/data/real-screens")


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=900)


def test_the_path_from_nine_screenshots_to_a_gated_suite(tmp_path: Path) -> None:
    shots = sorted(SCREENS.glob("*.png")) if SCREENS.is_dir() else []
    if len(shots) < 9:
        pytest.skip(f"the nine real screenshots are not in {SCREENS}")
    repo = tmp_path / "repo"
    (repo / "screens").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for s in shots:
        (repo / "screens" / s.name).write_bytes(s.read_bytes())
    done = run(repo, "-m", "pytest_uiground", "init", "myscreens", "--from", "screens/")
    assert done.returncode == 0, done.stderr
    assert "python -m pytest_uiground annotate suites/myscreens" in done.stdout
    suite = repo / "suites" / "myscreens"
    # annotate: accept OCR proposals (three per screen), type an instruction for each, draw one box by hand
    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.offline.ocr import OcrGrounder

    read = OcrGrounder(ModelOptions(name="ocr")).read
    lines: list[dict] = []
    for s in shots:
        with Image.open(suite / "screens" / s.name) as img:
            w, h = img.size
            seen: set[str] = set()
            for item in read(img.convert("RGB")):
                if len(item.text) < 4 or item.text.lower() in seen or len(seen) == 3:
                    continue
                seen.add(item.text.lower())
                b = item.box
                lines.append({"image": f"screens/{s.name}", "instruction": f"Click {item.text}",
                              "bbox": [round(b.x0 * w), round(b.y0 * h), round(b.x1 * w), round(b.y1 * h)],
                              "element_type": "text", "app": s.stem.split("_", 1)[1]})
    lines.append({"image": f"screens/{shots[0].name}", "instruction": "Close the window", "bbox": [1850, 0, 1919, 30],
                  "element_type": "icon", "app": shots[0].stem.split("_", 1)[1]})  # drawn by hand
    assert len(lines) >= 20
    for i, line in enumerate(lines):
        line["id"] = f"{Path(line['image']).stem}-{i}"
    planted = dict(lines[0], bbox=[10, 10, 5, 5])
    fmt.write(suite / "annotations.jsonl", [planted, *lines[1:]])
    checked = run(repo, "-m", "pytest_uiground", "validate", "suites/myscreens", "--detector", "none")
    assert checked.returncode == 1 and f"{lines[0]['id']}: box [10, 10, 5, 5] px is degenerate" in checked.stdout
    fmt.write(suite / "annotations.jsonl", lines[:-3])
    checked = run(repo, "-m", "pytest_uiground", "validate", "suites/myscreens", "--detector", "none")
    assert checked.returncode == 0, checked.stdout
    recorded = run(repo, "-m", "pytest", "suites/myscreens", "--model", "ocr", "--snapshot-update", "-q",
                   "-p", "no:cacheprovider")
    assert recorded.returncode == 0, recorded.stdout[-3000:]
    samples = repo / "baselines" / "myscreens" / "samples.json"
    before = [line for line in samples.read_text().splitlines() if line.startswith('  "omniparser')]
    fmt.write(suite / "annotations.jsonl", lines)  # three more samples
    added = run(repo, "-m", "pytest", "suites/myscreens", "--model", "ocr", "--snapshot-update",
                "--uiground-only-new", "-q", "-p", "no:cacheprovider")
    assert added.returncode == 0, added.stdout[-3000:]
    after = samples.read_text()
    assert all(line.rstrip(",") in after for line in before)
    assert len(json.loads(after)["samples"]) == len(lines)
    gate = run(repo, "-m", "pytest", "suites/myscreens", "--model", "ocr", "-q", "-p", "no:cacheprovider")
    assert gate.returncode == 0 and "verdict for myscreens: PASS" in gate.stdout, gate.stdout[-3000:]
