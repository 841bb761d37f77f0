"""The model interface every adapter implements, and the options it is built from.

An adapter turns a batch of samples into predictions in the internal coordinate
convention. It decodes images itself (``sample.image.load()``) so that decoding is
timed with the prediction and never happens at collection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pytest_uiground.prediction import Prediction
from pytest_uiground.sample import Sample


@dataclass(frozen=True)
class ModelOptions:
    """Command-line model settings, parsed and validated at start-up."""

    name: str
    path: str | None = None
    device: str = "cpu"
    batch_size: int = 1
    worker_id: str = "master"
    dtype: str = "auto"
    max_new_tokens: int = 256
    predictions: str | None = None
    replay_parser: str | None = None
    api_base: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    served_model: str | None = None
    parser: str | None = None
    concurrency: int = 8
    request_timeout: float = 120.0
    max_retries: int = 5


class ModelLoadError(Exception):
    """A model could not be loaded; the message names the model, the value and the fix."""


@runtime_checkable
class Model(Protocol):
    """A loaded model. One instance per pytest process (session fixture)."""

    name: str

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        """One prediction per sample, in order. May raise; the harness isolates it."""
        ...

    def fingerprint(self) -> dict[str, Any]:
        """What identifies this model's outputs: for provenance and cache keys."""
        ...


ModelFactory = Callable[[ModelOptions], Model]
