"""The pytest entry point: options, hooks and fixtures, wired to plain modules.

Nothing here imports torch, transformers or datasets; model adapters are imported
by name only when the model fixture is first used.
"""

from __future__ import annotations

import warnings
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground import options, registry
from pytest_uiground.controller import Controller
from pytest_uiground.models.overrides import check_replay_parser
from pytest_uiground.record import image
from pytest_uiground.report import writers
from pytest_uiground.report.terminal import Progress, teststatus
from pytest_uiground.run import STATE
from pytest_uiground.run.build import build_model
from pytest_uiground.run.collect import SLICE_MARKER, SuiteFile, add_slice_keywords, only_new, slice_mark
from pytest_uiground.run.state import WorkerState
from pytest_uiground.run.stop import StopOnSigterm
from pytest_uiground.run.worker import as_expected_failure
from pytest_uiground.shard.plan import planned
from pytest_uiground.suite.config import SuiteConfigError
from pytest_uiground.suite.items import SAMPLE_ARG, SUITE_ATTR, SUITE_FILE
from pytest_uiground.suite.loading import SuiteLoadError


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_uiground import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


HARNESS_WARNINGS = (
    # pytest-benchmark: test_latency is a benchmark test, so every -n N run says it disabled benchmarks
    # (test_latency skips under xdist, saying why).
    "ignore:Benchmarks are automatically disabled because xdist",
    # syrupy lends its --snapshot-update flag only (the plugin writes its own snapshots): under
    # --collect-only -n N its unused-snapshot check hears from no worker and says so.
    "ignore:.*received 0 of [0-9]+ xdist worker snapshot reports:UserWarning",
)
"""Warnings of the plugins this one builds on, about their own machinery, ignored by message (issue 38: a
project with ``filterwarnings = ["error"]`` stopped on them under ``-n 2``). Later ini lines win, so a
project's ``error`` still applies to everything else."""


def pytest_configure(config: pytest.Config) -> None:
    opts = options.parse(config)
    image.set_pixel_limit(opts.max_pixels)
    workerinput = getattr(config, "workerinput", None)
    worker_id = workerinput["workerid"] if workerinput else "master"
    config.stash[STATE] = WorkerState(options=opts, worker_id=worker_id)
    config.pluginmanager.register(StopOnSigterm(config), "uiground-sigterm")
    # pytest-benchmark warns from every process of an xdist run, at its exit (pytest_unconfigure, outside
    # pytest's warning capture, so the ini lines below cannot reach it), that it disabled benchmarks: among the
    # progress dots, or an error in a strict project; test_latency already skips under -n saying why.
    warnings.filterwarnings("ignore", message="Benchmarks are automatically disabled because xdist")
    for line in HARNESS_WARNINGS:  # a strict project (filterwarnings = error) must not fail on the harness's own
        config.addinivalue_line("filterwarnings", line)
    config.addinivalue_line("markers", f"{SLICE_MARKER}(**metadata): a sample's metadata (slices), set by "
                            f"pytest-uiground; select with -m \"{SLICE_MARKER}(theme='dark')\"")
    if workerinput is None:
        config.pluginmanager.register(Controller(config, opts), "uiground-controller")
        config.pluginmanager.register(Progress(config, opts.progress_s), "uiground-progress")
        failures = writers.Failures()
        if opts.report_dir is not None:
            config.pluginmanager.register(writers.ReportFolder(opts.report_dir, failures), "uiground-report")
        markdown = writers.MarkdownSummary(opts, failures)
        config.pluginmanager.register(markdown, "uiground-markdown")
        config.pluginmanager.register(writers.JUnitProperties(), "uiground-junit")
        config.pluginmanager.register(writers.TerminalSection(opts, failures, markdown), "uiground-terminal")
        if opts.shard is not None:
            from pytest_uiground.shard.manifest import ShardManifest

            config.pluginmanager.register(ShardManifest(config, opts), "uiground-shard")
        if options.value(config, "uiground_probe"):
            from pytest_uiground.probe.plugin import ProbePlugin

            config.pluginmanager.register(ProbePlugin(config, opts), "uiground-probe")


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    return teststatus(report)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == SUITE_FILE:
        return SuiteFile.from_parent(parent, path=file_path)
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    path = getattr(metafunc.module, SUITE_ATTR, None)
    if path is None or SAMPLE_ARG not in metafunc.fixturenames:
        return
    state = metafunc.config.stash[STATE]
    try:
        loaded = state.suite(path)
        state.baseline(loaded.config.name)  # read once; a damaged one fails the aggregate checks
        model = state.options.model
        check_replay_parser(model.name, model.replay_parser, loaded.config.name, loaded.config.models)
    except (SuiteConfigError, SuiteLoadError, registry.UnknownNameError, ValueError) as exc:
        raise SuiteFile.CollectError(str(exc)) from exc
    # --uiground-only-new's new samples, then --uiground-limit's subset and --uiground-shard's part of them
    pool = only_new(loaded.samples, state.baseline(loaded.config.name)) if state.options.only_new else None
    samples = planned(loaded, state.options, pool)
    metafunc.parametrize(SAMPLE_ARG, [pytest.param(s, id=s.id, marks=slice_mark(s)) for s in samples])


def pytest_itemcollected(item: pytest.Item) -> None:
    add_slice_keywords(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    as_expected_failure(item, report)
    return report


def pytest_runtest_teardown(item: pytest.Item) -> None:
    stop = item.config.stash[STATE].stop  # the judge is unusable: every later judged sample would fail alike
    if stop:
        item.session.shouldstop = stop


def pytest_sessionfinish(session: pytest.Session) -> None:
    session.config.stash[STATE].close()


@pytest.fixture(scope="session")
def uiground_model(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The model under test, loaded once per process (once per xdist worker)."""
    state: WorkerState = request.config.stash[STATE]
    opts = state.options
    model = state.take_model()
    if model is None:
        model, state.model_load_s = build_model(opts, state.worker_id)
    from pytest_uiground.models.cropping import wrap

    model = wrap(model, opts.cropping, opts.cropping_depth)
    predictor = state.predictor(model)  # the prediction strategy, picked once for this model
    yield model
    predictor.close()
    model.close()
