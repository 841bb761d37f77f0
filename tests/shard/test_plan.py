"""``--uiground-shard I/N``: the split is a partition, keeps screens whole, balances counts, and is the same
whatever the order the samples come in (every machine and every xdist worker computes it alone); the
robustness variants follow their originals into it."""

from __future__ import annotations

import argparse
import random
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from pytest_uiground.models.base import ModelOptions
from pytest_uiground.options import RunOptions, shard_spec
from pytest_uiground.perturb.derive import original_id
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import PERTURB_KEY, Sample, Target
from pytest_uiground.run.variants import with_variants
from pytest_uiground.shard.plan import assign, part, planned
from pytest_uiground.suite.loading import LoadedSuite


def suite(sizes: list[int], prefix: str = "/data/a") -> list[Sample]:
    """Screens of the given sizes; each sample's image key is its screen's file."""
    out = []
    for screen, size in enumerate(sizes):
        ref = ImageRef.from_source(f"{prefix}/screen{screen:02d}.png", lambda: b"")
        out += [Sample(f"s{screen:02d}-{k}", ref, "click", "point", Target(box=Box(0, 0, 1, 1))) for k in range(size)]
    return out


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_the_shards_partition_the_suite_keep_screens_whole_and_balance_counts(count: int) -> None:
    rng = random.Random(count)
    sizes = [rng.randint(1, 9) for _ in range(40)]
    samples = suite(sizes)
    parts = [part(samples, i, count) for i in range(1, count + 1)]
    ids = [s.id for p in parts for s in p]
    assert sorted(ids) == sorted(s.id for s in samples) and len(ids) == len(set(ids))
    for p in parts:
        screens = {s.image.key for s in p}
        assert all(sum(1 for s in samples if s.image.key == k) == sum(1 for s in p if s.image.key == k)
                   for k in screens), "a screen is split between shards"
    lengths = [len(p) for p in parts]
    assert max(lengths) - min(lengths) <= max(sizes), lengths


def test_the_split_does_not_depend_on_order_or_where_the_data_lies() -> None:
    samples = suite([3, 1, 4, 1, 5, 9, 2, 6])
    shuffled = list(samples)
    random.Random(0).shuffle(shuffled)
    elsewhere = suite([3, 1, 4, 1, 5, 9, 2, 6], prefix="/mnt/runner-7/checkout/data")
    assert assign(samples, 3) == assign(shuffled, 3) == assign(elsewhere, 3)
    assert [s.id for s in part(shuffled, 2, 3)] == [s.id for s in shuffled if assign(samples, 3)[s.id] == 2]


@pytest.mark.parametrize("text", ["0/4", "5/4", "1", "a/b", "2/0", "-1/3"])
def test_a_bad_shard_is_refused_with_the_form(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected I/N with 1 <= I <= N.*give e\.g\. 1/4"):
        shard_spec(text)
    assert shard_spec("3/4") == (3, 4)


def test_the_variants_follow_their_originals_into_the_shard() -> None:
    """A suite's robustness variants are derived once per process, and a shard takes a variant exactly
    when it takes the original (the part is computed on the originals, the variants follow)."""
    samples = tuple(suite([2, 1, 3, 2, 1]))
    config = SimpleNamespace(perturb=("invert",), path=Path("suites/x/suite.toml"), loader_options={}, stratify=())
    loaded = LoadedSuite(config=cast(Any, config), samples=samples, scorer=cast(Any, None))
    options = RunOptions(model=ModelOptions(name="m"))
    grown = with_variants(loaded, options)
    assert grown is with_variants(loaded, options), "derived once per process"
    assert sorted(s.id for s in grown.samples if PERTURB_KEY in s.meta) == sorted(f"{s.id}@invert" for s in samples)
    assert with_variants(replace(loaded, config=cast(Any, replace_ns(config, perturb=()))), options).samples == samples
    for index in (1, 2):
        taken = planned(grown, replace(options, shard=(index, 2)))
        originals = {s.id for s in taken if PERTURB_KEY not in s.meta}
        assert originals == {s.id for s in part(list(samples), index, 2)}
        assert {original_id(s.id) for s in taken if PERTURB_KEY in s.meta} == originals


def replace_ns(ns: SimpleNamespace, **changes: object) -> SimpleNamespace:
    return SimpleNamespace(**{**vars(ns), **changes})
