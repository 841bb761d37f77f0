"""Score: the judgement of one prediction against one sample, and the task-kind rules.

Every scorer returns a value in 0..100 (100 for a correct binary answer) so that
metrics can average any task the same way, plus the binary ``correct`` where the task
has one (McNemar and Wilson intervals need it). What metrics and baselines may read is
in ``components`` (named booleans or numbers: ``point_hit``, ``iou``, ...), each with
its own format-error flag; everything else a scorer wants to show goes in ``notes``,
which nothing computes with. The built-in rules that produce it are in
:mod:`pytest_uiground.scoring.rules`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_uiground.record import codec
from pytest_uiground.record.codec import json_field

Component = bool | float


@dataclass(slots=True)
class Score:
    """One sample's judgement.

    ``value``: 0..100. ``correct``: the binary outcome, None for graded scores.
    ``format_error``: the output could not be read (scored wrong and counted).
    ``components``: named parts that metrics (``score = "point_hit"``) and baselines read.
    ``component_format_errors``: per component, whether *that* part could not be read
    (a verdict row whose point parsed but whose verdict did not); missing means
    ``format_error``. ``notes``: diagnostics for people (expected/got, judge replies).
    """

    value: float = 0.0  # defaults: what a record written without them is read as
    correct: bool | None = None
    format_error: bool = False
    components: dict[str, Component] = field(default_factory=dict, metadata=json_field(omit="empty"))
    component_format_errors: dict[str, bool] = field(default_factory=dict, metadata=json_field(omit="empty"))
    notes: dict[str, Any] = field(default_factory=dict, metadata=json_field(omit="empty"))

    def component(self, name: str) -> Component | None:
        return self.components.get(name)

    def format_error_of(self, name: str | None) -> bool:
        if name is None:
            return self.format_error
        return self.component_format_errors.get(name, self.format_error)

    def to_json(self) -> dict[str, Any]:
        return codec.to_json(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Score:
        return codec.from_json(cls, data)

    @classmethod
    def failed(cls) -> Score:
        """What an errored sample counts as: wrong, value 0."""
        return cls(0.0, False)


def refusals(scores: Iterable[Score]) -> int | None:
    """How many answers were explicit refusals; None when no sample asks for one and none came.

    Reports show the figure only where it means something (a suite with refusal targets, or a
    model that refused), so suites without refusals keep their output unchanged.
    """
    seen = [s.components["refused"] for s in scores if "refused" in s.components]
    return sum(bool(v) for v in seen) if seen else None
