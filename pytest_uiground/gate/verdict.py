"""The suite's verdict, decided once: PASS or FAIL and every reason, read by every output.

Before this module the verdict was decided in nine places (the per-sample outcome, the worker,
the checks, the gate's rules, the aggregate items, the controller, the terminal, the HTML page,
the Markdown summary), and the copies disagreed: a run that exited 1 for a sample error showed
"PASS" in ``report.html``. Now :func:`decide` is the only function that turns a suite's result
(its checks, latency, per-sample outcomes and the baseline's fate) into a verdict. The verdict
travels on the outcome record and in ``summary.json``; the terminal line, the aggregate test
items (hence pytest's closing counts, JUnit and the exit status), the Markdown summary and PR
comment, ``report.html``'s headline and the multi-suite index page only *read* it.

The per-sample decision (right, wrong, regressed, error) stays where the sample runs
(:func:`pytest_uiground.record.outcome.classify`): that is a sample's fact, made once; the
verdict counts those outcomes, it does not decide them again.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_uiground.record.outcome import Outcome

if TYPE_CHECKING:  # types only: the verdict reads checks, flips and records built elsewhere
    from pytest_uiground.gate.checks import Check, LatencyCheck
    from pytest_uiground.gate.flips import FlipTest
    from pytest_uiground.gate.noise import Confirmation, Noise
    from pytest_uiground.record.result import SampleResult


# The rule's two names, from the stage's package (gate/__init__.py), named here too for the verdict's readers:
# the flip test reads them from there and never imports the verdict (issue 42: no circle, even type-only).
from pytest_uiground.gate import EACH as EACH
from pytest_uiground.gate import SIGNIFICANT as SIGNIFICANT


class BaselineFate(str, enum.Enum):
    """What ``--snapshot-update`` did with a suite's baseline; spelled here only."""

    NOT_ASKED = "not-asked"  # no --snapshot-update
    UPDATED = "updated"
    PARTIAL = "partial"  # refused: -k, --lf, --uiground-limit or deselection ran part of the suite
    REFUSED = "refused"  # refused: sample errors, or floors that fail (update_refusal says which)
    WRITE_ERROR = "write-error"  # asked and allowed, but the files could not be written
    INTERRUPTED = "interrupted"  # the run stopped before any baseline was written

    @property
    def blocks(self) -> bool:
        """An update that was asked for and not done fails the suite: a CI job that records a
        baseline must not go green having recorded nothing."""
        return self in (BaselineFate.PARTIAL, BaselineFate.REFUSED, BaselineFate.WRITE_ERROR,
                        BaselineFate.INTERRUPTED)


def baseline_fate(suite: str, *, updating: bool, partial: bool, refusal: str | None, write_error: str | None,
                  interrupted: bool) -> tuple[BaselineFate, str]:
    """The baseline's fate and the one sentence every output prints for it ("" when not asked)."""
    if not updating:
        return BaselineFate.NOT_ASKED, ""
    if interrupted:
        return BaselineFate.INTERRUPTED, "baseline NOT updated: the run was interrupted"
    if partial:
        return BaselineFate.PARTIAL, (f"baseline NOT updated: refusing to update the baseline of {suite!r} from a "
                                      "partial run (-k, --lf, --uiground-limit or deselection); rerun the whole "
                                      "suite with --snapshot-update")
    if refusal:
        return BaselineFate.REFUSED, f"baseline NOT updated: {refusal}"
    if write_error:
        return BaselineFate.WRITE_ERROR, f"baseline NOT written: {write_error}"
    return BaselineFate.UPDATED, "baseline updated"


_SHORT = {BaselineFate.PARTIAL: "baseline NOT updated (partial run)",
          BaselineFate.REFUSED: "baseline NOT updated (refused)",
          BaselineFate.INTERRUPTED: "baseline NOT updated (interrupted)"}


@dataclass(frozen=True)
class Verdict:
    """A suite's verdict: ``passed`` and the reasons it failed (empty when it passed).

    ``failed_checks`` are the labels of the aggregate checks that fail (the aggregate items fail
    exactly these), ``regressed`` and ``errors`` the per-sample counts, ``fate`` what happened to
    the baseline. ``text`` is the one wording: "PASS (15 checks ok, no regressed sample)" or
    "FAIL: reason; reason".
    """

    passed: bool
    reasons: tuple[str, ...]
    n_checks: int
    failed_checks: tuple[str, ...] = ()
    regressed: int = 0
    errors: int = 0
    latency_over: bool = False
    interrupted: bool = False
    fate: BaselineFate = BaselineFate.NOT_ASKED
    fate_text: str = ""
    rule: str = EACH  # how per-sample flips were judged: "each" or "significant" (gate/flips.py)
    fixed: int = 0
    flips_text: str = ""  # the flip test in words (counts, one-sided McNemar p, level, slices tested)
    flips_p: float | None = None
    unstable: int = 0  # right in the baseline, wrong now, shown to be noise (never failing alone)
    noise_text: str = ""  # --uiground-repeat: the flip rate in words
    flip_rate: float | None = None
    missing: str = ""  # no baseline to gate against: the line that says how to record one (issue 38)
    power_text: str = ""  # the smallest drop the suite (and its short slices) detect, in words (gate/power.py)
    flips_p_label: str = "one-sided McNemar p"
    confirm_text: str = ""  # --uiground-confirm: samples re-asked, calls, what they found (gate/noise.py)
    confirmed: int = 0  # regressed samples re-asked by --uiground-confirm
    confirm_calls: int = 0  # the calls it cost

    @property
    def status(self) -> str:
        return "PASS" if self.passed else "FAIL"

    @property
    def text(self) -> str:
        if self.passed and self.regressed and self.rule != EACH:
            return (f"PASS ({self.n_checks} checks ok; {self.regressed} regressed and {self.fixed} fixed samples "
                    f"within noise, {self.flips_p_label} = {self.flips_p:.3g})")
        if self.passed and self.unstable:
            return (f"PASS ({self.n_checks} checks ok, no regressed sample; {self.unstable} unstable sample"
                    f"{'s' * (self.unstable != 1)} never failing alone)")
        if self.passed:
            return f"PASS ({self.n_checks} checks ok, no regressed sample)"
        return "FAIL: " + "; ".join(self.reasons)

    def line(self, suite: str) -> str:
        return f"uiground verdict for {suite}: {self.text}"

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "text": self.text, "reasons": list(self.reasons),
                "failed_checks": list(self.failed_checks), "n_checks": self.n_checks, "regressed": self.regressed,
                "errors": self.errors, "latency_over_budget": self.latency_over, "interrupted": self.interrupted,
                "baseline": self.fate.value, "rule": self.rule, "fixed": self.fixed, "flips": self.flips_text,
                "flips_p_value": self.flips_p, "unstable": self.unstable, "noise": self.noise_text,
                "flip_rate": self.flip_rate, "power": self.power_text, "flips_p_label": self.flips_p_label,
                "missing_baseline": self.missing, "confirm": self.confirm_text, "confirmed": self.confirmed,
                "confirm_calls": self.confirm_calls}

    @classmethod
    def from_json(cls, d: Any) -> Verdict | None:
        """The verdict a ``summary.json`` stored; None for files written before verdicts were stored,
        or one too damaged to read (the page then says so rather than guess)."""
        if not isinstance(d, Mapping) or d.get("status") not in ("PASS", "FAIL"):
            return None

        def count(key: str) -> int:
            v = d.get(key)
            return v if isinstance(v, int) and not isinstance(v, bool) else 0

        def strings(key: str) -> tuple[str, ...]:
            v = d.get(key)
            return tuple(str(x) for x in v) if isinstance(v, list) else ()

        try:
            fate = BaselineFate(d.get("baseline", BaselineFate.NOT_ASKED.value))
        except ValueError:
            fate = BaselineFate.NOT_ASKED
        return cls(passed=d["status"] == "PASS", reasons=strings("reasons"), n_checks=count("n_checks"),
                   failed_checks=strings("failed_checks"), regressed=count("regressed"), errors=count("errors"),
                   latency_over=d.get("latency_over_budget") is True, interrupted=d.get("interrupted") is True,
                   fate=fate, rule=str(d.get("rule") or EACH), fixed=count("fixed"),
                   flips_text=str(d.get("flips") or ""),
                   flips_p=p if isinstance(p := d.get("flips_p_value"), float) else None,
                   unstable=count("unstable"), noise_text=str(d.get("noise") or ""),
                   power_text=str(d.get("power") or ""),
                   flips_p_label=str(d.get("flips_p_label") or "one-sided McNemar p"),
                   flip_rate=f if isinstance(f := d.get("flip_rate"), (int, float)) and not isinstance(f, bool)
                   else None, missing=str(d.get("missing_baseline") or ""),
                   confirm_text=str(d.get("confirm") or ""), confirmed=count("confirmed"),
                   confirm_calls=count("confirm_calls"))


def decide(checks: Sequence[Check], latency: LatencyCheck | None, results: Sequence[SampleResult], *,
           fate: BaselineFate = BaselineFate.NOT_ASKED, fate_text: str = "", interrupted: bool = False,
           flips: FlipTest | None = None, noise: Noise | None = None, missing: str | None = None,
           confirmed: Confirmation | None = None) -> Verdict:
    """The one decision: a suite fails when the baseline update it asked for was not done, a check
    fails, latency is over budget, the flips fail it (any regressed sample under the rule ``each``,
    significant evidence under ``significant``: :mod:`.flips`), a sample errored, or the run was
    interrupted; or the model's measured flip rate is above its bound (``--uiground-max-flip-rate``); or
    there is no baseline to gate against (``missing``: a gate with nothing to compare fails closed).
    ``confirmed`` (``--uiground-confirm``'s re-asks) only informs: its flips are already judged."""
    failed = tuple(c.label for c in checks if c.problems())
    slow = bool(latency is not None and latency.problems())
    regressed = len(flips.regressed) if flips is not None else sum(r.outcome == Outcome.REGRESSION for r in results)
    errors = sum(r.error is not None for r in results)
    why: list[str] = []
    if missing:
        why.append("no baseline (record one with --snapshot-update)")
    if interrupted:
        why.append(f"run interrupted after {len(results)} sample{'s' * (len(results) != 1)}")
    if fate.blocks:
        why.append(_SHORT.get(fate, f"baseline NOT written ({fate_text.removeprefix('baseline NOT written: ')})"))
    if failed:
        why.append(f"{len(failed)} of {len(checks)} checks failed")
    if slow:
        why.append("latency over budget")
    if flips is not None and flips.fails:
        why.append(flips.reason())
    elif flips is None and regressed:
        why.append(f"{regressed} sample{'s' * (regressed != 1)} regressed")
    if errors:
        why.append(f"{errors} sample error{'s' * (errors != 1)}")
    if noise is not None and noise.over:
        why.append(noise.reason())
    return Verdict(passed=not why, reasons=tuple(why), n_checks=len(checks), failed_checks=failed,
                   regressed=regressed, errors=errors, latency_over=slow, interrupted=interrupted, fate=fate,
                   fate_text=fate_text, rule=flips.rule if flips is not None else EACH,
                   fixed=len(flips.fixed) if flips is not None else 0, flips_text=flips.text() if flips else "",
                   flips_p=flips.p_value if flips is not None else None,
                   unstable=len(flips.unstable) if flips is not None else 0,
                   noise_text=noise.text() if noise is not None else "",
                   flip_rate=noise.flip_rate if noise is not None else None, power_text=power_text(checks),
                   flips_p_label=flips.p_label if flips is not None else "one-sided McNemar p",
                   missing=missing or "", confirm_text=confirmed.text() if confirmed is not None else "",
                   confirmed=confirmed.samples if confirmed is not None else 0,
                   confirm_calls=confirmed.calls if confirmed is not None else 0)


def power_text(checks: Sequence[Check]) -> str:
    """The drop each overall check detects, and every slice too small for its tolerance, in one line."""
    shown = [c.detectable for c in checks if c.detectable is not None and (c.slice is None or c.detectable.short)]
    if not shown:
        return ""
    d0 = shown[0]
    parts = [f"{d.label}: {d.text()}" for d in shown[:6]]
    more = len(shown) - 6
    return ("detectable drop (95 % power; " + d0.basis() + "): " + "; ".join(parts)
            + (f"; and {more} more slices too small for their tolerance" if more > 0 else ""))
