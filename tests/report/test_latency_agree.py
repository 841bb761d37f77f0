"""Latency figures agree everywhere: a latency metric's baseline is the stored snapshot's value in
the terminal, summary.json and report.html alike, and a cached prediction's time is not this run's."""

from __future__ import annotations

import json
import re

import pytest
from conftest import Project

TIMED = '''
import os, time
from pytest_uiground.record.prediction import Prediction


class Timed:
    """Right on every sample; each prediction takes UIGROUND_SLEEP_MS."""

    name = "timed"

    def __init__(self, options):
        self.options = options

    def predict(self, samples):
        out = []
        for s in samples:
            time.sleep(float(os.environ.get("UIGROUND_SLEEP_MS", "0")) / 1000)
            out.append(Prediction(point=s.target.box.center, raw="ok"))
        return out

    def fingerprint(self):
        return {"model": "timed"}

    def cache_key(self, sample):
        return {"sample": sample.id}


def create(options):
    return Timed(options)
'''

LATENCY_METRIC = '''
[[metrics]]
name = "latency_ms"
tasks = ["point"]
score = "latency_ms"
higher_is_better = false
tolerance = 1e9
slices = ["difficulty"]
'''


def _row(out: str, label: str) -> list[str]:
    (line,) = [ln for ln in out.splitlines() if re.match(rf"\s*{re.escape(label)}\s", ln)]
    return line.split()


def _setup(project: Project) -> None:
    project.pytester.makepyfile(timedmodels=TIMED)
    toml = project.root / "suites" / "mini" / "suite.toml"
    toml.write_text(toml.read_text() + LATENCY_METRIC)


def _run(project: Project, sleep_ms: int, *args: str, xdist: list[str]):
    project.monkeypatch.setenv("UIGROUND_SLEEP_MS", str(sleep_ms))
    return project.pytester.runpytest_subprocess("suites/mini", "--model", "timedmodels:create", "-p",
                                                 "no:cacheprovider", *xdist, *args)


@pytest.mark.slow
def test_a_latency_metric_s_baseline_is_the_stored_one_everywhere(project: Project, xdist: list[str]) -> None:
    _setup(project)
    assert _run(project, 80, "--snapshot-update", "--uiground-cache", "off", xdist=[]).ret == 0
    stored = json.loads((project.root / "baselines/mini/snapshots/test_aggregate[latency_ms].json").read_text())
    assert stored["value"] >= 80
    result = _run(project, 0, "--uiground-report", "out", "--uiground-cache", "off", xdist=xdist)
    out = result.stdout.str()
    _name, _value, base, delta, *_ = _row(out, "latency_ms")
    assert base == f"{stored['value']:.2f}"  # not the current value recomputed (+0.00)
    assert float(delta) < -40
    comp = project.summary()["baseline_comparison"]["latency_ms"]
    assert f"{comp['baseline']:.2f}" == base and f"{comp['delta']:+.2f}" == delta
    assert comp["mcnemar_p"] is None and comp["delta_interval"] is None  # no per-sample timings to pair
    page = (project.root / "out" / "report.html").read_text()
    row = page.split('<td class="l">latency_ms<br>', 1)[1].split("</tr>", 1)[0]
    assert f"<td>{stored['value']:.1f}</td>" in row, row  # the page rounds milliseconds to 0.1


@pytest.mark.slow
def test_cached_predictions_are_not_timed_as_this_run_s(project: Project, xdist: list[str]) -> None:
    _setup(project)
    cache = str(project.root / "pcache")
    first = _run(project, 30, "--uiground-cache", cache, "--uiground-report", "out", xdist=xdist)
    assert "latency per sample: p50" in first.stdout.str()
    assert project.summary()["latency_ms"]["p50"] >= 30
    again = _run(project, 30, "--uiground-cache", cache, "--uiground-report", "out", xdist=xdist)
    out = again.stdout.str()
    n = len(project.ids())
    assert f"{n} predictions from the cache" in out
    cached = f"latency per sample: cached (all {n} predictions came from the prediction cache"
    assert cached in out
    assert project.summary()["latency_ms"] is None
    # the page says the same, never "p50 - ms" (issue 39), and its sample table marks each answer as cached
    page = (project.root / "out" / "report.html").read_text()
    assert cached in page and "p50 - ms" not in page and page.count("<td>cached</td>") == n
