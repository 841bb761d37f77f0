"""Judged-suite throughput: Bench2Drive-VL questions scored through a remote judge.

    python perf/bench_judge.py [--frames 40] [--delay 0.2] [--concurrency 1 8 32]

Each frame of the generated fixture has 9 questions needing 11 judge requests in all
(Q24 and Q28 ask once more per object_tags entry, Q43 asks for the ground truth's keys and the
answer's; Q42 and Q50 are scored without the judge). Every answer is made unique per frame,
so the judge cache never serves a request twice. The judge is ``tests/chat_server.py``
in its own process taking ``--delay`` seconds per request, reached through the real
``--uiground-judge openai`` backend; the scorer runs as in a worker: the batch's answers are
submitted to ``JudgedScorer`` (``--uiground-judge-concurrency`` threads) and collected in order.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import scripted_judge
from chat_server import ChatServer, Reply, prompt_of

from pytest_uiground.benchmarks.bench2drive_vl.loader import load
from pytest_uiground.benchmarks.bench2drive_vl.lookalike import write_frames
from pytest_uiground.benchmarks.bench2drive_vl.prompts import PROMPT_HASH
from pytest_uiground.benchmarks.bench2drive_vl.scorer import score_vqa
from pytest_uiground.judges.base import Judge, JudgeOptions
from pytest_uiground.judges.openai import create
from pytest_uiground.judges.pool import JudgedScorer
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.suite.loading import LoaderContext

ANSWERS = {7: "SCORE 90", 19: "OBJECTS obj1,obj2,obj3", 24: "OBJECTS obj1,extra OBJSCORE 50",
           28: "OBJECTS obj1,extra OBJSCORE 80", 8: "SCORE 70", 43: "KEYS DECELERATE,FOLLOW_LANE",
           50: "FOLLOW_LANE, ACCELERATE", 12: "SCORE 40", 42: '{"0.5s": [1.5, 0.0]}'}


def _serve(delay: float, port_out: multiprocessing.connection.Connection) -> None:
    def script(body):  # type: ignore[no-untyped-def]
        return Reply.ok(scripted_judge.reply_for(prompt_of(body)), delay=delay)

    with ChatServer(script) as server:
        port_out.send(server.url)
        port_out.recv()


def run(url: str, frames: int, concurrency: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = write_frames(Path(tmp), scenarios=1, frames=frames)
        samples = [s for s in load({}, LoaderContext("b", root, root)) if s.invalid is None]
        opts = JudgeOptions(name="openai", api_base=url, model="judge", concurrency=concurrency, max_retries=0)
        judge = Judge(backend=create(opts), options=opts, prompt_hash=PROMPT_HASH)
        scorer = JudgedScorer(judge, score_vqa)
        preds = {s.id: Prediction(answer=f"{ANSWERS[int(s.meta['qid'])]} frame {s.meta['frame']}") for s in samples}
        t0 = time.perf_counter()
        for start in range(0, len(samples), concurrency):
            batch = samples[start : start + concurrency]
            for s in batch:
                scorer.submit(s, preds[s.id])
            results = [scorer.result(s, preds[s.id]) for s in batch]
            assert all(r.score is not None for r in results), [r.error for r in results if r.score is None]
        wall = time.perf_counter() - t0
        scorer.close()
        return {"samples": len(samples), "requests": judge.counters.requests, "wall_s": round(wall, 2),
                "samples_per_s": round(len(samples) / wall, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    args = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "EMPTY")
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.Process(target=_serve, args=(args.delay, child), daemon=True)
    server.start()
    url = parent.recv()
    try:
        for c in args.concurrency:
            print(json.dumps({"judge_concurrency": c, "delay_s": args.delay, **run(url, args.frames, c)}))
    finally:
        parent.send("stop")
        server.join(5)


if __name__ == "__main__":
    main()
