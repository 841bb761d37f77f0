"""The wiring itself (pytest_uiground.plugin, pytest_uiground.controller): what the hooks register on
the controller process, what they collect, and which process state they leave, checked on a real
configured pytest without running a suite (the runs themselves are in tests/run and tests/gate)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Project

from pytest_uiground import plugin
from pytest_uiground.controller import Controller
from pytest_uiground.run import STATE
from pytest_uiground.run.collect import SuiteFile
from pytest_uiground.run.state import WorkerState


def test_configure_registers_the_controller_and_the_process_state(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfigure("-p", "no:cacheprovider")
    controller = config.pluginmanager.get_plugin("uiground-controller")
    assert isinstance(controller, Controller)
    assert controller.options.model.name == "ocr", "the default model"
    state = config.stash[STATE]
    assert isinstance(state, WorkerState) and state.worker_id == "master"
    assert config.pluginmanager.get_plugin("uiground-progress") is not None


def test_a_suite_file_is_collected_and_nothing_else(pytester: pytest.Pytester) -> None:
    (pytester.path / "suite.toml").write_text("[suite]\nname = 'x'\n")
    (pytester.path / "other.toml").write_text("")
    session = pytest.Session.from_config(pytester.parseconfigure("-p", "no:cacheprovider"))
    got = plugin.pytest_collect_file(Path(pytester.path / "suite.toml"), session)
    assert isinstance(got, SuiteFile)
    assert plugin.pytest_collect_file(Path(pytester.path / "other.toml"), session) is None


def test_a_report_folder_that_is_a_file_is_refused_at_start_up(pytester: pytest.Pytester) -> None:
    (pytester.path / "out").write_text("not a folder")
    result = pytester.runpytest_subprocess("--uiground-report", "out", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "is an existing file" in result.stderr.str()


@pytest.mark.slow
def test_no_benchmark_warning_among_the_progress_under_xdist(project: Project) -> None:
    """pytest-benchmark warns from every xdist worker, at its exit, that benchmarks are off; test_latency
    already skips saying so, and the warning landed among the progress dots of every -n run."""
    project.record()
    result = project.run("-n", "2")
    assert result.ret == 0, result.stdout.str()
    assert "Benchmarks are automatically disabled" not in result.stdout.str() + result.stderr.str()
