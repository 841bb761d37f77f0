"""Several ``--uiground-api-base`` servers: the speed-up of 3 endpoints over 1, measured in one run.

    python perf/bench_endpoints.py [--samples 240] [--delay 0.2] [--slots 4]

Each stand-in server (``tests/chat_server.py``, in its own process so that its threads do not
compete with the client's for the GIL) answers every request after a fixed ``--delay`` seconds and
works on at most ``--slots`` requests at once, like a GPU server whose batch is full: more requests in
flight only queue. The client gives each endpoint a window of ``--slots`` requests
(``--uiground-concurrency``). The same samples go to 1 server, then to 3; the floor of each is
``samples x delay / (slots x servers)``. Printed: both walls, their floors, and the ratio 1 / 3.
"""

from __future__ import annotations

import argparse
import functools
import io
import multiprocessing
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from PIL import Image

from pytest_uiground.models.openai.client import OpenAIChatModel
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target


def serve(delay: float, slots: int, conn: Connection, stop: Any) -> None:
    """One stand-in server: ``slots`` requests at a time, ``delay`` seconds each."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from chat_server import ChatServer, Reply

    busy = threading.Semaphore(slots)

    def script(body: dict[str, Any]) -> Reply:
        with busy:  # the batch is full: the request waits for a slot, then takes the fixed time
            time.sleep(delay)
        return Reply.ok("(500, 500)")

    with ChatServer(script, record=False) as server:
        conn.send(server.url)
        stop.wait()
        conn.send({"count": server.count, "max_in_flight": server.max_in_flight})


def make_samples(n: int) -> list[Sample]:
    buf = io.BytesIO()
    Image.new("RGB", (1280, 720), (30, 120, 200)).save(buf, format="PNG")
    blob = buf.getvalue()
    return [Sample(f"s{i:05d}", ImageRef.from_source(f"bench:{i % 8}", functools.partial(bytes, blob)),
                   f"click the button number {i}", "point", Target(box=Box(0.4, 0.4, 0.6, 0.6))) for i in range(n)]


def timed(urls: list[str], samples: list[Sample], slots: int) -> tuple[float, int]:
    model = OpenAIChatModel(api_base=",".join(urls), api_key="EMPTY", served_model="m", parser="uground",
                            concurrency=slots, max_retries=0, request_timeout=60)
    try:
        model.predict(samples[: len(urls) * slots])  # connections and imports warm
        t0 = time.perf_counter()
        preds = model.predict(samples)
        wall = time.perf_counter() - t0
    finally:
        model.close()
    return wall, sum(p.error is not None for p in preds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=240)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--slots", type=int, default=4)
    ns = parser.parse_args()
    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    pipes, procs = [], []
    for _ in range(3):
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=serve, args=(ns.delay, ns.slots, child, stop), daemon=True)
        proc.start()
        pipes.append(parent)
        procs.append(proc)
    urls = [p.recv() for p in pipes]
    samples = make_samples(ns.samples)
    try:
        results = {n: timed(urls[:n], samples, ns.slots) for n in (1, 3)}
    finally:
        stop.set()
        for p in procs:
            p.join(10)
    for n, (wall, errors) in results.items():
        floor = ns.samples * ns.delay / (ns.slots * n)
        print(f"{n} endpoint{'s' * (n > 1)}: {ns.samples} samples, {ns.slots} in flight each, {ns.delay:g} s per "
              f"request: wall {wall:.2f} s, floor {floor:.2f} s ({wall / floor:.2f}x the floor), errors {errors}")
    print(f"speed-up of 3 endpoints over 1: {results[1][0] / results[3][0]:.2f}x (ideal 3.00x)")


if __name__ == "__main__":
    main()
