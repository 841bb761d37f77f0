"""A suite's robustness variants among its samples (``suite.toml [perturb]`` and ``--uiground-perturb``).

:func:`with_variants` derives them (:func:`pytest_uiground.perturb.derive.derive`) once per process,
for the collection (:mod:`pytest_uiground.run.state`) and the gate (:mod:`pytest_uiground.controller`)
alike; which of them a run takes follows their originals (:func:`pytest_uiground.shard.plan.planned`).
Kept in ``run/``, not ``perturb/``: it reads the options and a loaded suite, which ``perturb/`` never
imports (the options and the suite config read the perturbations' names from it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pytest_uiground.perturb.derive import derive
from pytest_uiground.perturb.transforms import parse
from pytest_uiground.record.sample import PERTURB_KEY

if TYPE_CHECKING:  # types only: the variants are added to a loaded suite, under options, handed in
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
        derived = derive([s for s in loaded.samples if PERTURB_KEY not in s.meta], [parse(s) for s in specs])
        found = _VARIANTS[key] = replace(loaded, samples=(*loaded.samples, *derived.samples))
    return found
