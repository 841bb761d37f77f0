"""A 1,581-sample ScreenSpot-Pro replay, with and without ``--uiground-report``, against pytest's floor.

    python perf/bench_replay_report.py [--samples 1581] [--data DIR] [--rounds 1]

Why: replaying outputs made elsewhere should cost what reading the file costs, and the
report should not cost more than the run (issue 25: 32.5 s for a 1,581-sample replay that
decoded every screenshot to learn its size, and 2-2.5 min more for a report drawing a crop
of every sample). This builds a look-alike of ScreenSpot-Pro in the published layout
(``annotations/{app}_{platform}.json`` with ``img_size``, ``images/``) with screens of the
sizes the real set has (1080p to 5K) and a replay file in the ``uground`` (0..1000) form,
about 30 % of the answers inside their box. A handful of screens are drawn and the other
files are hard links to them: every sample has its own path (nothing is shared by key), and
decoding one costs what decoding a real screenshot of that size costs; the folder is kept
in ``--data`` (default: the temporary folder) and reused.

Timed, each in its own pytest process, in the same round: the floor (as many tests that do
nothing), the replay without a report, the replay with ``--uiground-report``. Printed: the
whole process's seconds, each as a ratio to the floor, and the report's cost as the ratio of
the two replays (target: at most 2x).

Measured on the shared 2-core machine (load 7-9), whole pytest processes, one round each
(before = commit 03ea317, after = this branch; ratios to the floor of the same round):
before: floor 3.9 s, replay 192.4 s (48.8x), replay + report 784.8 s (199x): the report 4.08x the run;
after:  floor 5.4-5.9 s, replay 9.3-9.7 s (1.6-1.8x), replay + report 16.3-16.9 s (2.9-3.0x): 1.68-1.82x.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from random import Random

ROOT = Path(__file__).resolve().parents[1]
SIZES = ((3840, 2160), (2560, 1440), (1920, 1080), (2880, 1800), (3456, 2234), (5120, 2880))
APPS = (("vscode", "macos", "Dev"), ("photoshop", "windows", "Creative"), ("autocad", "windows", "CAD"),
        ("matlab", "linux", "Scientific"), ("word", "macos", "Office"), ("linux_common", "linux", "OS"),
        ("inventor", "windows", "CAD"), ("davinci", "macos", "Creative"))
SUITE = """
[suite]
name = "sspro_lookalike"
version = "1"
[loader]
name = "screenspot_pro"
[[metrics]]
name = "accuracy"
tasks = ["point"]
slices = ["group", "application", "ui_type"]
[models.uground]
parser = "pytest_uiground.benchmarks.screenspot.parsers:parse_pro_qwen2vl"
"""
NOOP = """
import pytest


@pytest.mark.parametrize("i", range({n}))
def test_sample(i):
    pass
"""


def draw_screen(path: Path, size: tuple[int, int], seed: int) -> None:
    """A screen with a few dozen labelled widgets: compresses and decodes like a screenshot."""
    from PIL import Image, ImageDraw

    rng = Random(seed)
    img = Image.new("RGB", size, (236, 236, 240))
    draw = ImageDraw.Draw(img)
    for i in range(80):
        x, y = rng.randrange(size[0] - 140), rng.randrange(size[1] - 50)
        shade = rng.randrange(120, 250)
        draw.rectangle((x, y, x + 130, y + 40), fill=(shade, shade - 20, 255 - shade // 2), outline=(0, 0, 0))
        draw.text((x + 6, y + 12), f"widget {i}", fill=(0, 0, 0))
    img.save(path, compress_level=6)


def build(folder: Path, n: int) -> Path:
    """The look-alike dataset and its replay file (reused when already complete)."""
    done = folder / f"done-{n}"
    preds = folder / "replay.jsonl"
    if done.is_file():
        return preds
    rng = Random("sspro-lookalike")
    bases = folder / "bases"
    bases.mkdir(parents=True, exist_ok=True)
    base_of: dict[tuple[int, int], list[Path]] = {}
    for s, size in enumerate(SIZES):
        for v in range(2):
            path = bases / f"{size[0]}x{size[1]}_{v}.png"
            if not path.is_file():
                draw_screen(path, size, 10 * s + v)
            base_of.setdefault(size, []).append(path)
    per_app: dict[str, list[dict[str, object]]] = {}
    lines = []
    for i in range(n):
        app, platform, group = APPS[i % len(APPS)]
        key = f"{app}_{platform}"
        size = SIZES[rng.randrange(len(SIZES))]
        img = folder / "ScreenSpot-Pro" / "images" / key / f"screenshot_{i:05d}.png"
        img.parent.mkdir(parents=True, exist_ok=True)
        if not img.exists():
            os.link(rng.choice(base_of[size]), img)
        w, h = rng.randrange(16, 120), rng.randrange(12, 60)
        x0, y0 = rng.randrange(size[0] - w), rng.randrange(size[1] - h)
        recs = per_app.setdefault(key, [])
        rid = f"{key}_{len(recs)}"
        recs.append({"img_filename": f"{key}/{img.name}", "bbox": [x0, y0, x0 + w, y0 + h],
                     "instruction": f"click widget {i}", "instruction_cn": f"点击 {i}", "id": rid,
                     "application": app, "platform": platform, "img_size": list(size),
                     "ui_type": "text" if i % 3 else "icon", "group": group})
        if rng.random() < 0.3:  # inside the box
            px, py = (x0 + w / 2) / size[0], (y0 + h / 2) / size[1]
        else:
            px, py = rng.random(), rng.random()
        lines.append(json.dumps({"sample_id": f"sspro-{rid}",
                                 "output": f"({round(px * 1000)},{round(py * 1000)})"}))
    ann = folder / "ScreenSpot-Pro" / "annotations"
    ann.mkdir(parents=True, exist_ok=True)
    for key, recs in per_app.items():
        (ann / f"{key}.json").write_text(json.dumps(recs))
    preds.write_text("\n".join(lines) + "\n")
    (folder / "suites" / "sspro_lookalike").mkdir(parents=True, exist_ok=True)
    (folder / "suites" / "sspro_lookalike" / "suite.toml").write_text(SUITE)
    done.write_text("")
    return preds


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return wall, proc.stdout


def last_line(out: str) -> str:
    lines = [line for line in out.splitlines() if " in " in line and ("passed" in line or "failed" in line)]
    return lines[-1] if lines else ""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=1581)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "uiground-sspro-lookalike")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--runs", default="floor,plain,report",
                    help="which of floor, plain (replay) and report (replay + --uiground-report) to time")
    ns = ap.parse_args()
    folder = ns.data / str(ns.samples)
    t0 = time.perf_counter()
    preds = build(folder, ns.samples)
    print(f"look-alike ScreenSpot-Pro of {ns.samples} samples in {folder} ({time.perf_counter() - t0:.1f} s to build)")
    (folder / "floor").mkdir(exist_ok=True)
    (folder / "baselines").mkdir(exist_ok=True)  # empty: nothing to compare against
    (folder / "floor" / "test_noop.py").write_text(NOOP.format(n=ns.samples))
    common = ["-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=", "--benchmark-disable", "-q"]
    replay = [sys.executable, "-m", "pytest", str(folder / "suites" / "sspro_lookalike"), *common,
              "--uiground-cache", "off", "--uiground-data-path", str(folder), "--model", "replay",
              "--uiground-predictions", str(preds), "--uiground-replay-parser", "uground",
              "--uiground-baselines", str(folder / "baselines")]
    runs = ns.runs.split(",")
    nan = float("nan")
    for r in range(ns.rounds):
        floor = plain = with_report = nan
        if "floor" in runs:
            floor, _ = timed([sys.executable, "-m", "pytest", str(folder / "floor" / "test_noop.py"), *common],
                             folder)
            print(f"floor ({ns.samples} tests doing nothing): {floor:.1f} s", flush=True)
        if "plain" in runs:
            plain, out = timed(replay, folder)
            print(f"replay: {plain:.1f} s ({plain / floor:.1f}x the floor) {last_line(out)}", flush=True)
        if "report" in runs:
            with_report, out = timed([*replay, "--uiground-report", str(folder / f"report-{r}")], folder)
            print(f"replay + --uiground-report: {with_report:.1f} s ({with_report / floor:.1f}x the floor) "
                  f"{last_line(out)}", flush=True)
        print(f"round {r + 1}: the report costs {with_report / plain:.2f}x the run (target <= 2x)", flush=True)


if __name__ == "__main__":
    main()
