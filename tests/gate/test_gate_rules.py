"""The gate's rules and aggregate items directly (pytest_uiground.gate.rules, .aggregate), and the
two writers of the same outcome record (report.junit, report.markdown): an update asked for and not
done blocks the verdict everywhere, a refused update names every reason, and a check fails its item
exactly when its record says so."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_uiground.gate import aggregate
from pytest_uiground.gate.outcome import SuiteOutcome, conclude
from pytest_uiground.gate.rules import dataset_provenance, update_refusal
from pytest_uiground.gate.verdict import BaselineFate, Verdict, decide
from pytest_uiground.models.base import ModelOptions
from pytest_uiground.options import RunOptions
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.score import Score
from pytest_uiground.report import junit, markdown


def _loaded(name: str = "mini", revision: str | None = None) -> Any:
    config = SimpleNamespace(name=name, version="3", loader_options={"revision": revision} if revision else {})
    return SimpleNamespace(config=config, fingerprint="abc123")


class _Check:
    """What the aggregate item and the writers read of a check."""

    def __init__(self, problems: list[str], partial: bool = False) -> None:
        self._problems, self.partial, self.suite, self.label = problems, partial, "mini", "accuracy"
        self.slice, self.detectable = None, None  # the power line reads these (gate/power.py)

    def problems(self) -> list[str]:
        return list(self._problems)

    def explain(self) -> str:
        return "accuracy 40.00 vs floor 50.00"


def _outcome(**kw: Any) -> SuiteOutcome:
    return SuiteOutcome(loaded=_loaded(), path=Path("suites/mini/suite.toml"), results=kw.pop("results", []), **kw)


def test_an_update_asked_for_and_not_done_blocks_the_verdict() -> None:
    def verdict(**kw: Any) -> Verdict:
        return conclude(_outcome(**kw))

    assert verdict().passed and verdict().fate is BaselineFate.NOT_ASKED, "no update asked: nothing blocks"
    assert verdict(updating=True).passed and verdict(updating=True).fate is BaselineFate.UPDATED
    assert verdict(updating=True, partial=True).reasons == ("baseline NOT updated (partial run)",)
    assert verdict(updating=True, refusal="no").reasons == ("baseline NOT updated (refused)",)
    assert verdict(updating=True, write_error="disk full").reasons == ("baseline NOT written (disk full)",)
    assert verdict(updating=True, partial=True, refusal="no").fate is BaselineFate.PARTIAL, "partial is said first"
    stopped = conclude(_outcome(updating=True), interrupted=True)
    assert not stopped.passed and stopped.reasons == ("run interrupted after 0 samples",
                                                      "baseline NOT updated (interrupted)")


def test_the_verdict_counts_every_reason_and_words_it_once() -> None:
    regressed = SampleResult("mini", "s1", "point", score=Score(0.0, False), outcome=Outcome.REGRESSION)
    errored = SampleResult("mini", "s2", "point", error="the model failed", outcome=Outcome.ERROR)
    checks = [_Check(["accuracy fell"]), _Check([])]
    v = decide(checks, None, [regressed, errored])  # type: ignore[arg-type]
    assert not v.passed and v.failed_checks == ("accuracy",)
    assert v.text == "FAIL: 1 of 2 checks failed; 1 sample regressed; 1 sample error"
    assert Verdict.from_json(v.to_json()) == v, "summary.json round-trips the verdict"
    assert decide([_Check([])], None, []).text == "PASS (1 checks ok, no regressed sample)"  # type: ignore[list-item]
    assert Verdict.from_json({"status": "maybe"}) is None and Verdict.from_json(None) is None


def test_a_refused_update_names_each_reason_and_the_flag_that_overrides_it() -> None:
    errored = SampleResult("mini", "s1", "point", error="the model failed")
    out = _outcome(results=[errored, SampleResult("mini", "s2", "point", score=Score(100.0, True))],
                   checks=[_Check(["accuracy 40.00 is below its floor 50.00"])])  # type: ignore[list-item]
    why = update_refusal(out.name, out.results, out.checks, RunOptions(model=ModelOptions(name="m")))
    assert why is not None and why.startswith("refusing to update the baseline of 'mini'")
    assert "1 sample(s) errored" in why and "--uiground-keep-errored" in why
    assert "absolute floors fail" in why and "--uiground-force-update" in why
    allowed = RunOptions(model=ModelOptions(name="m"), keep_errored=True, force_update=True)
    assert update_refusal(out.name, out.results, out.checks, allowed) is None


def test_dataset_provenance_names_what_a_baseline_was_recorded_on() -> None:
    got = dataset_provenance(_loaded(revision="v2"))
    assert got == {"suite_version": "3", "dataset_fingerprint": "abc123", "dataset_revision": "v2"}
    assert dataset_provenance(_loaded())["dataset_revision"] is None


@pytest.mark.parametrize(("check", "out", "fails_with"), [
    (_Check([]), {}, None),
    (_Check(["accuracy fell"]), {}, "accuracy fell"),
    (_Check([], partial=True), {"updating": True, "partial": True}, "from a partial run"),
    (_Check([]), {"updating": True, "refusal": "refusing: floors"}, "refusing: floors"),
    (_Check([]), {"updating": True, "write_error": "could not write x"}, "baseline NOT written: could not write x"),
])
def test_an_aggregate_item_fails_exactly_when_its_record_says(check: _Check, out: dict[str, Any],
                                                               fails_with: str | None) -> None:
    outcome = _outcome(checks=[check], **out)
    conclude(outcome)
    body = aggregate._metric_check(check, outcome)  # type: ignore[arg-type]
    if fails_with is None:
        body()
        return
    with pytest.raises(pytest.fail.Exception, match=fails_with):
        body()


def test_junit_suite_properties_carry_model_and_baseline() -> None:
    props = dict(junit.suite_properties("mini", {"name": "m", "fingerprint": {"w": 1}},
                                        {"model": "old", "date": "2026-01-01", "model_fingerprint": {"w": 0}}))
    assert props["uiground.mini.model"] == "m" and props["uiground.mini.baseline_model"] == "old"
    assert props["uiground.mini.model_fingerprint"] == '{"w": 1}'
    assert "uiground.mini.verdict" not in props, "no verdict handed, none written"
    failed = dict(junit.suite_properties("mini", None, None, decide([_Check(["x"])], None, [])))  # type: ignore[list-item]
    assert failed["uiground.mini.verdict"] == "FAIL" and failed["uiground.mini.verdict_text"].startswith("FAIL: 1 of")
    empty = dict(junit.suite_properties("mini", None, None))
    assert empty["uiground.mini.baseline_date"] == "" and empty["uiground.mini.model_fingerprint"] == "null"


def test_markdown_cells_cannot_break_the_table_or_inject_markup() -> None:
    text = markdown.cell("a|b ![t](http://x) <b>bold</b>\nnext")
    assert "|" not in text.replace("\\|", "") and "\n" not in text
    assert "<b>" not in text and "![" not in text
