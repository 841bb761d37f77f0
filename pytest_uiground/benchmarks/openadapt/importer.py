"""``python -m pytest_uiground import openadapt FILE``: OpenAdapt's annotation JSON into ``annotations.jsonl``.

Read through the ``openadapt`` loader itself (so the samples, their ids and their boxes are that loader's),
and registered under the ``pytest_uiground.importers`` entry-point group: the importers of the labelling
tools live with the user's own data (:mod:`pytest_uiground.screens.importers`), and the core reaches a
benchmark's format only through the registry (issue 39).
"""

from __future__ import annotations

import os
from pathlib import Path

from pytest_uiground.benchmarks.openadapt import loader
from pytest_uiground.screens import format as fmt
from pytest_uiground.screens.importers import Images, ImportFailed, Records, line_of, rounded


def from_openadapt(path: Path, images: Images, records: Records) -> None:
    """The file's samples as annotation lines (see the module docstring)."""
    try:
        samples = loader.samples_from_annotations(path, loader.read_annotation_file(path), root=Path(os.sep))
    except ValueError as exc:
        raise ImportFailed(str(exc)) from exc
    for s in samples:
        where = f"{path}: sample {s.id!r}"
        if s.invalid is not None:
            raise ImportFailed(f"{s.invalid}; fix it in {path} first")
        assert s.image.path is not None and s.target.box is not None
        image = images.relative(str(s.image.path), where)
        w, h = s.image.dimensions()
        b = s.target.box
        meta = {k: v for k, v in s.meta.items() if k not in ("form", "size", "element_type", *fmt.KNOWN)}
        records.add(where, line_of(id=s.id, image=image, instruction=s.instruction,
                                 bbox=rounded(b.to_pixels(w, h)), task="detect",
                                 element_type=s.meta.get("element_type"),
                                 click=rounded([s.click.x * w, s.click.y * h]) if s.click is not None else None,
                                 **meta))
