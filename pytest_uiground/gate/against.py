"""A run beside another model's published run, sample by sample (``--uiground-against FILE``).

Why this exists: model makers publish per-sample answers (Gelato's and MAI-UI's logs, duvo-eye's
``predictions.jsonl``), and "where does my checkpoint lose to theirs" is answered only per sample: the
paired table (both right, only this run, only theirs, neither), the samples that flip each way and the
exact McNemar p-value of the discordant pairs (:func:`~pytest_uiground.gate.stats.mcnemar_exact`,
the test the gate uses against its own baseline; lm-evaluation-harness issue 3831 asks for the same
between two runs). It is a report, never a check: the committed baseline and the verdict are not
touched. The answers are read by :mod:`pytest_uiground.run.against`; this module holds the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_uiground.gate.stats import mcnemar_exact


@dataclass(frozen=True)
class Against:
    """The paired comparison of this run (``ours``) with a published run (``theirs``) on the samples
    both answered; ``missing``: samples of this run with no usable answer of theirs (or that errored here)."""

    file: str
    parser: str
    both: int
    ours_only: tuple[str, ...]
    theirs_only: tuple[str, ...]
    neither: int
    missing: tuple[str, ...]
    note: str = ""
    #: the file's layout (:data:`pytest_uiground.record.published.LAYOUTS`)
    layout: str = "replay"
    #: a published log's records that matched no sample of this run (its other samples, or another split)
    unmatched: int = 0
    #: samples on which the log's own verdict differs from this suite's scoring of the same answer
    disagree: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return self.both + len(self.ours_only) + len(self.theirs_only) + self.neither

    @property
    def p_value(self) -> float:
        return mcnemar_exact(len(self.theirs_only), len(self.ours_only))

    def accuracy(self, side: str) -> float | None:
        if not self.n:
            return None
        right = self.both + len(self.ours_only if side == "ours" else self.theirs_only)
        return 100.0 * right / self.n

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "parser": self.parser, "n": self.n, "both": self.both,
                "ours_only": list(self.ours_only), "theirs_only": list(self.theirs_only), "neither": self.neither,
                "missing": list(self.missing), "ours_accuracy": self.accuracy("ours"),
                "theirs_accuracy": self.accuracy("theirs"), "mcnemar_p": self.p_value, "layout": self.layout,
                **({"unmatched": self.unmatched} if self.unmatched else {}),
                **({"disagree": list(self.disagree)} if self.disagree else {}),
                **({"note": self.note} if self.note else {})}

    def lines(self, shown: int = 10) -> list[str]:
        """The terminal's block: the paired table, McNemar, the flips each way (the first ``shown`` ids)."""
        if self.note:
            return [f"against {self.file} ({self.parser}): {self.note}"]
        ours, theirs = self.accuracy("ours"), self.accuracy("theirs")
        out = [f"against {self.file} (read as {self.parser}), {self.n} paired samples"
               + (f", {len(self.missing)} without a pair" if self.missing else "")
               + ": this run " + (f"{ours:.2f}" if ours is not None else "-")
               + ", theirs " + (f"{theirs:.2f}" if theirs is not None else "-"),
               f"  both right {self.both}, only this run {len(self.ours_only)}, only theirs {len(self.theirs_only)}, "
               f"neither {self.neither}; McNemar exact p = {self.p_value:.4g} (the baseline is not touched)"]
        if self.layout != "replay":
            out.append(f"  their file: a {self.layout} log, {self.unmatched} of its records matched no sample here; "
                       f"its own verdict differs from this suite's scoring of the same answer on "
                       f"{len(self.disagree)} sample(s)")
        for label, ids in (("right here, wrong in theirs", self.ours_only), ("wrong here, right in theirs",
                                                                             self.theirs_only),
                           ("their verdict differs from this suite's", self.disagree)):
            if ids:
                more = f" ... and {len(ids) - shown} more" if len(ids) > shown else ""
                out.append(f"  {label} ({len(ids)}): {', '.join(ids[:shown])}{more}")
        return out


def pair(file: str, parser: str, ours: Mapping[str, bool | None], theirs: Mapping[str, bool | None],
         order: Sequence[str], *, layout: str = "replay", unmatched: int = 0, disagree: Sequence[str] = ()
         ) -> Against:
    """The paired counts over ``order`` (sample ids): a sample whose either side is None has no pair."""
    both = neither = 0
    ours_only: list[str] = []
    theirs_only: list[str] = []
    missing: list[str] = []
    for sid in order:
        a, b = ours.get(sid), theirs.get(sid)
        if a is None or b is None:
            missing.append(sid)
        elif a and b:
            both += 1
        elif a:
            ours_only.append(sid)
        elif b:
            theirs_only.append(sid)
        else:
            neither += 1
    return Against(file, parser, both, tuple(ours_only), tuple(theirs_only), neither, tuple(missing), layout=layout,
                   unmatched=unmatched, disagree=tuple(disagree))
