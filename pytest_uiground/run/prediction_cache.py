"""Prediction cache: finished predictions survive a crash, a threshold change or a rerun.

Entries are keyed by everything that determines a model's output for a sample: the
model fingerprint (weights, config, processor), the sample id and image, the exact
prompt and the generation settings. Each entry is one small JSON file written
atomically, so concurrent xdist workers never see half an entry. A corrupt entry is
reported on its sample and ignored (the sample is predicted again), never fatal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_uiground.record.files import digest, write_entry
from pytest_uiground.record.prediction import Prediction

FORMAT = 1


@dataclass
class Lookup:
    prediction: Prediction | None
    problem: str | None = None


class PredictionCache:
    def __init__(self, root: Path, fingerprint: Mapping[str, Any]) -> None:
        self.root = root / digest(fingerprint)[:16]
        self.fingerprint = fingerprint

    def key(self, parts: Mapping[str, Any]) -> str:
        return digest({"fingerprint": self.fingerprint, **parts})

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Lookup:
        path = self._path(key)
        if not path.is_file():
            return Lookup(None)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") != FORMAT or data.get("key") != key:
                raise ValueError("format or key mismatch")
            return Lookup(Prediction.from_json(data["prediction"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return Lookup(None, f"corrupt prediction cache entry {path} ignored ({exc}); predicting again")

    def put(self, key: str, prediction: Prediction) -> None:
        if prediction.error is not None:
            return  # errors (OOM, a bad image) are retried on the next run, never cached
        write_entry(self._path(key), {"format": FORMAT, "key": key, "prediction": prediction.to_json()})
