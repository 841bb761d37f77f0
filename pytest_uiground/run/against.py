"""Read a published run's answers for ``--uiground-against`` and score them as this run was scored.

Why here: the file is read in the layout it was published in (:mod:`pytest_uiground.record.published`
tells it from the file: replay JSON lines, ``eval_screenspot_pro.py``'s log, Gelato's evaluation log)
and scored by the suite's scorer, on the samples this run ran. Replay answers (``{"sample_id",
"output"}`` per line, matched by the suite's id or the dataset's own) are read by the family that
wrote them (``--uiground-against-parser``, default ``--uiground-replay-parser``) with the suite's own
overrides for it. A published log's records are matched by screenshot and instruction; their raw
answers are read by that family when one is named, else the authors' own reading (the point in
pixels the log records, or its refusal) is scored, and the samples where the log's own verdict
differs from this suite's are listed. A sample with no record in their file, or that errored in this
run, has no pair (listed, not counted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_uiground.gate.against import Against, pair

if TYPE_CHECKING:  # types only: the chain from the plugin stays short
    from pytest_uiground.gate.outcome import SuiteOutcome
    from pytest_uiground.models.overrides import Overrides
    from pytest_uiground.options import RunOptions
    from pytest_uiground.record.prediction import Prediction
    from pytest_uiground.record.published import Answer
    from pytest_uiground.record.sample import Sample

#: The ``parser`` shown for a published log scored on the authors' own reading of each answer.
OWN_READING = "the log's own reading"


def parser_of(options: RunOptions) -> str | None:
    return options.against_parser or options.model.replay_parser


def check(options: RunOptions) -> None:
    """The file reads in a known layout, once at start-up: one error naming the file and record, before any
    test; replay answers need a family to read them."""
    from pytest_uiground.models.base import ModelLoadError
    from pytest_uiground.models.offline.replay import read_records
    from pytest_uiground.record import published

    if options.against is None:
        return
    try:
        layout = published.layout_of(options.against)
        if layout != published.REPLAY:
            published.read(options.against)
            return
    except published.PublishedError as exc:
        raise pytest.UsageError(f"--uiground-against: {exc}") from None
    if parser_of(options) is None:
        from pytest_uiground.models import families

        raise pytest.UsageError(f"--uiground-against {options.against}: which family's reader reads its answers? "
                                f"Give --uiground-against-parser NAME ({', '.join(families.names())})")
    try:
        read_records(options.against)
    except ModelLoadError as exc:
        raise pytest.UsageError(f"--uiground-against: {exc}".replace("--uiground-predictions ", "")) from None


def compute(out: SuiteOutcome, options: RunOptions) -> Against | None:
    if options.against is None:
        return None
    from pytest_uiground.models.base import ModelLoadError
    from pytest_uiground.models.offline.replay import ReplayModel
    from pytest_uiground.record import published

    parser = parser_of(options) or ""
    file = str(options.against)
    rule = out.loaded.scorer.rule
    if rule is None:
        return Against(file, parser, 0, (), (), 0, (), note=f"the suite's scorer {out.loaded.scorer.name!r} is judged; "
                       "answers of another run are not judged again here")
    by_id = {s.id: s for s in out.loaded.samples}
    ran = [r for r in out.results if r.id in by_id]
    samples = [by_id[r.id] for r in ran]
    ours = {r.id: (None if r.error is not None else bool(r.score.correct)) for r in ran}
    found: dict[str, Answer] = {}
    left: list[Answer] = []
    try:
        layout = published.layout_of(options.against)
        if layout == published.REPLAY:
            model = ReplayModel(options.against, parser)
        else:
            parser = options.against_parser or ""  # a log is read by a family only when one is named for it
            log = published.read(options.against)
            found, left = published.match(log.answers, [published.SampleKey(
                s.id, s.image.path.name if s.image.path is not None else None, s.instruction) for s in samples])
            model = ReplayModel.of_records(options.against, parser, {sid: a.raw for sid, a in found.items()})
    except (ModelLoadError, published.PublishedError) as exc:
        return Against(file, parser, 0, (), (), 0, (), note=str(exc))
    theirs: dict[str, bool | None] = {}
    if layout == published.REPLAY or parser:
        model.use_overrides(_overrides(out, parser))
        for sample, pred in zip(samples, model.predict(samples), strict=True):
            theirs[sample.id] = None if pred.error is not None else bool(rule(sample, pred).correct)
    else:
        for sample in samples:
            got = _own_reading(sample, found[sample.id]) if sample.id in found else None
            theirs[sample.id] = None if got is None else bool(rule(sample, got).correct)
    if layout == published.REPLAY:
        return pair(file, parser, ours, theirs, [r.id for r in ran])
    disagree = [s.id for s in samples if s.id in found and found[s.id].verdict is not None
                and theirs.get(s.id) is not None and theirs[s.id] != found[s.id].verdict]
    return pair(file, parser or OWN_READING, ours, theirs, [r.id for r in ran], layout=layout, unmatched=len(left),
                disagree=disagree)


def _overrides(out: SuiteOutcome, parser: str) -> Overrides:
    from pytest_uiground.models import overrides

    table = parser if parser in out.loaded.config.models else None
    return overrides.resolve(out.loaded.config.name, parser, out.loaded.config.models.get(table or ""))


def _own_reading(sample: Sample, answer: Answer) -> Prediction | None:
    """The authors' reading of their answer as a prediction: their point (pixels of the original screenshot,
    divided by its size), their refusal, or an unreadable answer (a format error); None where the
    screenshot's size cannot be read (no pair)."""
    from pytest_uiground.record.geometry import Point
    from pytest_uiground.record.image import ImageError
    from pytest_uiground.record.prediction import Prediction

    if answer.point is not None:
        try:
            w, h = sample.image.dimensions()
        except ImageError:
            return None
        return Prediction(point=Point(answer.point[0] / w, answer.point[1] / h), raw=answer.raw)
    if answer.refused:
        return Prediction(raw=answer.raw, refused=True)
    return Prediction(raw=answer.raw, format_error=True, note="the published log has no point for this answer")
