"""The report of a suite of one's own screenshots (issue 39, "Report for own suites"): made by ``init
--from`` before any annotation, it slices by ``element_type`` once annotated, and a metadata key the
lines gained since is named at collection with the ``suite.toml`` line to add; a suite grown since its
baseline compares value, baseline and delta on the same samples, saying how many new ones it leaves
out, in summary.json, the terminal, Markdown, JUnit and report.html alike; answers that all came from
the prediction cache read "cached" where latency is shown. Each run with and without ``-n 2``.
(The page's layout at 1280 px and its legend are driven in Chromium by ``test_report_front.py``.)"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from ownsuite import OwnSuite, grown

from pytest_uiground.screens import scaffold, slicing
from pytest_uiground.suite.config import load_suite_config


@pytest.fixture
def own(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> OwnSuite:
    return OwnSuite(pytester, monkeypatch)


@pytest.mark.slow
def test_a_suite_made_before_annotating_slices_by_element_type_and_cached_latency_says_cached(
        own: OwnSuite, xdist: list[str]) -> None:
    (metric,) = load_suite_config(own.suite / "suite.toml").metrics
    assert "element_type" in metric.slices  # written by init from screenshots alone: no line to read it from
    lines = own.annotate(12)
    cache = ["--uiground-cache", str(own.root / "pcache")]
    first = own.run("--snapshot-update", *cache, model="fakemodels:create_cached")
    assert first.ret == 0, first.stdout.str()[-3000:]
    result = own.run("--uiground-report", "out", "--uiground-markdown", "out/summary.md", *cache,
                     model="fakemodels:create_cached", xdist=xdist)
    out = result.stdout.str()
    assert result.ret == 0, out[-3000:]
    doc = own.summary()["metrics"]["grounding_accuracy"]
    kinds = {str(line["element_type"]) for line in lines}
    assert {f"element_type={k}" for k in kinds} <= set(doc["slices"]), doc["slices"]
    for k in kinds:
        assert doc["slice_n"][f"element_type={k}"] == sum(line["element_type"] == k for line in lines)
    assert re.search(r"^\s+element_type=icon\s", out, re.M), out  # a row of the terminal table
    # a key the lines gained after init (every line has "theme") is named, with the line to add, at collection
    notes = [q for q in own.summary().get("quirks", []) if "no metric slices by it" in q]
    assert len(notes) == 1 and "'theme' (2 values: dark, light)" in notes[0] and '"theme"' in notes[0], notes
    # every answer came from the cache: no "p50 - ms" anywhere, "cached" wherever latency is shown
    said = f"latency per sample: cached (all {len(lines)} predictions came from the prediction cache"
    markdown = (own.root / "out" / "summary.md").read_text()
    page = own.report().read_text()
    for where, text in (("terminal", out), ("markdown", markdown), ("report.html", page)):
        assert said in text, where
        assert "p50 - ms" not in text and "p50 nan" not in text, where
    assert page.count("<td>cached</td>") == len(lines)  # the sample table's ms column


@pytest.mark.slow
def test_a_grown_suite_compares_value_and_baseline_on_the_same_samples(own: OwnSuite, xdist: list[str]) -> None:
    result, new, wrong = grown(own, xdist)
    out = result.stdout.str()
    assert result.ret == 0, out[-3000:]
    records = [json.loads(x) for x in (own.root / "out" / "samples.jsonl").read_text().splitlines() if x.strip()]
    right = {r["id"]: bool(r["score"]["correct"]) for r in records if "score" in r}
    assert len(right) == 16 and {i for i, ok in right.items() if not ok} == wrong
    doc = own.summary()
    metrics, comps = doc["metrics"]["grounding_accuracy"], doc["baseline_comparison"]
    # every check: the delta is the difference of the two numbers shown beside it
    for label, c in comps.items():
        if c["baseline"] is not None:
            assert c["value"] - c["baseline"] == pytest.approx(c["delta"], abs=2e-4), label
    old = [i for i in right if i not in new]
    head = comps["grounding_accuracy"]
    assert head["value"] == pytest.approx(100 * sum(right[i] for i in old) / len(old), abs=1e-3)
    assert head["baseline"] == pytest.approx(100 * (len(old) - 1) / len(old), abs=1e-3)  # s1 wrong then
    assert head["left_out"] == len(new) and head["value_with_new"] == metrics["value"]
    assert metrics["value"] == pytest.approx(100 * sum(right.values()) / len(right), abs=1e-3)
    assert head["delta"] > 0 and head["value"] != metrics["value"]
    meta = {r["id"]: r["meta"] for r in records}
    for label, value in metrics["slices"].items():
        c = comps[f"grounding_accuracy.{label}"]
        key, _, v = label.partition("=")
        in_slice_new = sum(1 for i in new if meta[i].get(key) == v)
        assert c.get("left_out", 0) == in_slice_new, label
        assert (c["value_with_new"] if in_slice_new else c["value"]) == value, label
    # the terminal: value, baseline, delta on the 12; "with new" and the line under the table
    row = next(line for line in out.splitlines() if line.startswith("grounding_accuracy "))
    assert row.split()[1:5] == [f"{head['value']:.2f}", f"{head['baseline']:.2f}", f"{head['delta']:+.2f}",
                                f"{metrics['value']:.2f}"], row
    note = f"compare the {len(old)} samples the baseline has; {len(new)} new samples not in it are left out"
    assert note in out
    markdown = (own.root / "out" / "summary.md").read_text()
    assert (f"| grounding_accuracy | {head['value']:.2f} | {head['baseline']:.2f} | {head['delta']:+.2f} | "
            f"{metrics['value']:.2f} (+{len(new)}) |") in markdown and note in markdown
    page = own.report().read_text()
    assert f"{len(new)} new samples not in it are left out of the comparison" in page
    assert f"<td>{len(old)} of {len(right)}</td><td>{head['value']:.2f}</td>" in page
    junit = ET.parse(own.root / "out" / "junit.xml").getroot()
    case = next(c for c in junit.iter("testcase") if c.get("name") == "test_aggregate[grounding_accuracy]")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert float(props["value"]) - float(props["baseline"]) == pytest.approx(float(props["delta"]), abs=1e-3)
    assert props["left_out"] == str(len(new)) and props["n"] == str(len(old))


def test_the_slice_rule_takes_keys_every_line_has_with_a_few_shared_values() -> None:
    """One rule for init --from and the loader's note (:mod:`pytest_uiground.screens.slicing`)."""
    lines = [{"image": "a.png", "instruction": f"i{i}", "bbox": [0, 0, 4, 4], "app": "mail" if i < 3 else "chat",
              "element_type": "icon" if i % 2 else "text", "serial": str(i), **({"theme": "dark"} if i else {})}
             for i in range(6)]
    assert slicing.slice_keys(lines) == {"app": ["chat", "mail"], "element_type": ["icon", "text"]}
    (note,) = slicing.unsliced(lines, {"element_type", "size"}, "suites/x/suite.toml")
    assert note.startswith("every sample has 'app' (2 values: chat, mail)") and "suites/x/suite.toml" in note
    assert slicing.unsliced(lines, {"app", "element_type"}, "suite.toml") == []
    assert scaffold.suite_toml("x", lines).count('slices = ["app", "element_type", "size"]') == 1
    assert 'slices = ["element_type", "size"]' in scaffold.suite_toml("x", [])  # before the annotator ran
