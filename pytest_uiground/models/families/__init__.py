"""Model families: one module per family, each the whole contract of one model line.

A :class:`Family` holds what a published number depends on besides the weights: the
authors' prompt per task kind (system text, user text, image before or after the text,
and where it was copied from), the coordinate frame the answers are in, the image resize
rule pixel families answer relative to, the official output reading, the refusal form and
the generation defaults. The Hugging Face, OpenAI-compatible and replay adapters all read
the family, so one model is prompted and read the same way whichever way it is run.
Its parts (:class:`Prompt`, :class:`Resize`, :class:`Generation`) live in :mod:`.parts` and
are re-exported here.

Families are registered under the ``pytest_uiground.families`` entry-point group (one
line per family in ``pyproject.toml``) or named directly as ``package.module:ATTR``;
adding a family is one module and one registry line (README "Adding a model").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache

from pytest_uiground.models.families.parts import (
    FRAMES,
    QWEN25_MAX_PIXELS,
    QWEN25_MIN_PIXELS,
    SHARED_PROMPTS,
    Generation,
    Prompt,
    Resize,
    smart_resize,
)
from pytest_uiground.models.families.reading import Coords, ParseContext, Parsed, parse_option, parse_verdict
from pytest_uiground.record.sample import TASK_KINDS, Sample

FAMILY_GROUP = "pytest_uiground.families"

Reader = Callable[[str, ParseContext], Coords]


@dataclass(frozen=True)
class Family:
    """One model family (see the module docstring); build one per module as ``FAMILY``."""

    name: str
    frame: str
    prompts: Mapping[str, Prompt]
    read: Reader
    """Text → :class:`Coords` in the internal convention: the family's official output reading."""
    generation: Generation
    resize: Resize | None = None
    refusal: str = ""
    sources: tuple[str, ...] = ()
    client_resize: bool = False
    """The official client resizes the image with :attr:`resize` *before* sending it (MAI-UI,
    GTA1, Holo1.5, GUI-Owl-1.5), so the OpenAI client sends the resized image too."""
    variants: Mapping[str, Mapping[str, Prompt]] = field(default_factory=dict)
    """Named alternative prompts the authors use for some benchmarks (GUI-Owl-1.5's OSWorld-G
    system text, which adds the refusal action; UI-Venus' prompt without the refusal sentence),
    picked per suite with ``[models.<family>] variant = "<name>"``; a task kind a variant does
    not name keeps the family's prompt."""
    input_size_known: bool = False
    """True where the official code resizes the image itself with :attr:`resize` before the model
    sees it (Holo1.5, MAI-UI, GTA1 clients), so the model-input size follows from the family and
    replay may compute it; False where a server's or checkpoint's processor decides (Qwen2.5-VL,
    UI-TARS), so a replayed record must carry the size the model saw."""

    def __post_init__(self) -> None:
        if self.frame not in FRAMES:
            raise ValueError(f"family {self.name!r}: frame {self.frame!r} is unknown; use one of {', '.join(FRAMES)}")
        unknown = set(self.prompts) - set(TASK_KINDS)
        if unknown:
            raise ValueError(f"family {self.name!r}: prompts for unknown task kinds {sorted(unknown)}; "
                             f"known: {', '.join(TASK_KINDS)}")
        if "point" not in self.prompts:
            raise ValueError(f"family {self.name!r} has no 'point' prompt; every family grounds")
        if self.client_resize and self.resize is None:
            raise ValueError(f"family {self.name!r} resizes in the client but has no resize rule")
        if self.frame == "pixels-resized" and self.resize is None:
            raise ValueError(f"family {self.name!r} answers in pixels of the resized image but has no resize "
                             "rule: give resize=Resize(factor, min_pixels, max_pixels)")

    def prompt(self, task: str, variant: str | None = None) -> Prompt:
        """The prompt for a task kind (a detection sample is grounded like a pointing one), from
        the named :attr:`variants` entry where it has one for the task."""
        if task not in TASK_KINDS:
            raise ValueError(f"unknown task kind {task!r}; known: {', '.join(TASK_KINDS)}")
        task = "point" if task == "detect" else task
        chosen = self.variant(variant)
        found = chosen.get(task) or self.prompts.get(task) or SHARED_PROMPTS.get(task)
        if found is None:  # verdict without a family prompt: ground the statement as a point
            return self.prompts["point"]
        return found

    def user_text(self, sample: Sample, variant: str | None = None) -> str:
        """The user text for ``sample`` (its instruction and task kind), naming the sample when its
        task kind has no prompt (the suite overrides and the adapters read it here)."""
        try:
            prompt = self.prompt(sample.task, variant)
        except ValueError as exc:
            raise ValueError(f"sample {sample.id!r}: {exc}") from None
        return prompt.text(sample.instruction)

    def variant(self, name: str | None) -> Mapping[str, Prompt]:
        """The prompts of a named variant ({} for None); an unknown name is an error naming the known ones."""
        if name is None:
            return {}
        if name not in self.variants:
            known = ", ".join(sorted(self.variants)) or "none"
            raise ValueError(f"family {self.name!r} has no prompt variant {name!r} (known: {known}); remove "
                             f"'variant' from [models.{self.name}] or name a known one")
        return self.variants[name]

    @property
    def needs_input_size(self) -> bool:
        """Answers are pixels of the resized image: reading them needs the model-input size."""
        return self.frame == "pixels-resized"

    def input_size(self, size: tuple[int, int]) -> tuple[int, int]:
        """The (width, height) the model sees for an image of ``size``: resized by the family's
        rule, or as it is for families without one."""
        return self.resize.apply(size) if self.resize is not None else size

    def parse(self, text: str, task: str, ctx: ParseContext) -> Parsed:
        """Read ``text`` for a ``task`` kind. Unreadable output is never an exception: it is
        ``format_error=True`` with a ``note``; the family's refusal form is ``refused=True``."""
        if task not in TASK_KINDS:
            raise ValueError(f"unknown task kind {task!r}; known: {', '.join(TASK_KINDS)}")
        if task in ("answer", "vqa"):
            answer = text.strip()
            return Parsed(answer=answer or None, format_error=not answer, note="" if answer else "empty output")
        if task == "option":
            option, why = parse_option(text)
            return Parsed(option=option, format_error=option is None, note=why)
        coords = self.read(text, ctx)
        empty = not text.strip()
        if task in ("point", "detect"):
            found = coords.point is not None or (task == "detect" and coords.box is not None)
            note = "empty output" if empty else (coords.error or coords.note)
            return Parsed(point=coords.point, box=coords.box, format_error=not found and not coords.refused,
                          note=note, refused=coords.refused)
        verdict = parse_verdict(text)
        notes = [] if verdict else ["no verdict: none of FAILED / is not met / PASSED / is met (case-sensitive)"]
        if coords.error or coords.note:
            notes.append(f"point: {coords.error or coords.note}")
        return Parsed(point=coords.point, box=coords.box, verdict=verdict, format_error=verdict is None,
                      note="; ".join(notes), refused=coords.refused)


# --- registry -----------------------------------------------------------------------


BUILT_IN_ORDER = ("elam", "molmo", "uitars", "uground", "qwen-vl", "qwen3-vl", "tinyclick",
                  "gui-owl", "ui-venus", "holo", "opencua", "mai-ui", "gta1", "gelato")
"""The order error messages list the built-in families in (the order they were added); other
registered families follow, sorted."""


def names() -> list[str]:
    """The registered family names (entry-point group ``pytest_uiground.families``)."""
    from pytest_uiground import registry

    rank = {name: i for i, name in enumerate(BUILT_IN_ORDER)}
    return sorted(registry.known(FAMILY_GROUP), key=lambda n: (rank.get(n, len(rank)), n))


@cache
def get(name: str) -> Family:
    """The family registered as ``name`` (or named ``package.module:ATTR``); a clear error
    listing the known ones otherwise."""
    from pytest_uiground import registry

    if not registry.is_import_path(name) and name not in registry.known(FAMILY_GROUP):
        raise ValueError(f"unknown model family {name!r}; known: {', '.join(names())}, or a family object "
                         f"named as package.module:ATTR (register yours under the {FAMILY_GROUP!r} entry-point "
                         "group)")
    try:
        found = registry.resolve(FAMILY_GROUP, name, what="model family", option="--uiground-parser")
    except registry.UnknownNameError as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(found, Family):
        raise ValueError(f"model family {name!r} is a {type(found).__name__}, not a "
                         "pytest_uiground.models.families.Family")
    return found


def is_family(name: str) -> bool:
    """A registered family name, or a ``module:ATTR`` that names a :class:`Family`."""
    try:
        get(name)
    except ValueError:
        return False
    return True


__all__ = ["FAMILY_GROUP", "FRAMES", "QWEN25_MAX_PIXELS", "QWEN25_MIN_PIXELS", "SHARED_PROMPTS", "Coords", "Family",
           "Generation", "ParseContext", "Parsed", "Prompt", "Resize", "get", "is_family", "names", "smart_resize"]
