"""What ``python -m pytest_uiground merge`` costs on 10,000 records.

    python perf/bench_merge.py [--samples 10000] [--shards 4] [--model center]

Writes a synthetic suite of ``--samples`` samples (4 targets per screen) in a temporary project, runs
it as ``--shards`` shards with an offline model (each shard a separate pytest process), then times
the merge twice: the reading and checking of the shard folders alone (in this process), and the whole
command (a subprocess: the replayed pytest run, summary.json, report.html, the Markdown and JUnit
files). The shards' own walls and one unsharded run of the whole suite are printed for scale.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = """
[suite]
name = "big"
version = "1"

[loader]
name = "synthetic"

[loader.options]
seed = 1
screens = {screens}
targets_per_screen = 4

[[metrics]]
name = "grounding_accuracy"
tasks = ["point"]
slices = ["difficulty"]
"""


def run(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--model", default="center")
    ns = parser.parse_args()
    from pytest_uiground.shard.shards import check, read_shard

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "suites" / "big").mkdir(parents=True)
        (root / "suites" / "big" / "suite.toml").write_text(SUITE.format(screens=ns.samples // 4))
        (root / "pytest.ini").write_text("[pytest]\n")
        base = [sys.executable, "-m", "pytest", "suites/big", "--model", ns.model, "-q", "-p", "no:cacheprovider",
                "--uiground-cache", "off", "--uiground-progress", "0"]
        for i in range(1, ns.shards + 1):
            wall = run([*base, "--uiground-shard", f"{i}/{ns.shards}", "--uiground-report", f"s{i}"], root)
            print(f"shard {i}/{ns.shards}: {wall:.1f} s", flush=True)
        folders = [root / f"s{i}" for i in range(1, ns.shards + 1)]
        t0 = time.perf_counter()
        shards = [read_shard(f) for f in folders]
        check(shards)
        read = time.perf_counter() - t0
        records = sum(len(s.records) for s in shards)
        wall = run([sys.executable, "-m", "pytest_uiground", "merge", *map(str, folders), "--out", "merged"], root)
        single = run([*base, "--uiground-report", "single"], root)
        print(f"merge of {records} records from {ns.shards} shards: {wall:.1f} s in all "
              f"(reading and checking the shards: {read:.2f} s; the rest is the replayed run and its outputs); "
              f"one unsharded run of the same suite: {single:.1f} s")


if __name__ == "__main__":
    main()
