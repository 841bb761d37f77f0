"""The schema of a baseline's ``samples.json``: the file and one sample's entry as msgspec Structs.

:func:`pytest_uiground.gate.baseline.load` decodes the file straight into :class:`SamplesFile` (msgspec's
JSON decoder checks every entry's types and ranges while it parses); a file that does not fit is parsed
again with the standard library and converted by :func:`pytest_uiground.record.schema.convert`, whose
:class:`~pytest_uiground.record.schema.Problem` becomes the one-line "damaged baseline" message naming
the file, the sample, the field and the fix. What a type cannot say is checked after: ``s``'s right
must not exceed its count, and the stored answer ``a`` is read field by field by
:func:`pytest_uiground.record.prediction.stored` (the record's own strict reading, issue 38).

Unknown keys are kept out of the error path on purpose: an entry or a file from a newer writer with
one more field still loads. ``docs/schemas/baseline-samples.schema.json`` is these types as a JSON
Schema (``python -m pytest_uiground.gate.baseline_schema`` writes it).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from msgspec import Meta, Struct

from pytest_uiground.record import schema as schema_mod
from pytest_uiground.record.schema import FINITE

#: The longest component name an entry's ``c`` may hold (the scorers' names are a few words).
COMPONENT_NAME_CHARS = 200

Finite = Annotated[float, Meta(ge=-FINITE, le=FINITE)]
Components = Annotated[dict[Annotated[str, Meta(max_length=COMPONENT_NAME_CHARS)], bool | Finite], Meta(extra={
    "expected": f"an object of component names (at most {COMPONENT_NAME_CHARS} characters) to true/false or "
                "finite numbers"})]
Answer = Annotated[dict[str, Any], Meta(extra={"expected": 'an answer object like {"point": [0.5, 0.5]}'})]
Stability = Annotated[tuple[Annotated[int, Meta(ge=0)], Annotated[int, Meta(ge=1)]], Meta(extra={
    "expected": "[right, of] with 0 <= right <= of"})]


class Entry(Struct, frozen=True):
    """One sample: whether it was right, its 0..100 value (default 100 or 0 by ``right``), its score's
    components ``c``, its answer ``a`` and, when recorded with ``--uiground-repeat``, ``s``: right k of K."""

    right: Annotated[bool, Meta(extra={"expected": "true or false"})]
    value: Annotated[float, Meta(ge=0.0, le=100.0)] | None = None
    c: Components = {}
    a: Answer | None = None
    s: Stability | None = None


class SamplesFile(Struct, frozen=True):
    """``samples.json``: its format, sample id → entry, and the provenance of the run that recorded it."""

    format: Literal[1]
    samples: dict[str, Entry]
    provenance: dict[str, Any] = {}


def json_schema() -> dict[str, Any]:
    """:class:`SamplesFile` as a JSON Schema."""
    return schema_mod.published(SamplesFile, "baselines/<suite>/samples.json")


SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "baseline-samples.schema.json"


if __name__ == "__main__":  # pragma: no cover - python -m pytest_uiground.gate.baseline_schema [--check]
    sys.exit(schema_mod.write_or_check(json_schema(), SCHEMA_FILE, sys.argv))
