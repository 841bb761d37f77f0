"""The smallest drop a suite can see: a green gate means little unless the drop you care about would be red.

A suite of 50 screens on a model that flips 5 % of its answers from run to run cannot tell a 5-point
drop from noise, and nothing in lmms-eval, VLMEvalKit or NeMo Evaluator's ``nel compare`` (McNemar and a
``--max-drop`` gate, no power) says so. Here every suite, and every gated slice, is given the drop it
detects 95 times in 100 under the rule that judges it:

* ``each``: one regressed sample fails the run, so the drop is one sample (exact for a deterministic
  model; a noisy model under ``each`` fails on noise instead, which :mod:`.flips` is for).
* ``significant``: the drop is ``d`` samples, right in the baseline and wrong now, among the samples the
  baseline measured as stable (the paired part of :func:`pytest_uiground.gate.flips.judge_flips`), on top
  of the model's noise: ``B`` more right-to-wrong and ``C`` wrong-to-right flips, each Poisson with mean
  ``m / 2`` (noise flips go both ways alike). The power is the chance that the exact one-sided McNemar
  test on ``(d + B, C)`` is below the paired part's share of the level, summed exactly over ``B`` and
  ``C``; the detectable drop is the smallest ``d`` whose power is at least 95 %. A drop on the unstable
  samples is the rate test's, and is not counted here (so the figure is an upper bound for a drop that
  falls partly on them), nor is a slice's own test (a drop spread over the slices). Simulated with the
  gate's own functions, the figure agrees within a point (tests/gate/test_power.py).

``m``, the noise flips expected between two runs on the paired part, comes from the best measurement at
hand (:func:`noise_flips`, which says which): the baseline's repeats (``s: [k, K]``: the samples it saw
flip are tested apart, but some noisy samples answer K times alike by chance and stay in the paired
part: for a sample right with probability ``p`` that chance is ``p^K + (1-p)^K``, so each measured
unstable sample stands for ``(p^K + (1-p)^K) / (1 - p^K - (1-p)^K)`` hidden ones flipping with
probability ``2p(1-p)``, ``p = k / K``); else this run's repeats (each sample's ``2k(K-k)/(K(K-1))``, the
flip rate of :mod:`.noise`); else this run's own fixes, twice over (a fix is noise or an improvement,
never a regression, and noise goes both ways). The baseline's accuracy bounds the drop: only samples it
had right can go wrong.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from statistics import NormalDist
from typing import Any

POWER = 0.95
"""The detection probability a detectable drop is quoted at."""

MAX_SAMPLES = 1_000_000
"""How far :func:`samples_needed` looks."""

_EXACT_UP_TO = 400  # discordant totals above this take the normal approximation of the critical count
_EXACT_NOISE = 600.0  # expected noise flips above this take the normal approximation of the power


@lru_cache(maxsize=65536)
def critical(n: int, level: float) -> int:
    """The fewest regressions among ``n`` discordant samples that the exact one-sided McNemar test finds
    significant at ``level`` (``n + 1`` when none is)."""
    if n > _EXACT_UP_TO:  # continuity-corrected normal tail: within a count of the exact value at this size
        return math.floor(n / 2 + 0.5 + NormalDist().inv_cdf(1 - level) * math.sqrt(n) / 2) + 1
    # P(X >= b) for X ~ Binomial(n, 1/2), in exact integers (times 2^n) from the top down: the one-sided
    # McNemar p-value of b regressions and n - b fixes (stats.mcnemar_one_sided), without a sum per b.
    threshold = Fraction(level) * 2**n
    tail, term = 0, 1  # term: C(n, b)
    for b in range(n, -1, -1):
        tail += term
        if not tail < threshold:
            return b + 1
        term = term * b // (n - b + 1)
    return 0


def _poisson(mean: float) -> tuple[list[int], list[float]]:
    """The Poisson law of ``mean``, cut where less than 1e-12 of it is left on either side."""
    if mean <= 0:
        return [0], [1.0]
    spread = 8 * math.sqrt(mean) + 10
    lo, hi = max(0, math.floor(mean - spread)), math.ceil(mean + spread)
    ks = list(range(lo, hi + 1))
    return ks, [math.exp(k * math.log(mean) - mean - math.lgamma(k + 1)) for k in ks]


def power(drop: int, noise: float, level: float) -> float:
    """The chance that ``drop`` samples made wrong, on top of ``noise`` expected noise flips (half each
    way), fail the paired test at ``level`` (module docstring)."""
    import numpy as np

    if noise > _EXACT_NOISE:  # b - c is d plus a difference of two Poissons: normal, variance the noise
        z = NormalDist().inv_cdf(1 - level)
        return NormalDist().cdf((drop - z * math.sqrt(drop + noise)) / math.sqrt(noise))
    ks, ps = _poisson(noise / 2)
    k = np.asarray(ks)
    p = np.asarray(ps)
    b = drop + k[:, None]  # regressions: the drop and the noise's right-to-wrong half
    n = b + k[None, :]  # + fixes: the noise's other half
    first = int(n.min())
    table = np.asarray([critical(v, level) for v in range(first, int(n.max()) + 1)])
    return float(((b >= table[n - first]) * (p[:, None] * p[None, :])).sum())


def detectable(right: int, noise: float, level: float) -> int | None:
    """The smallest drop (samples) detected with 95 % power, at most ``right`` (the samples the baseline
    had right); None when even all of them would not be."""
    if right <= 0 or power(right, noise, level) < POWER:
        return None
    lo, hi = 0, 1
    while power(hi, noise, level) < POWER:
        lo, hi = hi, min(right, 2 * hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power(mid, noise, level) >= POWER:
            hi = mid
        else:
            lo = mid
    return hi


def samples_needed(n: int, right: int, noise: float, level: float, tolerance: float) -> int | None:
    """How many samples (of the same accuracy and noise per sample) detect a drop of ``tolerance`` points;
    None when no suite up to :data:`MAX_SAMPLES` does."""
    if n <= 0 or tolerance <= 0:
        return None

    def ok(size: int) -> bool:
        d = detectable(round(right * size / n), noise * size / n, level)
        return d is not None and d <= beyond(tolerance, size)

    hi = n
    while not ok(hi):
        if hi >= MAX_SAMPLES:
            return None
        hi = min(MAX_SAMPLES, 2 * hi)
    lo = max(hi // 2, n)
    while hi - lo > max(1, hi // 100):  # to a percent: a figure to act on, not to the sample
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def beyond(tolerance: float, n: int) -> int:
    """The smallest drop, in samples of ``n``, that is more than ``tolerance`` points."""
    return math.floor(tolerance * n / 100.0 + 1e-9) + 1


@dataclass(frozen=True)
class Detectable:
    """The smallest drop a suite (``slice`` None) or a slice detects 95 times in 100 under its rule."""

    label: str  # the check's label: "accuracy", "accuracy.platform=web"
    rule: str
    n: int  # samples in the check
    paired: int  # of them in the paired (stable) part
    right: int  # of those, right in the baseline: the most that can drop
    noise: float  # expected noise flips between two runs in the paired part
    level: float  # the paired part's level
    source: str  # where the noise figure comes from
    samples: int | None  # the drop, in samples; None: not even every right sample would be seen
    tolerance: float | None = None  # the check's allowed drop, points
    needed: int | None = None  # samples that would detect a drop of the tolerance (when it does not)

    @property
    def points(self) -> float | None:
        return None if self.samples is None or not self.n else 100.0 * self.samples / self.n

    @property
    def short(self) -> bool:
        """Some drop beyond the tolerance can pass: the detectable drop is more samples than the smallest drop
        beyond it (never under ``each``, where one sample is detected and no drop is smaller)."""
        if self.tolerance is None:
            return False
        return self.samples is None or self.samples > beyond(self.tolerance, self.n)

    def text(self) -> str:
        what = "this suite" if "." not in self.label else f"slice {self.label.split('.', 1)[1]}"
        if self.samples is None:
            head = (f"{what} cannot detect a drop 95 times in 100 even if all {self.right} samples the baseline "
                    f"had right went wrong")
        else:
            head = (f"{what} detects a drop of {self.points:.1f} points ({self.samples} sample"
                    f"{'s' * (self.samples != 1)}) 95 times in 100")
        if self.tolerance is not None:
            head += f"; your tolerance is {self.tolerance:.1f}"
            if self.short:
                head += (f": a drop of {self.tolerance:.1f} can pass unseen; about {self.needed} samples "
                         f"({self.needed - self.n:+d}) would detect it" if self.needed is not None else
                         f": a drop of {self.tolerance:.1f} can pass unseen, and no suite under "
                         f"{MAX_SAMPLES:,} samples at this noise would detect it")
        return head

    def basis(self) -> str:
        if self.rule != "significant":
            return "rule 'each': one regressed sample fails the run"
        return (f"{self.paired} paired samples, {self.right} right in the baseline, {self.noise:.1f} noise flips "
                f"expected ({self.source}), one-sided McNemar at {self.level:.3g} on a plain rerun; a rerun with "
                f"--uiground-repeat or --uiground-confirm sees smaller drops)")

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "rule": self.rule, "n": self.n, "paired": self.paired, "right": self.right,
                "noise_flips": round(self.noise, 3), "level": self.level, "source": self.source,
                "samples": self.samples, "points": None if self.points is None else round(self.points, 2),
                "tolerance": self.tolerance, "short": self.short, "samples_needed": self.needed,
                "text": self.text()}


def hidden_noise(stabilities: Iterable[tuple[int, int]]) -> float:
    """Expected noise flips between two runs among the samples the baseline's repeats saw as stable
    (module docstring): the noisy samples that answered K times alike by chance."""
    total = 0.0
    for k, big_k in stabilities:
        if not 0 < k < big_k:
            continue
        p = k / big_k
        alike = p ** big_k + (1 - p) ** big_k
        total += alike / (1 - alike) * 2 * p * (1 - p)
    return total


def noise_flips(paired_ids: Sequence[str], base_stability: Mapping[str, tuple[int, int] | None],
                run_stability: Mapping[str, tuple[int, int]], fixed: int, n_stable_all: int) -> tuple[float, str]:
    """Expected noise flips between two runs on ``paired_ids`` and where the figure comes from (module
    docstring). ``base_stability``: the baseline's ``s`` of every sample (None without repeats);
    ``run_stability``: this run's repeats; ``fixed``: this run's fixes among ``paired_ids``;
    ``n_stable_all``: the suite's paired samples, over which the baseline's hidden noise is spread."""
    def disagreement(right: int, of: int) -> float:  # gate.noise's, kept here to keep the import chain short
        return 2.0 * right * (of - right) / (of * (of - 1)) if of > 1 else 0.0

    measured = [s for s in base_stability.values() if s is not None]
    if measured:
        per = hidden_noise(measured) / max(1, n_stable_all)
        return per * len(paired_ids), f"the baseline's {max(s[1] for s in measured)} answers per sample"
    mine = [run_stability[i] for i in paired_ids if i in run_stability]
    if mine:
        return sum(disagreement(k, big_k) for k, big_k in mine), \
            f"this run's {max(s[1] for s in mine)} answers per sample"
    return 2.0 * fixed, f"this run's {fixed} fixed sample{'s' * (fixed != 1)}, twice over"
