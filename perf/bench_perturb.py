"""What a perturbation costs, and what the embedded ``ocr`` model loses under each, on real screenshots.

    python perf/bench_perturb.py [--screens DIR] [--specs scale:0.75,invert,...] [--per-screen 12] [--cost-only]
                                 [--model ocr|omniparser] [--model-path DIR]

Why: docs/robustness.md quotes the cost of a perturbed sample (the transform on top of the model's own
prediction) and the ``ocr`` model's drop per perturbation on real interfaces. The real screenshots
(``shared/data/real-screens``, CC-BY-4.0, read in place) carry no annotations, so the targets are the
``ocr`` model's own text lines on the unperturbed screen (up to ``--per-screen`` per screen, spread evenly
over its unique lines of at least 4 characters, instruction = the text): by construction the unperturbed
accuracy is about 100 % and the figure is what each perturbation takes away from it, with exact targets mapped by
:mod:`pytest_uiground.perturb.derive`. ``--model omniparser`` answers the same targets with OmniParser v2
(``--model-path``: a folder holding ``icon_detect/model.pt``, as ``python -m pytest_uiground weights
omniparser`` writes it); its "before" is then its own accuracy on ``ocr``'s lines, not 100 %. Timings are
CPU seconds of this process (the machine is shared) and never asserted in tests.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SPECS = ("scale:0.5,scale:0.75,zoom:1.5,letterbox:1920x720,perspective:0.05,invert,grayscale,contrast:0.5,"
                 "jpeg:30,blur:1.5")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--screens", type=Path, default=ROOT.parent / "shared" / "data" / "real-screens")
    ap.add_argument("--specs", default=DEFAULT_SPECS)
    ap.add_argument("--per-screen", type=int, default=12)
    ap.add_argument("--cost-only", action="store_true")
    ap.add_argument("--model", choices=("ocr", "omniparser"), default="ocr")
    ap.add_argument("--model-path", default=None)
    args = ap.parse_args()
    from pytest_uiground.benchmarks.synthetic.loader import load
    from pytest_uiground.perturb.derive import derive
    from pytest_uiground.perturb.transforms import parse_list
    from pytest_uiground.suite.loading import LoaderContext

    specs = parse_list(args.specs)
    screens = sorted(args.screens.glob("*.png"))
    synthetic = load({"screens": 2, "targets_per_screen": 5}, LoaderContext("synthetic", ROOT))
    syn_img = synthetic[0].image.load()
    real = max((Image.open(p).convert("RGB") for p in screens), key=lambda im: im.size[0] * im.size[1])
    print(f"transform CPU ms per image (median of 5): synthetic {syn_img.size[0]}x{syn_img.size[1]}, "
          f"largest real {real.size[0]}x{real.size[1]}")
    print("| perturbation | synthetic ms | real ms |\n| --- | --- | --- |")
    for p in specs:
        syn_ms, real_ms = _ms(lambda p=p: p.apply(syn_img, "k")), _ms(lambda p=p: p.apply(real, "k"))
        print(f"| {p.spec} | {syn_ms:.1f} | {real_ms:.1f} |")
    t0 = time.process_time()
    n = len(derive(synthetic * 20, specs).samples)
    print(f"derive (collection, no pixels): {1e6 * (time.process_time() - t0) / max(1, n):.1f} µs per variant")
    if args.cost_only:
        return
    _table(screens, specs, args.per_screen, args.model, args.model_path)


def _ms(fn: object) -> float:
    times = []
    for _ in range(5):
        t0 = time.process_time()
        fn()  # type: ignore[operator]
        times.append(1000 * (time.process_time() - t0))
    return statistics.median(times)


def _table(screens: list[Path], specs: object, per_screen: int, name: str, model_path: str | None) -> None:
    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.offline.ocr import OcrGrounder
    from pytest_uiground.perturb.derive import derive
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample, Target
    from pytest_uiground.scoring.rules import score

    ocr = OcrGrounder(ModelOptions(name="ocr"))
    model: Any = ocr
    if name == "omniparser":
        from pytest_uiground.models.omniparser.model import create

        model = create(ModelOptions(name="omniparser", path=model_path))
    samples: list[Sample] = []
    for path in screens:
        ref = ImageRef.from_path(path)
        unique: dict[str, Any] = {}
        for item in ocr.read(ref.load()):
            if len(item.text.strip()) >= 4:
                unique.setdefault(item.text.strip().lower(), item)
        items = list(unique.values())
        step = max(1, len(items) // per_screen)  # spread over the screen (OCR lists lines top to bottom)
        for k, item in enumerate(items[::step][:per_screen]):
            samples.append(Sample(id=f"{path.stem}-{k:02d}", image=ref, instruction=item.text.strip(),
                                  task="point", target=Target(box=item.box)))
    print(f"\n{name} on {len(screens)} real screens, {len(samples)} targets (ocr's own text lines, unperturbed)")
    print("| perturbation | n | before | after | drop | CPU s per sample |\n| --- | --- | --- | --- | --- | --- |")
    right = {s.id: _right(model, s, score) for s in samples}
    print(f"unperturbed: {100 * sum(right.values()) / len(right):.1f}", flush=True)
    for p in specs:  # type: ignore[attr-defined]
        derived = derive(samples, [p]).samples
        model.clear_cache()
        t0 = time.process_time()
        after = [_right(model, d, score) for d in derived]
        cpu = (time.process_time() - t0) / max(1, len(derived))
        n = len(derived)
        before = sum(right[d.id.partition("@")[0]] for d in derived)
        print(f"| {p.spec} | {n} | {100 * before / n:.1f} | {100 * sum(after) / n:.1f} | "
              f"{100 * (before - sum(after)) / n:.1f} | {cpu:.2f} |", flush=True)


def _right(ocr: object, sample: object, score: object) -> bool:
    (pred,) = ocr.predict([sample])  # type: ignore[attr-defined]
    return bool(score(sample, pred).correct)  # type: ignore[operator]


if __name__ == "__main__":
    main()
