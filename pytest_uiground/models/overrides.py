"""Per-suite model customisation: prompt templates, image preprocessing, response parser.

The idea of MMBench-GUI's per-model config, the pytest way. A suite may override, per
model name, without touching the core:

```toml
[models.uitars]
prompts = { point = "Click on: {instruction}" }     # per task kind; {instruction} is filled in
parser = "uground"                                   # a family parser, or package.module:function
preprocess = "mypkg.screens:crop_status_bar"         # PIL image -> PIL image, before the processor
```

A Python package can do the same by registering a factory under the
``pytest_uiground.models.overrides`` entry-point group: ``factory(suite_name, model_name) ->
Overrides | None`` (a plugin's fields win over the file's). A custom parser is
``parse(text, task, ctx) -> Parsed``.

Overrides change what the model sees or how its text is read, so they are part of
the prediction cache key.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from pytest_uiground.models import families
from pytest_uiground.record.sample import TASK_KINDS, Sample
from pytest_uiground.registry import OVERRIDES_GROUP, import_object, known

if TYPE_CHECKING:
    from pytest_uiground.models.families.reading import ParseContext, Parsed


@dataclass(frozen=True)
class Overrides:
    prompts: Mapping[str, str] = field(default_factory=dict)
    parser: str | None = None
    preprocess: str | None = None
    variant: str | None = None
    """The family's named prompt variant for this suite (``Family.variants``), e.g. GUI-Owl-1.5's
    OSWorld-G system text with the refusal action."""

    def __post_init__(self) -> None:
        for task in self.prompts:
            if task not in TASK_KINDS:
                raise ValueError(f"prompt override for unknown task kind {task!r}; known: {', '.join(TASK_KINDS)}")
        if self.parser and ":" not in self.parser and self.parser not in families.names():
            raise ValueError(f"parser {self.parser!r} is neither a family ({', '.join(families.names())}) "
                             "nor package.module:function")

    @property
    def empty(self) -> bool:
        return not (self.prompts or self.parser or self.preprocess or self.variant)

    def key(self) -> dict[str, Any]:
        key = {"prompts": dict(sorted(self.prompts.items())), "parser": self.parser, "preprocess": self.preprocess}
        return key | ({"variant": self.variant} if self.variant else {})  # older cache keys stay valid

    def prompt(self, sample: Sample, family: str) -> str:
        """The user text: the suite's template for this task kind, else ``family``'s prompt (in the
        chosen :attr:`variant`). One place for every adapter, so no adapter can forget the variant."""
        template = self.prompts.get(sample.task)
        if template is not None:
            return template.format(instruction=sample.instruction)
        return families.get(family).user_text(sample, self.variant)

    def framing(self, sample: Sample, family: str) -> tuple[str | None, bool]:
        """``family``'s system text and image placement for this sample's task kind (in the chosen
        variant); a suite's own template for the task replaces the family's prompt, so it goes
        alone, image first."""
        if sample.task in self.prompts or (sample.task == "detect" and "point" in self.prompts):
            return None, True
        prompt = families.get(family).prompt(sample.task, self.variant)
        return prompt.system, prompt.image_first

    def image(self, image: Any) -> Any:
        return import_object(self.preprocess, what="preprocess")(image) if self.preprocess else image

    def parse(self, family: str, text: str, task: str, ctx: ParseContext) -> Parsed:
        if self.parser and ":" in self.parser and not families.is_family(self.parser):
            return import_object(self.parser, what="parser")(text, task, ctx)  # type: ignore[no-any-return]
        return families.get(self.parser or family).parse(text, task, ctx)


NONE = Overrides()


def from_table(table: Mapping[str, Any], *, where: str) -> Overrides:
    unknown = set(table) - {"prompts", "parser", "preprocess", "variant"}
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}; allowed: parser, preprocess, prompts, variant")
    prompts = table.get("prompts", {})
    if not isinstance(prompts, dict) or not all(isinstance(v, str) for v in prompts.values()):
        raise ValueError(f"{where}.prompts: expected a table of task kind → template string")
    for key in ("parser", "preprocess", "variant"):
        if key in table and not (isinstance(table[key], str) and table[key].strip()):
            raise ValueError(f"{where}.{key}: expected a non-empty string, got {table[key]!r}")
    try:
        return Overrides(prompts=prompts, parser=table.get("parser"), preprocess=table.get("preprocess"),
                         variant=table.get("variant"))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from exc


def check_variant(table: str, overrides: Overrides) -> None:
    """A ``variant`` under a family's own table names one of that family's variants (checked when
    the suite file is read, not at the first sample); under another table (``[models.openai]``)
    the family is only known at run time, where an unknown name fails each sample with the same message."""
    if overrides.variant and families.is_family(table):
        families.get(table).variant(overrides.variant)


@cache
def _plugins() -> tuple[Any, ...]:
    return tuple(import_object(target, what="overrides") for target in known(OVERRIDES_GROUP).values())


def resolve(suite: str, model: str, table: Mapping[str, Any] | None) -> Overrides:
    """The suite file's overrides for this model, then every registered plugin's on top."""
    result = from_table(table, where=f"[models.{model}]") if table else NONE
    for factory in _plugins():
        extra = factory(suite, model)
        if extra is not None:
            result = Overrides(prompts={**result.prompts, **extra.prompts}, parser=extra.parser or result.parser,
                               preprocess=extra.preprocess or result.preprocess,
                               variant=extra.variant or result.variant)
    return result


def check_replay_parser(model_name: str, parser: str | None, suite: str,
                        tables: Mapping[str, Mapping[str, Any]]) -> None:
    """``--uiground-replay-parser NAME`` that is no family needs the suite to declare that parser.

    Checked when the suite is collected (the first moment its ``[models.<name>]`` tables are
    known), so a typo is one collection error rather than a format error on every sample.
    """
    if model_name != "replay" or not parser or parser in families.names():
        return
    if resolve(suite, parser, tables.get(parser)).parser:
        return
    close = difflib.get_close_matches(parser, families.names(), n=1)
    raise ValueError(
        f"--uiground-replay-parser {parser!r} is unknown: not a model family ({', '.join(families.names())}) "
        f"and suite {suite!r} declares no [models.{parser}] parser"
        + (f"; did you mean {close[0]!r}?" if close else "")
    )
