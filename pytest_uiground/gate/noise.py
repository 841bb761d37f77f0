"""A model's own noise, measured by ``--uiground-repeat K``: the run-to-run flip rate.

Why a flip *rate* and not the share of unstable samples: the question a user asks before choosing a
gate rule is "if I run this model twice, on how many samples do the two runs disagree?", which is what
the gate sees between a baseline and a rerun. With K answers per sample, right ``k`` times, the share
of the K(K-1) ordered pairs of answers that disagree is ``2k(K-k) / (K(K-1))``; its mean over the
samples is an unbiased estimate of the probability that two runs disagree on a sample drawn at random
(for K = 2 it is simply the share of samples that flipped). The 95 % interval is a percentile
bootstrap over the samples (:func:`.stats.bootstrap_mean_interval`), as for graded scores.

The rate is reported overall and per slice (the slices the suite's metrics use), and the gate can
bound it (``--uiground-max-flip-rate``): a backend whose noise grows past what the team accepted fails
the run even when the accuracy holds.

``--uiground-confirm`` measures no rate (only regressed samples are re-asked, and only until one answer is
right): :class:`Confirmation` says what it cost and what it found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_uiground.gate import stats
from pytest_uiground.gate.metrics import slice_labels
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.result import SampleResult


def disagreement(right: int, of: int) -> float:
    """The share of ordered pairs of the ``of`` answers that disagree (0 for fewer than two answers)."""
    return 2.0 * right * (of - right) / (of * (of - 1)) if of > 1 else 0.0


@dataclass(frozen=True)
class Noise:
    """A suite's measured noise: K answers per sample, the flip rate (percent) and its 95 % interval."""

    repeats: int
    samples: int  # samples with K answers
    unstable: tuple[str, ...]  # right in some answers and wrong in others
    flip_rate: float
    interval: tuple[float, float]
    by_slice: tuple[tuple[str, int, float], ...] = ()  # (label, samples, flip rate), highest first
    bound: float | None = None  # --uiground-max-flip-rate

    @property
    def over(self) -> bool:
        return self.bound is not None and self.flip_rate > self.bound

    def text(self) -> str:
        lo, hi = self.interval
        line = (f"stability over {self.repeats} answers per sample: {len(self.unstable)} of {self.samples} samples "
                f"unstable; run-to-run flip rate {self.flip_rate:.2f} % (95 % interval {lo:.2f} to {hi:.2f})")
        if self.bound is not None:
            line += f", bound {self.bound:g} %" + (" EXCEEDED" if self.over else "")
        noisy = [f"{label} {rate:.1f} % of {n}" for label, n, rate in self.by_slice if rate > 0][:5]
        if noisy:
            line += "; noisiest slices: " + ", ".join(noisy)
        return line

    def reason(self) -> str:
        return f"run-to-run flip rate {self.flip_rate:.2f} % is above its bound {self.bound:g} %"

    def to_json(self) -> dict[str, Any]:
        return {"repeats": self.repeats, "samples": self.samples, "unstable": list(self.unstable),
                "flip_rate": round(self.flip_rate, 4), "interval": [round(v, 4) for v in self.interval],
                "by_slice": {label: {"samples": n, "flip_rate": round(rate, 4)} for label, n, rate in self.by_slice},
                "bound": self.bound}


def measure(results: Sequence[SampleResult], keys: Sequence[str], *, seed: int = 0,
            bound: float | None = None) -> Noise | None:
    """The noise of ``results`` that carry repeat answers; None when the run was not repeated."""
    rep = [r for r in results if r.stability is not None and r.stability.how == "repeat" and r.stability.of > 1]
    if not rep:
        return None
    rates = [100.0 * disagreement(r.stability.right, r.stability.of) for r in rep if r.stability is not None]
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for r, d in zip(rep, rates, strict=True):
        for label in slice_labels(r.meta, keys):
            sums[label] = sums.get(label, 0.0) + d
            counts[label] = counts.get(label, 0) + 1
    by_slice = tuple(sorted(((label, n, sums[label] / n) for label, n in counts.items()), key=lambda t: (-t[2], t[0])))
    return Noise(repeats=max(r.stability.of for r in rep if r.stability is not None), samples=len(rep),
                 unstable=tuple(sorted(r.id for r in rep if r.stability is not None and r.stability.unstable)),
                 flip_rate=sum(rates) / len(rates),
                 interval=stats.bootstrap_mean_interval(rates, seed=seed), by_slice=by_slice, bound=bound)


@dataclass(frozen=True)
class Confirmation:
    """What ``--uiground-confirm`` did in a run: regressed samples re-asked (and how many stayed regressions,
    wrong every time), fixed ones re-asked (and how many stayed right every time), the calls it cost."""

    regressed: int
    confirmed: int
    fixed: int
    fixes_confirmed: int
    calls: int

    @property
    def samples(self) -> int:
        return self.regressed + self.fixed

    def text(self) -> str:
        def n(k: int, word: str) -> str:
            return f"{k} {word}{'s' * (k != 1)}"

        line = (f"confirmation: {n(self.regressed, 'regressed sample')} re-asked alone ({self.confirmed} wrong "
                f"every time: confirmed; {self.regressed - self.confirmed} right once: unstable, no flip)")
        if self.fixed:
            line += (f", {n(self.fixed, 'fixed sample')} ({self.fixes_confirmed} right every time; "
                     f"{self.fixed - self.fixes_confirmed} wrong once: no flip)")
        return line + f"; {n(self.calls, 'more call')}"


def confirmation(results: Sequence[SampleResult]) -> Confirmation | None:
    """The run's confirmations, from the records' ``confirm`` stabilities; None when none was asked."""
    asked = [(r.outcome == Outcome.FIXED, r.stability) for r in results
             if r.stability is not None and r.stability.how == "confirm"]
    if not asked:
        return None
    fixes = [st for fix, st in asked if fix and st is not None]
    regs = [st for fix, st in asked if not fix and st is not None]
    return Confirmation(regressed=len(regs), confirmed=sum(st.right == 0 for st in regs), fixed=len(fixes),
                        fixes_confirmed=sum(st.right == st.of for st in fixes),
                        calls=sum(st.of for st in regs + fixes))
