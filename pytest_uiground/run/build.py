"""Building the ``--model`` adapter: one way for the model fixture (``plugin.py``) and the
coordinate-contract probe (``probe/plugin.py``), which builds it before the session and hands it
to the fixture when this process runs the samples (``WorkerState.take_model``).
"""

from __future__ import annotations

import time

from pytest_uiground import registry
from pytest_uiground.models.base import ModelAdapter, adapt
from pytest_uiground.options import RunOptions, model_options


def build_model(opts: RunOptions, worker_id: str) -> tuple[ModelAdapter, float]:
    """The adapter for this process and the seconds its factory took (the weights' load for a
    local model, which the summary reports)."""
    factory = (registry.import_object(opts.model_target, what=f"model {opts.model.name!r} ->") if opts.model_target
               else registry.resolve(registry.MODEL_GROUP, opts.model.name, what="model", option="--model"))
    started = time.perf_counter()
    model = adapt(factory(model_options(opts, worker_id)))
    return model, time.perf_counter() - started
