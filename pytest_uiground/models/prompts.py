"""Prompts: the text each model family is asked, per task kind.

Prompt wording moves grounding scores by several points, so a published number only
reproduces with the prompt it was measured with. Each family's prompts live in its module
under :mod:`pytest_uiground.models.families` with the file they were copied from (or
"project wording" where the authors publish none); this module keeps the stable
:func:`prompt_for` entry point.
"""

from __future__ import annotations

from pytest_uiground.models import families
from pytest_uiground.record.sample import Sample


def prompt_for(family: str, sample: Sample, variant: str | None = None) -> str:
    """The user text for ``sample`` (its instruction and task kind) in ``family``'s format,
    from the family's named prompt ``variant`` where one is given (see ``Family.variants``).

    For verdict tasks ``sample.instruction`` is the statement to evaluate. The family's
    system text and image placement are on :meth:`families.Family.prompt`.
    """
    return families.get(family).user_text(sample, variant)
