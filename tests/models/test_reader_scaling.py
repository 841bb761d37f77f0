"""Answer readers take time linear in the answer's length (issue 34 item 3).

A rambling or hostile model can return megabytes, and every family's reader reads the whole
text (as the references do, so no cap is applied before reading: GTA1's "any decimal anywhere"
rule and GUI-Owl's "last pair wins" depend on the end of the text). Four patterns were
quadratic: a tuple followed by a long run of spaces (uground, qwen-vl, uitars, qwen3-vl and
every plain reader), "answer" followed by a run of ``*`` (the option reader of every family),
TinyClick's action pattern, and GTA1's number pattern. Absolute timings belong in
``perf/bench_readers.py``; here each input is read at two sizes, 10x apart, and the larger must
take less than 20x the smaller (quadratic: 100x), with a floor (10 ms) so timer noise and a loaded
machine cannot fail it (on the lent GPU machine under -n 14, linear reads of 50,000 characters took
up to 50 ms; the quadratic patterns took seconds).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest

from pytest_uiground.models import families
from pytest_uiground.models.families import gta1, reading
from pytest_uiground.models.families.reading import ParseContext
from pytest_uiground.models.families.tinyclick import TINYCLICK_ACTION_RE, tinyclick_action

CTX = ParseContext(image_size=(1000, 800), model_input_size=(1008, 812))
SMALL, BIG = 5_000, 50_000
FLOOR_S = 0.01  # a linear read of 50,000 characters takes about 1 ms; a quadratic one seconds to minutes

# (reader, task, head, filler): the text is head + filler repeated to the size.
HOSTILE = [
    *[(fam, "point", head, fill) for fam in ("uground", "qwen-vl", "uitars", "qwen3-vl")
      for head in ("(1, 2)", "[1, 2]") for fill in (" ", "\n")],
    *[("elam", "option", head, fill) for head in ("answer", "Answer:", "the answer is") for fill in ("*", " ")],
    ("elam", "option", "the answer is option", " "),
    ("tinyclick", "point", "</s><s>click", "\n"),
    ("tinyclick", "point", "</s><s>", "*"),
    ("tinyclick", "point", "(", "."),
    ("gta1", "point", "(", "1"),
    ("gta1", "point", "(1,", "1"),
    ("gelato", "point", "(", "1"),
    ("gelato", "point", "(1,", "1"),
]


def _best_of(read: Callable[[], object], runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        read()
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize(("family", "task", "head", "filler"), HOSTILE)
def test_reading_a_10x_longer_answer_takes_less_than_20x_as_long(family: str, task: str, head: str,
                                                                  filler: str) -> None:
    fam = families.get(family)

    def timed(size: int) -> float:
        text = head + filler * ((size - len(head)) // len(filler))
        return _best_of(lambda: fam.parse(text, task, CTX))

    small, big = timed(SMALL), timed(BIG)
    assert big < 20 * max(small, FLOOR_S), (
        f"{family} {task}: {BIG} chars took {big:.3f}s, {SMALL} chars {small:.4f}s (quadratic?)")


def test_tinyclick_action_equals_the_reference_pattern() -> None:
    """The linear :func:`tinyclick_action` captures what TinyClick's own regex captures, on every
    text built from the tokens that matter to it."""
    import random

    rng = random.Random(0)
    parts = ["</s><s>", "<", ">", "click", " ", "\n", "<loc_", "1", "<loc_12>", "a", "<s>", "</s>", "x y"]
    for _ in range(20_000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 10)))
        m = TINYCLICK_ACTION_RE.search(text)
        assert tinyclick_action(text) == (m.group(1) if m else None), text


def test_rewritten_patterns_match_what_the_original_patterns_matched() -> None:
    """Each pattern rewritten to avoid backtracking finds the same matches as the original form."""
    import random

    number = r"-?\d+(?:\.\d+)?"
    tuple_ = rf"[\(\[]\s*{number}\s*,\s*{number}(?:\s*,\s*{number}\s*,\s*{number})?\s*[\)\]]"
    originals = [
        (re.compile(rf"({tuple_})(?:\s*,?\s*({tuple_}))?"), reading._TUPLE_PAIR_RE,
         ["(", ")", "[", "]", "1", "2.5", ",", " ", "-", "x"]),
        (re.compile(r"(?i:\b(?:final\s+answer|correct\s+answer|answer|correct\s+option|correct\s+choice))"
                    r"[\s:\-\*]*(?:(?i:is|would\s+be|should\s+be)[\s:\-\*]*)?(?:(?i:option|choice)\s*)?"
                    rf"[\(\[\*\"']*\s*{reading._LETTER}"), reading._STATEMENT_RES[0],
         ["answer", "Answer", " ", "*", ":", "-", "(", "[", '"', "'", "is", "option", "A", "B", "c", "final answer"]),
        # the regex pattern of GTA1's extract_coordinates (Yan98/GTA1@81f0c4c README.md, "Inference")
        (re.compile(r"\((-?\d*\.?\d+),\s*(-?\d*\.?\d+)\)"), gta1._PAIR_RE,
         ["(", ")", "1", "2", ".", ",", " ", "-", ".5"]),
    ]
    rng = random.Random(1)
    for original, rewritten, parts in originals:
        for _ in range(20_000):
            text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 12)))
            want = [(m.span(), m.groups()) for m in original.finditer(text)]
            assert [(m.span(), m.groups()) for m in rewritten.finditer(text)] == want, (rewritten.pattern, text)
