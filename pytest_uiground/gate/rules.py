"""The gate's own rules: settings that cannot work, what a baseline records, when an update is refused.

They are plain functions of a suite's result (:class:`~pytest_uiground.gate.outcome.SuiteOutcome`)
and the options, apart from the hooks that sequence them (:mod:`pytest_uiground.controller`), so
each rule reads on its own.
"""

from __future__ import annotations

import datetime as dt
import platform
from importlib import metadata
from typing import TYPE_CHECKING, Any

import pytest

from pytest_uiground.options import RunOptions
from pytest_uiground.record.result import id_list

if TYPE_CHECKING:  # types only: the rules read checks and suites built elsewhere
    from pytest_uiground.gate.outcome import SuiteOutcome
    from pytest_uiground.suite.config import SuiteConfig
    from pytest_uiground.suite.loading import LoadedSuite


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("pytest-uiground", "pytest", "syrupy", "numpy", "pillow", "rapidocr-onnxruntime", "torch",
                 "transformers"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def provenance(out: SuiteOutcome, options: RunOptions) -> dict[str, Any]:
    """What the run records about a suite's result: in the baseline it writes and in its summary."""
    model = out.model or {}
    return {
        "model": model.get("name", options.model.name),
        "model_path": options.model.path,
        "model_fingerprint": model.get("fingerprint"),
        "model_revision": options.model.revision,
        **dataset_provenance(out.loaded),
        **({"judge": out.judge} if out.judge else {}),
        "n_samples": len(out.results),
        "packages": _versions(),
        "date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
    }


def dataset_provenance(loaded: LoadedSuite) -> dict[str, Any]:
    """What identifies the data a baseline was recorded on; compared on every later run."""
    revision = loaded.config.loader_options.get("revision")
    return {
        "suite_version": loaded.config.version,
        "dataset_fingerprint": loaded.fingerprint,
        "dataset_revision": str(revision) if revision is not None else None,
    }


def update_refusal(out: SuiteOutcome, options: RunOptions) -> str | None:
    """Why ``--snapshot-update`` must not write this suite's baseline, or None.

    A sample error (a dead server, a missing image) is not a wrong answer: recording it as
    one would turn every later wrong answer on that sample into a "known failure". An
    update whose absolute floors fail would record a model the suite itself rejects.
    """
    name = out.loaded.config.name
    reasons: list[str] = []
    errored = sorted(r.id for r in out.results if r.error is not None)
    if errored and not options.keep_errored:
        reasons.append(
            f"{len(errored)} sample(s) errored in this run ({id_list('errors', errored, 20)}); an error is not a "
            "wrong answer. Fix the cause and rerun, or pass --uiground-keep-errored to keep their previous "
            "baseline entries")
    floors = [p for c in out.checks for p in c.problems()]
    if floors and not options.force_update:
        reasons.append("its absolute floors fail (" + "; ".join(floors)
                       + "); pass --uiground-force-update to record it anyway")
    if not reasons:
        return None
    return f"refusing to update the baseline of {name!r}: " + " Also, ".join(reasons)


def regression_rule(options: RunOptions, config: SuiteConfig) -> tuple[str, float]:
    """How this run judges a suite's per-sample flips (:mod:`.flips`) and at which level: the command
    line (or ini key) when given, else the suite's ``[baseline]`` table."""
    return (options.regressions or config.regressions,
            options.significant_level if options.significant_level is not None else config.significant_level)


def check_start(config: pytest.Config, options: RunOptions) -> None:
    """Settings that cannot work fail once, at start-up, before any sample runs."""
    from pytest_uiground.models.hf.device import device_problem

    report = options.report_dir
    if report is not None and report.exists() and not report.is_dir():
        raise pytest.UsageError(f"--uiground-report {str(report)!r} is an existing file; the report is a folder "
                                "(samples.jsonl, summary.json, report.html): name a folder")
    base = options.baselines_dir
    if options.baselines_explicit and not options.updating and not base.is_dir():
        raise pytest.UsageError(
            f"--uiground-baselines {str(base)!r} does not exist; check the path (a mistyped folder would compare "
            "against nothing), or create it with --snapshot-update")
    problem = device_problem(options.model.device)
    if problem:
        raise pytest.UsageError(problem)
