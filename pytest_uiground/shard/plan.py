"""Which samples a run takes: ``--uiground-limit``'s subset, then ``--uiground-shard I/N``'s part of it,
then their perturbed variants (``--uiground-perturb``, ``suite.toml [perturb]``: :mod:`pytest_uiground.perturb`).

The stratified subset is :func:`pytest_uiground.run.subset.stratified_subset`; the split is this module's.
A suite too big for one machine is split over N machines (a CI matrix, a Slurm array), each
running ``--uiground-shard I/N``; ``python -m pytest_uiground merge`` puts their records back together
(:mod:`pytest_uiground.shard.merge`). The split must be the same on every machine and in every xdist
worker (each collects again), so it depends on nothing but the sample ids and screens: no random
state, no hash seed, no absolute path. It keeps a screen's samples together (the models whose work
is per screen, an OCR pass, an image upload, pay for a screen once, on one machine) and balances the
shards by sample count: screens, largest first (ties by their smallest sample id), each go to the
shard with the fewest samples so far (ties to the lower index). The shards then differ by at most
one screen's samples.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_uiground.perturb.derive import original_id
from pytest_uiground.record.sample import PERTURB_KEY, Sample
from pytest_uiground.run.subset import stratified_subset

if TYPE_CHECKING:  # types only: the plan reads options and a loaded suite it is handed
    from pytest_uiground.options import RunOptions
    from pytest_uiground.suite.loading import LoadedSuite


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
    variants = [s for s in samples if PERTURB_KEY in s.meta]  # they follow their originals (run.variants)
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
