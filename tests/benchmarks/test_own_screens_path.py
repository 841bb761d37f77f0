"""The newcomer's path on nine real screenshots (issue 30), in an empty git repository: ``init --from``,
annotations (OCR proposals accepted and instructions typed, written through
:mod:`pytest_uiground.screens.format`; one box drawn by hand, undone and redone through the
annotator's store, as the browser page saves it: the page itself is driven in headless Chromium on the
same screenshots by ``tests/annotator/test_annotator_page.py``),
``validate`` flags a planted error and is clean once it is fixed, the suite is baselined with ``ocr``,
three samples are added and baselined with ``--uiground-only-new`` (old entries byte-identical), the
gate passes, and the same annotations exported by COCO and Label Studio import back to the same samples (and
``import --append`` of them into the suite is refused: they are there already).
Skipped, saying so, where the screenshots are absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from pytest_uiground.screens import format as fmt

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
    assert len(lines) >= 20
    for i, line in enumerate(lines):
        line["id"] = f"{Path(line['image']).stem}-{i}"
    planted = dict(lines[0], bbox=[10, 10, 5, 5])
    fmt.write(suite / "annotations.jsonl", [planted, *lines[1:]])
    # The box drawn by hand goes through the annotator's store, as the page saves it: drawn, undone, redone.
    drawn = {"id": f"{shots[0].stem}-{len(lines)}", "image": f"screens/{shots[0].name}",
             "instruction": "Close the window", "bbox": [1850, 0, 1919, 30], "element_type": "icon",
             "app": shots[0].stem.split("_", 1)[1]}
    lines.append(drawn)
    pages_save(suite / "annotations.jsonl", drawn, repo)
    assert [line.raw for line in fmt.read(suite / "annotations.jsonl")] == [planted, *lines[1:]], \
        "what the page saved is what the loader reads"
    checked = run(repo, "-m", "pytest_uiground", "validate", "suites/myscreens", "--detector", "none")
    assert checked.returncode == 1 and f"{lines[0]['id']}: box [10, 10, 5, 5] px is degenerate" in checked.stdout
    fmt.write(suite / "annotations.jsonl", lines[:-3])
    checked = run(repo, "-m", "pytest_uiground", "validate", "suites/myscreens", "--detector", "none")
    assert checked.returncode == 0, checked.stdout
    recorded = run(repo, "-m", "pytest", "suites/myscreens", "--model", "ocr", "--snapshot-update", "-q",
                   "-p", "no:cacheprovider")
    assert recorded.returncode == 0, recorded.stdout[-3000:]
    samples = repo / "baselines" / "myscreens" / "samples.json"
    before = json.loads(samples.read_text())["samples"]
    assert len(before) == len(lines) - 3  # every sample the first update recorded, whatever the screenshots' names
    fmt.write(suite / "annotations.jsonl", lines)  # three more samples
    added = run(repo, "-m", "pytest", "suites/myscreens", "--model", "ocr", "--snapshot-update",
                "--uiground-only-new", "-q", "-p", "no:cacheprovider")
    assert added.returncode == 0, added.stdout[-3000:]
    after = json.loads(samples.read_text())["samples"]
    assert {k: after[k] for k in before} == before  # the old entries kept as they were
    assert len(after) == len(lines)
    gate = run(repo, "-m", "pytest", "suites/myscreens", "--model", "ocr", "-q", "-p", "no:cacheprovider")
    assert gate.returncode == 0 and "verdict for myscreens: PASS" in gate.stdout, gate.stdout[-3000:]
    # The same annotations exported by COCO and Label Studio and imported back give the same samples.
    same = {(line["image"], line["instruction"], tuple(line["bbox"])) for line in lines}
    for kind, export in (("coco", coco_export(repo / "screens", lines)),
                         ("label-studio", label_studio_export(repo / "screens", lines))):
        out = repo / kind / "annotations.jsonl"
        got = run(repo, "-m", "pytest_uiground", "import", kind, str(export), "--out", str(out))
        assert got.returncode == 0, got.stderr
        back = {("screens/" + Path(str(d["image"])).name, d["instruction"], tuple(round(v) for v in d["bbox"]))
                for d in (line.raw or {} for line in fmt.read(out))}
        assert back == same, (kind, sorted(back ^ same)[:4])
        # the docs' route imports into the suite itself (--append): an export of what it has already is refused,
        # naming the sample it repeats, and the suite's file is left as it was (issue 39)
        kept = (suite / "annotations.jsonl").read_bytes()
        again = run(repo, "-m", "pytest_uiground", "import", kind, str(export), "--out",
                    "suites/myscreens/annotations.jsonl", "--append")
        assert again.returncode == 1 and "is already a sample (annotations.jsonl:" in again.stderr, again.stderr
        assert (suite / "annotations.jsonl").read_bytes() == kept and not (suite / "images").exists()


def pages_save(path: Path, sample: dict, repo: Path) -> None:
    """Insert ``sample`` through the annotator's store (the page's save), undo it (delete), redo it."""
    from pytest_uiground.screens.annotator.store import Store

    store = Store(path)
    with Image.open(repo / "suites" / "myscreens" / sample["image"]) as img:
        sizes = {sample["image"]: img.size}
    end = len(store.read().entries)
    snap = store.change(store.read().revision, [{"op": "insert", "index": end, "sample": sample}], sizes)
    snap = store.change(snap.revision, [{"op": "delete", "index": end, "old": sample}], sizes)
    assert len(snap.entries) == end, "undone"
    store.change(snap.revision, [{"op": "insert", "index": end, "sample": sample}], sizes)


def coco_export(folder: Path, lines: list[dict]) -> Path:
    """A COCO export (CVAT's COCO 1.0: the instruction in each annotation's attributes) of ``lines``."""
    names = sorted({Path(line["image"]).name for line in lines})
    images = []
    for i, name in enumerate(names):
        with Image.open(folder / name) as img:
            images.append({"id": i + 1, "file_name": name, "width": img.width, "height": img.height})
    anns = [{"id": k + 1, "image_id": names.index(Path(line["image"]).name) + 1, "category_id": 1,
             "bbox": [line["bbox"][0], line["bbox"][1], line["bbox"][2] - line["bbox"][0],
                      line["bbox"][3] - line["bbox"][1]], "attributes": {"instruction": line["instruction"]}}
            for k, line in enumerate(lines)]
    path = folder / "instances_default.json"
    path.write_text(json.dumps({"images": images, "annotations": anns, "categories": [{"id": 1, "name": "ui"}]}))
    return path


def label_studio_export(folder: Path, lines: list[dict]) -> Path:
    """A Label Studio JSON export of ``lines``: percent boxes, a per-region instruction textarea, local files."""
    tasks = []
    for t, name in enumerate(sorted({Path(line["image"]).name for line in lines})):
        with Image.open(folder / name) as img:
            w, h = img.size
        result: list[dict] = []
        for k, line in enumerate(x for x in lines if Path(x["image"]).name == name):
            x1, y1, x2, y2 = line["bbox"]
            rid = f"r{t}-{k}"
            result += [{"id": rid, "type": "rectanglelabels", "from_name": "label", "to_name": "image",
                        "original_width": w, "original_height": h,
                        "value": {"x": 100 * x1 / w, "y": 100 * y1 / h, "width": 100 * (x2 - x1) / w,
                                  "height": 100 * (y2 - y1) / h, "rectanglelabels": ["ui"]}},
                       {"id": rid, "type": "textarea", "from_name": "instruction", "to_name": "image",
                        "value": {"text": [line["instruction"]]}}]
        tasks.append({"id": t + 1, "data": {"image": f"/data/local-files/?d={name}"},
                      "annotations": [{"result": result}]})
    path = folder / "export.json"
    path.write_text(json.dumps(tasks))
    return path
