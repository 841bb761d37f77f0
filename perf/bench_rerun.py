"""A rerun answered from the prediction cache, against the first run of the same suite.

    python perf/bench_rerun.py [--suite suites/synthetic] [--screens N] [--delay 0.2] [--concurrency 8] [--reruns 3]

A first run and ``--reruns`` reruns (pytest, each its own process) of ``--suite`` with
``--model openai`` against a loopback server in its own process that takes ``--delay``
seconds per request, sharing one ``--uiground-cache`` directory: the first run asks the server for every sample, the
rerun finds every prediction in the cache. Printed: the time of the sample tests (the
sum of their JUnit durations: the part a model makes slow) and the whole process (with
interpreter start-up, collection and reports, which the cache cannot remove). Target:
the rerun's sample tests >= 20x faster than the first run's (the median rerun). With
``--screens`` a larger copy of the synthetic suite shows whether a rerun's cost per test
grows with the suite's size (it must not). The floor: the same number of tests that do
nothing, in the same environment (pytest's own cost per test, with every installed plugin).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_openai import serve

ROOT = Path(__file__).resolve().parents[1]


def run(suite: str, url: str, cache: Path, junit: Path, concurrency: int) -> tuple[float, float, int, int]:
    """(seconds of the sample tests, seconds of the whole process, sample tests, requests asked)."""
    cmd = [sys.executable, "-m", "pytest", suite, "--model", "openai", "--uiground-api-base", url,
           "--uiground-served-model", "m", "--uiground-parser", "uground", "--uiground-concurrency", str(concurrency),
           "--uiground-cache", str(cache), "--junitxml", str(junit), "--benchmark-disable", "-q",
           "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=", "--uiground-baselines",
           str(cache.parent / "baselines")]
    env = {**os.environ, "OPENAI_API_KEY": "EMPTY"}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if not junit.is_file():
        raise SystemExit(f"pytest wrote no JUnit file:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    cases = [c for c in ET.parse(junit).getroot().iter("testcase") if "[" in c.get("name", "")]
    if not cases:
        raise SystemExit(f"no sample tests ran:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return sum(float(c.get("time", 0)) for c in cases), wall, len(cases), proc.returncode


NOOP_TESTS = """
import pytest


@pytest.mark.parametrize("i", range({n}))
def test_sample(i):
    pass
"""


def pytest_floor(n: int, tmp: Path) -> float:
    """Seconds pytest itself takes for ``n`` parametrised tests that do nothing, with the same
    plugins installed (their fixtures and hooks run for every test): what a rerun answered
    wholly from the cache cannot go below."""
    folder = tmp / "floor"
    folder.mkdir()
    (folder / "test_noop.py").write_text(NOOP_TESTS.format(n=n))
    junit = folder / "floor.xml"
    cmd = [sys.executable, "-m", "pytest", str(folder / "test_noop.py"), "--junitxml", str(junit), "-q",
           "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=", "--benchmark-disable"]
    subprocess.run(cmd, cwd=folder, capture_output=True, text=True)
    return sum(float(c.get("time", 0)) for c in ET.parse(junit).getroot().iter("testcase"))


def scaled_suite(suite: str, screens: int | None, tmp: Path) -> str:
    """``suite`` as given, or a copy of it whose synthetic loader draws ``screens`` screens
    (a larger suite shows whether a rerun's cost per test grows with the suite)."""
    if screens is None:
        return suite
    text = (ROOT / suite / "suite.toml").read_text()
    if "screens = " not in text:
        raise SystemExit(f"--screens needs a synthetic suite; {suite}/suite.toml has no 'screens = '")
    lines = [f"screens = {screens}" if line.startswith("screens = ") else line for line in text.splitlines()]
    folder = tmp / "suites" / f"{Path(suite).name}_{screens}"
    folder.mkdir(parents=True)
    (folder / "suite.toml").write_text("\n".join(lines) + "\n")
    return str(folder)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", default="suites/synthetic")
    parser.add_argument("--screens", type=int, default=None,
                        help="a copy of the synthetic suite with this many screens (6 samples each)")
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--reruns", type=int, default=3, help="reruns timed; the median is the figure")
    ns = parser.parse_args()
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    stop = ctx.Event()
    server = ctx.Process(target=serve, args=(ns.delay, child, stop), daemon=True)
    server.start()
    try:
        url = parent.recv()
        with tempfile.TemporaryDirectory() as tmp:
            suite = scaled_suite(ns.suite, ns.screens, Path(tmp))
            cache = Path(tmp) / "cache"
            (Path(tmp) / "baselines").mkdir()  # an empty baselines folder: no baseline, nothing to compare
            first = run(suite, url, cache, Path(tmp) / "first.xml", ns.concurrency)
            reruns = sorted((run(suite, url, cache, Path(tmp) / f"rerun{i}.xml", ns.concurrency)
                             for i in range(ns.reruns)), key=lambda r: r[0])
            floor = pytest_floor(first[2], Path(tmp))
    finally:
        stop.set()
        seen = parent.recv() if parent.poll(10) else {}
        server.join(10)
    second = reruns[len(reruns) // 2]
    print(f"{ns.suite}{f' with {ns.screens} screens' if ns.screens else ''}: {first[2]} sample tests, server "
          f"{ns.delay * 1000:.0f} ms/request, --uiground-concurrency {ns.concurrency}; requests answered by the "
          f"server in all runs: {seen.get('count')}")
    print(f"first run: sample tests {first[0]:.2f} s, whole process {first[1]:.2f} s")
    print(f"reruns:    sample tests {', '.join(f'{r[0]:.2f}' for r in reruns)} s "
          f"({second[0] * 1000 / second[2]:.2f} ms per test, median), whole process {second[1]:.2f} s (median)")
    print(f"pytest's own floor: {first[2]} tests that do nothing take {floor:.2f} s "
          f"({floor * 1000 / first[2]:.2f} ms per test); the median rerun is {second[0] / floor:.1f}x that")
    print(f"rerun speed-up: sample tests {first[0] / second[0]:.1f}x (target >= 20x; at most "
          f"{first[0] / floor:.0f}x over pytest's floor), whole process {first[1] / second[1]:.1f}x")


if __name__ == "__main__":
    main()
