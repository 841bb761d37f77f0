"""The schemas of suite.toml and the baseline (msgspec Structs): published, checked by check-jsonschema, and worded."""

from __future__ import annotations

import json
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from pytest_uiground.gate import baseline as baseline_mod
from pytest_uiground.gate import baseline_schema
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.schema import Key, SchemaError, convert
from pytest_uiground.record.score import Score
from pytest_uiground.suite import config as config_mod
from pytest_uiground.suite import schema as suite_schema
from pytest_uiground.suite.config import SuiteConfigError, load_suite_config

ROOT = Path(__file__).resolve().parents[2]
GOOD = '[suite]\nname = "x"\nversion = "1"\n[loader]\nname = "synthetic"\n[[metrics]]\nname = "acc"\n'


@pytest.mark.parametrize("module", [suite_schema, baseline_schema], ids=["suite", "baseline"])
def test_the_published_json_schemas_are_generated_from_the_structs(module: typing.Any) -> None:
    text = json.dumps(module.json_schema(), indent=1, sort_keys=True) + "\n"
    assert module.SCHEMA_FILE.read_text(encoding="utf-8") == text, (
        f"{module.SCHEMA_FILE} is stale: run python -m {module.__name__}")


def check_jsonschema(schema: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--schemafile", str(schema), *map(str, files)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_check_jsonschema_accepts_the_shipped_suites_and_a_written_baseline_and_refuses_damage(
        tmp_path: Path) -> None:
    """The JSON Schemas say what the loaders accept: every shipped suite.toml and a baseline the writer wrote
    pass check-jsonschema; a floor of 250 and a value of 150 do not (editors and CI can check the files)."""
    shipped = sorted(ROOT.glob("suites/*/suite.toml"))
    assert len(shipped) >= 5
    for path in shipped:
        load_suite_config(path)
    ok = check_jsonschema(suite_schema.SCHEMA_FILE, *shipped)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = tmp_path / "suite.toml"
    bad.write_text(GOOD + "floor = 250\n")
    refused = check_jsonschema(suite_schema.SCHEMA_FILE, bad)
    assert refused.returncode == 1 and "250" in refused.stdout + refused.stderr

    rs = [SampleResult(suite="s", id="a", task="point", meta={}, score=Score(100.0, True, {"point_hit": True}))]
    written = baseline_mod.write(tmp_path / "baselines", "s", rs, {"model": "m"})
    ok = check_jsonschema(baseline_schema.SCHEMA_FILE, written)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    written.write_text(written.read_text().replace('"value": 100.0', '"value": 150'))
    assert check_jsonschema(baseline_schema.SCHEMA_FILE, written).returncode == 1


def test_the_schema_words_are_the_config_constants() -> None:
    """suite/config.py names the allowed words (for messages and options); the schema's Literals are the same."""
    hints = typing.get_type_hints(suite_schema.MetricTable, include_extras=True)
    assert typing.get_args(hints["average"]) == config_mod.AVERAGES
    refusals = typing.get_args(typing.get_args(suite_schema.Refusals)[0])
    assert refusals == config_mod.REFUSAL_POLICIES
    rules = typing.get_type_hints(suite_schema.BaselineTable, include_extras=True)["regressions"]
    assert typing.get_args(typing.get_args(rules)[0]) == config_mod.REGRESSION_RULES
    assert suite_schema.BaselineTable().min_slice == config_mod.MIN_SLICE
    safe = typing.get_args(suite_schema.SafeName)[1].pattern
    assert safe == rf"^(?!.*\.\.){config_mod.SAFE_NAME.pattern}$"


@pytest.mark.parametrize(("extra", "message"), [
    ("[scorer]\nrefusals = 'drop'", "scorer.refusals: 'drop' is not one of count, exclude: 'count' keeps"),
    ("[baseline]\ntolerence = 2", "baseline.tolerence: unknown field; allowed: confirm, min_slice, regressions, "
                                  "require_power, significant_level, slice_tolerance, tolerance"),
    ("[baseline]\nconfirm = -1", "baseline.confirm: must be >= 0, got -1 (re-asks of a regressed sample; 0: none, "
                                  "2 is a good start)"),
    ("[extra]\nx = 1", "[extra]: unknown field; allowed: baseline, latency, limit, loader, metrics, models"),
    ("[baseline]\nsignificant_level = 0.7", "baseline.significant_level: must be a number between 0 and 0.5, got 0.7"),
    ("[baseline]\nmin_slice = -1", "baseline.min_slice: must be >= 0, got -1 (0 gates every slice)"),
    ("[latency]\nbenchmark_samples = 0", "latency.benchmark_samples: must be >= 1, got 0"),
    ("[latency]\np95_ms = inf", "latency.p95_ms: must be a number >= 0 (and finite), got inf"),
    ("where = {a = true}", "metrics[0].where: 'a': expected a number, got True"),
    ("slices = ['d']\nslice_floors = {'d=1' = 'x'}", "metrics[0].slice_floors: 'd=1': expected int or float, got 'x'"),
    ("[models]\nocr = 1", "models: 'ocr': expected a table, got 1"),
    ("[limit]\nstratify = 'x'", "limit.stratify: expected a list of strings, got 'x'"),
])
def test_schema_problems_are_one_line_naming_field_value_and_fix(tmp_path: Path, extra: str, message: str) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(GOOD + extra + "\n")
    with pytest.raises(SuiteConfigError) as info:
        load_suite_config(path)
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value) and "\n" not in str(info.value)


def test_a_problem_inside_a_dict_names_the_entry_not_msgspecs_placeholder() -> None:
    """msgspec says ``$.samples[...].value``; the problem names the sample, its field and the value."""
    data = {"format": 1, "samples": {"good": {"right": True}, "bad": {"right": True, "value": 150}}}
    with pytest.raises(SchemaError) as info:
        convert(data, baseline_schema.SamplesFile, table="an object")
    problem = info.value.problem
    assert problem.path == ("samples", "bad", "value") and isinstance(problem.path[1], Key)
    assert problem.why == "must be a number between 0 and 100, got 150"
