"""JUnit XML properties: numbers a CI system can read without parsing messages.

* each sample test carries its record as one ``uiground`` property whose value is JSON
  (:func:`pytest_uiground.record.result.property_value`);
* each aggregate test carries ``value``, ``baseline``, ``delta``, ``delta_low``/``delta_high``
  (95% bootstrap interval), ``p_value`` (exact McNemar), ``regressed``/``fixed``, ``floor``,
  ``tolerance`` and ``verdict`` (empty where there is no baseline);
* the test suite carries ``uiground.<suite>.model``, ``.model_fingerprint`` (JSON) and the
  baseline's provenance (``.baseline_model``, ``.baseline_date``, ``.baseline_fingerprint``),
  as ``record_testsuite_property`` would write them, and the suite's verdict (``.verdict``: PASS or
  FAIL, ``.verdict_text``: the verdict line's wording, ``.regressions_rule``: each or significant,
  ``.flips`` and ``.flips_p_value``: the flips and their one-sided McNemar test; ``.unstable``: the
  regressions shown to be noise; ``.flip_rate``: the run-to-run flip rate of ``--uiground-repeat``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import pytest

from pytest_uiground.gate.checks import Check
from pytest_uiground.gate.verdict import Verdict


def _num(v: float | None) -> str:
    return "" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.4f}"


def check_properties(check: Check) -> list[tuple[str, object]]:
    p = check.paired
    return [
        # value, n, baseline and delta on the same samples (the ones the baseline has), as summary.json has them
        ("value", _num(check.compared_value)),
        ("n", str(check.current.n - check.left_out)),
        ("baseline", _num(p.baseline_value if p else None)),
        ("delta", _num(p.delta if p else None)),
        ("delta_low", _num(p.delta_low if p else None)),
        ("delta_high", _num(p.delta_high if p else None)),
        ("p_value", f"{p.p_value:.6g}" if p and p.p_value is not None else ""),
        ("regressed", str(p.regressed) if p and p.regressed is not None else ""),
        ("fixed", str(p.fixed) if p and p.fixed is not None else ""),
        ("floor", _num(check.floor)),
        ("tolerance", _num(check.tolerance)),
        ("verdict", check.verdict),
        *([("left_out", str(check.left_out)), ("value_with_new", _num(check.current.value))] if check.left_out
          else []),
    ]


def suite_properties(suite: str, model: Mapping[str, Any] | None, baseline: Mapping[str, Any] | None,
                     verdict: Verdict | None = None) -> list[tuple[str, str]]:
    """Suite-level properties: the model, the baseline it was compared with, and the suite's verdict."""
    model = model or {}
    base = baseline or {}
    pre = f"uiground.{suite}"
    return [
        (f"{pre}.model", str(model.get("name", ""))),
        (f"{pre}.model_fingerprint", json.dumps(model.get("fingerprint"), sort_keys=True)),
        (f"{pre}.baseline_model", str(base.get("model", ""))),
        (f"{pre}.baseline_date", str(base.get("date", ""))),
        (f"{pre}.baseline_fingerprint", json.dumps(base.get("model_fingerprint"), sort_keys=True)),
        (f"{pre}.baseline_packages", json.dumps(base.get("packages"), sort_keys=True)),
        *([(f"{pre}.verdict", verdict.status), (f"{pre}.verdict_text", verdict.text),
           (f"{pre}.regressions_rule", verdict.rule), (f"{pre}.flips", verdict.flips_text),
           (f"{pre}.flips_p_value", "" if verdict.flips_p is None else f"{verdict.flips_p:.6g}"),
           (f"{pre}.unstable", str(verdict.unstable)), (f"{pre}.detectable_drop", verdict.power_text),
           (f"{pre}.flip_rate", "" if verdict.flip_rate is None else f"{verdict.flip_rate:.4g}")]
          if verdict is not None else []),
    ]


def add_suite_properties(config: pytest.Config, props: list[tuple[str, str]]) -> None:
    """Write suite-level properties into ``--junitxml`` (the object ``record_testsuite_property`` writes to),
    when JUnit XML is on."""
    for plugin in config.pluginmanager.get_plugins():
        add = getattr(plugin, "add_global_property", None)
        if callable(add):
            for name, value in props:
                add(name, value)
