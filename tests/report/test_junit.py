"""JUnit XML carries numbers a CI system can read: records as JSON, aggregate numbers, suite provenance."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from conftest import Project

pytestmark = pytest.mark.slow


def _props(case: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


def test_junit_properties_are_json_and_numbers(project: Project, xdist: list[str]) -> None:
    ids = project.ids()
    assert project.run("--snapshot-update").ret == 0
    result = project.run("--junitxml", "junit.xml", wrong=ids[:3], xdist=xdist)
    assert result.ret == 1
    root = ET.parse(project.root / "junit.xml").getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    globals_ = {p.get("name"): p.get("value") for p in suite.findall("./properties/property")}
    assert globals_["uiground.mini.model"] == "scripted"
    assert json.loads(globals_["uiground.mini.model_fingerprint"]) == {"model": "scripted"}
    assert globals_["uiground.mini.baseline_model"] == "scripted" and globals_["uiground.mini.baseline_date"]

    cases = {c.get("name"): c for c in suite.iter("testcase")}
    regressed = cases[f"test_sample[{ids[0]}]"]
    record = json.loads(_props(regressed)["uiground"])  # JSON, not a Python repr
    assert record["id"] == ids[0] and record["outcome"] == "regression"
    assert regressed.find("failure") is not None  # still a failure for CI
    ok = json.loads(_props(cases[f"test_sample[{ids[-1]}]"])["uiground"])
    assert ok["outcome"] == "pass" and ok["score"]["correct"] is True

    agg = _props(cases["test_aggregate[grounding_accuracy]"])
    n = len(ids)
    assert float(agg["value"]) == pytest.approx(100 * (n - 3) / n, abs=1e-3)
    assert float(agg["baseline"]) == pytest.approx(100.0)
    assert float(agg["delta"]) == pytest.approx(-300 / n, abs=1e-3)
    assert float(agg["delta_low"]) <= float(agg["delta"]) <= float(agg["delta_high"])
    assert 0 < float(agg["p_value"]) <= 1 and agg["regressed"] == "3" and agg["fixed"] == "0"
    assert agg["verdict"] == "FAIL" and float(agg["tolerance"]) == 2.0
    assert cases["test_aggregate[grounding_accuracy]"].find("failure") is not None
