"""``python -m pytest_uiground export hub``: a run's figures as the Hub's ``.eval_results/*.yaml``.

The schema below is transcribed from the Hub's documentation (``huggingface/hub-docs@064c754``
``docs/hub/eval-results.md``, "Adding Evaluation Results": a YAML list; each result has
``dataset.id`` and ``dataset.task_id`` (required), ``dataset.revision``, ``value`` (required),
``verifyToken``, ``date`` (ISO-8601), ``source`` (``url`` required when given, ``name``, ``user``),
``evaluation_framework``, ``notes``); every exported file is parsed as YAML and validated against it.
End to end: a WebClick run recorded with ``--snapshot-update`` is exported, and the file carries the
published dataset's id, the run's figure, date and provenance.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import Project

# Pillow before pytester snapshots sys.modules (its extension modules must not load twice).
from PIL import Image  # noqa: F401

from pytest_uiground.benchmarks.webclick.lookalike import write_webclick
from pytest_uiground.report import hub_export
from pytest_uiground.report import summary as summary_mod
from pytest_uiground.suite.config import SuiteConfigError, load_suite_config

SUITES = Path(__file__).parents[2] / "suites"
ISO_DATE = r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$"
SCHEMA: dict[str, Any] = {
    "type": "array", "minItems": 1,
    "items": {
        "type": "object", "required": ["dataset", "value"], "additionalProperties": False,
        "properties": {
            "dataset": {"type": "object", "required": ["id", "task_id"], "additionalProperties": False,
                        "properties": {"id": {"type": "string", "pattern": r"^[\w.-]+/[\w.-]+$"},
                                       "task_id": {"type": "string", "minLength": 1},
                                       "revision": {"type": "string"}}},
            "value": {"type": "number"},
            "verifyToken": {"type": "string"},
            "date": {"type": "string", "pattern": ISO_DATE},
            "source": {"type": "object", "required": ["url"], "additionalProperties": False,
                       "properties": {"url": {"type": "string", "pattern": "^https?://"}, "name": {"type": "string"},
                                      "user": {"type": "string"}}},
            "evaluation_framework": {"type": "string"},
            "notes": {"type": "string"},
        },
    },
}


def test_the_schema_accepts_the_documented_examples_and_refuses_a_broken_one() -> None:
    """The two examples of the documentation pass the transcribed schema; the schema is not vacuous."""
    full = yaml.safe_load('- dataset:\n    id: cais/hle\n    task_id: default\n    revision: abc\n  value: 20.90\n'
                          '  verifyToken: t\n  date: "2025-01-15"\n  source:\n    url: https://huggingface.co/spaces/x\n'
                          '    name: Eval traces\n    user: SaylorTwift\n  evaluation_framework: hle\n'
                          '  notes: "no-tools"\n')
    minimal = yaml.safe_load("- dataset:\n    id: Idavidrein/gpqa\n    task_id: gpqa_diamond\n  value: 0.412\n")
    jsonschema.validate(full, SCHEMA)
    jsonschema.validate(minimal, SCHEMA)
    for broken in ([{"dataset": {"id": "a/b"}, "value": 1}], [{"dataset": {"id": "a/b", "task_id": "t"}}],
                   [{"dataset": {"id": "a/b", "task_id": "t"}, "value": 1, "source": {"name": "x"}}]):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, SCHEMA)


def summary(suite: str, hub: str | None, metrics: dict[str, float | None]) -> summary_mod.SuiteSummary:
    prov: dict[str, Any] = {"model": "holo", "model_fingerprint": "abc123", "dataset_fingerprint": "d0d0",
                            "suite_version": "1", "date": "2026-11-29T05:00:00+00:00", "refusals": "count",
                            "packages": {"pytest-uiground": "0.1.0"}}
    if hub:
        prov |= {"hub_dataset": hub, "hub_task": "default"}
    return summary_mod.SuiteSummary.from_json({
        "suite": suite, "model": "holo", "n_samples": 9, "provenance": prov,
        "metrics": {k: {"value": v, "n": 9, "average": "micro"} for k, v in metrics.items()}})


def test_one_file_per_suite_and_variant_and_a_named_skip() -> None:
    made, skipped = hub_export.entries({
        "osworld_g": summary("osworld_g", "xlang-ai/OSWorld-G",
                             {"accuracy": 61.25, "accuracy_refusals_excluded": 64.0}),
        "mine": summary("mine", None, {"accuracy": 50.0}),
        "empty": summary("empty", "a/b", {"accuracy": None})}, "https://example.org/run/7")
    assert [e.name for e in made] == ["osworld_g.yaml", "osworld_g_accuracy_refusals_excluded.yaml"]
    head, variant = (e.result for e in made)
    assert head["value"] == 61.25 and variant["value"] == 64.0
    assert "metric accuracy;" in head["notes"] and "accuracy_refusals_excluded (a variant" in variant["notes"]
    assert "model holo, fingerprint abc123" in head["notes"] and "refusals count" in head["notes"]
    assert head["source"] == {"url": "https://example.org/run/7", "name": "pytest-uiground report (osworld_g)"}
    assert any(line.startswith("mine: no Hub dataset") and 'hub_dataset = "owner/name"' in line for line in skipped)
    assert any(line.startswith("empty: metric accuracy has no value") for line in skipped)
    for e in made:  # the hand-written YAML reads back as the result, and validates
        doc = yaml.safe_load(hub_export.to_yaml([e.result]))
        assert doc == [e.result]
        jsonschema.validate(doc, SCHEMA)


def test_awkward_text_survives_the_yaml() -> None:
    result = {"dataset": {"id": "a/b", "task_id": "x: y"}, "value": 1.5,
              "notes": 'model "q": #1 - a\nb \u00e9 {x} [y] & *z ! % @ `'}
    assert yaml.safe_load(hub_export.to_yaml([result])) == [result]


def test_hub_dataset_in_suite_toml_is_checked(tmp_path: Path) -> None:
    text = (SUITES / "webclick" / "suite.toml").read_text()
    path = tmp_path / "suite.toml"
    path.write_text(text)
    assert load_suite_config(path).hub_dataset == "Hcompany/WebClick"
    path.write_text(text.replace('hub_dataset = "Hcompany/WebClick"', 'hub_dataset = "WebClick"'))
    with pytest.raises(SuiteConfigError, match=r"suite\.hub_dataset: 'WebClick' is not a Hub dataset id.*owner/name"):
        load_suite_config(path)


@pytest.mark.slow
def test_export_a_recorded_run(project: Project, tmp_path: Path) -> None:
    write_webclick(tmp_path, n=6)
    dest = project.root / "suites" / "webclick"
    dest.mkdir(parents=True)
    shutil.copy(SUITES / "webclick" / "suite.toml", dest / "suite.toml")
    shutil.rmtree(project.root / "suites" / "mini")
    preds = project.root / "p.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": f"webclick-{i}", "output": "[500,500]"}) + "\n"
                             for i in range(6)))
    run = project.pytester.runpytest_subprocess(
        "suites/webclick", "-p", "no:cacheprovider", "-p", "no:randomly", "--uiground-cache", "off",
        "--uiground-data-path", str(tmp_path / "WebClick"), "--model", "replay", "--uiground-predictions", str(preds),
        "--uiground-replay-parser", "ui-venus", "--uiground-report", "out", "--benchmark-disable", "--snapshot-update")
    assert run.ret == 0, run.stdout.str()[-2000:]
    summary_json = project.summary()
    out = project.root / ".eval_results"
    done = project.pytester.run(sys.executable, "-m", "pytest_uiground", "export", "hub", "out", "--out", str(out),
                                "--source-url", "https://example.org/runs/1")
    assert done.ret == 0, done.stderr.str()
    files = sorted(p.name for p in out.iterdir())
    assert files == ["webclick.yaml"]
    doc = yaml.safe_load((out / "webclick.yaml").read_text())
    jsonschema.validate(doc, SCHEMA)
    [result] = doc
    assert result["dataset"] == {"id": "Hcompany/WebClick", "task_id": "default"}
    assert result["value"] == summary_json["metrics"]["accuracy"]["value"]
    assert result["date"] == summary_json["provenance"]["date"]
    assert summary_json["provenance"]["dataset_fingerprint"] in result["notes"]
    assert "model replay" in result["notes"] and "gate verdict PASS" in result["notes"]
    assert result["source"]["url"] == "https://example.org/runs/1"
    missing = project.pytester.run(sys.executable, "-m", "pytest_uiground", "export", "hub", "nowhere")
    assert missing.ret == 2 and "nowhere: no summary.json; pass the folder a run wrote" in missing.stderr.str()
