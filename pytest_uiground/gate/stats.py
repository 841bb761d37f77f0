"""Statistics for accuracy and regressions: intervals, paired tests, percentiles.

A benchmark score without an interval invites reading noise as progress, and a
regression gate that compares two unpaired means wastes most of its power. These
pure functions give the plugin what it needs to say "this drop is real":

* :func:`wilson_interval` for binary accuracy (well behaved at 0 % and 100 %, where
  the textbook normal interval collapses to a point);
* :func:`mcnemar_exact` for a paired binary comparison against a baseline, using
  only the samples whose outcome changed;
* :func:`paired_bootstrap_delta` / :func:`bootstrap_mean_interval` for graded
  scores, where no closed form exists;
* :func:`percentile` for latency p50/p95.

Everything is deterministic (seeded), so a report rendered twice from the same
results is byte-identical and a baseline comparison never flakes. numpy is imported
lazily so that importing the plugin stays cheap.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from fractions import Fraction
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from pytest_uiground.record.result import SampleResult

# Largest number of float64/int64 cells materialised at once by the bootstrap
# (4M cells x 8 bytes = 32 MB for the indices, the same again for the gathered
# values), so a 50,000-sample suite stays well under ~100 MB of scratch memory.
_MAX_CELLS_PER_CHUNK = 4_000_000

# Relative cost of one multinomial level versus one resampled index (measured: about
# 90 ns per binomial draw against 6 ns per index draw and gather).
_LEVEL_COST = 16

# McNemar's tail sum stops once the omitted terms are below 2**-_TAIL_BITS of the
# total: smaller than double precision (2**-53) can represent, so the float is unchanged.
_TAIL_BITS = 60


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def _z_for(confidence: float) -> float:
    """Two-sided standard normal quantile; pure Python so Wilson needs no numpy/scipy."""
    _check_confidence(confidence)
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``n``, in percent (0..100).

    Wilson rather than the normal (Wald) interval because suites are often small
    and accuracies often near 0 % or 100 %, where Wald gives zero-width or
    out-of-range intervals. ``n == 0`` carries no information, hence ``(0, 100)``.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes!r}, n={n!r}")
    z = _z_for(confidence)
    if n == 0:
        return (0.0, 100.0)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = (z / denom) * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    # At the edges the formula's bound is exactly 0 or 1 algebraically; pin it so
    # rounding cannot report e.g. -1e-17 % for a suite with no successes.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (100.0 * low, 100.0 * high)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts.

    ``b``: right in the baseline and wrong now; ``c``: wrong in the baseline and
    right now. Under "no change" each discordant sample is a fair coin, so
    ``p = min(1, 2 * sum_{k <= min(b, c)} C(b + c, k) / 2**(b + c))``. The tail is
    summed in exact integers because binomial coefficients of a few hundred samples
    exceed the float range and ``2**-(b + c)`` underflows; only the final ratio is
    rounded to a float (and is 0.0 only when the true p-value is below ~1e-308).

    The sum runs from the largest term ``C(n, min(b, c))`` downwards and stops once
    everything left is provably below 2**-60 of the running total, which is beyond
    double precision; this keeps 100,000 discordant samples at milliseconds instead
    of seconds without changing the float that comes out.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b!r}, c={c!r}")
    n = b + c
    m = min(b, c)
    if 2 * m >= n:
        # b == c (including n == 0): the one-sided tail already holds half the mass.
        return 1.0
    term = math.comb(n, m)
    tail = 0
    k = m
    while True:
        tail += term
        if k == 0:
            break
        # Terms k-1 .. 0 are each smaller than ``term`` (k < n/2) and there are k of them.
        if k * term <= tail >> _TAIL_BITS:
            break
        term = term * k // (n - k + 1)  # C(n, k - 1), exact
        k -= 1
    p = Fraction(2 * tail, 2**n)
    return min(1.0, float(p))


def mcnemar_one_sided(b: int, c: int) -> float:
    """Exact one-sided McNemar p-value that regressions outnumber fixes: ``P(X >= b)`` for
    ``X ~ Binomial(b + c, 1/2)``, the chance of ``b`` or more of the discordant samples going the
    bad way when each is a fair coin (no change). It is half the two-sided value when ``b > c``
    (:func:`mcnemar_exact` sums the lower tail of the same symmetric binomial), and at least 1/2
    otherwise: more fixes than regressions is never evidence of a regression."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b!r}, c={c!r}")
    if b > c:
        return mcnemar_exact(b, c) / 2
    if b == 0:
        return 1.0
    # P(X >= b) = 1 - P(X <= b - 1), and P(X <= b - 1) is the lower tail at b - 1 < (b + c) / 2.
    return 1.0 - mcnemar_exact(c + 1, b - 1) / 2


def _check_bootstrap_args(n_resamples: int, confidence: float) -> None:
    """Validate up front so bad arguments fail even on inputs that skip resampling."""
    _check_confidence(confidence)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples!r}")


def _as_array(values: Sequence[float], what: str) -> npt.NDArray[np.float64]:
    import numpy as np

    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{what}: expected a flat sequence of numbers, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        # A NaN score would silently turn every mean and bound into NaN.
        raise ValueError(f"{what}: every value must be finite, got NaN or infinity")
    return arr


def _bootstrap_bounds(
    values: npt.NDArray[np.float64], *, n_resamples: int, confidence: float, seed: int
) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean of ``values`` (non-empty).

    A resample draws ``n`` sample indices uniformly with replacement from a seeded
    Generator. When the values take few distinct levels (binary scores: paired
    differences are only -100, 0 or 100) the resample mean depends only on how many
    draws land on each level, which is Multinomial(n, level frequencies): drawing
    those counts directly is the same bootstrap distribution at O(levels) instead of
    O(n) per resample. Otherwise indices are drawn and gathered, in row chunks so
    memory stays bounded. The path and chunk size depend only on the input, so the
    random stream, and therefore the result, is identical for identical input.
    """
    import numpy as np

    _check_bootstrap_args(n_resamples, confidence)
    n = values.shape[0]
    if float(values.min()) == float(values.max()):
        # Degenerate bootstrap distribution: every resample has the same mean. Return
        # it exactly instead of letting summation rounding widen it by an ulp or two.
        mean = float(values.mean())
        return (mean, mean)
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=np.float64)
    levels, counts = np.unique(values, return_counts=True)
    # A multinomial row costs about one binomial draw per level, roughly 16 times an
    # index draw plus gather, hence the threshold.
    use_levels = levels.shape[0] * _LEVEL_COST <= n
    width = levels.shape[0] if use_levels else n
    rows = max(1, _MAX_CELLS_PER_CHUNK // width)
    freqs = counts / n
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        if use_levels:
            draws = rng.multinomial(n, freqs, size=stop - start)
            means[start:stop] = (draws @ levels) / n
        else:
            idx = rng.integers(0, n, size=(stop - start, n))
            means[start:stop] = values[idx].mean(axis=1)
    alpha = 1.0 - confidence
    low, high = np.percentile(means, [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)])
    return (float(low), float(high))


def paired_bootstrap_delta(
    current: Sequence[float],
    baseline: Sequence[float],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Mean difference ``current - baseline`` and its paired percentile-bootstrap interval.

    Paired (the same resampled indices for both runs) because both runs score the
    same samples: per-sample difficulty cancels, so the interval is far narrower
    than comparing two independent means. Returns ``(delta, low, high)``; empty
    input has no evidence of change, hence ``(0, 0, 0)``.
    """
    _check_bootstrap_args(n_resamples, confidence)
    cur = _as_array(current, "current")
    base = _as_array(baseline, "baseline")
    if cur.shape != base.shape:
        raise ValueError(
            f"paired scores must have the same length: current has {cur.shape[0]}, "
            f"baseline has {base.shape[0]}"
        )
    if cur.shape[0] == 0:
        return (0.0, 0.0, 0.0)
    diffs = cur - base
    delta = float(cur.mean() - base.mean())
    if float(diffs.min()) == float(diffs.max()):
        # Constant difference: every resample has mean delta, so the interval is the
        # point itself; returned directly so delta and the bounds agree to the last bit
        # (mean(current) - mean(baseline) and mean(diffs) can round differently).
        return (delta, delta, delta)
    low, high = _bootstrap_bounds(diffs, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return (delta, low, high)


def bootstrap_mean_interval(
    values: Sequence[float],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean, for graded (non-binary) scores.

    Graded scores (IoU-based, judged answers) have no binomial model, so Wilson does
    not apply. Empty input says nothing about a 0..100 score, hence ``(0, 100)``,
    matching :func:`wilson_interval` for ``n == 0``.
    """
    _check_bootstrap_args(n_resamples, confidence)
    arr = _as_array(values, "values")
    if arr.shape[0] == 0:
        return (0.0, 100.0)
    return _bootstrap_bounds(arr, n_resamples=n_resamples, confidence=confidence, seed=seed)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) with linear interpolation, numpy's default.

    Used for latency p50/p95; NaN for no values, since a latency of 0 ms for a suite
    that never ran would look like a real (and excellent) measurement.
    """
    import numpy as np

    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile q must be in [0, 100], got {q!r}")
    arr = _as_array(values, "values")
    if arr.shape[0] == 0:
        return math.nan
    return float(np.percentile(arr, q))


def accuracy_interval(
    values: Sequence[float], correct: Sequence[bool | None], confidence: float = 0.95
) -> tuple[float, float]:
    """Interval for a suite's mean score, in percent.

    When every sample has a binary outcome the exact binomial structure is known and
    Wilson is used; if any sample is graded (``correct is None``) the scores are not
    binomial, so fall back to the bootstrap interval of the mean of ``values``.
    """
    if len(values) != len(correct):
        raise ValueError(
            f"values and correct must have the same length, got {len(values)} and {len(correct)}"
        )
    # ``is not None`` rather than ``isinstance(c, bool)`` so numpy booleans count too.
    if all(c is not None for c in correct):
        return wilson_interval(sum(1 for c in correct if c), len(correct), confidence)
    return bootstrap_mean_interval(values, confidence=confidence)


def judge_stability(results: Iterable[SampleResult]) -> dict[str, Any] | None:
    """Summary of the judge's spread over the repeated samples (None when nothing repeated)."""
    spreads = {r.id: r.score.notes["judge_repeats"] for r in results if r.score.notes.get("judge_repeats")}
    if not spreads:
        return None
    ranges = [max(v) - min(v) for v in spreads.values()]
    stdevs = [statistics.pstdev(v) for v in spreads.values()]
    return {
        "samples": len(spreads),
        "repeats": max(len(v) for v in spreads.values()),
        "mean_range": round(sum(ranges) / len(ranges), 4),
        "max_range": round(max(ranges), 4),
        "mean_stdev": round(sum(stdevs) / len(stdevs), 4),
        "unstable": sorted(i for i, v in spreads.items() if max(v) != min(v)),
    }


def stratified_rate_p(strata: Iterable[tuple[int, int, int, int]], agreeing: bool | None = None) -> float:
    """Exact one-sided p-value that the candidate's right-rates are lower than the baseline's, over samples
    that each carry their own rate: ``(k, K, j, J)`` per sample, right ``k`` of ``K`` answers in the baseline
    and ``j`` of ``J`` in the candidate.

    The exact conditional test of a common odds ratio of 1 across 2x2 tables (Mantel and Haenszel 1959; the
    exact form is Birch 1964's, as in R's ``mantelhaen.test(exact = TRUE)``): under "the candidate answers
    each sample as the baseline did" (every answer of a sample an independent draw at its own rate), given
    how many of its ``K + J`` answers were right (``t = k + j``), which of them are the candidate's is a draw
    without replacement, so ``j`` is hypergeometric and the sample's rate cancels: a noisy sample right half
    the time and one right nine times in ten are never pooled. The statistic is the candidate's total of
    right answers; its exact null law is the convolution of the samples' laws, and ``p = P(T <= observed)``.

    ``agreeing`` says how the samples were chosen from the baseline, and the law is conditioned on it too
    (otherwise the choice itself biases the test): True, samples whose K answers all agreed (``k`` is 0 or
    K); False, samples whose answers did not (``0 < k < K``); None, no choice. The weight of ``j = x`` is
    ``C(J, x) C(K, t - x)`` over the ``x`` whose ``k = t - x`` the choice allows. A sample whose law is a
    single point (all answers alike, or a choice that leaves one split) carries no information and drops
    out; where none is informative, p = 1. With K = J = 1 and no choice this is the exact McNemar test."""
    return stratified_p([(k, big_k, j, big_j, agreeing) for k, big_k, j, big_j in strata])


def stratified_p(strata: Iterable[tuple[int, int, int, int, bool | None]]) -> float:
    """:func:`stratified_rate_p` with each sample's own choice: ``(k, K, j, J, agreeing)``."""
    dist = [1.0]  # P(T - minimum = x)
    observed = 0
    low = 0
    for k, big_k, j, big_j, agreeing in strata:
        if not (0 <= k <= big_k and 0 <= j <= big_j and big_k > 0 and big_j > 0):
            raise ValueError(f"a stratum needs 0 <= k <= K and 0 <= j <= J with K, J >= 1, got {(k, big_k, j, big_j)}")
        t = k + j
        xs = [x for x in range(max(0, t - big_k), min(t, big_j) + 1)
              if agreeing is None or ((t - x) in (0, big_k)) == agreeing]
        if len(xs) < 2:
            continue
        weights = [math.comb(big_j, x) * math.comb(big_k, t - x) for x in xs]
        total = sum(weights)
        lo = xs[0]
        pmf = [0.0] * (xs[-1] - lo + 1)
        for x, w in zip(xs, weights, strict=True):
            pmf[x - lo] = w / total
        out = [0.0] * (len(dist) + len(pmf) - 1)
        for a, pa in enumerate(dist):
            if pa:
                for b, pb in enumerate(pmf):
                    out[a + b] += pa * pb
        dist = out
        observed += j
        low += lo
    return min(1.0, sum(dist[: observed - low + 1]))
