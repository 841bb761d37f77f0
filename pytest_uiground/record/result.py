"""SampleResult: the one record a sample leaves behind, from its test to the report.

It travels from the xdist worker to the controller inside the test report's
``user_properties`` as one JSON text (one code path for ``-n 0`` and ``-n N``; JUnit XML
writes the same text as the ``uiground`` property, so it parses as JSON there too), is written to
``samples.jsonl`` as soon as it arrives, and is everything metrics, checks,
baselines and reports read. It holds the sample's identity and slices, the model's
:class:`~pytest_uiground.record.prediction.Prediction` (raw text stored once, there) and its
:class:`~pytest_uiground.record.score.Score`; a baseline is compared by reading the same
records with the baseline's scores (:mod:`pytest_uiground.gate.metrics`), never by
building fake records.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_uiground.record import codec
from pytest_uiground.record.codec import json_field
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import Score

PROPERTY = "uiground"
#: Version of the JSON form of a record (``samples.jsonl``).
RECORD_VERSION = 2


@dataclass(frozen=True)
class Stability:
    """How often one sample was answered right when asked more than once: ``right`` of ``of``.

    ``how`` says which asking: ``"repeat"`` (``--uiground-repeat``: every sample K times, each
    repeat in another batch and order) or ``"confirm"`` (``--uiground-confirm``: a regressed sample
    re-asked K times alone). ``answers`` are the extra answers in words (pixels where the screen's
    size is known), so a person sees at once whether two clicks sit a pixel apart on a box edge;
    ``predictions`` the extra answers themselves, from which a merge of shards counts ``right`` of ``of``
    again with the suite's scorer (:mod:`pytest_uiground.shard.merge`: the counts are never taken on trust)."""

    right: int
    of: int
    how: str = "repeat"
    answers: list[str] = field(default_factory=list, metadata=json_field(omit="empty"))
    predictions: list[Prediction] = field(default_factory=list, metadata=json_field(omit="empty"))

    @property
    def unstable(self) -> bool:
        return 0 < self.right < self.of

    def text(self) -> str:
        word = {"repeat": "asked", "confirm": "re-asked alone"}.get(self.how, self.how)
        shown = "; ".join(self.answers[:5]) + (" ..." if len(self.answers) > 5 else "")
        return f"right {self.right} of {self.of} {word}" + (f" ({shown})" if shown else "")


@dataclass(slots=True)
class SampleResult:
    suite: str
    id: str
    task: str
    meta: Mapping[str, str] = field(default_factory=dict)
    score: Score = field(default_factory=Score.failed)
    prediction: Prediction | None = None
    error: str | None = None
    latency_ms: float | None = None
    outcome: Outcome | None = None  # against the baseline; set by the worker, never None in a record it sends
    # "hit", or why a cache entry was ignored
    cache: str | None = field(default=None, metadata=json_field(omit="none"))
    # identity of the model, on the first record of a suite per process
    model: dict[str, Any] | None = field(default=None, metadata=json_field(omit="none"))
    # the judge's fingerprint, likewise
    judge: dict[str, Any] | None = field(default=None, metadata=json_field(omit="none"))
    # --uiground-repeat / --uiground-confirm: right k of K answers
    stability: Stability | None = field(default=None, metadata=json_field(omit="none"))
    # the baseline's answer, on a sample whose outcome changed (regression, unstable, fixed)
    before: Prediction | None = field(default=None, metadata=json_field(omit="none"))

    @property
    def value(self) -> float:
        return self.score.value

    @property
    def correct(self) -> bool | None:
        return self.score.correct

    @property
    def format_error(self) -> bool:
        return self.score.format_error

    @property
    def raw(self) -> str:
        return self.prediction.raw if self.prediction is not None else ""

    @property
    def right(self) -> bool:
        """Binary view for per-sample outcomes; graded scores count as right at >= 50."""
        return right_of(self.score)

    @property
    def counted_latency_ms(self) -> float | None:
        """The latency that counts, the one rule for the latency check, the summary's percentiles, the
        per-endpoint table and the report: a finite time of a sample predicted in this run without error
        (a cached prediction keeps the time of the run that made it; an errored one timed a failure)."""
        t = self.latency_ms
        if t is None or isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
            return None
        return float(t) if self.error is None and self.cache != "hit" else None

    def to_json(self) -> dict[str, Any]:
        return {"v": RECORD_VERSION, **codec.to_json(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SampleResult:
        return codec.from_json(cls, data)


def right_of(score: Score) -> bool:
    """Binary view of a score; graded scores count as right at >= 50."""
    return score.correct if score.correct is not None else score.value >= 50.0


def property_value(record: Mapping[str, Any]) -> str:
    """The record as the ``uiground`` user property: JSON (JUnit XML writes properties with ``str``)."""
    return json.dumps(record, sort_keys=True)


def records_in(user_properties: Iterable[tuple[str, object]]) -> list[dict[str, Any]]:
    """The records a test report carries (JSON text; a dict is accepted too)."""
    out: list[dict[str, Any]] = []
    for name, value in user_properties:
        if name != PROPERTY:
            continue
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def sample_line(sample: Sample | None, result: SampleResult) -> str:
    """One line for a sample: id, instruction, expected, got (the full record is in samples.jsonl
    and report.html). Boxes and points are in pixels of the screenshot when its header can be read
    (what a person compares with the image), else in the internal 0..1 frame, and say which."""
    size = _size(sample)
    want: object = None
    if sample is not None:
        t = sample.target
        want = (_box(t.box, size) if t.box is not None and sample.task != "verdict"
                else t.verdict or t.option or t.answer or t.box)
        want = "a refusal (the element is absent)" if t.refusal else want
    got = answer_text(result.prediction, size, format_error=result.format_error)
    instruction = _clip(sample.instruction, 60) if sample is not None else "?"
    line = f"{result.id}: {instruction!r} expected {want}, got {got}"
    if result.before is not None:
        line += f"; the baseline got {answer_text(result.before, size, format_error=result.before.format_error)}"
    if result.stability is not None:
        line += f"; {result.stability.text()}"
    return line


def answer_text(pred: Prediction | None, size: tuple[int, int] | None, *, format_error: bool = False) -> str:
    """A prediction in words, pixels where the screen's size is known: what a person compares."""
    if pred is None:
        return "None"
    if format_error:
        return f"format error {_clip(pred.raw, 40)!r}"
    got = (_point(pred.point.x, pred.point.y, size) if pred.point is not None
           else "a refusal" if pred.refused else pred.verdict or pred.option or pred.answer
           or (_box(pred.box, size) if pred.box is not None else None))
    return str(got)


def sample_size(sample: Sample | None) -> tuple[int, int] | None:
    """The screenshot's size in pixels from its header, or None when it cannot be read."""
    return _size(sample)


def _size(sample: Sample | None) -> tuple[int, int] | None:
    if sample is None:
        return None
    try:
        return sample.image.dimensions()
    except Exception:  # an unreadable image is the sample's error, reported elsewhere; the line goes on
        return None


def _box(box: Sequence[float], size: tuple[int, int] | None) -> str:
    if size is None:
        return "box [" + ", ".join(f"{v:.3f}" for v in box) + "] (x1, y1, x2, y2 as 0..1 of the screen)"
    w, h = size
    x0, y0, x1, y1 = box
    return f"box [{round(x0 * w)}, {round(y0 * h)}, {round(x1 * w)}, {round(y1 * h)}] px (x1, y1, x2, y2)"


def _point(x: float, y: float, size: tuple[int, int] | None) -> str:
    if size is None:
        return f"point ({x:.3f}, {y:.3f}) (0..1 of the screen)"
    return f"point ({round(x * size[0])}, {round(y * size[1])}) px"


def id_list(title: str, ids: Sequence[str], limit: int = 10) -> str:
    """``title (n): a, b, c ... (+k more)``: sample ids in one line, capped."""
    shown = ", ".join(ids[:limit])
    more = f" ... (+{len(ids) - limit} more)" if len(ids) > limit else ""
    return f"{title} ({len(ids)}): {shown}{more}"
