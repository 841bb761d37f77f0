"""Per-sample flips judged as evidence: do regressions outnumber fixes by more than noise explains?

A model served on a GPU is not deterministic: the same weights and prompts, run twice, answer some
samples differently (MAI-UI-8B run by its authors once with vLLM's offline engine and once through a
vLLM server flips 78 of 1,581 ScreenSpot-Pro samples, 32 right to wrong and 46 wrong to right, while
its score rises 66.16 to 67.05). Under the rule ``each`` every right-to-wrong flip fails the run,
which is exact for a deterministic model and red on noise for a served one. Under ``significant``
every flip is still listed, both ways, but the flips fail the run only when the regressions
outnumber the fixes significantly: the exact one-sided McNemar test on the discordant samples
(:func:`pytest_uiground.gate.stats.mcnemar_one_sided`), at the suite's level over all samples, and
per slice at the level divided by the number of slices tested (Bonferroni, so that many small
slices do not multiply the false alarms; the multiplicity is printed with the result).

A regression the run itself shows to be noise (:attr:`Outcome.UNSTABLE`: unstable in the baseline's
repeats, or right in one of its ``--uiground-confirm`` re-asks) never fails the run alone, under either rule.

**Stable and unstable samples are tested apart** (issue 40). A baseline recorded with ``--uiground-repeat K``
knows which samples are noisy (``s: [k, K]`` with 0 < k < K). Counted as flips, their coin tosses bury a
real drop: 17 samples flipping half the time add about 8 discordant pairs to every test, and 7 stably-right
samples made wrong go from p = 0.008 to p = 0.06. So the test has two parts, each exact:

* the **paired part**, the samples the baseline measured as stable (or recorded without repeats, as before):
  on a plain rerun, the exact one-sided McNemar test on their flips. It assumes that noisy samples which
  answered K times alike by chance flip both ways alike (exact for coin tosses; a noisy sample right 90 % of
  the time leans towards regressions). Under ``--uiground-confirm C`` (issue 40, the sequential rule of
  :mod:`pytest_uiground.record.outcome`) a flip whose re-asks disagree with it is left out, as a sample whose
  repeats disagree drops out of the exact test below: a regression re-asked right (up to ``C`` re-asks), a
  fix re-asked wrong (up to ``D = min(C, R - 1)``). The bound: for a sample right with probability ``p`` on
  every call and a baseline of ``R`` agreeing answers (``R = 1`` without repeats), a counted regression has
  probability ``p^R (1 - p)^(C + 1)`` and a counted fix ``(1 - p)^R p^(D + 1)``, their ratio
  ``p^(R - 1 - D) (1 - p)^(C + 1 - R)``. For ``C >= R - 1`` it is at most 1 for every ``p`` (exactly 1 at
  ``C = R - 1``): a flip is a regression with probability at most 1/2, McNemar's null, so the level holds
  whatever the hidden noisy samples' rates, which a plain rerun does not promise (its ratio is
  ``(p / (1 - p))^(R - 1)``); for a smaller ``C`` the lean is ``(p / (1 - p))^(R - 1 - C)``, still smaller.
  The drop it detects does not shrink: a sample the candidate broke is wrong every time, always confirmed. When this run
  has repeats too (``--uiground-repeat``), the sample's K agreeing baseline answers meet its J answers in
  the exact stratified test below, conditioned on the baseline's answers having agreed: that is McNemar on
  the samples whose J answers also agree among themselves, exact whatever each sample's rate, and the
  hidden coin tosses almost never count (both sides must agree by chance);
* the **rated part**, the samples the baseline saw flip: each is judged by its right-rate, the baseline's
  k of K against this run's j of J (its repeats under ``--uiground-repeat``, else its one answer), with the
  exact stratified test of a common odds ratio of 1 (:func:`.stats.stratified_rate_p`: Mantel–Haenszel's
  statistic, Birch's exact conditional law), which compares each sample only with itself.

The two parts share the level by their share of the samples (weighted Bonferroni, Holm 1979: the weights
are fixed by the baseline before any answer is seen and sum to one, so a model that did not change fails
at most at the level; the parts are independent, so the true rate is slightly below it). Measured over
many seeds in ``tests/gate/test_power.py``. The reported p is the Bonferroni-adjusted one, ``min(p_paired /
w, p_rated / (1 - w))``, below the level exactly when a part is below its share; a suite whose baseline has
no repeats has no rated part and the test is the McNemar test as before. Slices are tested the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_uiground.gate import EACH, stats
from pytest_uiground.gate.metrics import slice_labels
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.result import SampleResult, right_of

if TYPE_CHECKING:  # types only: the suite's declaration is read, never loaded, here
    from pytest_uiground.suite.config import SuiteConfig



@dataclass(frozen=True)
class Split:
    """One flip test in two parts (module docstring): the paired part (samples the baseline measured as stable,
    or had no repeats of) by the exact one-sided McNemar test, the rated part (samples its repeats saw flip)
    by the exact stratified test of their right-rates, each at its share of the level."""

    regressed: int  # paired part: right in the baseline, wrong now (McNemar's b)
    fixed: int  # paired part: wrong in the baseline, right now (c)
    p_paired: float
    paired: int = 0  # samples in the paired part
    rated: int = 0  # samples in the rated part
    p_rated: float = 1.0
    against_repeats: bool = False  # the paired part met this run's repeats (exact test), not one answer (McNemar)

    @property
    def share(self) -> float:
        """The paired part's share of the level: its share of the samples, fixed by the baseline before any
        answer is seen (weighted Bonferroni: the two shares sum to the level, so a model that did not change
        fails at most at the level)."""
        return self.paired / (self.paired + self.rated) if self.rated else 1.0

    @property
    def p_value(self) -> float:
        """The smaller of the two parts' p-values, each divided by its share (Bonferroni-adjusted): below the
        level exactly when a part is below its share of it."""
        if not self.rated:
            return self.p_paired
        paired = self.p_paired / self.share if self.share > 0 else 1.0
        return min(1.0, paired, self.p_rated / (1.0 - self.share))


@dataclass(frozen=True)
class SliceFlips:
    label: str  # "key=value", as the metric slices are labelled
    regressed: int
    fixed: int
    p_value: float  # one-sided: regressions outnumber fixes (adjusted across the two parts, see Split)
    split: Split | None = None


@dataclass(frozen=True)
class FlipTest:
    """A suite's flips against its baseline and, under ``significant``, whether they are evidence."""

    rule: str
    level: float
    regressed: tuple[str, ...]  # sample ids, right in the baseline and wrong now
    fixed: tuple[str, ...]  # wrong in the baseline and right now
    p_value: float
    slices: tuple[SliceFlips, ...] = ()  # slices with at least one flip: the ones tested
    unstable: tuple[str, ...] = ()  # right in the baseline, wrong now, shown to be noise: never failing alone
    split: Split | None = None  # the two parts; None for a FlipTest built by hand
    unconfirmed_fixes: tuple[str, ...] = ()  # fixed, but re-asked wrong by --uiground-confirm: no flip

    @property
    def slice_level(self) -> float:
        return self.level / max(1, len(self.slices))

    @property
    def significant_slices(self) -> tuple[SliceFlips, ...]:
        return tuple(s for s in self.slices if s.p_value < self.slice_level)

    @property
    def significant(self) -> bool:
        return self.p_value < self.level or bool(self.significant_slices)

    @property
    def fails(self) -> bool:
        """Whether the flips fail the run: under ``each`` any regression, under ``significant`` only
        significant evidence."""
        return bool(self.regressed) if self.rule == EACH else self.significant

    @property
    def p_label(self) -> str:
        """What :attr:`p_value` is, in words."""
        return "split test p" if self.split is not None and self.split.rated else "one-sided McNemar p"

    def _parts(self) -> str:
        s = self.split
        assert s is not None and s.rated
        test = "exact test against this run's repeats" if s.against_repeats else "one-sided McNemar"
        return (f"{s.paired} stable samples: {s.regressed} regressed, {s.fixed} fixed, {test} p = "
                f"{s.p_paired:.3g} (level {self.level * s.share:.3g}); {s.rated} samples unstable in the baseline, "
                f"by their right-rates (exact stratified test): p = {s.p_rated:.3g} (level "
                f"{self.level * (1 - s.share):.3g})")

    def text(self) -> str:
        """One line: the counts, the test and, where it failed, which part."""
        if self.split is not None and self.split.rated:
            noisy = f", {len(self.unstable)} unstable" if self.unstable else ""
            head = (f"{len(self.regressed)} regressed{noisy}, {len(self.fixed)} fixed; {self._parts()}; split "
                    f"test p = {self.p_value:.3g} (level {self.level:g}")
        else:
            noisy = f", {len(self.unstable)} unstable (re-asked right: no flip)" if self.unstable else ""
            head = (f"{len(self.regressed)} regressed{noisy}, {len(self.fixed)} fixed: one-sided McNemar p = "
                    f"{self.p_value:.3g} (level {self.level:g}")
        tail = (f"; {len(self.slices)} slice{'s' * (len(self.slices) != 1)} with flips tested at "
                f"{self.level:g}/{len(self.slices)})" if self.slices else ")")
        worst = self.significant_slices
        if worst:
            tail += "; significant in " + ", ".join(f"{s.label} ({s.regressed} regressed, {s.fixed} fixed, p = "
                                                    f"{s.p_value:.3g})" for s in worst[:5])
        if self.unconfirmed_fixes:
            n = len(self.unconfirmed_fixes)
            tail += f"; {n} fix{'es' * (n != 1)} re-asked wrong (no flip)"
        return head + tail

    def reason(self) -> str:
        """The verdict's reason when the flips fail the run: short, the whole test is :meth:`text`, printed
        on its own line by every output."""
        if self.rule == EACH:
            n = len(self.regressed)
            return f"{n} sample{'s' * (n != 1)} regressed"
        where = ("" if self.p_value < self.level else
                 " in " + ", ".join(s.label for s in self.significant_slices[:3])
                 + (f" and {len(self.significant_slices) - 3} more slices" if len(self.significant_slices) > 3 else ""))
        return (f"regressions outnumber fixes significantly{where} ({len(self.regressed)} regressed, "
                f"{len(self.fixed)} fixed, {self.p_label} = {self.p_value:.3g})")


def slice_keys(config: SuiteConfig) -> tuple[str, ...]:
    """The metadata keys the suite's metrics slice by: the slices a flip is tested in."""
    return tuple(dict.fromkeys(k for m in config.metrics for k in m.slices))


def slice_counts(pairs: Iterable[tuple[Mapping[str, str], bool, bool]], keys: Sequence[str]) -> dict[str, list[int]]:
    """Per slice label (``key=value``, a multi-valued key counted in each of its values): the samples,
    the regressed and the fixed among ``(meta, regressed, fixed)``. Shared by the gate (flips against the
    baseline) and ``compare`` (flips between two runs)."""
    counts: dict[str, list[int]] = {}
    for meta, bad, good in pairs:
        for label in slice_labels(meta, keys):
            c = counts.setdefault(label, [0, 0, 0])
            c[0] += 1
            c[1] += bad
            c[2] += good
    return counts


def candidate_answers(r: SampleResult) -> tuple[int, int]:
    """This run's answers on a sample: right ``j`` of ``J``, from its repeats when it was repeated, else its
    one answer."""
    st = r.stability
    if st is not None and st.how == "repeat" and st.of > 0:
        return st.right, st.of
    return int(right_of(r.score)), 1


def confirmed_noise(r: SampleResult) -> bool:
    """A flip its ``--uiground-confirm`` re-asks disagree with (module docstring): a regression re-asked right
    (unstable), or a fix re-asked wrong; no flip in the test."""
    st = r.stability
    if st is None or st.how != "confirm":
        return False
    return r.outcome == Outcome.UNSTABLE or (r.outcome == Outcome.FIXED and st.right < st.of)


def flipped(r: SampleResult) -> bool:
    """Right in the baseline and wrong now, as the flip test counts it: a regression, or a sample unstable in
    the baseline (judged by its rates); not a regression its confirmation showed to be noise."""
    return r.outcome == Outcome.REGRESSION or (r.outcome == Outcome.UNSTABLE and not confirmed_noise(r))


_BASE_RIGHT = (Outcome.PASS, Outcome.REGRESSION, Outcome.UNSTABLE)
_BASE_WRONG = (Outcome.FIXED, Outcome.KNOWN_FAILURE)


def split_test(results: Sequence[SampleResult], base: Mapping[str, tuple[int, int] | None]) -> Split:
    """The two parts of the flip test over ``results`` (module docstring); ``base``: the baseline's repeats
    of each sample (``s: [k, K]``; None or absent: its one answer, which the outcome tells)."""
    paired = rated = b = c = 0
    repeated = False
    pairs: list[tuple[int, int, int, int, bool | None]] = []
    strata: list[tuple[int, int, int, int, bool | None]] = []
    for r in results:
        if r.error is not None or r.outcome not in (*_BASE_RIGHT, *_BASE_WRONG):
            continue  # no baseline to meet (new, or an update), or an error (which fails by itself)
        s = base.get(r.id)
        j, big_j = candidate_answers(r)
        if s is not None and 0 < s[0] < s[1]:
            rated += 1
            strata.append((s[0], s[1], j, big_j, False))
            continue
        if confirmed_noise(r):
            continue  # right in a confirmation re-ask: not stably wrong, no flip (module docstring)
        paired += 1
        b += r.outcome == Outcome.REGRESSION
        c += r.outcome == Outcome.FIXED
        if s is not None and s[1] > 1 and big_j > 1:  # K answers alike against this run's J: exact
            pairs.append((s[0], s[1], j, big_j, True))
            repeated = True
        else:  # one answer against one: McNemar
            pairs.append((int(r.outcome in _BASE_RIGHT), 1, int(right_of(r.score)), 1, None))
    return Split(b, c, stats.stratified_p(pairs), paired, rated, stats.stratified_p(strata), repeated)


def judge_flips(results: Sequence[SampleResult], keys: Sequence[str], rule: str, level: float,
                base: Mapping[str, tuple[int, int] | None] | None = None) -> FlipTest:
    """The flips in ``results`` (their outcomes against the baseline), overall and per slice of ``keys``;
    ``base``: the baseline's repeats per sample (the split test's rated part), when it has them."""
    base = base or {}
    regressed = tuple(sorted(r.id for r in results if r.outcome == Outcome.REGRESSION))
    unstable = tuple(sorted(r.id for r in results if r.outcome == Outcome.UNSTABLE))
    fixed = tuple(sorted(r.id for r in results if r.outcome == Outcome.FIXED))
    counts = slice_counts(((r.meta, flipped(r), r.outcome == Outcome.FIXED and not confirmed_noise(r))
                           for r in results), keys)
    members: dict[str, list[SampleResult]] = {}
    if any(s is not None for s in base.values()):
        for r in results:
            for label in slice_labels(r.meta, keys):
                members.setdefault(label, []).append(r)
    slices = []
    for label, (_, b, c) in sorted(counts.items()):
        if not b + c:
            continue
        part = split_test(members[label], base) if members else None
        slices.append(SliceFlips(label, b, c, part.p_value if part is not None else stats.mcnemar_one_sided(b, c),
                                 part))
    split = split_test(results, base)
    return FlipTest(rule, level, regressed, fixed, split.p_value, tuple(slices), unstable, split,
                    tuple(sorted(r.id for r in results if r.outcome == Outcome.FIXED and confirmed_noise(r))))
