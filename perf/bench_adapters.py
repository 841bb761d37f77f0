"""Adapter benchmarks on tiny random models (CPU here; a GPU when one is present).

    python perf/bench_adapters.py [--device cpu|cuda:0]

1. Throughput of batched vs batch-1 generation (samples per second).
2. Per-sample overhead for a 1920x1080 screenshot, split into image decoding, the
   processor's own preprocessing (chat template + image processor), and what the
   adapter adds on top (prompt, dtype/device copies, decoding bookkeeping, parsing).
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import tinymodels

from pytest_uiground.models.base import ModelOptions
from pytest_uiground.models.hf.qwen import create_uitars
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target


def png(size: tuple[int, int], seed: int) -> bytes:
    img = Image.new("RGB", size, (seed * 37 % 255, 120, 200))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def median_ms(fn, n: int = 20) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--samples", type=int, default=32)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as t:
        path = tinymodels.build_qwen2_5_vl(Path(t) / "qwen2_5_vl")
        model = create_uitars(ModelOptions(name="uitars", path=str(path), device=ns.device, max_new_tokens=16))
        blobs = [png((800, 600), i) for i in range(ns.samples)]
        samples = [Sample(f"s{i}", ImageRef.from_source(f"k{i}", lambda b=b: b), "click the OK button", "point",
                          Target(box=Box(0.4, 0.4, 0.6, 0.6))) for i, b in enumerate(blobs)]
        model.predict(samples[:2])  # warm-up
        print(f"== throughput, tiny Qwen2.5-VL, {ns.samples} samples of 800x600, 16 new tokens, {ns.device} ==")
        for bs in (1, 4, 8):
            t0 = time.perf_counter()
            for i in range(0, len(samples), bs):
                model.predict(samples[i:i + bs])
            wall = time.perf_counter() - t0
            print(f"batch {bs}: {len(samples) / wall:.1f} samples/s")

        print("== per-sample overhead, one 1920x1080 PNG ==")
        big = png((1920, 1080), 3)
        sample = Sample("big", ImageRef.from_source("big", lambda: big), "click the OK button", "point",
                        Target(box=Box(0.4, 0.4, 0.6, 0.6)))
        image = sample.image.load()
        decode = median_ms(sample.image.load)
        prompt = median_ms(lambda: model.prompt(sample), 200)
        encode = median_ms(lambda: model.encode([model.prompt(sample)], [image]))
        inputs = model.encode([model.prompt(sample)], [image])
        to_device = median_ms(lambda: inputs.to(model.device))
        size = model.input_sizes(inputs, [image])[0]
        text = f"Action: click(start_box='({size[0] // 2},{size[1] // 2})')"
        parse = median_ms(lambda: model.to_prediction(sample, image, text, size, False), 200)
        print(f"image decoding: {decode:.2f} ms")
        print(f"processor (chat template + image processor): {encode - prompt:.2f} ms")
        print(f"adapter's own share (prompt {prompt:.3f} + device copy {to_device:.3f} + parse {parse:.3f}): "
              f"{prompt + to_device + parse:.3f} ms")


if __name__ == "__main__":
    main()
