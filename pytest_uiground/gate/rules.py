"""The gate's own rules: settings that cannot work, what a baseline records, when an update is refused.

They are plain functions of the parts of a suite's result they read (its loaded suite, records and
checks) and the options, apart from the hooks that sequence them (:mod:`pytest_uiground.controller`),
so each rule reads on its own. They take those parts, not the
:class:`~pytest_uiground.gate.outcome.SuiteOutcome` that :mod:`.outcome` assembles with them: the
outcome reads the rules, the rules never read the outcome (issue 42: no circle, even type-only).
"""

from __future__ import annotations

import datetime as dt
import platform
from collections.abc import Sequence
from dataclasses import replace
from importlib import metadata
from typing import TYPE_CHECKING, Any

import pytest

from pytest_uiground.options import RunOptions
from pytest_uiground.record.files import hex_digest
from pytest_uiground.record.result import SampleResult, id_list

if TYPE_CHECKING:  # types only: the rules read checks and suites built elsewhere
    from pytest_uiground.gate.checks import Check
    from pytest_uiground.suite.config import MetricSpec, SuiteConfig
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


def setting(options: RunOptions) -> str:
    """The run's setting as model cards name it: ``native``, or ``zoom-in`` with the cropping strategy and
    its depth (UI-Venus-1.5, Qwen-UI-Agent and ClawGUI report zoom-in, crop then ground again, as its own
    column beside native scores; a figure must say which it is)."""
    if options.cropping == "none":
        return "native"
    return f"zoom-in ({options.cropping}, depth {options.cropping_depth})"


def provenance(loaded: LoadedSuite, results: Sequence[SampleResult], options: RunOptions, *,
               model: dict[str, Any] | None, judge: dict[str, Any] | None) -> dict[str, Any]:
    """What the run records about a suite's result (the suite, its records, the model and judge that
    answered): in the baseline it writes and in its summary."""
    model = model or {}
    return {
        "model": model.get("name", options.model.name),
        "setting": setting(options),
        "model_path": options.model.path,
        "model_fingerprint": model.get("fingerprint"),
        "model_revision": options.model.revision,
        **dataset_provenance(loaded, refusal_policy(options, loaded.config)),
        **({"judge": judge} if judge else {}),
        "n_samples": len(results),
        **({"hub_dataset": loaded.config.hub_dataset, "hub_task": loaded.config.hub_task or "default"}
           if loaded.config.hub_dataset else {}),
        "packages": _versions(),
        "date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
    }


def dataset_provenance(loaded: LoadedSuite, refusals: str | None = None) -> dict[str, Any]:
    """What identifies the data a baseline was recorded on; compared on every later run. A suite
    with a refusal policy records it (``refusals``) and folds it into the fingerprint: the same
    samples over another denominator are another figure."""
    revision = loaded.config.loader_options.get("revision")
    fingerprint = loaded.fingerprint
    if refusals is not None:
        fingerprint = hex_digest(f"{fingerprint}\0refusals={refusals}", short=True)
    return {
        "suite_version": loaded.config.version,
        "dataset_fingerprint": fingerprint,
        "dataset_revision": str(revision) if revision is not None else None,
        **({"refusals": refusals} if refusals is not None else {}),
    }


def update_refusal(name: str, results: Sequence[SampleResult], checks: Sequence[Check],
                   options: RunOptions) -> str | None:
    """Why ``--snapshot-update`` must not write the baseline of suite ``name`` (its records and checks), or None.

    A sample error (a dead server, a missing image) is not a wrong answer: recording it as
    one would turn every later wrong answer on that sample into a "known failure". An
    update whose absolute floors fail would record a model the suite itself rejects.
    """
    reasons: list[str] = []
    errored = sorted(r.id for r in results if r.error is not None)
    if errored and not options.keep_errored:
        reasons.append(
            f"{len(errored)} sample(s) errored in this run ({id_list('errors', errored, 20)}); an error is not a "
            "wrong answer. Fix the cause and rerun, or pass --uiground-keep-errored to keep their previous "
            "baseline entries")
    floors = [p for c in checks for p in c.problems()]
    if floors and not options.force_update:
        reasons.append("its absolute floors fail (" + "; ".join(floors)
                       + "); pass --uiground-force-update to record it anyway")
    if not reasons:
        return None
    return f"refusing to update the baseline of {name!r}: " + " Also, ".join(reasons)


def refusal_policy(options: RunOptions, config: SuiteConfig) -> str | None:
    """Whether this run counts a suite's refusal samples (``count``) or leaves them out (``exclude``):
    ``--uiground-refusals`` when given, else the suite's ``[scorer] refusals``; None for a suite that
    declares no policy (it has no refusal samples, so the option does not apply)."""
    if config.refusals is None:
        return None
    return options.refusals or config.refusals


def refusal_metrics(config: SuiteConfig, policy: str | None) -> tuple[MetricSpec, ...]:
    """The suite's metrics under ``policy``: a metric that names no ``refusals`` of its own follows the
    policy, and gets a twin under the other rule (``accuracy_refusals_excluded`` beside a counted
    ``accuracy``, ``accuracy_refusals_counted`` beside an excluded one; no slices, floor or tolerance
    of its own), so a run gives both figures a paper may quote."""
    if policy is None:
        return config.metrics
    other = "exclude" if policy == "count" else "count"
    out: list[MetricSpec] = []
    twins: list[MetricSpec] = []
    for m in config.metrics:
        if m.refusals is not None or m.mean_of:
            out.append(m)
            continue
        out.append(replace(m, refusals=policy))
        twins.append(replace(m, name=f"{m.name}_refusals_{REFUSAL_WORD[other]}", refusals=other, slices=(),
                             floor=None, slice_floors={}))
    return (*out, *twins)


REFUSAL_WORD = {"count": "counted", "exclude": "excluded"}


def regression_rule(options: RunOptions, config: SuiteConfig) -> tuple[str, float]:
    """How this run judges a suite's per-sample flips (:mod:`.flips`) and at which level: the command
    line (or ini key) when given, else the suite's ``[baseline]`` table."""
    return (options.regressions or config.regressions,
            options.significant_level if options.significant_level is not None else config.significant_level)


def confirm_depth(options: RunOptions, config: SuiteConfig) -> int:
    """How many re-asks ``--uiground-confirm`` allows a regressed sample in this suite: the command line (or
    ini key) when given, else the suite's ``[baseline] confirm`` (0: none)."""
    return options.confirm if options.confirm is not None else config.confirm


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
