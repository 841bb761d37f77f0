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
repeats, or right in the majority of its confirmation re-asks) never fails the run alone, under either
rule, but the McNemar test still counts it as a right-to-wrong flip: it did flip in this run, and
leaving it out (while the fixed samples, never re-asked, all count) would tilt the test towards PASS.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_uiground.gate import stats
from pytest_uiground.gate.metrics import slice_labels
from pytest_uiground.gate.verdict import EACH
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.result import SampleResult

if TYPE_CHECKING:  # types only: the suite's declaration is read, never loaded, here
    from pytest_uiground.suite.config import SuiteConfig



@dataclass(frozen=True)
class SliceFlips:
    label: str  # "key=value", as the metric slices are labelled
    regressed: int
    fixed: int
    p_value: float  # one-sided: regressions outnumber fixes


@dataclass(frozen=True)
class FlipTest:
    """A suite's flips against its baseline and, under ``significant``, whether they are evidence."""

    rule: str
    level: float
    regressed: tuple[str, ...]  # sample ids, right in the baseline and wrong now
    fixed: tuple[str, ...]  # wrong in the baseline and right now
    p_value: float
    slices: tuple[SliceFlips, ...] = ()  # slices with at least one flip: the ones tested
    unstable: tuple[str, ...] = ()  # right in the baseline, wrong now, shown to be noise: counted, never failing alone

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

    def text(self) -> str:
        """One line: the counts, the test and, where it failed, which part."""
        noisy = f", {len(self.unstable)} unstable (counted as regressed here)" if self.unstable else ""
        head = (f"{len(self.regressed)} regressed{noisy}, {len(self.fixed)} fixed: one-sided McNemar p = "
                f"{self.p_value:.3g} (level {self.level:g}")
        tail = (f"; {len(self.slices)} slice{'s' * (len(self.slices) != 1)} with flips tested at "
                f"{self.level:g}/{len(self.slices)})" if self.slices else ")")
        worst = self.significant_slices
        if worst:
            tail += "; significant in " + ", ".join(f"{s.label} ({s.regressed} regressed, {s.fixed} fixed, p = "
                                                    f"{s.p_value:.3g})" for s in worst[:5])
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
                f"{len(self.fixed)} fixed, one-sided McNemar p = {self.p_value:.3g})")


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


def judge_flips(results: Sequence[SampleResult], keys: Sequence[str], rule: str, level: float) -> FlipTest:
    """The flips in ``results`` (their outcomes against the baseline), overall and per slice of ``keys``."""
    regressed = tuple(sorted(r.id for r in results if r.outcome == Outcome.REGRESSION))
    unstable = tuple(sorted(r.id for r in results if r.outcome == Outcome.UNSTABLE))
    fixed = tuple(sorted(r.id for r in results if r.outcome == Outcome.FIXED))
    flipped = (Outcome.REGRESSION, Outcome.UNSTABLE)
    counts = slice_counts(((r.meta, r.outcome in flipped, r.outcome == Outcome.FIXED) for r in results), keys)
    slices = tuple(SliceFlips(label, b, c, stats.mcnemar_one_sided(b, c))
                   for label, (_, b, c) in sorted(counts.items()) if b + c)
    p = stats.mcnemar_one_sided(len(regressed) + len(unstable), len(fixed))
    return FlipTest(rule, level, regressed, fixed, p, slices, unstable)
