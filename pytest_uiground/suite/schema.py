"""The schema of ``suite.toml``: its tables and fields as msgspec Structs, with their types, ranges and words.

:func:`pytest_uiground.suite.config.load_suite_config` converts the parsed file to :class:`SuiteFile`
(:func:`pytest_uiground.record.schema.convert`, which words the first problem as one line naming the
field, the value and the fix), then checks what a type cannot say (a ``mean_of`` that names a later
metric, a slice floor of an undeclared slice) and builds the :class:`~pytest_uiground.suite.config.SuiteConfig`
the rest of the package reads. Every table refuses unknown fields: a typo (``tolerence``) would
otherwise be a setting silently ignored. ``docs/schemas/suite.schema.json`` is these types as a JSON
Schema (``python -m pytest_uiground.suite.schema`` writes it), for editors and ``check-jsonschema``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from msgspec import Meta, Struct, field

from pytest_uiground.record import schema as schema_mod
from pytest_uiground.record.schema import FINITE

# The words, the safe-name pattern and min_slice's default are suite/config.py's constants (AVERAGES,
# REFUSAL_POLICIES, REGRESSION_RULES, SAFE_NAME, MIN_SLICE) written out: config cannot import this module
# when it loads (msgspec loads with a file, not with the plugin), and this one does not import config
# (no cycle). tests/suite/test_schemas.py checks that the two agree.

#: A percentage: floors and slice floors.
Points = Annotated[float, Meta(ge=0.0, le=100.0)]
#: A finite number >= 0: tolerances, ceilings, latency budgets.
NonNegative = Annotated[float, Meta(ge=0.0, le=FINITE)]
Refusals = Annotated[Literal["count", "exclude"], Meta(extra={"fix": (
    ": 'count' keeps the samples whose answer should be a refusal in the denominator (the official rule), "
    "'exclude' leaves them out")})]
SafeName = Annotated[str, Meta(pattern=r"^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$", extra={"fix": (
    "is not a safe name: it names the folder baselines/<name>/, so use letters, digits, '_', '-' and '.' "
    "(no '/', no '..'), starting with a letter or digit")})]
HubDataset = Annotated[str, Meta(pattern=r"^([\w.-]+/[\w.-]+)?$", extra={"fix": (
    "is not a Hub dataset id; write it as owner/name (e.g. \"Hcompany/WebClick\")")})]
#: ``tolerance = 2``, ``"auto"`` or ``"K samples"`` (the words are parsed by suite/config.py: _tolerance).
Tolerance = NonNegative | str


class SuiteTable(Struct, forbid_unknown_fields=True, frozen=True):
    """``[suite]``: the suite's name (its baselines folder), version and where it is published."""

    name: SafeName
    version: str | int
    description: str = ""
    hub_dataset: HubDataset = ""
    hub_task: str = ""


class LoaderTable(Struct, forbid_unknown_fields=True, frozen=True):
    """``[loader]``: the registered loader and the options handed to it as they are."""

    name: str
    options: dict[str, Any] = {}


class MetricTable(Struct, forbid_unknown_fields=True, frozen=True):
    """One ``[[metrics]]`` table (see :class:`pytest_uiground.suite.config.MetricSpec` for the fields)."""

    name: str
    score: str | None = None
    tasks: list[str] = []
    where: dict[str, str | int | float] = {}
    average: Literal["micro", "macro"] = "micro"
    macro_over: str | None = None
    slices: list[str] = []
    floor: Points | None = None
    slice_floors: dict[str, Points] = {}
    mean_of: list[str] = []
    given: str | None = None
    higher_is_better: bool = True
    tolerance: NonNegative | None = None
    ceiling: NonNegative | None = None
    refusals: Refusals | None = None


class BaselineTable(Struct, forbid_unknown_fields=True, frozen=True):
    """``[baseline]``: how far the gate lets a metric move, and how per-sample flips fail a run."""

    tolerance: Tolerance | None = None
    slice_tolerance: Tolerance | None = None
    regressions: Annotated[Literal["each", "significant"], Meta(extra={"fix": (
        ": 'each' fails the run for every regressed sample, 'significant' only when regressions outnumber "
        "fixes significantly")})] = "each"
    significant_level: Annotated[float, Meta(gt=0.0, lt=0.5, extra={"fix": "(e.g. 0.05)"})] = 0.05
    min_slice: Annotated[int, Meta(ge=0, extra={"fix": "(0 gates every slice)"})] = 5
    require_power: bool = False
    confirm: Annotated[int, Meta(ge=0, extra={"fix": (
        "(re-asks of a regressed sample; 0: none, 2 is a good start)")})] = 0


class LatencyTable(Struct, forbid_unknown_fields=True, frozen=True):
    """``[latency]``: the budget of the p50 and p95 latency, and how many samples pytest-benchmark times."""

    p50_ms: NonNegative | None = None
    p95_ms: NonNegative | None = None
    benchmark_samples: Annotated[int, Meta(ge=1)] = 5


class ScorerTable(Struct, forbid_unknown_fields=True, frozen=True):
    """``[scorer]``: the registered scorer and the suite's refusal policy."""

    name: str = "task"
    refusals: Refusals | None = None


class PerturbTable(Struct, forbid_unknown_fields=True, frozen=True):
    """``[perturb]``: the robustness variants every run of the suite asks."""

    variants: list[str] = []


class LimitTable(Struct, forbid_unknown_fields=True, frozen=True):
    """``[limit]``: the metadata keys a ``--uiground-limit`` subset is stratified by."""

    stratify: list[str] = []


class SuiteFile(Struct, forbid_unknown_fields=True, frozen=True):
    """A whole ``suite.toml``."""

    suite: SuiteTable
    loader: LoaderTable
    metrics: list[MetricTable]
    baseline: BaselineTable = field(default_factory=BaselineTable)
    latency: LatencyTable = field(default_factory=LatencyTable)
    limit: LimitTable = field(default_factory=LimitTable)
    models: dict[str, dict[str, Any]] = {}
    scorer: ScorerTable = field(default_factory=ScorerTable)
    perturb: PerturbTable = field(default_factory=PerturbTable)


def json_schema() -> dict[str, Any]:
    """:class:`SuiteFile` as a JSON Schema (the TOML file's tables are JSON objects)."""
    return schema_mod.published(SuiteFile, "suite.toml")


SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "suite.schema.json"


if __name__ == "__main__":  # pragma: no cover - python -m pytest_uiground.suite.schema [--check]
    sys.exit(schema_mod.write_or_check(json_schema(), SCHEMA_FILE, sys.argv))
