"""Choosing what runs: slices by ``-k``/``-m``, and ``--uiground-limit`` on whole screens."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import Project

from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.run.subset import stratified_subset
from pytest_uiground.suite.loading import load_suite


def screens(n_screens: int, per_screen: int) -> list[Sample]:
    """``per_screen`` samples on each screen; stratum ``k`` is a on 3 of 4 screens, b on the rest."""
    return [Sample(f"s{i:03d}-{j}", ImageRef.from_path(f"screen{i:03d}.png"), "do", "point",
                   Target(box=Box(0, 0, 1, 1)), {"k": "b" if i % 4 == 3 else "a", "j": str(j % 2)})
            for i in range(n_screens) for j in range(per_screen)]


def test_limit_fills_whole_screens_and_stays_proportional() -> None:
    samples = screens(40, 5)  # 200 samples, 150 a / 50 b
    subset = stratified_subset(samples, 20, ["k"], seed=0)
    assert len(subset) == 20
    assert Counter(s.meta["k"] for s in subset) == {"a": 15, "b": 5}
    assert len({s.image.key for s in subset}) == 4  # 20 samples on 4 whole screens, not 20 screens
    assert subset == stratified_subset(list(reversed(samples)), 20, ["k"], seed=0)  # order-free: xdist-safe
    assert stratified_subset(samples, 20, ["k"], seed=1) != subset


def test_limit_on_one_sample_per_screen_is_the_plain_stratified_subset() -> None:
    samples = screens(100, 1)
    subset = stratified_subset(samples, 8, ["k"], seed=0)
    assert Counter(s.meta["k"] for s in subset) == {"a": 6, "b": 2}
    assert len({s.image.key for s in subset}) == 8


def test_limit_still_gives_every_stratum_a_seat() -> None:
    samples = screens(40, 5)
    subset = stratified_subset(samples, 4, ["k", "j"], seed=0)
    assert {(s.meta["k"], s.meta["j"]) for s in subset} == {("a", "0"), ("a", "1"), ("b", "0"), ("b", "1")}
    assert len({s.image.key for s in subset}) == 2  # one a-screen and one b-screen hold all four strata


def _collected(result: pytest.RunResult) -> list[str]:
    return sorted(line.split("[", 1)[1].rstrip("]") for line in result.stdout.lines if "::test_sample[" in line)


@pytest.mark.parametrize(("selection", "wanted"), [
    (["-k", "hard"], lambda m: m["difficulty"] == "hard"),
    (["-k", "difficulty:easy and not theme:dark"], lambda m: m["difficulty"] == "easy" and m["theme"] != "dark"),
    (["-m", "uiground(difficulty='medium')"], lambda m: m["difficulty"] == "medium"),
], ids=["value", "key:value", "marker"])
@pytest.mark.slow
def test_slices_select_by_keyword_and_marker(project: Project, xdist: list[str], selection: list[str],
                                             wanted: object) -> None:
    suite = load_suite(project.root / "suites" / "mini" / "suite.toml")
    expected = sorted(s.id for s in suite.samples if wanted(s.meta))  # type: ignore[operator]
    assert 0 < len(expected) < len(suite.samples)
    result = project.run("--collect-only", "-q", "--strict-markers", *selection, xdist=xdist)
    assert result.ret == 0, result.stdout.str()
    assert _collected(result) == expected
