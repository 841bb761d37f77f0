"""Core harness benchmarks (figures for the notes; never run as unit tests).

    python perf/bench_core.py [--quick]

1. Harness overhead per sample with a zero-cost model (``perf/zero_model.py``) in one process:
   the slope of wall time between a small and a large synthetic suite.
2. Collection of a 5,000 and a 50,000-sample synthetic suite: wall time and peak RSS.
3. The harness against bare pytest (issue 42's target, at most 1.5x): a zero-cost model over a
   synthetic suite of ~3,100 samples against bare pytest running as many trivial parametrised tests,
   whole processes interleaved, median of 3, in CPU seconds (user + system of the process and its
   xdist workers: less sensitive than wall time to what else the machine runs), serially and with -n 2.
4. The main job (``pytest suites/synthetic``, default ``ocr`` model) wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SUITE = """
[suite]
name = "bench{n}"
version = "1"
[loader]
name = "synthetic"
[loader.options]
seed = 0
screens = {screens}
targets_per_screen = 6
[[metrics]]
name = "grounding_accuracy"
slices = ["difficulty", "theme", "element_type", "size"]
"""


def make_suite(tmp: Path, screens: int) -> Path:
    d = tmp / f"bench{screens}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "suite.toml").write_text(SUITE.format(n=screens, screens=screens))
    return d


def run(args: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall seconds, peak RSS of the child in MB, and the output tail."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024, proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr


BARE = """
import pytest


@pytest.mark.parametrize("i", range({n}))
def test_x(i):
    assert i >= 0
"""


def cpu(args: list[str], cwd: Path) -> float:
    """CPU seconds (user + system) of one pytest process and its children (xdist workers)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "pytest", *args], cwd=cwd, capture_output=True, text=True,
                   env={**os.environ, "PYTHONHASHSEED": "0"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def harness_ratio(tmp: Path, common: list[str], screens: int = 550, rounds: int = 3) -> None:
    """Section 3: the harness's CPU over bare pytest's, for the same number of tests."""
    d = make_suite(tmp, screens)
    n = len(__import__("pytest_uiground.benchmarks.synthetic.loader", fromlist=["load"]).load(
        {"seed": 0, "screens": screens}, None))  # type: ignore[arg-type]
    (tmp / "test_bare.py").write_text(BARE.format(n=n))
    for label, xdist in (("serial", []), ("-n 2", ["-n", "2"])):
        ours, bare = [], []
        for _ in range(rounds):  # interleaved: a busy moment falls on both alike
            ours.append(cpu([str(d), "--model", "zero_model:create", *common, *xdist], tmp))
            bare.append(cpu(["test_bare.py", "-p", "no:cacheprovider", "-q", *xdist], tmp))
        o, b = sorted(ours)[rounds // 2], sorted(bare)[rounds // 2]
        print(f"{label}: harness {o:.2f} s CPU, bare pytest {b:.2f} s CPU for {n} tests: {o / b:.2f}x "
              f"(+{(o - b) / n * 1000:.2f} ms per sample)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="skip the main job")
    parser.add_argument("--ratio-only", action="store_true", help="only the harness against bare pytest")
    ns = parser.parse_args()
    common = ["-p", "no:cacheprovider", "-q", "--benchmark-disable"]
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "perf"), os.environ.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        (tmp / "pytest.ini").write_text("[pytest]\n")
        print("== the harness against bare pytest (CPU seconds, median of 3) ==")
        harness_ratio(tmp, common)
        if ns.ratio_only:
            return
        print("== collection (pytest --collect-only) ==")
        for screens in (834, 8334):  # ~5,000 and ~50,000 samples
            d = make_suite(tmp, screens)
            wall, rss, tail = run([str(d), "--collect-only", *common], tmp)
            print(f"{screens} screens: {wall:.2f} s wall, peak RSS {rss:.0f} MB  [{tail}]")
        print("== harness overhead, zero-cost model, one process ==")
        timings = {}
        for screens in (50, 550):
            d = make_suite(tmp, screens)
            wall, _, tail = run([str(d), "--model", "zero_model:create", *common], tmp)
            timings[screens] = (wall, tail)
            print(f"{screens} screens: {wall:.2f} s  [{tail}]")
        (w1, _), (w2, _) = timings[50], timings[550]
        # samples per screen is ~5.6 (targets_per_screen 6, fewer on sparse screens)
        samples = {s: len(__import__("pytest_uiground.benchmarks.synthetic.loader", fromlist=["load"]).load(
            {"seed": 0, "screens": s}, None)) for s in (50, 550)}  # type: ignore[arg-type]
        per = (w2 - w1) / (samples[550] - samples[50]) * 1000
        print(f"overhead per sample (slope): {per:.2f} ms over {samples[550] - samples[50]} extra samples "
              "(includes pytest's own per-test cost, collection and metric computation)")
    if not ns.quick:
        print("== main job: pytest suites/synthetic ==")
        wall, rss, tail = run(["suites/synthetic", "-p", "no:cacheprovider", "-q"], ROOT)
        print(f"{wall:.1f} s wall, peak RSS {rss:.0f} MB  [{tail}]")
        wall, rss, tail = run(["suites/synthetic", "-p", "no:cacheprovider", "-q", "-n", "2"], ROOT)
        print(f"-n 2: {wall:.1f} s wall  [{tail}]")


if __name__ == "__main__":
    main()
