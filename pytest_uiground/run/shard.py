"""Which samples a run takes: ``--uiground-limit``'s subset, then ``--uiground-shard I/N``'s part of it,
then their perturbed variants (``--uiground-perturb``, ``suite.toml [perturb]``: :mod:`pytest_uiground.perturb`).

The stratified subset (:func:`stratified_subset`) picks few screens for a smoke run.

A suite too big for one machine is split over N machines (a CI matrix, a Slurm array), each
running ``--uiground-shard I/N``; ``python -m pytest_uiground merge`` puts their records back together
(:mod:`pytest_uiground.shard`). The split must be the same on every machine and in every xdist
worker (each collects again), so it depends on nothing but the sample ids and screens: no random
state, no hash seed, no absolute path. It keeps a screen's samples together (the models whose work
is per screen, an OCR pass, an image upload, pay for a screen once, on one machine) and balances the
shards by sample count: screens, largest first (ties by their smallest sample id), each go to the
shard with the fewest samples so far (ties to the lower index). The shards then differ by at most
one screen's samples.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_uiground.perturb.derive import derive, original_id
from pytest_uiground.perturb.transforms import parse
from pytest_uiground.record.sample import PERTURB_KEY, Sample

if TYPE_CHECKING:  # types only: the plan reads options and a loaded suite it is handed
    from pytest_uiground.options import RunOptions
    from pytest_uiground.suite.loading import LoadedSuite

_VARIANTS: dict[tuple[object, ...], LoadedSuite] = {}


def with_variants(loaded: LoadedSuite, options: RunOptions) -> LoadedSuite:
    """The suite with its robustness variants (``suite.toml [perturb]`` and ``--uiground-perturb``) among its
    samples, derived once per process (:mod:`pytest_uiground.perturb.derive`): every process and the gate see
    one sample set, so the baseline records the variants, a later run gates them, and a run without them
    finds them "removed", not mismatched. Samples a perturbation cannot ask (a target out of view) have no
    variant; the robustness table counts them (:mod:`pytest_uiground.perturb.robustness`)."""
    specs = tuple(dict.fromkeys((*loaded.config.perturb, *options.perturb)))
    if not specs:
        return loaded
    key = (loaded.config.path, loaded.fingerprint, specs)
    found = _VARIANTS.get(key)
    if found is None:
        import dataclasses

        derived = derive([s for s in loaded.samples if PERTURB_KEY not in s.meta], [parse(s) for s in specs])
        found = _VARIANTS[key] = dataclasses.replace(loaded, samples=(*loaded.samples, *derived.samples))
    return found


def stratified_subset(samples: Sequence[Sample], n: int, keys: Sequence[str], seed: int) -> list[Sample]:
    """A seeded subset of ``n`` samples, proportional over the strata of ``keys``, on few screens.

    Seats per stratum are proportional (largest remainder, at least one per stratum while
    seats last). The seats are then filled screen by screen (samples sharing an image):
    each step takes the screen whose samples fill the most open seats, so the subset
    touches about ``n / samples-per-screen`` screens rather than ``n``. That is what a smoke
    run costs for models whose work is per screen (OCR, image encoding, a served model's
    upload). Deterministic on every worker (xdist requires identical collections): screens
    and members are ordered by key and id before a seeded shuffle, ties go to the earlier
    screen in that order.
    """
    if n >= len(samples):
        return list(samples)
    strata: dict[tuple[str, ...], list[Sample]] = defaultdict(list)
    for s in samples:
        strata[_stratum(s, keys)].append(s)
    order = sorted(strata)
    seats = _seats({k: len(v) for k, v in strata.items()}, n)
    rng = random.Random(seed)
    screens: dict[str, list[Sample]] = defaultdict(list)
    for s in sorted(samples, key=lambda s: s.id):
        screens[s.image.key].append(s)
    screen_order = sorted(screens)
    rng.shuffle(screen_order)
    for key in screen_order:
        rng.shuffle(screens[key])
    open_seats = {k: seats[k] for k in order if seats[k]}
    chosen: list[Sample] = []
    remaining = list(screen_order)
    while open_seats and remaining:
        def fits(key: str) -> int:
            counts: dict[tuple[str, ...], int] = defaultdict(int)
            for s in screens[key]:
                counts[_stratum(s, keys)] += 1
            return sum(min(c, open_seats.get(k, 0)) for k, c in counts.items())

        best = max(remaining, key=lambda key: (fits(key), -remaining.index(key)))
        remaining.remove(best)
        for s in screens[best]:
            k = _stratum(s, keys)
            if open_seats.get(k, 0) > 0:
                chosen.append(s)
                open_seats[k] -= 1
                if not open_seats[k]:
                    del open_seats[k]
    return sorted(chosen, key=lambda s: s.id)


def _stratum(sample: Sample, keys: Sequence[str]) -> tuple[str, ...]:
    return tuple(sample.meta.get(k, "") for k in keys)


def _seats(sizes: dict[tuple[str, ...], int], n: int) -> dict[tuple[str, ...], int]:
    """Seats per stratum: proportional by largest remainder, then one for every stratum while seats last."""
    order = sorted(sizes)
    total = sum(sizes.values())
    quotas = {k: n * sizes[k] / total for k in order}
    seats = {k: int(q) for k, q in quotas.items()}
    for k in sorted(order, key=lambda k: (-(quotas[k] - int(quotas[k])), k)):  # largest remainder
        if sum(seats.values()) >= n:
            break
        seats[k] += 1
    for k in sorted(order, key=lambda k: (-sizes[k], k)):  # then every stratum gets a seat
        donor = max(order, key=lambda d: (seats[d], d))
        if seats[k] == 0 and seats[donor] > 1:
            seats[donor] -= 1
            seats[k] = 1
    return seats


def assign(samples: Sequence[Sample], count: int) -> dict[str, int]:
    """Sample id → its shard (1..count), screen by screen as the module says."""
    screens: dict[str, list[str]] = defaultdict(list)
    for s in samples:
        screens[s.image.key].append(s.id)
    order = sorted(screens.values(), key=lambda ids: (-len(ids), min(ids)))
    sizes = [0] * count
    out: dict[str, int] = {}
    for ids in order:
        shard = min(range(count), key=lambda i: (sizes[i], i))
        sizes[shard] += len(ids)
        out.update(dict.fromkeys(ids, shard + 1))
    return out


def part(samples: Sequence[Sample], index: int, count: int) -> list[Sample]:
    """The samples of shard ``index`` of ``count`` (1-based), in their suite order."""
    where = assign(samples, count)
    return [s for s in samples if where[s.id] == index]


def planned(loaded: LoadedSuite, options: RunOptions, pool: Sequence[Sample] | None = None) -> list[Sample]:
    """The samples this run collects of a suite: all (or ``pool``, e.g. ``--uiground-only-new``'s), or
    ``--uiground-limit``'s stratified subset, then ``--uiground-shard``'s part. Every process (and the shard
    manifest) computes the same list."""
    samples = list(loaded.samples if pool is None else pool)
    variants = [s for s in samples if PERTURB_KEY in s.meta]  # they follow their originals (with_variants)
    if not variants:
        return _taken(samples, loaded, options)
    taken = _taken([s for s in samples if PERTURB_KEY not in s.meta], loaded, options)
    if options.limit is None and options.shard is None:
        return taken + variants
    keep = {s.id for s in taken}
    return taken + [v for v in variants if original_id(v.id) in keep]


def _taken(samples: list[Sample], loaded: LoadedSuite, options: RunOptions) -> list[Sample]:
    if options.limit is not None:
        keys = loaded.config.stratify or tuple(sorted({k for s in samples for k in s.meta}))
        samples = stratified_subset(samples, options.limit, keys, options.seed)
    if options.shard is not None:
        samples = part(samples, *options.shard)
    return samples
