"""Is a published figure this computed value? Rounded *or* truncated at the published precision.

Papers print accuracies both ways: MAI-UI's 344/564 = 60.99 is published as 60.9, Gelato's
316/564 = 56.028 as 56.02 (truncated), its 390/564 = 69.148 as 69.15 (rounded). A parity check
that only rounds calls a correct scorer wrong, so :func:`published_rule` accepts either and says
which; :func:`assert_published` fails naming both candidates. The value is computed exactly (a
:class:`~fractions.Fraction` from the counts) so that a figure on a rounding edge is not decided by
float error.
"""

from __future__ import annotations

from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from fractions import Fraction


def _decimal(value: Fraction | float | int) -> Decimal:
    f = Fraction(value)
    return Decimal(f.numerator) / Decimal(f.denominator)


def candidates(value: Fraction | float | int, published: str) -> dict[str, Decimal]:
    """``value`` at ``published``'s precision (its digits after the point), each rule's way."""
    digits = len(published.split(".", 1)[1]) if "." in published else 0
    quantum = Decimal(1).scaleb(-digits)
    exact = _decimal(value)
    return {"rounded": exact.quantize(quantum, ROUND_HALF_UP),
            "rounded half to even": exact.quantize(quantum, ROUND_HALF_EVEN),
            "truncated": exact.quantize(quantum, ROUND_DOWN)}


def published_rule(value: Fraction | float | int, published: str) -> str | None:
    """How ``published`` (the paper's text, e.g. ``"56.02"``) comes from ``value``: ``"rounded"``,
    ``"truncated"`` (only when rounding does not give it), or None when neither does."""
    want = Decimal(published)
    for rule, got in candidates(value, published).items():
        if got == want:
            return "rounded" if rule.startswith("rounded") else rule
    return None


def percent(correct: int, total: int) -> Fraction:
    """``correct / total`` in percent, exactly."""
    return Fraction(100 * correct, total)


def assert_published(value: Fraction | float | int, published: str, what: str = "figure") -> str:
    """The rule that gives ``published`` from ``value``; an AssertionError naming both otherwise."""
    rule = published_rule(value, published)
    if rule is None:
        got = {k: str(v) for k, v in candidates(value, published).items()}
        raise AssertionError(f"{what}: published {published}, computed {float(value):.6f} "
                             f"(rounded {got['rounded']}, truncated {got['truncated']})")
    return rule
