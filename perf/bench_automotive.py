"""AutomotiveUI suite benchmarks on a generated fixture set (figures for the notes).

    python perf/bench_automotive.py [--rows 5000] [--width 2000]

Collection time and peak RSS, and the harness time per sample with the ``center`` model
(which decodes every image), for the full set and a fifth of it (to see that memory is
flat in the number of rows).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_uiground.benchmarks.automotive.lookalike import write_fixture

ROOT = Path(__file__).resolve().parents[1]


def pytest_run(args: list[str], cwd: Path) -> tuple[float, float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c",
         "import resource, subprocess, sys; import pytest; rc = pytest.main(sys.argv[1:]); "
         "print('PEAK_RSS_MB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024); sys.exit(rc)", *args],
        cwd=cwd, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    wall = time.perf_counter() - t0
    peak = next((float(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("PEAK_RSS_MB")), -1)
    tail = [line for line in proc.stdout.splitlines() if " in " in line and ("passed" in line or "collected" in line)]
    return wall, peak, tail[-1] if tail else proc.stdout[-500:]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--width", type=int, default=2000)
    ns = parser.parse_args()
    height = ns.width * 9 // 16
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        (tmp / "pytest.ini").write_text("[pytest]\n")
        (tmp / "suites" / "automotive").mkdir(parents=True)
        shutil.copy(ROOT / "suites" / "automotive" / "suite.toml", tmp / "suites" / "automotive")
        for rows in (ns.rows // 5, ns.rows):
            data = tmp / f"data{rows}"
            t0 = time.perf_counter()
            write_fixture(data, rows=rows, seed=0, width=ns.width, height=height, shards=4)
            size = sum(f.stat().st_size for f in data.rglob("*.parquet")) / 1e6
            print(f"== {rows} rows, {ns.width}x{height}: generated in {time.perf_counter() - t0:.1f} s, {size:.0f} MB")
            common = ["suites/automotive", "--uiground-data-path", str(data), "-p", "no:cacheprovider", "-q",
                      "--benchmark-disable", "--uiground-cache", "off", "--uiground-baselines", "none"]
            wall, peak, tail = pytest_run([*common, "--collect-only"], tmp)
            print(f"collection: {wall:.2f} s wall, peak RSS {peak:.0f} MB  [{tail}]")
            wall, peak, tail = pytest_run([*common, "--model", "center", "-p", "no:randomly"], tmp)
            print(f"run with center: {wall:.1f} s wall, {1000 * wall / rows:.2f} ms/sample (incl. startup and "
                  f"collection), peak RSS {peak:.0f} MB  [{tail}]")


if __name__ == "__main__":
    main()
