"""The plugin's documented hooks (pytest_uiground.hookspecs): a third-party plugin (here a conftest.py)
receives every sample's record, each suite's provenance and outcome with its verdict, and the whole
run's outcomes, on the controller, with and without ``-n 2``; what it adds to the provenance reaches
the baseline and the summary, which carry one provenance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Project

from pytest_uiground import hookspecs

OBSERVER = '''
import json, os

SEEN = {"samples": [], "provenance": [], "outcomes": [], "run": []}


def _save():
    with open(os.environ["UIGROUND_OBSERVED"], "w") as fh:
        json.dump(SEEN, fh)


def pytest_uiground_sample_result(config, result):
    assert not hasattr(config, "workerinput"), "hooks run on the controller only"
    SEEN["samples"].append([result.suite, result.id, result.outcome.value if result.outcome else None])


def pytest_uiground_provenance(config, outcome, provenance):
    provenance["ci_run"] = "build-17"
    SEEN["provenance"].append(outcome.name)


def pytest_uiground_suite_outcome(config, outcome):
    SEEN["outcomes"].append([outcome.name, outcome.verdict.status, list(outcome.verdict.reasons),
                             len(outcome.results)])


def pytest_uiground_run_outcome(config, outcomes, interrupted):
    SEEN["run"].append([[o.name for o in outcomes], interrupted])
    _save()
'''


def test_every_hook_is_declared_with_a_docstring() -> None:
    names = [n for n in dir(hookspecs) if n.startswith("pytest_uiground_")]
    assert names == ["pytest_uiground_provenance", "pytest_uiground_run_outcome", "pytest_uiground_sample_result",
                     "pytest_uiground_suite_outcome"]
    assert all((getattr(hookspecs, n).__doc__ or "").strip() for n in names)


@pytest.mark.slow
def test_a_third_party_plugin_observes_results_and_outcomes(project: Project, xdist: list[str]) -> None:
    project.pytester.makeconftest(OBSERVER)
    observed = project.root / "observed.json"
    project.monkeypatch.setenv("UIGROUND_OBSERVED", str(observed))
    ids = project.ids()
    assert project.run("--snapshot-update", xdist=xdist).ret == 0
    first = json.loads(observed.read_text())
    assert first["outcomes"] == [["mini", "PASS", [], len(ids)]]
    stored = json.loads((project.root / "baselines" / "mini" / "samples.json").read_text())
    assert stored["provenance"]["ci_run"] == "build-17", "the hook's provenance is what the baseline records"

    result = project.run("--uiground-report", "out", wrong=ids[:2], xdist=xdist)
    assert result.ret == 1
    seen = json.loads(observed.read_text())
    assert sorted(i for _, i, _ in seen["samples"]) == ids, "every sample's record, once"
    assert {o for s, i, o in seen["samples"] if i in ids[:2]} == {"regression"}
    assert seen["provenance"] == ["mini"]
    assert seen["outcomes"] == [["mini", "FAIL", ["1 of 4 checks failed", "2 samples regressed"], len(ids)]]
    assert seen["run"] == [[["mini"], False]]
    summary = project.summary()
    assert summary["provenance"]["ci_run"] == "build-17"
    assert summary["verdict"]["reasons"] == seen["outcomes"][0][2], "the plugin and the summary read one verdict"


@pytest.mark.slow
def test_a_built_in_writer_can_be_switched_off_like_any_plugin(project: Project) -> None:
    """The writers are plugins of their own: ``-p no:uiground-markdown`` drops the Markdown summary alone."""
    project.record()
    result = project.run("--uiground-markdown", "summary.md", "-p", "no:uiground-markdown")
    assert result.ret == 0, result.stdout.str()
    assert not (project.root / "summary.md").exists()
    assert "uiground verdict for mini: PASS" in result.stdout.str()
    with_it = project.run("--uiground-markdown", "summary.md")
    assert with_it.ret == 0 and (project.root / "summary.md").is_file()


def test_the_writers_name_each_suites_files_and_their_failures(tmp_path: Path) -> None:
    from pytest_uiground.report import writers

    assert writers.artifacts(None, "mini", 1) == []
    assert writers.artifacts(tmp_path, "mini", 1) == [tmp_path / "samples.jsonl", tmp_path / "summary.json",
                                                      tmp_path / "report.html"]
    assert writers.artifacts(tmp_path, "mini", 2)[1] == tmp_path / "mini" / "summary.json"
    failures = writers.Failures()
    failures.add(tmp_path / "x", OSError(28, "No space left on device"), "the report")
    assert failures == [f"uiground: could not write the report at {tmp_path / 'x'}: No space left on device "
                        "(errno 28)"]
