"""The loader interface: suite.toml names a loader and passes it options.

A loader returns the suite's samples without decoding any image: it runs at
collection, on the controller and again on every xdist worker, so it must be cheap
and deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sample import Sample


@dataclass(frozen=True)
class LoaderContext:
    """What a loader may need beyond its own options."""

    suite_name: str
    suite_dir: Path
    data_path: Path | None = None


Loader = Callable[[Mapping[str, Any], LoaderContext], list[Sample]]
