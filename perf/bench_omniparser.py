"""Time OmniParser's parse per screen on this machine's CPU: the detector, the OCR, the whole parse.

    python perf/bench_omniparser.py --weights PATH/icon_detect/model.pt [--screens DIR] [--threads N]

Why: the seed quotes OmniParser at "~40%, 250 ms" (a GPU figure); docs/omniparser.md reports what
the v2 detector costs on a CPU. Wall and process CPU seconds are printed per screen (CPU time is
the one that holds on a shared machine), then the medians. The first call (model warm-up) is run
once before timing. Timings are never asserted in tests.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", required=True, type=Path)
    ap.add_argument("--screens", type=Path, default=ROOT.parent / "shared" / "data" / "real-screens")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.offline.ocr import OcrGrounder
    from pytest_uiground.models.omniparser.model import Detector, ScreenParser

    screens = sorted(args.screens.glob("*.png")) or sorted((ROOT / "suites/detection_curated/samples").glob("*.png"))
    detector = Detector(args.weights, "cpu", threads=args.threads)
    ocr = OcrGrounder(ModelOptions(name="ocr"))
    print(f"detector loaded in {detector.load_s:.2f} s; input size {detector.imgsz}")
    detector(Image.new("RGB", (640, 400), "white"))  # warm-up
    rows = []
    for path in screens:
        img = Image.open(path).convert("RGB")
        w0, c0 = time.perf_counter(), time.process_time()
        boxes = detector(img)
        w1, c1 = time.perf_counter(), time.process_time()
        ocr.clear_cache()
        lines = ocr.read(img)
        w2, c2 = time.perf_counter(), time.process_time()
        found = ScreenParser(lambda _, b=boxes: b, lambda _, t=lines: t).parse(img)
        icons = sum(e.type == "icon" for e in found)
        rows.append((w1 - w0, c1 - c0, w2 - w1, c2 - c1))
        print(f"{path.name:34} {img.width}x{img.height}  detector {w1 - w0:5.2f} s wall {c1 - c0:5.2f} s cpu  "
              f"ocr {w2 - w1:5.2f} s wall {c2 - c1:5.2f} s cpu  {len(boxes):4} boxes -> {len(found)} elements "
              f"({icons} icons)")
    med = [statistics.median(r[i] for r in rows) for i in range(4)]
    print(f"median per screen: detector {med[0]:.2f} s wall / {med[1]:.2f} s cpu; ocr {med[2]:.2f} s wall / "
          f"{med[3]:.2f} s cpu")


if __name__ == "__main__":
    main()
