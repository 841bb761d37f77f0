"""Answer readers on huge answers: every family's reader, timed on 100 kB and 1 MB (figures for the
notes; the unit test ``tests/models/test_reader_scaling.py`` checks only the ratio).

    python perf/bench_readers.py [--sizes 100000,1000000] [--family NAME ...]

A model that rambles (a repetition loop, an echoed prompt, a hostile server) can return
megabytes; issue 34 item 3 found readers quadratic in that length (87-270 s for one 100 kB
answer). :func:`hostile_answers` builds the shapes that made each reader backtrack or
rescan: a valid answer followed by a long run of one character, a long run of one
character after a reader's anchor ("answer", ``</s><s>click``, ``(``), and plain
repetitions of answer fragments. For each family and task the worst input is reported,
with the 1 MB / 100 kB time ratio (linear: ~10).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial

ANCHORS = ("", "answer", "answer is", "Answer:", "</s><s>click", "</s><s>", "(", "[", "(1", "(1,", "<point>",
           "<point>1 ", "<bbox>1 1 ", "\\boxed{", '"point_2d": [', "<tool_call>\n", "<tool_call>", "<loc_1>",
           "(1, 2)", "[1, 2]", "<point>1 2</point>", '{"x": ', "A", "(A)", "A.", "Action: click(start_box='(")
FILLERS = (" ", "\n", "\t", "*", "1", ",", "(", "[", ".", "-", "a", "<", "1,", "(1,", "[1, ", "(1, 2)", "<loc_1>",
           "A ", "A\n", "(A) ", "answer ", "1 ", "[[", "{", '"', "\\boxed{", "<point>", "0.", "-1", ", ")


def hostile_answers(size: int) -> dict[str, str]:
    """``anchor + filler * k`` and ``filler * k + anchor`` of about ``size`` characters, by name."""
    out: dict[str, str] = {}
    for anchor in ANCHORS:
        for filler in FILLERS:
            run = filler * max(1, (size - len(anchor)) // len(filler))
            out[f"{anchor!r}+{filler!r}*"] = anchor + run
            if anchor:
                out[f"{filler!r}*+{anchor!r}"] = run + anchor
    return out


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def worst_case(read: Callable[[str], object], small: dict[str, str], big: dict[str, str]) -> tuple[str, float, float]:
    """The input ``read`` is slowest on at the small size, and its times at both sizes."""
    times = {name: timed(partial(read, text)) for name, text in small.items()}
    worst = max(times, key=times.__getitem__)
    return worst, times[worst], timed(partial(read, big[worst]))


def readers() -> dict[str, Callable[[str], object]]:
    """Every registered family's ``parse`` on every task kind it prompts for, plus the option reader."""
    from pytest_uiground.models import families
    from pytest_uiground.models.families.reading import ParseContext

    ctx = ParseContext(image_size=(1000, 800), model_input_size=(1008, 812))
    out: dict[str, Callable[[str], object]] = {}

    def reader(fam: families.Family, task: str) -> Callable[[str], object]:
        return lambda text: fam.parse(text, task, ctx)

    for name in families.names():
        fam = families.get(name)
        for task in ("point", "verdict"):
            if task in fam.prompts:
                out[f"{name}/{task}"] = reader(fam, task)
    out["option (every family)"] = reader(families.get("elam"), "option")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--family", action="append", default=[], help="only readers whose name starts with this")
    args = ap.parse_args()
    small, big = (int(s) for s in args.sizes.split(","))
    inputs_small, inputs_big = hostile_answers(small), hostile_answers(big)
    print(f"{'reader':28} {'worst input':36} {small // 1000:>5} kB s {big // 1000:>6} kB s  ratio")
    for name, read in readers().items():
        if args.family and not any(name.startswith(f) for f in args.family):
            continue
        worst, t_small, t_big = worst_case(read, inputs_small, inputs_big)
        print(f"{name:28} {worst[:36]:36} {t_small:10.4f} {t_big:12.4f} {t_big / max(t_small, 1e-9):6.1f}",
              flush=True)


if __name__ == "__main__":
    main()
