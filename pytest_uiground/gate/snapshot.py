"""The syrupy extension that stores aggregate numbers under ``baselines/<suite>/snapshots/``.

syrupy owns every file under its snapshot folder (``--snapshot-update`` deletes
what it does not recognise), so it gets a folder of its own and the per-sample
baseline lives beside it. The comparison is tolerant: a drop of more than the
suite's tolerance fails, an improvement passes. While updating, the comparison is
exact so that syrupy rewrites every changed number.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from syrupy.extensions.json import JSONSnapshotExtension


class AggregateSnapshot(JSONSnapshotExtension):
    """Configured per suite by :func:`extension_for` (syrupy wants a class)."""

    snapshot_dir: str = ""
    tolerance: float = 0.0
    updating: bool = False

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return cls.snapshot_dir

    @classmethod
    def matches_test_location(cls, *, test_location: Any, snapshot_location: str) -> bool:
        return Path(snapshot_location).parent == Path(cls.snapshot_dir)

    def matches(self, *, serialized_data: Any, snapshot_data: Any) -> bool:
        if self.updating or snapshot_data is None:
            return bool(serialized_data == snapshot_data)
        try:
            current, stored = json.loads(serialized_data), json.loads(snapshot_data)
            if current.get("samples") != stored.get("samples"):
                # A different sample set (a -k or --uiground-limit run, or a changed
                # dataset) is not comparable here; the paired per-sample check decides.
                return True
            if current.get("lower_is_better"):
                return float(current["value"]) <= float(stored["value"]) + self.tolerance
            return float(current["value"]) >= float(stored["value"]) - self.tolerance
        except (ValueError, KeyError, TypeError, AttributeError):
            return False


def extension_for(snapshot_dir: Path, tolerance: float, updating: bool) -> type[AggregateSnapshot]:
    name = f"AggregateSnapshot_{abs(hash((str(snapshot_dir), tolerance, updating)))}"
    attrs = {"snapshot_dir": str(snapshot_dir), "tolerance": tolerance, "updating": updating}
    return type(name, (AggregateSnapshot,), attrs)
