"""Suite: a benchmark declared in ``suites/<name>/suite.toml``.

The file names the loader and its options, the metrics and their slices, the
absolute floors, the baseline tolerance and the latency budget. Adding a benchmark
adds a loader and a suite file and changes nothing in the core. Every problem in
the file is reported with the file and the field, before any sample runs.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_uiground.record.sample import TASK_KINDS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

if TYPE_CHECKING:  # the schema imports msgspec, which loads when a suite file is read, not with the plugin
    from pytest_uiground.suite.schema import MetricTable

AVERAGES = ("micro", "macro")
#: A suite name names a folder under the baselines and report roots: no separators, no ``..``.
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


class SuiteConfigError(Exception):
    """suite.toml is malformed; the message names the file, the field and the fix."""


@dataclass(frozen=True)
class MetricSpec:
    """One headline number. ``micro`` averages samples; ``macro`` averages the
    per-value means of ``macro_over`` (declared, never implied)."""

    name: str
    score: str | None = None  # a component of the per-sample score (e.g. point_hit); None: the whole score
    tasks: tuple[str, ...] = ()
    where: Mapping[str, str] = field(default_factory=dict)
    average: str = "micro"
    macro_over: str | None = None
    slices: tuple[str, ...] = ()
    floor: float | None = None
    slice_floors: Mapping[str, float] = field(default_factory=dict)
    mean_of: tuple[str, ...] = ()  # a headline: the unweighted mean of other metrics' overall values
    given: str | None = None  # only samples whose score component ``given`` is true (IoU over detections)
    higher_is_better: bool = True  # false for rates of bad events and costs (false positives, attempts)
    tolerance: float | None = None  # this metric's allowed change; None: the suite's tolerances
    ceiling: float | None = None  # for lower-is-better metrics: the highest acceptable value
    # "count": samples whose answer should be a refusal (meta ``expects`` = refusal) are in the metric;
    # "exclude": they are left out; None: the suite's refusal policy decides (gate/rules.py: refusal_metrics).
    refusals: str | None = None


REFUSAL_POLICIES = ("count", "exclude")
"""``[scorer] refusals`` and ``--uiground-refusals``: whether samples whose right answer is a refusal
(meta ``expects = "refusal"``) are in a metric's denominator. Papers differ (OSWorld-G's 54: MAI-UI and
Gelato's README count all 564, cua-lite and Gelato's logs leave them out: 510)."""
EXPECTS = "expects"
"""The meta key a loader sets on suites with refusal samples: ``element`` or ``refusal``."""
MIN_SLICE = 5
"""``[baseline] min_slice``'s default: a slice of fewer samples moves 20+ points on one flip."""

REGRESSION_RULES = ("each", "significant")
"""``[baseline] regressions`` and ``--uiground-regressions``: how per-sample flips fail a run."""


@dataclass(frozen=True)
class LatencySpec:
    p50_ms: float | None = None
    p95_ms: float | None = None
    benchmark_samples: int = 5


@dataclass(frozen=True)
class SuiteConfig:
    name: str
    version: str
    path: Path
    loader: str
    loader_options: Mapping[str, Any]
    metrics: tuple[MetricSpec, ...]
    tolerance: float = 2.0
    slice_tolerance: float = 5.0
    # A tolerance that accounts for the suite's size (issue 30): the allowed drop is at least this many
    # samples' worth of points (100 * k / n for a check over n samples); 0: the fixed tolerance alone.
    # ``tolerance = "auto"`` is 2 points or one sample's worth, whichever is larger; "K samples" is K alone.
    tolerance_samples: float = 0.0
    slice_tolerance_samples: float = 0.0
    # Slices with fewer samples are reported but not gated alone (their floors still hold).
    min_slice: int = MIN_SLICE
    # How per-sample flips fail the run: "each" (every regressed sample) or "significant" (only when
    # regressions outnumber fixes significantly at ``significant_level``; see gate/verdict.py).
    regressions: str = "each"
    significant_level: float = 0.05
    # A check whose detectable drop (gate/power.py) is larger than its tolerance fails (issue 40).
    require_power: bool = False
    # --uiground-confirm's default for the suite: re-asks of a regressed sample on a plain rerun (issue 40).
    confirm: int = 0
    latency: LatencySpec = LatencySpec()
    stratify: tuple[str, ...] = ()
    description: str = ""
    models: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # per-model overrides
    scorer: str = "task"  # [scorer] name: a registered scorer or package.module:attribute
    refusals: str | None = None  # [scorer] refusals: the suite's refusal policy (REFUSAL_POLICIES), if it has one
    #: [suite] hub_dataset / hub_task: the published dataset on the Hugging Face Hub and its task id in the
    #: dataset's eval.yaml, for `python -m pytest_uiground export hub` (the Hub's .eval_results files).
    hub_dataset: str = ""
    hub_task: str = ""
    # [perturb] variants: the robustness variants every run of this suite asks (canonical specs,
    # pytest_uiground.perturb.transforms), besides --uiground-perturb's
    perturb: tuple[str, ...] = ()

    @property
    def directory(self) -> Path:
        return self.path.parent


def _where(path: tuple[str | int, ...]) -> str:
    """A key path as the messages write it: ``[loader]``, ``metrics[0].floor``, ``metrics[0].slice_floors: 'a=b'``."""
    from pytest_uiground.record.schema import Key

    if len(path) == 1:
        return f"[{path[0]}]"
    out = ""
    for part in path:
        if isinstance(part, Key):
            out += f": {str(part)!r}"
        elif isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def load_suite_config(path: Path) -> SuiteConfig:
    """Parse and validate a suite.toml file: its types, ranges and words by the schema
    (:mod:`pytest_uiground.suite.schema`), then what a type cannot say, each problem one line."""
    from pytest_uiground.record.schema import SchemaError, convert
    from pytest_uiground.suite.schema import SuiteFile

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SuiteConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); TOML files are "
                               "UTF-8") from None
    if text.startswith("\ufeff"):
        # TOML has no byte-order mark and tomllib's own error ("Invalid statement (at line 1,
        # column 1)") does not say what is there; named, not accepted, so other TOML tools agree.
        raise SuiteConfigError(f"{path}: starts with a UTF-8 byte-order mark (BOM), which TOML does not allow; "
                               "save the file as UTF-8 without BOM")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SuiteConfigError(f"{path}: not valid TOML: {exc}") from exc

    def fail(where: str, msg: str) -> SuiteConfigError:
        return SuiteConfigError(f"{path}: {where}: {msg}")

    try:
        raw = convert(data, SuiteFile)
    except SchemaError as exc:
        raise fail(_where(exc.problem.path), exc.problem.why) from None
    from pytest_uiground.models.overrides import check_variant, from_table

    for model_name, table in raw.models.items():
        try:
            check_variant(model_name, from_table(table, where=f"[models.{model_name}]"))
        except ValueError as exc:
            raise SuiteConfigError(f"{path}: {exc}") from exc
    if not raw.metrics:
        raise fail("[metrics]", "declare at least one [[metrics]] table")
    metrics = tuple(_metric(m, f"metrics[{i}]", fail) for i, m in enumerate(raw.metrics))
    names = [m.name for m in metrics]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise fail("[metrics]", f"duplicate metric name {sorted(dup)[0]!r}")
    for i, m in enumerate(metrics):
        for ref in m.mean_of:
            if ref not in names[:i]:
                raise fail(f"metrics[{i}].mean_of", f"{ref!r} is not a metric declared before {m.name!r}")
    base = raw.baseline
    tolerance, tolerance_samples = _tolerance(base.tolerance, 2.0, lambda msg: fail("baseline.tolerance", msg))
    slice_tolerance, slice_tolerance_samples = _tolerance(
        base.slice_tolerance, 5.0, lambda msg: fail("baseline.slice_tolerance", msg))
    return SuiteConfig(
        name=raw.suite.name,
        version=str(raw.suite.version),
        description=raw.suite.description,
        hub_dataset=raw.suite.hub_dataset,
        hub_task=raw.suite.hub_task,
        path=path,
        loader=raw.loader.name,
        loader_options=raw.loader.options,
        metrics=metrics,
        tolerance=tolerance,
        slice_tolerance=slice_tolerance,
        tolerance_samples=tolerance_samples,
        slice_tolerance_samples=slice_tolerance_samples,
        min_slice=base.min_slice,
        regressions=base.regressions,
        significant_level=base.significant_level,
        require_power=base.require_power,
        confirm=base.confirm,
        latency=LatencySpec(p50_ms=raw.latency.p50_ms, p95_ms=raw.latency.p95_ms,
                            benchmark_samples=raw.latency.benchmark_samples),
        stratify=tuple(raw.limit.stratify),
        models=raw.models,
        scorer=raw.scorer.name,
        refusals=raw.scorer.refusals,
        perturb=_perturbations(raw.perturb.variants, lambda msg: fail("perturb.variants", msg)),
    )


def _metric(m: MetricTable, where: str, fail_at: Callable[[str, str], SuiteConfigError]) -> MetricSpec:
    """A ``[[metrics]]`` table the schema accepted, checked for what its types cannot say."""
    def fail(key: str, msg: str) -> SuiteConfigError:
        return fail_at(f"{where}.{key}", msg)

    for t in m.tasks:
        if t not in TASK_KINDS:
            raise fail("tasks", f"unknown task kind {t!r}; known: {', '.join(TASK_KINDS)}")
    if m.average == "macro" and not m.macro_over:
        raise fail("macro_over", "is required when average = 'macro' (the key to average over)")
    for key in m.slice_floors:
        if "=" not in key or key.split("=", 1)[0] not in m.slices:
            raise fail("slice_floors", f"{key!r} is not a slice of this metric: write 'KEY=VALUE' with KEY one "
                       f"of its slices ({', '.join(m.slices) or 'none declared'})")
    return MetricSpec(
        name=m.name, score=m.score, tasks=tuple(m.tasks), where={k: str(v) for k, v in m.where.items()},
        average=m.average, macro_over=m.macro_over, slices=tuple(m.slices), floor=m.floor,
        slice_floors={k: float(v) for k, v in m.slice_floors.items()}, mean_of=tuple(m.mean_of), given=m.given,
        higher_is_better=m.higher_is_better, tolerance=m.tolerance, ceiling=m.ceiling, refusals=m.refusals,
    )


def _perturbations(variants: Iterable[str], fail: Callable[[str], SuiteConfigError]) -> tuple[str, ...]:
    """``[perturb] variants = ["scale:0.75", "letterbox:1920x720", "invert"]``, each checked, as canonical specs."""
    from pytest_uiground.perturb.transforms import PerturbSpecError, parse

    out: list[str] = []
    for text in variants:
        try:
            spec = parse(text).spec
        except PerturbSpecError as exc:
            raise fail(str(exc)) from None
        if spec not in out:
            out.append(spec)
    return tuple(out)


_SAMPLES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*samples?\s*$")


def _tolerance(value: float | str | None, default: float, fail: Callable[[str], SuiteConfigError]
               ) -> tuple[float, float]:
    """``(points, samples)`` of a tolerance: a number of points, ``"auto"`` (the larger of ``default``
    points and one sample's worth) or ``"K samples"`` (K samples' worth alone)."""
    if isinstance(value, str):
        if value.strip() == "auto":
            return default, 1.0
        m = _SAMPLES.match(value)
        if m is None:
            raise fail(f"{value!r} is not a number of points, \"auto\" or \"K samples\" (e.g. "
                       "\"1 sample\": one flip's worth of points, 100/n for n samples)")
        return 0.0, float(m.group(1))
    return (default if value is None else float(value)), 0.0


def check_against_samples(config: SuiteConfig, metas: Iterable[Mapping[str, str]]) -> None:
    """The metadata keys the metrics name (``slices``, ``where``, ``macro_over``, the key of a
    ``slice_floors`` label) must exist in the loaded samples: a typo would otherwise give a
    0-sample metric that shows "-" and passes. Values are not checked: a local copy or a
    subset of a dataset may lack one (no ``advanced`` samples), which is not a mistake."""
    keys: set[str] = set()
    for meta in metas:
        keys.update(meta)
    known = ", ".join(sorted(keys)) or "none"
    for i, m in enumerate(config.metrics):
        named = [("slices", k) for k in m.slices] + [("where", k) for k in m.where]
        named += [("macro_over", m.macro_over)] if m.macro_over else []
        named += [("slice_floors", label.split("=", 1)[0]) for label in m.slice_floors]
        for where, key in named:
            if key not in keys:
                raise SuiteConfigError(f"{config.path}: metrics[{i}].{where}: no sample has the key {key!r}; the "
                                       f"samples' keys: {known}")
