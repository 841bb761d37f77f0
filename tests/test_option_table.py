"""The option table is the one declaration of a setting: its row names the RunOptions field it lands
in, so ``parse()`` needs no edit for a new setting; numbers are read by one parser per kind, whose
errors say what was expected, what was given and the fix; the judge has its own timeout and retries,
which default to the model's."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from pytest_uiground import options
from pytest_uiground.judges.base import JudgeOptions
from pytest_uiground.models.base import ModelOptions
from pytest_uiground.options import OPTIONS, Opt, RunOptions


def _parse(pytester: pytest.Pytester, *args: str, ini: str = "") -> RunOptions:
    pytester.makeini(f"[pytest]\n{ini}")
    return options.parse(pytester.parseconfig("--model", "center", *args))


def test_every_row_names_a_field_of_its_record() -> None:
    records = {"": RunOptions, "model": ModelOptions, "judge": JudgeOptions}
    for o in OPTIONS:
        if o.field is None:
            continue
        record, _, name = o.field.rpartition(".")
        assert name in {f.name for f in dataclasses.fields(records[record])}, o.flag
    assert len({o.field for o in OPTIONS if o.field}) == len([o for o in OPTIONS if o.field])
    # Only the probe's switch is read on its own (by the plugin, before the suites).
    assert [o.flag for o in OPTIONS if o.field is None] == ["--uiground-probe"]


def test_nothing_given_yields_each_rows_default(pytester: pytest.Pytester) -> None:
    opts = _parse(pytester)
    assert opts.model.batch_size == 1 and opts.model.request_timeout == 120.0 and opts.model.max_retries == 5
    assert opts.seed == 0 and opts.limit is None and opts.cropping == "none" and opts.progress_s == 30.0
    assert opts.judge.max_tokens == 512 and opts.judge.parse_errors == "error"
    assert opts.baselines_dir == pytester.path / "baselines" and not opts.baselines_explicit
    assert opts.report_dir is None and opts.cache_dir is None


def test_a_new_row_lands_in_its_field_without_editing_parse(pytester: pytest.Pytester,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    row = Opt("--uiground-smoke-size", None, "a new spelling of the smoke-run size", options.positive_int, "N",
              field="limit")
    monkeypatch.setattr(options, "OPTIONS", (*(o for o in OPTIONS if o.field != "limit"), row))
    assert _parse(pytester, "--uiground-smoke-size", "7").limit == 7
    assert _parse(pytester, ini="uiground_smoke_size = 9\n").limit == 9  # its ini key came with the row
    judge_row = Opt("--uiground-judge-tokens", 64, "the judge's reply limit", options.positive_int,
                    field="judge.max_tokens")
    monkeypatch.setattr(options, "OPTIONS", (*(o for o in OPTIONS if o.field != "judge.max_tokens"), judge_row))
    assert _parse(pytester).judge.max_tokens == 64


def test_converters_resolve_paths_where_pytest_started(pytester: pytest.Pytester) -> None:
    opts = _parse(pytester, "--uiground-report", "out", "--uiground-baselines", "b", "--uiground-cache", "off")
    assert opts.report_dir == (pytester.path / "out").resolve()
    assert opts.baselines_dir == (pytester.path / "b").resolve() and opts.baselines_explicit
    assert opts.cache_dir is None


def test_an_unknown_model_is_a_usage_error_naming_the_known(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    with pytest.raises(pytest.UsageError, match=r"--model: no model named 'nosuch'; known: .*center"):
        options.parse(pytester.parseconfig("--model", "nosuch"))


def test_the_judge_takes_the_models_timeout_and_retries_unless_given_its_own(pytester: pytest.Pytester) -> None:
    shared = _parse(pytester, "--uiground-request-timeout", "30", "--uiground-max-retries", "2")
    assert (shared.judge.request_timeout, shared.judge.max_retries) == (30.0, 2)
    own = _parse(pytester, "--uiground-request-timeout", "30", "--uiground-judge-request-timeout", "7",
                 "--uiground-judge-max-retries", "0")
    assert (own.judge.request_timeout, own.judge.max_retries) == (7.0, 0)
    assert (own.model.request_timeout, own.model.max_retries) == (30.0, 5)
    from_ini = _parse(pytester, ini="uiground_max_retries = 3\nuiground_judge_request_timeout = 9\n")
    assert (from_ini.judge.request_timeout, from_ini.judge.max_retries) == (9.0, 3)
    assert from_ini.model.request_timeout == 120.0


@pytest.mark.parametrize(("parse", "text", "expected"), [
    (options.positive_int, "0", "expected a whole number >= 1, got '0'; give e.g. 1"),
    (options.positive_int, "2.5", "expected a whole number >= 1, got '2.5'; give e.g. 1"),
    (options.non_negative_int, "-1", "expected a whole number >= 0, got '-1'; give e.g. 0"),
    (options.whole_number, "seven", "expected a whole number, got 'seven'; give e.g. 0"),
    (options.positive_float, "0", "expected a number > 0, got '0'; give e.g. 1"),
    (options.positive_float, "inf", "expected a number > 0, got 'inf'; give e.g. 1"),
    (options.non_negative_float, "nan", "expected a number >= 0, got 'nan'; give e.g. 0"),
    (options.non_negative_float, "-0.5", "expected a number >= 0, got '-0.5'; give e.g. 0"),
])
def test_one_number_parser_per_kind_says_what_was_given_and_the_fix(parse: Callable[[str], Any], text: str,
                                                                    expected: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse(text)
    assert str(info.value) == expected


@pytest.mark.parametrize(("parse", "text", "value"), [
    (options.positive_int, " 4 ", 4), (options.non_negative_int, "0", 0), (options.whole_number, "-3", -3),
    (options.positive_float, "0.5", 0.5), (options.non_negative_float, "0", 0.0),
])
def test_the_number_parsers_accept_their_range(parse: Callable[[str], Any], text: str, value: object) -> None:
    assert parse(text) == value and type(parse(text)) is type(value)


def test_a_bad_number_names_the_option_on_the_command_line_and_in_the_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    with pytest.raises(pytest.UsageError, match=r"argument --uiground-judge-max-retries: expected a whole number "
                                                r">= 0, got '-2'; give e.g. 0"):
        pytester.parseconfig("--uiground-judge-max-retries", "-2")
    with pytest.raises(pytest.UsageError, match=r"ini option uiground_progress = 'soon': expected a number >= 0, "
                                                r"got 'soon'; give e.g. 0"):
        _parse(pytester, ini="uiground_progress = soon\n")
