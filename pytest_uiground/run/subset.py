"""``--uiground-limit N``: a seeded, stratified subset of a suite on few screens, for a smoke run.

:func:`stratified_subset` is one step of the plan of the samples a run takes
(:func:`pytest_uiground.shard.plan.planned`: the subset, then ``--uiground-shard``'s part); it depends
on the samples, the keys and the seed alone, so every xdist worker (each collects again) and every
machine picks the same one.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from pytest_uiground.record.sample import Sample


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
