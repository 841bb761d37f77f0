"""Options: prefixed flags, ini keys with the command line winning, and coexistence with other plugins."""

from __future__ import annotations

import json

import pytest
from conftest import Project

from pytest_uiground.options import OPTIONS

pytestmark = pytest.mark.slow


def test_every_flag_is_prefixed_except_the_model_cards() -> None:
    unprefixed = [o.flag for o in OPTIONS if not o.flag.startswith("--uiground-")]
    assert unprefixed == ["--model", "--model-path"]
    assert all(o.dest.startswith("uiground_") for o in OPTIONS)
    assert len({o.dest for o in OPTIONS}) == len(OPTIONS)


def test_ini_keys_set_options_and_the_command_line_wins(project: Project) -> None:
    ids = project.ids()
    project.pytester.makeini("[pytest]\nuiground_model = fakemodels:create\nuiground_batch_size = 3\n"
                             "uiground_report = from-ini\n")
    project.record(wrong=ids[:2])
    project.monkeypatch.setenv("UIGROUND_WRONG", ",".join(ids[:2]))
    result = project.pytester.runpytest_subprocess("suites/mini", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    summary = json.loads((project.root / "from-ini" / "summary.json").read_text())
    assert summary["model"] == "scripted"  # the ini's model, not the default ocr
    # The command line wins over the ini file.
    result = project.pytester.runpytest_subprocess("suites/mini", "-p", "no:cacheprovider", "--model", "center",
                                                   "--uiground-report", "from-cli")
    assert json.loads((project.root / "from-cli" / "summary.json").read_text())["model"] == "center"


def test_a_bad_ini_value_is_a_usage_error_naming_the_key(project: Project) -> None:
    project.pytester.makeini("[pytest]\nuiground_batch_size = zero\n")
    result = project.pytester.runpytest_subprocess("suites/mini", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini option uiground_batch_size = 'zero': expected a whole number >= 1*"])


def test_runs_beside_pytest_playwright_and_pytest_html(project: Project) -> None:
    """Both plugins define options of their own (``--device``, ``--html``): nothing clashes. Loaded as
    installed (entry points): the tests' runs otherwise leave them out (conftest's RUN_PLUGINS_OFF)."""
    project.record()
    project.monkeypatch.delenv("PYTEST_ADDOPTS")
    pytest.importorskip("pytest_playwright", reason="needs the [dev] extra (pip install -e '.[dev]')")
    pytest.importorskip("pytest_html", reason="needs the [dev] extra (pip install -e '.[dev]')")
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "fakemodels:create", "-p", "no:cacheprovider", "--html", "page.html",
        "--device", "Pixel 5", "--uiground-report", "out")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert (project.root / "page.html").is_file() and (project.root / "out" / "summary.json").is_file()


@pytest.mark.parametrize(("args", "message"), [
    (["--model", "openai"], "--model openai needs --uiground-api-base URL*"),
    (["--model", "openai", "--uiground-api-base", "http://127.0.0.1:9/v1", "--uiground-served-model", "m",
      "--uiground-parser", "nosuch"], "--uiground-parser 'nosuch' is unknown; known: elam, molmo, uitars*"),
    (["--model", "replay", "--uiground-replay-parser", "uground"], "--model replay needs --uiground-predictions*"),
    (["--model", "replay", "--uiground-predictions", "missing.jsonl", "--uiground-replay-parser", "uground"],
     "--uiground-predictions 'missing.jsonl': no such file"),
    (["--model", "center", "--uiground-parser", "nosuch"], "--uiground-parser 'nosuch' is unknown*"),
])
def test_model_settings_are_checked_once_at_start_up(project: Project, args: list[str], message: str) -> None:
    """One usage error before any test runs, not one failure per sample (also under xdist)."""
    project.monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    result = project.pytester.runpytest_subprocess("suites/mini", "-p", "no:cacheprovider", "-n", "2", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    assert result.stderr.str().count("ERROR:") == 1
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()
