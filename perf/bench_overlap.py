"""Local adapters: is the device kept busy while the CPU prepares the next batch?

    python perf/bench_overlap.py [--samples 48] [--batch 8] [--device-ms 250]

The real Hugging Face adapter path (tiny Qwen2.5-VL from ``tests/tinymodels.py``,
``--model uitars``) on 1920x1080 PNG screenshots: PNG decode, the processor (resize,
patches, chat template, tokenizer), ``generate``, decode, parse. A GPU is simulated by
adding a fixed device time to every ``generate`` call (``time.sleep``, which releases
the GIL as a CUDA kernel wait does). The device's busy time is every ``generate`` call's
duration: the simulated time plus the tiny model's own ``generate`` (on a GPU that would be
device work as well). Floor = the device's busy time in the same round's serial run, where
it never shares the CPU with preparation: a device that never waits for the CPU, measured
in the same round (a floor measured once, before the rounds, drifted with this machine's
load by more than the effect). Target <= 1.1 x the floor, reachable where one batch's CPU
preparation (printed) takes less than its device time. Also printed: how long the device
waited for the first batch (the pipeline's fill, which no schedule can hide here; a real
run loads the weights meanwhile, ``ModelAdapter.warm_up``) and the ratio after it.

Two schedules, fed one sample 'test' at a time as the worker does:

* ``serial`` (the harness before issue 16): each batch is decoded, processed and
  generated in turn (``pipeline.predict_isolated``), so the device idles while the CPU prepares;
* ``overlap``: :class:`pytest_uiground.run.pipeline.Overlap` prepares the next batch in a
  background thread while the current one generates.

The outputs of both schedules are compared (they must be equal).
"""

from __future__ import annotations

import argparse
import functools
import io
import sys
import tempfile
import time
from collections.abc import Container
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import tinymodels

from pytest_uiground.benchmarks.synthetic.loader import _layout_screen, render_screen
from pytest_uiground.models.base import ModelOptions
from pytest_uiground.models.hf.qwen import create_uitars
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.run.pipeline import predict_isolated


def screenshot_png(seed: int) -> bytes:
    buf = io.BytesIO()
    render_screen(_layout_screen(seed, 1, 1920, 1080)).save(buf, format="PNG")
    return buf.getvalue()


def serial(model: Any, samples: list[Sample], size: int) -> dict[str, Prediction]:
    out: dict[str, Prediction] = {}
    for i in range(0, len(samples), size):
        batch = samples[i:i + size]
        out.update(zip([s.id for s in batch], predict_isolated(model, batch), strict=True))
    return out


def overlap(model: Any, samples: list[Sample], size: int) -> dict[str, Prediction]:
    from pytest_uiground.run.pipeline import Overlap

    pending: dict[str, Prediction] = {}
    pipe = Overlap(model)
    out: dict[str, Prediction] = {}
    try:
        for i, s in enumerate(samples):
            if s.id not in pending:
                def upcoming(n: int, skip: Container[str], i: int = i) -> list[Sample]:
                    return [t for t in samples[i + 1:] if t.id not in skip and t.id not in pending][:n]

                pending.update((t.id, p) for t, p in pipe.predictions(s, upcoming, size, list))
            out[s.id] = pending.pop(s.id)
    finally:
        pipe.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=48)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--device-ms", type=float, default=250.0)
    parser.add_argument("--new-tokens", type=int, default=4)
    parser.add_argument("--schedules", default="serial,overlap")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch's intra-op threads (1: on a shared CPU, spinning OpenMP workers distort timings)")
    ns = parser.parse_args()
    import torch

    torch.set_num_threads(ns.torch_threads)
    device_s = ns.device_ms / 1000
    blobs = [screenshot_png(i) for i in range(ns.samples)]
    samples = [Sample(f"s{i:03d}", ImageRef.from_source(f"shot{i}", functools.partial(bytes, b)),
                      "click the OK button", "point", Target(box=Box(0.4, 0.4, 0.6, 0.6)))
               for i, b in enumerate(blobs)]
    with tempfile.TemporaryDirectory() as t:
        path = tinymodels.build_qwen2_5_vl(Path(t) / "qwen2_5_vl")
        model = create_uitars(ModelOptions(name="uitars", path=str(path), max_new_tokens=ns.new_tokens))
        real_generate = model.model.generate
        device_log: list[float] = []  # seconds of each generate call: the device's busy time
        first_call: list[float] = []  # when the device got its first batch

        def generate(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            if not first_call:
                first_call.append(t0)
            time.sleep(device_s)  # the simulated device: waits without holding the GIL
            try:
                return real_generate(*args, **kwargs)
            finally:
                device_log.append(time.perf_counter() - t0)

        model.predict(samples[:ns.batch])  # warm-up (before the sleep is added)
        prep_s, own_s = component_times(model, samples[:ns.batch])
        model.model.generate = generate
        batches = -(-ns.samples // ns.batch)
        print(f"{ns.samples} samples of 1920x1080 PNG, batches of {ns.batch}, {ns.device_ms:.0f} ms simulated "
              f"device time per generate. Measured per batch here: CPU preparation {prep_s * 1000:.0f} ms, the "
              f"tiny model's own generate {own_s * 1000:.0f} ms. Floor of a round = the device's busy time in "
              f"that round's serial run (its {batches} generate calls, simulated time + the tiny model's own, "
              "never sharing the CPU with preparation): a device that never waits for the CPU. The overlap "
              "can reach it only where preparation takes less than the device time")
        results: dict[str, dict[str, Prediction]] = {}
        ratios: dict[str, list[float]] = {}
        for _ in range(ns.rounds):  # alternating, so a noisy neighbour hurts both schedules alike
            floor = None
            for name in ns.schedules.split(","):
                fn = serial if name == "serial" else overlap
                device_log.clear()
                first_call.clear()
                try:
                    t0 = time.perf_counter()
                    results[name] = fn(model, samples, ns.batch)
                    wall = time.perf_counter() - t0
                except ImportError as exc:  # the code before issue 16 has no overlap
                    print(f"{name:>8}: not available ({exc})")
                    continue
                busy = sum(device_log)
                if floor is None:  # serial comes first; without it, this run's own busy time
                    floor = busy
                ratios.setdefault(name, []).append(wall / floor)
                errors = [p.error for p in results[name].values() if p.error]
                fill = first_call[0] - t0 if first_call else 0.0
                print(f"{name:>8}: wall {wall:.2f} s, device busy {busy:.2f} s ({busy / wall:.0%} of the wall), "
                      f"floor {floor:.2f} s, ratio {wall / floor:.2f}x (target <= 1.1x); of the wall, {fill:.2f} s "
                      f"before the first batch reached the device, ratio after it {(wall - fill) / floor:.2f}x"
                      + (f", errors {len(errors)}: {errors[0]}" if errors else ""))
        for name, rs in ratios.items():
            rs.sort()
            print(f"{name:>8}: ratio to the floor over {len(rs)} rounds: median {rs[len(rs) // 2]:.2f}x, "
                  f"range {rs[0]:.2f}-{rs[-1]:.2f}x")
        if len(results) == 2:
            a, b = ({k: p.raw for k, p in r.items()} for r in results.values())
            print("outputs equal across schedules:", a == b)


def component_times(model: Any, batch: list[Sample]) -> tuple[float, float]:
    """Median seconds of one batch's ``prepare`` and of its ``generate`` (no simulated time)."""
    preps, gens = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        if hasattr(model, "prepare") and model.prepares:
            prepared = model.prepare(batch)
            t1 = time.perf_counter()
            model.generate(prepared)
        else:  # the code before issue 16: time predict, and the processor alone
            images = [s.image.load() for s in batch]
            model.encode([model.prompt(s) for s in batch], images)
            t1 = time.perf_counter()
            model.predict(batch)
        t2 = time.perf_counter()
        preps.append(t1 - t0)
        gens.append(t2 - t1 if model.prepares else (t2 - t1) - (t1 - t0))
    return sorted(preps)[1], sorted(gens)[1]


if __name__ == "__main__":
    main()
