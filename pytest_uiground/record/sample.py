"""Sample: one benchmark item, cheap to build at collection time.

A sample carries everything scoring needs (the target) and everything slicing
needs (``meta``), but only a lazy :class:`~pytest_uiground.record.image.ImageRef` for the
pixels. Loaders that meet a malformed row still emit a sample, with ``invalid`` set
to the reason, so that that one test fails with its row id while the rest run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef

TaskKind = Literal["point", "verdict", "option", "answer", "vqa", "detect"]
TASK_KINDS: tuple[str, ...] = ("point", "verdict", "option", "answer", "vqa", "detect")

#: Joins the values of a meta key when a sample belongs to several groups at once (an OSWorld-G
#: record classified under two groups): the sample counts in each ``key=value`` slice.
MULTI_VALUE_SEP = "|"

#: The metadata key of a perturbed sample (:mod:`pytest_uiground.perturb`): its value is the perturbation's
#: spec (``scale:0.75``). Such a sample counts only in its ``perturb=<spec>`` slice, never in a metric's
#: headline or its other slices, which stay the unperturbed suite's numbers.
PERTURB_KEY = "perturb"

#: The sample-id alphabet (a regex character-class body): letters, digits and ``_ . : + -``. Ids are
#: pytest parameter ids and baseline keys, so they must survive a shell, a URL and a file name.
#: Loaders that build ids from published records replace every other character (:func:`safe_id`).
ID_CHARS = r"A-Za-z0-9_.:+\-"
_ID_RE = re.compile(rf"^[A-Za-z0-9][{ID_CHARS}]*$")  # and the first one a letter or a digit
_UNSAFE_ID = re.compile(rf"[^{ID_CHARS}]")


def safe_id(raw: str) -> str:
    """``raw`` with every character outside the sample-id alphabet replaced by ``_``."""
    return _UNSAFE_ID.sub("_", raw)


@dataclass(frozen=True, slots=True)
class Target:
    """Ground truth: whichever fields the task kind needs.

    ``point`` tasks need ``box``; ``verdict`` tasks need ``verdict`` ("passed" or
    "failed") and may carry a ``box`` for a pointing sub-task; ``option`` tasks need
    the option letter; ``answer`` tasks need the reference answer text, scored by
    exact match; ``vqa`` tasks need the reference answer too, but a free-text answer
    that a judge scores (see :mod:`pytest_uiground.judges.base`); ``detect`` tasks need the
    element's ``box``, to be found from the sample's ``click`` point or instruction.

    A ``point`` task may instead have a ``polygon`` (OSWorld-G): a flat pixel list
    ``(x0, y0, x1, y1, ...)`` in the pixel frame ``frame`` = (width, height) it was drawn
    in. It stays in pixels, not normalized, because the even-odd ray casting divides by
    edge heights: the verdict for a click on a slanted edge depends on the arithmetic, and
    only the reference's own pixel frame gives the reference's verdict there; ``frame``
    lets the report draw it on any image size. ``refusal`` marks a sample whose element
    is not on the screen: only an explicit refusal (``Prediction.refused``) is right.
    """

    box: Box | None = None
    verdict: str | None = None
    option: str | None = None
    answer: str | None = None
    polygon: tuple[float, ...] | None = None
    frame: tuple[int, int] | None = None
    refusal: bool = False

    def __post_init__(self) -> None:
        if self.polygon is not None:
            if len(self.polygon) < 6 or len(self.polygon) % 2:
                raise ValueError(f"polygon target: expected a flat [x0, y0, x1, y1, ...] list of at least three "
                                 f"vertices, got {len(self.polygon)} numbers")
            if self.frame is None or min(self.frame) <= 0:
                raise ValueError(f"polygon target: needs frame = (width, height) > 0 of its pixels, got "
                                 f"{self.frame!r}")


@dataclass(frozen=True, slots=True)
class Sample:
    """One test case. ``id`` is the pytest parameter id: stable across machines.

    ``click`` is an input, not ground truth: the location a user clicked, for
    detection tasks. ``context`` holds structured inputs a scorer needs beyond the
    target (a driving frame's key objects, say); frames share one mapping between
    their questions, so it costs nothing per sample.

    ``instruction_alts`` are other wordings of ``instruction`` that the suite itself provides
    (paraphrases, other languages; never generated): the ``alt`` perturbation asks each one as
    a variant of its own, the target unchanged (:mod:`pytest_uiground.perturb.derive`).
    """

    id: str
    image: ImageRef
    instruction: str
    task: TaskKind
    target: Target
    meta: Mapping[str, str] = field(default_factory=dict)
    invalid: str | None = None
    click: Point | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    instruction_alts: tuple[str, ...] = ()

    def slice_value(self, key: str) -> str | None:
        return self.meta.get(key)


class DuplicateSampleIdError(ValueError):
    """Two samples share an id: results and baselines could not be told apart."""


def check_sample_ids(samples: Iterable[Sample], *, source: str) -> None:
    """Reject duplicate or unusable ids at load time.

    pytest silently renames duplicate parameter ids (and errors under
    ``strict = true``), which would break baselines keyed by id, so we refuse them
    here with a message naming the suite and the id.
    """
    seen: set[str] = set()
    for s in samples:
        if not _ID_RE.fullmatch(s.id):  # fullmatch: "$" alone would let "id\n" through
            raise ValueError(
                f"{source}: sample id {s.id!r} is not usable as a test id; ids must match "
                f"{_ID_RE.pattern} (letters, digits, '_', '.', ':', '+', '-')"
            )
        if s.id in seen:
            raise DuplicateSampleIdError(
                f"{source}: duplicate sample id {s.id!r}; every sample needs a unique id "
                "(fix the loader or the dataset)"
            )
        seen.add(s.id)
