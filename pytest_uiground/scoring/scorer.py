"""Scorers: how a suite turns a prediction into a :class:`~pytest_uiground.record.score.Score`.

The core holds no benchmark's rules. A suite names its scorer in ``suite.toml``
(``[scorer] name = "..."``), as a registered name in the ``pytest_uiground.scorers``
entry-point group or as ``package.module:attribute``; without one it gets ``task``,
the built-in rules by task kind (:func:`pytest_uiground.scoring.rules.score`).

A scorer is either a plain function ``(sample, prediction) -> Score`` (a rule), or a
:class:`Scorer` whose ``judged`` function also gets a pinned, cached LLM judge and the
repeat index (``(sample, prediction, judge, repeat) -> Score``); a judged scorer names
the hash of its prompt templates, which joins the judge's fingerprint so a baseline
judged with other prompts is never compared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from pytest_uiground import registry
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import Score

if TYPE_CHECKING:  # the type only: scoring does not build or import the judge
    from pytest_uiground.judges.base import Judge

DEFAULT = "task"

RuleFn = Callable[[Sample, Prediction], Score]
JudgedFn = Callable[[Sample, Prediction, "Judge", int], Score]


@dataclass(frozen=True)
class Scorer:
    """A suite's scoring: exactly one of ``rule`` and ``judged``."""

    name: str
    rule: RuleFn | None = None
    judged: JudgedFn | None = None
    prompt_hash: str = ""

    def __post_init__(self) -> None:
        if (self.rule is None) == (self.judged is None):
            raise ValueError(f"scorer {self.name!r}: give exactly one of rule= and judged=")

    @property
    def needs_judge(self) -> bool:
        return self.judged is not None


@cache
def load(name: str) -> Scorer:
    """The scorer registered as ``name`` (or at ``module:attribute``), checked at collection."""
    obj = registry.resolve(registry.SCORER_GROUP, name, what="scorer", option="[scorer] name in suite.toml")
    if isinstance(obj, Scorer):
        return obj
    if callable(obj):
        return Scorer(name=name, rule=obj)
    raise registry.UnknownNameError(
        f"scorer {name!r} is a {type(obj).__name__}; expected a function (sample, prediction) -> Score "
        "or a pytest_uiground.scoring.scorer.Scorer"
    )
