"""Which metadata keys of a suite's own annotations are slices: one rule for ``init --from`` (the slices it
writes into ``suite.toml``) and the ``grounding`` loader (a note naming a key the annotations carry that no
metric slices by).

Why: the slices a suite reports are the ones its ``suite.toml`` names, written once by ``init --from``. A
suite started from screenshots alone is annotated afterwards, and a key its lines gain then (``"app"``,
``"theme"``) was in no report (issue 39: a suite sliced only by size). Slices stay declared, not guessed
at every run: a slice that appears records no baseline of its own, so adding one is a change a person
makes (and re-records). The loader says which key to add instead, once per collection, as a note.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

from pytest_uiground.screens import format as fmt

MAX_VALUES: Final = 12
"""A key with more distinct values than this is an identifier, not a slice (one sample per value)."""


def slice_keys(lines: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The keys that are slices, with their values: ``element_type`` and every metadata key that every line
    has, with 2..12 values shared by several samples (one value per sample is an id)."""
    values: dict[str, set[str]] = {}
    for line in lines:
        for k, v in line.items():
            if k not in fmt.KNOWN or k == "element_type":
                values.setdefault(k, set()).add(str(v))
    return {k: sorted(vs) for k, vs in sorted(values.items()) if 1 < len(vs) <= MAX_VALUES
            and len(vs) < len(lines) and all(k in line for line in lines)}


def unsliced(lines: Sequence[Mapping[str, Any]], sliced: Collection[str], suite_file: str) -> list[str]:
    """One note per slice key of ``lines`` that no metric slices by, naming the line of ``suite_file`` to edit."""
    out = []
    for key, vs in slice_keys(lines).items():
        if key in sliced:
            continue
        shown = ", ".join(vs[:4]) + (", ..." if len(vs) > 4 else "")
        out.append(f"every sample has {key!r} ({len(vs)} values: {shown}) and no metric slices by it: add "
                   f"\"{key}\" to a metric's slices in {suite_file} to see the results by it, then record the "
                   "baseline again (--snapshot-update)")
    return out
