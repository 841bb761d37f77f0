"""Tests for pytest_uiground.gate.stats against values worked out by hand in each test.

The regression gate trusts these numbers to call a drop "real", so each expected
value is derived in the test from the textbook formula (or a published table), not
copied from the implementation's own output.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import pytest

from pytest_uiground.gate import stats
from pytest_uiground.gate.stats import (
    accuracy_interval,
    bootstrap_mean_interval,
    mcnemar_exact,
    paired_bootstrap_delta,
    percentile,
    wilson_interval,
)

Z95 = 1.959963984540054  # two-sided 95 % standard normal quantile (published tables: 1.95996)


# --------------------------------------------------------------------------- Wilson


def _wilson_by_formula(s: int, n: int, z: float) -> tuple[float, float]:
    """The Wilson (1927) interval written out independently of the implementation."""
    p = s / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return (100 * (centre - half), 100 * (centre + half))


def test_wilson_8_of_10_matches_formula_and_published_value() -> None:
    # p = 0.8, z^2 = 3.841459, denominator 1 + 0.3841459 = 1.3841459
    # centre = (0.8 + 0.1920729) / 1.3841459 = 0.716740
    # half   = (1.959964 / 1.3841459) * sqrt(0.016 + 0.0096036) = 1.416010 * 0.160011 = 0.226578
    # -> (0.490162, 0.943318); published Wilson value for 8/10: 0.4902, 0.9433
    low, high = wilson_interval(8, 10)
    exp_low, exp_high = _wilson_by_formula(8, 10, Z95)
    assert low == pytest.approx(exp_low, abs=1e-9)
    assert high == pytest.approx(exp_high, abs=1e-9)
    assert low == pytest.approx(49.02, abs=0.01)
    assert high == pytest.approx(94.33, abs=0.01)


def test_wilson_n_zero_is_uninformative() -> None:
    assert wilson_interval(0, 0) == (0.0, 100.0)


def test_wilson_zero_successes() -> None:
    # With p = 0 the centre and the half-width are equal, so low is exactly 0 and
    # high = z^2 / (n + z^2) = 3.841459 / 8.841459 = 0.434482 for n = 5.
    low, high = wilson_interval(0, 5)
    assert low == 0.0
    assert high == pytest.approx(100 * Z95**2 / (5 + Z95**2), abs=1e-9)
    assert high == pytest.approx(43.448, abs=1e-3)


def test_wilson_all_successes() -> None:
    # Mirror image of 0/5: low = n / (n + z^2) = 5 / 8.841459 = 0.565518, high exactly 1.
    low, high = wilson_interval(5, 5)
    assert high == 100.0
    assert low == pytest.approx(100 * 5 / (5 + Z95**2), abs=1e-9)
    assert low == pytest.approx(56.552, abs=1e-3)


def test_wilson_is_symmetric_and_contains_the_estimate() -> None:
    for s, n in [(1, 7), (3, 10), (50, 100), (999, 1000)]:
        low, high = wilson_interval(s, n)
        assert 0.0 <= low <= 100 * s / n <= high <= 100.0
        mlow, mhigh = wilson_interval(n - s, n)
        assert low == pytest.approx(100 - mhigh, abs=1e-9)
        assert high == pytest.approx(100 - mlow, abs=1e-9)


def test_wilson_higher_confidence_is_wider() -> None:
    # z for 99 % is 2.575829; check it is used and the interval widens.
    low99, high99 = wilson_interval(8, 10, confidence=0.99)
    exp_low, exp_high = _wilson_by_formula(8, 10, 2.5758293035489)
    assert (low99, high99) == pytest.approx((exp_low, exp_high), abs=1e-9)
    low95, high95 = wilson_interval(8, 10)
    assert low99 < low95
    assert high99 > high95


@pytest.mark.parametrize(
    ("s", "n", "confidence"), [(-1, 5, 0.95), (6, 5, 0.95), (1, -1, 0.95), (1, 5, 0.0), (1, 5, 1.0)]
)
def test_wilson_rejects_bad_arguments(s: int, n: int, confidence: float) -> None:
    with pytest.raises(ValueError, match=r"successes|confidence"):
        wilson_interval(s, n, confidence)


# --------------------------------------------------------------------------- McNemar


def _mcnemar_reference(b: int, c: int) -> float:
    """The brief's formula in full exact arithmetic, no truncation, no recurrence."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def test_mcnemar_no_discordant_pairs() -> None:
    assert mcnemar_exact(0, 0) == 1.0


def test_mcnemar_1_5() -> None:
    # n = 6, sum_{k<=1} C(6, k) = 1 + 6 = 7, p = 2 * 7 / 2^6 = 14 / 64 = 0.21875
    assert mcnemar_exact(1, 5) == 0.21875


def test_mcnemar_0_10() -> None:
    # n = 10, only k = 0: C(10, 0) = 1, p = 2 * 1 / 1024
    assert mcnemar_exact(0, 10) == 2 / 1024


def test_mcnemar_2_8() -> None:
    # n = 10, sum_{k<=2} C(10, k) = 1 + 10 + 45 = 56, p = 112 / 1024 = 0.109375
    assert mcnemar_exact(2, 8) == 0.109375


def test_mcnemar_balanced_is_one() -> None:
    # b = c = 5: sum_{k<=5} C(10, k) = 638, 2 * 638 / 1024 > 1 -> capped at 1
    assert mcnemar_exact(5, 5) == 1.0
    # b = 4, c = 6: sum_{k<=4} C(10, k) = 386, p = 772 / 1024 = 0.75390625
    assert mcnemar_exact(4, 6) == 0.75390625


def test_mcnemar_is_symmetric() -> None:
    for b, c in [(1, 5), (0, 10), (3, 17), (40, 61), (300, 350)]:
        assert mcnemar_exact(b, c) == mcnemar_exact(c, b)


def test_mcnemar_large_counts_finite_and_match_exact_and_normal_approximation() -> None:
    # C(650, 300) ~ 1e194 and 2^650 ~ 4.6e195: a naive float computation is fragile here.
    p = mcnemar_exact(300, 350)
    assert math.isfinite(p)
    assert 0.0 < p <= 1.0
    assert p == _mcnemar_reference(300, 350)
    # Continuity-corrected chi-square: (|b - c| - 1)^2 / (b + c) = 49^2 / 650 = 3.6938,
    # p = erfc(sqrt(3.6938 / 2)) = 0.0546; the exact test must be close to it.
    chi2 = (abs(300 - 350) - 1) ** 2 / 650
    assert p == pytest.approx(math.erfc(math.sqrt(chi2 / 2)), abs=2e-3)


def test_mcnemar_huge_counts_do_not_overflow() -> None:
    # True p ~ 1e-310 or smaller: rounds to 0.0 rather than raising OverflowError.
    assert mcnemar_exact(10_000, 20_000) == 0.0
    assert mcnemar_exact(20_000, 20_000) == 1.0
    start = time.perf_counter()
    p = mcnemar_exact(20_000, 20_200)
    assert time.perf_counter() - start < 2.0
    chi2 = (200 - 1) ** 2 / 40_200
    assert p == pytest.approx(math.erfc(math.sqrt(chi2 / 2)), rel=1e-2)


def test_mcnemar_matches_full_exact_sum_on_a_grid() -> None:
    # The implementation stops summing once the remainder is below 2^-60 of the tail;
    # the resulting float must be the one the untruncated sum gives.
    for b in range(0, 120, 7):
        for c in range(0, 400, 23):
            assert mcnemar_exact(b, c) == _mcnemar_reference(b, c), (b, c)


def test_mcnemar_rejects_negative_counts() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        mcnemar_exact(-1, 3)


# --------------------------------------------------------------------------- bootstrap


def test_paired_bootstrap_is_deterministic_for_a_seed() -> None:
    rng = np.random.default_rng(7)
    cur = (rng.random(500) * 100).tolist()
    base = (rng.random(500) * 100).tolist()
    assert paired_bootstrap_delta(cur, base) == paired_bootstrap_delta(cur, base)
    assert paired_bootstrap_delta(cur, base, seed=3) == paired_bootstrap_delta(cur, base, seed=3)
    # Binary scores take the multinomial path: deterministic too.
    cur_b = [100.0 if v > 50 else 0.0 for v in cur]
    base_b = [100.0 if v > 40 else 0.0 for v in base]
    assert paired_bootstrap_delta(cur_b, base_b) == paired_bootstrap_delta(cur_b, base_b)


def test_paired_bootstrap_delta_is_exact_and_inside_the_interval() -> None:
    # mean(current) = 300 / 4 = 75, mean(baseline) = 100 / 4 = 25, delta = 50
    cur = [100.0, 0.0, 100.0, 100.0]
    base = [0.0, 0.0, 100.0, 0.0]
    delta, low, high = paired_bootstrap_delta(cur, base)
    assert delta == 50.0
    assert low <= delta <= high


def test_paired_bootstrap_identical_inputs() -> None:
    scores = [0.0, 100.0, 100.0, 37.5, 0.0]
    assert paired_bootstrap_delta(scores, scores) == (0.0, 0.0, 0.0)


def test_paired_bootstrap_constant_difference_gives_point_interval() -> None:
    # Every difference is +10, so every resample's mean difference is 10.
    base = [0.0, 20.0, 45.0, 90.0, 60.0, 5.0]
    cur = [b + 10 for b in base]
    assert paired_bootstrap_delta(cur, base) == (10.0, 10.0, 10.0)


def test_paired_bootstrap_two_samples() -> None:
    # Differences [0, 100]: a resample of 2 has mean 0 (p 1/4), 50 (p 1/2) or 100 (p 1/4).
    # With 2000 resamples the 2.5th percentile is 0 and the 97.5th is 100 unless fewer
    # than 50 resamples hit each end (probability ~ 1e-200 for expectation 500).
    assert paired_bootstrap_delta([0.0, 100.0], [0.0, 0.0]) == (50.0, 0.0, 100.0)


def test_paired_bootstrap_empty() -> None:
    assert paired_bootstrap_delta([], []) == (0.0, 0.0, 0.0)


def test_paired_bootstrap_rejects_mismatched_lengths_and_nan() -> None:
    with pytest.raises(ValueError, match="same length"):
        paired_bootstrap_delta([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="finite"):
        paired_bootstrap_delta([1.0, math.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="n_resamples"):
        paired_bootstrap_delta([1.0], [1.0], n_resamples=0)


def test_paired_bootstrap_binary_interval_matches_normal_theory() -> None:
    # 1000 samples: 100 gained (+100), 50 lost (-100), 850 unchanged.
    # mean d = (10000 - 5000) / 1000 = 5; E[d^2] = 150 * 10000 / 1000 = 1500
    # var = 1500 - 25 = 1475, se = sqrt(1475 / 1000) = 1.21450, 1.96 * se = 2.3804
    # -> about (2.62, 7.38); the bootstrap should agree to well under 0.5 points.
    base = [0.0] * 100 + [100.0] * 50 + [50.0] * 850
    cur = [100.0] * 100 + [0.0] * 50 + [50.0] * 850
    delta, low, high = paired_bootstrap_delta(cur, base)
    se = math.sqrt(1475 / 1000)
    assert delta == 5.0
    assert low == pytest.approx(5 - Z95 * se, abs=0.5)
    assert high == pytest.approx(5 + Z95 * se, abs=0.5)


def test_paired_bootstrap_graded_interval_matches_normal_theory() -> None:
    # Continuous differences take the index-resampling path. Differences uniform on a
    # grid 0..99 shifted by -44.5: mean 5, var = (100^2 - 1) / 12 = 833.25,
    # se = sqrt(833.25 / 1000) = 0.91283, 1.96 * se = 1.789
    diffs = [(i % 100) - 44.5 + 1e-3 * (i // 100) for i in range(1000)]
    base = [50.0] * 1000
    cur = [50.0 + d for d in diffs]
    delta, low, high = paired_bootstrap_delta(cur, base)
    mean = sum(diffs) / 1000
    se = math.sqrt(833.25 / 1000)
    assert delta == pytest.approx(mean, abs=1e-9)
    assert low == pytest.approx(mean - Z95 * se, abs=0.3)
    assert high == pytest.approx(mean + Z95 * se, abs=0.3)


@pytest.mark.parametrize("binary", [True, False])
def test_bootstrap_chunking_does_not_change_the_result(monkeypatch: pytest.MonkeyPatch, binary: bool) -> None:
    rng = np.random.default_rng(11)
    if binary:
        cur = ((rng.random(300) < 0.6) * 100.0).tolist()
        base = ((rng.random(300) < 0.5) * 100.0).tolist()
    else:
        cur = (rng.random(300) * 100).tolist()
        base = (rng.random(300) * 100).tolist()
    whole = paired_bootstrap_delta(cur, base, n_resamples=500)
    monkeypatch.setattr(stats, "_MAX_CELLS_PER_CHUNK", 300 * 7)  # 7-row chunks
    assert paired_bootstrap_delta(cur, base, n_resamples=500) == whole


def test_paired_bootstrap_is_fast_at_suite_scale() -> None:
    rng = np.random.default_rng(5)
    cur = ((rng.random(5000) < 0.7) * 100.0).tolist()
    base = ((rng.random(5000) < 0.68) * 100.0).tolist()
    start = time.perf_counter()
    delta, low, high = paired_bootstrap_delta(cur, base, n_resamples=2000)
    assert time.perf_counter() - start < 1.0
    assert low <= delta <= high


def test_bootstrap_mean_interval() -> None:
    assert bootstrap_mean_interval([]) == (0.0, 100.0)
    assert bootstrap_mean_interval([42.0] * 10) == (42.0, 42.0)
    # Same two-point argument as the paired case: resample means are 0, 50 or 100.
    assert bootstrap_mean_interval([0.0, 100.0]) == (0.0, 100.0)
    values = [float(v) for v in np.linspace(0, 100, 401)]
    assert bootstrap_mean_interval(values, seed=1) == bootstrap_mean_interval(values, seed=1)
    low, high = bootstrap_mean_interval(values)
    # mean 50, population sd of a uniform grid 0..100 ~ 100 / sqrt(12) = 28.87,
    # se = 28.87 / sqrt(401) = 1.4417, 1.96 * se = 2.826
    se = 100 / math.sqrt(12) / math.sqrt(401)
    assert low == pytest.approx(50 - Z95 * se, abs=0.4)
    assert high == pytest.approx(50 + Z95 * se, abs=0.4)


# --------------------------------------------------------------------------- percentile


def test_percentile_by_hand() -> None:
    # [1, 2, 3, 4]: position q/100 * (n - 1). q=50 -> 1.5 -> 2 + 0.5 * 1 = 2.5;
    # q=95 -> 2.85 -> 3 + 0.85 * 1 = 3.85; q=0 -> 1, q=100 -> 4.
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0], 95) == pytest.approx(3.85)
    assert percentile([1.0, 2.0, 3.0, 4.0], 0) == 1.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 100) == 4.0
    assert percentile([7.0], 95) == 7.0


def test_percentile_matches_numpy() -> None:
    rng = np.random.default_rng(2)
    values = (rng.random(137) * 1000).tolist()
    for q in (0, 5, 25, 50, 90, 95, 99, 100):
        assert percentile(values, q) == float(np.percentile(values, q))


def test_percentile_empty_is_nan_and_bad_q_rejected() -> None:
    assert math.isnan(percentile([], 50))
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        percentile([1.0], 101)


# --------------------------------------------------------------------------- accuracy


def test_accuracy_interval_binary_uses_wilson() -> None:
    correct = [True] * 8 + [False] * 2
    values = [100.0] * 8 + [0.0] * 2
    assert accuracy_interval(values, correct) == wilson_interval(8, 10)
    assert accuracy_interval(values, correct, confidence=0.9) == wilson_interval(8, 10, 0.9)
    assert accuracy_interval([], []) == (0.0, 100.0)


def test_accuracy_interval_accepts_numpy_bools() -> None:
    correct = list(np.array([True, False, True]))
    assert accuracy_interval([100.0, 0.0, 100.0], correct) == wilson_interval(2, 3)


def test_accuracy_interval_graded_uses_bootstrap() -> None:
    values = [100.0, 25.0, 50.0, 0.0, 75.0, 60.0]
    correct: list[bool | None] = [True, None, None, False, None, None]
    assert accuracy_interval(values, correct) == bootstrap_mean_interval(values)


def test_accuracy_interval_rejects_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match="same length"):
        accuracy_interval([100.0], [True, False])
