"""Read a published run's answers for ``--uiground-against`` and score them as this run was scored.

Why here: the answers are replayed (:class:`~pytest_uiground.models.offline.replay.ReplayModel`, the
replay format: ``{"sample_id", "output"}`` per line, matched by the suite's id or the dataset's own) with
the family that reads them (``--uiground-against-parser``, default ``--uiground-replay-parser``), the
suite's own overrides for that family, and scored by the suite's scorer, on the samples this run ran.
A sample with no record in their file, or that errored in this run, has no pair (listed, not counted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_uiground.gate.against import Against, pair

if TYPE_CHECKING:  # types only: the chain from the plugin stays short
    from pytest_uiground.gate.outcome import SuiteOutcome
    from pytest_uiground.options import RunOptions


def parser_of(options: RunOptions) -> str | None:
    return options.against_parser or options.model.replay_parser


def check(options: RunOptions) -> None:
    """The file is replay JSON lines, once at start-up: one error naming the file and line, before any test."""
    from pytest_uiground.models.base import ModelLoadError
    from pytest_uiground.models.offline.replay import read_records

    if options.against is None:
        return
    try:
        read_records(options.against)
    except ModelLoadError as exc:
        raise pytest.UsageError(f"--uiground-against: {exc}".replace("--uiground-predictions ", "")) from None


def compute(out: SuiteOutcome, options: RunOptions) -> Against | None:
    if options.against is None:
        return None
    from pytest_uiground.models import overrides
    from pytest_uiground.models.base import ModelLoadError
    from pytest_uiground.models.offline.replay import ReplayModel

    parser = parser_of(options) or ""
    file = str(options.against)
    rule = out.loaded.scorer.rule
    if rule is None:
        return Against(file, parser, 0, (), (), 0, (), note=f"the suite's scorer {out.loaded.scorer.name!r} is judged; "
                       "answers of another run are not judged again here")
    try:
        model = ReplayModel(options.against, parser)
    except ModelLoadError as exc:
        return Against(file, parser, 0, (), (), 0, (), note=str(exc))
    table = parser if parser in out.loaded.config.models else None
    model.use_overrides(overrides.resolve(out.loaded.config.name, parser, out.loaded.config.models.get(table or "")))
    by_id = {s.id: s for s in out.loaded.samples}
    ran = [r for r in out.results if r.id in by_id]
    samples = [by_id[r.id] for r in ran]
    ours = {r.id: (None if r.error is not None else bool(r.score.correct)) for r in ran}
    theirs: dict[str, bool | None] = {}
    for sample, pred in zip(samples, model.predict(samples), strict=True):
        theirs[sample.id] = None if pred.error is not None else bool(rule(sample, pred).correct)
    return pair(file, parser, ours, theirs, [r.id for r in ran])
