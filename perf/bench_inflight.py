"""``--model openai``: how close the harness keeps the server to ``--uiground-concurrency`` requests in flight.

    python perf/bench_inflight.py [--samples 500] [--concurrency 32] [--seed 0]

The samples are fed to the model the way the worker feeds them: one test after the
other, each test asking for its own sample's prediction. With lock-step batches (the
harness before issue 16) every batch of ``--uiground-concurrency`` waits for its
slowest request; with the sliding window (:class:`pytest_uiground.run.pipeline.InFlight`,
used by ``run.predictors.Streaming`` for models with ``in_flight``) a request starts as soon as
any finishes. Two servers, each in its own process (in this one, its threads would
compete with the client's for the GIL):

1. per-request delays drawn from a seeded uniform distribution on [50, 950] ms (short
   and long generations); floor = max(sum of delays / concurrency, the longest delay).
   Target: <= 1.15 x the floor.
2. a constant 200 ms per request; floor = samples x 0.2 s / concurrency. Target <= 1.1 x.

Each figure is printed as the ratio to its floor measured in the same run. The lock-step
schedule is timed too, for comparison (what the harness did before).
"""

from __future__ import annotations

import argparse
import functools
import io
import multiprocessing
import random
import sys
import threading
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from PIL import Image

from pytest_uiground.models.openai.client import OpenAIChatModel
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample, Target

WARM = 2


def delays_for(kind: str, n: int, seed: int) -> list[float]:
    if kind == "constant":
        return [0.2] * n
    rng = random.Random(seed)
    return [rng.uniform(0.05, 0.95) for _ in range(n)]


def serve(delays: list[float], conn: Connection, stop: Any) -> None:
    """The server process: the i-th request to arrive sleeps ``delays[i]`` (the warm-up ones none)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from chat_server import ChatServer, Reply

    lock = threading.Lock()
    queue = [0.0] * WARM + delays

    def script(body: dict[str, Any]) -> Reply:
        with lock:
            delay = queue.pop(0) if queue else 0.0
        return Reply.ok("(500, 500)", delay=delay)

    with ChatServer(script, record=False, parse_json=False) as server:
        conn.send(server.url)
        stop.wait()
        conn.send({"max_in_flight": server.max_in_flight, "count": server.count})


def png(seed: int) -> bytes:
    img = Image.new("RGB", (1920, 1080), (seed * 37 % 255, 120, 200))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def make_samples(n: int) -> list[Sample]:
    blobs = [png(i) for i in range(4)]
    return [Sample(f"s{i:05d}", ImageRef.from_source(f"bench:{i}", functools.partial(bytes, blobs[i % 4])),
                   f"click the button number {i}", "point", Target(box=Box(0.4, 0.4, 0.6, 0.6)))
            for i in range(n)]


def lockstep(model: OpenAIChatModel, samples: Sequence[Sample], concurrency: int) -> list[Prediction]:
    """The harness before: a batch of ``concurrency`` per ``predict`` call, each waiting for its slowest."""
    preds: list[Prediction] = []
    for i in range(0, len(samples), concurrency):
        preds += model.predict(samples[i:i + concurrency])
    return preds


def window(model: OpenAIChatModel, samples: Sequence[Sample], concurrency: int) -> list[Prediction]:
    """The harness now: each 'test' tops up the window from the upcoming samples (the worker's
    policy, :meth:`pytest_uiground.run.pipeline.InFlight.collect`), then takes its own."""
    from pytest_uiground.run.pipeline import InFlight

    ahead = InFlight(model)
    held: dict[str, Prediction] = {}
    at = {"test": 0, "offered": 0}  # the running test; samples[:offered] were handed over already

    def upcoming(n: int) -> list[Sample]:
        start = max(at["offered"], at["test"] + 1)
        at["offered"] = start + n
        return list(samples[start:start + n])

    preds: list[Prediction] = []
    try:
        for at["test"], s in enumerate(samples):
            held.update((t.id, p) for t, p in ahead.collect(s, held, upcoming, list))
            preds.append(held.pop(s.id))
    finally:
        ahead.close()
    return preds


def run(kind: str, schedule: str, samples: list[Sample], concurrency: int, seed: int) -> dict[str, Any]:
    delays = delays_for(kind, len(samples), seed)
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    stop = ctx.Event()
    proc = ctx.Process(target=serve, args=(delays, child, stop), daemon=True)
    proc.start()
    try:
        url = parent.recv()
        model = OpenAIChatModel(api_base=url, api_key="EMPTY", served_model="m", parser="uground",
                                concurrency=concurrency, max_retries=0, request_timeout=30)
        try:
            model.predict(make_samples(WARM))  # connections and imports warm
            t0 = time.perf_counter()
            fn = lockstep if schedule == "lock-step" else window
            preds = fn(model, samples, concurrency)
            wall = time.perf_counter() - t0
        finally:
            model.close()
    finally:
        stop.set()
        seen = parent.recv() if parent.poll(10) else {}
        proc.join(10)
    errors = [p.error for p in preds if p.error]
    floor = max(sum(delays) / concurrency, max(delays))
    return {"wall": wall, "floor": floor, "errors": len(errors), "first_error": errors[0] if errors else None,
            "max_in_flight": seen.get("max_in_flight")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--schedules", default="lock-step,window")
    ns = parser.parse_args()
    samples = make_samples(ns.samples)
    for kind, target in (("uniform 50-950 ms", 1.15), ("constant", 1.1)):
        for schedule in ns.schedules.split(","):
            try:
                r = run(kind, schedule, samples, ns.concurrency, ns.seed)
            except ImportError as exc:  # the code before issue 16 has no window
                print(f"{kind:>17} {schedule:>9}: not available ({exc})")
                continue
            errors = f", errors {r['errors']} ({r['first_error']})" if r["errors"] else ""
            print(f"{kind:>17} {schedule:>9}: {ns.samples} samples, {ns.concurrency} in flight: wall "
                  f"{r['wall']:.2f} s, floor {r['floor']:.2f} s, ratio {r['wall'] / r['floor']:.2f}x "
                  f"(target <= {target}x), max in flight {r['max_in_flight']}{errors}")


if __name__ == "__main__":
    main()
