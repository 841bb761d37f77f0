"""The ``grounding`` loader: your own screenshots and ``annotations.jsonl`` (:mod:`.format`) as a suite.

Why this exists: the teams this plugin is for gate their checkpoints on their product's screens.
Before it, the only own-data path made ``detect`` samples from OpenAdapt JSON with normalized boxes;
a grounding suite (``point`` samples with an instruction) needed a loader of one's own. This one reads
the documented format (pixels, relative image paths) with no code in the user's project:

.. code-block:: toml

    [loader]
    name = "grounding"
    [loader.options]
    annotations = "annotations.jsonl"   # or a .csv with the same columns

Each line becomes one sample: ``point`` (find the element the instruction names; a ``polygon`` is
scored as the polygon), ``refusal`` (the element is absent: only a refusal is right) or ``detect``
(find the element's box, from ``click`` when the line has one). Boxes are converted from pixels with
the image's header size (never decoding the pixels); metadata keys become slices, with ``size``
(the box's longer side: ``lt32``, ``32to100``, ``gt100``) and ``element_type`` where given.

**Failures stay local.** A malformed line, an image that is missing or unreadable, a box outside
its image or a line with no instruction yet becomes one invalid sample naming the file, the line,
the value and the fix; the other samples run. The cheap checks of ``validate`` (duplicate boxes,
an instruction used twice on one screen, metadata keys on only some lines...) are given as
notes at collection (:mod:`.checks`; the terminal and summary.json list them), one line each
with the sample id and the fix; so is a metadata key every line carries that no metric slices by
(:mod:`~pytest_uiground.screens.slicing`: added after ``init --from`` wrote the slices).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pytest_uiground.record.sample import Sample
from pytest_uiground.screens import checks, slicing
from pytest_uiground.screens import format as fmt
from pytest_uiground.screens.samples import annotations_path, samples_of
from pytest_uiground.suite.config import SuiteConfigError, load_suite_config
from pytest_uiground.suite.loading import LayoutError, LoaderContext, check_options, quirk

OPTIONS: Final = ("annotations", "warnings")


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """One sample per line of the annotation file (see the module docstring). Options: ``annotations``
    (default ``annotations.jsonl``) and ``warnings`` (default true: the cheap validate checks as notes)."""
    check_options(options, OPTIONS)
    path = annotations_path(options, ctx)
    if not path.is_file():
        where = (f"--uiground-data-path {ctx.data_path}" if ctx.data_path is not None
                 else f"the suite folder {ctx.suite_dir}")
        raise LayoutError(f"annotations {str(path)!r} not found (relative paths are read from {where}); set "
                          f"[loader.options] annotations, or create the file: python -m pytest_uiground init NAME "
                          "--from SCREENSHOTS, or python -m pytest_uiground import coco|label-studio|cvat FILE --out "
                          f"{fmt.DEFAULT_FILE}")
    try:
        lines = fmt.read(path)
    except fmt.FormatError as exc:
        raise ValueError(str(exc)) from exc
    samples = samples_of(path, lines)
    if options.get("warnings", True):
        for problem in checks.cheap(path, lines, samples):
            # A note of the plugin's own (terminal, summary.json), never a warning: under a project's
            # filterwarnings = ["error"] a warning stopped the whole suite at collection (issue 38).
            quirk(path.name, problem.line())
        for note in unsliced_notes(lines, ctx):
            quirk(path.name, note)
    return samples


def unsliced_notes(lines: list[fmt.Line], ctx: LoaderContext) -> list[str]:
    """A key the annotations carry (added after ``init --from`` wrote the slices) that no metric of the
    suite's ``suite.toml`` slices by (:mod:`pytest_uiground.screens.slicing`); none when there is no such
    file to read (a loader called on its own)."""
    toml = ctx.suite_dir / "suite.toml"
    if not toml.is_file():
        return []
    try:
        config = load_suite_config(toml)
    except SuiteConfigError:
        return []  # load_suite reports it, naming the field
    sliced = {k for m in config.metrics for k in m.slices}
    return slicing.unsliced([line.raw for line in lines if line.raw is not None], sliced, "suite.toml")


