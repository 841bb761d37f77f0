"""Suite: a benchmark declared in ``suites/<name>/suite.toml``.

The file names the loader and its options, the metrics and their slices, the
absolute floors, the baseline tolerance and the latency budget. Adding a benchmark
adds a loader and a suite file and changes nothing in the core. Every problem in
the file is reported with the file and the field, before any sample runs.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_uiground.record.sample import TASK_KINDS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

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


class _Fields:
    """Typed access to one TOML table that names the offending field on error."""

    def __init__(self, path: Path, where: str, table: Any) -> None:
        if not isinstance(table, dict):
            raise SuiteConfigError(f"{path}: [{where}] must be a table, got {type(table).__name__}")
        self.path, self.where, self.table = path, where, table

    def fail(self, key: str, msg: str) -> SuiteConfigError:
        field = f"{self.where}.{key}" if self.where else f"[{key}]"
        return SuiteConfigError(f"{self.path}: {field}: {msg}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None, required: bool = False) -> Any:
        if key not in self.table:
            if required:
                raise self.fail(key, "is required")
            return default
        value = self.table[key]
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            raise self.fail(key, f"expected a number, got {value!r}")
        if not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise self.fail(key, f"expected {names}, got {value!r}")
        return value

    def number(self, key: str, low: float = 0.0, high: float = math.inf, default: float | None = None
               ) -> float | None:
        """A finite number in [low, high]; NaN and infinities are refused (NaN disables any comparison)."""
        value = self.get(key, (int, float))
        if value is None:
            return default
        return in_range(value, low, high, lambda msg: self.fail(key, msg))

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.get(key, list, [])
        if not all(isinstance(v, str) for v in value):
            raise self.fail(key, f"expected a list of strings, got {value!r}")
        return tuple(value)

    def unknown(self, allowed: set[str]) -> None:
        extra = sorted(set(self.table) - allowed)
        if extra:
            raise self.fail(extra[0], f"unknown field; allowed: {', '.join(sorted(allowed))}")


def in_range(value: float, low: float, high: float, fail: Any) -> float:
    if not math.isfinite(value) or not low <= value <= high:
        bound = f"between {low:g} and {high:g}" if math.isfinite(high) else f">= {low:g} (and finite)"
        raise fail(f"must be a number {bound}, got {value!r}")
    return float(value)


def _metric(path: Path, i: int, table: Any) -> MetricSpec:
    f = _Fields(path, f"metrics[{i}]", table)
    f.unknown({"name", "score", "tasks", "where", "average", "macro_over", "slices", "floor", "slice_floors",
               "mean_of", "given", "higher_is_better", "tolerance", "ceiling", "refusals"})
    name = f.get("name", str, required=True)
    score = f.get("score", str)
    tasks = f.strings("tasks")
    for t in tasks:
        if t not in TASK_KINDS:
            raise f.fail("tasks", f"unknown task kind {t!r}; known: {', '.join(TASK_KINDS)}")
    average = f.get("average", str, "micro")
    if average not in AVERAGES:
        raise f.fail("average", f"{average!r} is not one of {', '.join(AVERAGES)}")
    macro_over = f.get("macro_over", str)
    if average == "macro" and not macro_over:
        raise f.fail("macro_over", "is required when average = 'macro' (the key to average over)")
    where = f.get("where", dict, {})
    refusals = f.get("refusals", str)
    if refusals is not None and refusals not in REFUSAL_POLICIES:
        raise f.fail("refusals", f"{refusals!r} is not one of {', '.join(REFUSAL_POLICIES)}")
    floor = f.number("floor", 0.0, 100.0)
    slice_floors = f.get("slice_floors", dict, {})
    for key, value in {**where, **slice_floors}.items():
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise f.fail("where" if key in where else "slice_floors", f"bad value for {key!r}: {value!r}")
    for key, value in slice_floors.items():
        if not isinstance(value, (int, float)):
            raise f.fail("slice_floors", f"{key!r}: expected a number, got {value!r}")
        in_range(value, 0.0, 100.0, lambda msg, key=key: f.fail("slice_floors", f"{key!r}: {msg}"))
        if "=" not in key or key.split("=", 1)[0] not in f.strings("slices"):
            raise f.fail("slice_floors", f"{key!r} is not a slice of this metric: write 'KEY=VALUE' with KEY one "
                         f"of its slices ({', '.join(f.strings('slices')) or 'none declared'})")
    return MetricSpec(
        name=name,
        score=score,
        tasks=tasks,
        where={k: str(v) for k, v in where.items()},
        average=average,
        macro_over=macro_over,
        slices=f.strings("slices"),
        floor=floor,
        slice_floors={k: float(v) for k, v in slice_floors.items()},
        mean_of=f.strings("mean_of"),
        given=f.get("given", str),
        higher_is_better=f.get("higher_is_better", bool, True),
        tolerance=f.number("tolerance"),
        ceiling=f.number("ceiling"),
        refusals=refusals,
    )


def load_suite_config(path: Path) -> SuiteConfig:
    """Parse and validate a suite.toml file."""
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
    top = _Fields(path, "", data)
    top.unknown({"suite", "loader", "metrics", "baseline", "latency", "limit", "models", "scorer", "perturb"})
    models = top.get("models", dict, {})
    from pytest_uiground.models.overrides import check_variant, from_table

    for model_name, table in models.items():
        if not isinstance(table, dict):
            raise top.fail("models", f"[models.{model_name}] must be a table")
        try:
            check_variant(model_name, from_table(table, where=f"[models.{model_name}]"))
        except ValueError as exc:
            raise SuiteConfigError(f"{path}: {exc}") from exc
    suite = _Fields(path, "suite", top.get("suite", dict, required=True))
    suite.unknown({"name", "version", "description", "hub_dataset", "hub_task"})
    hub_dataset = suite.get("hub_dataset", str, "")
    if hub_dataset and not re.fullmatch(r"[\w.-]+/[\w.-]+", hub_dataset):
        raise suite.fail("hub_dataset", f"{hub_dataset!r} is not a Hub dataset id; write it as owner/name "
                         "(e.g. \"Hcompany/WebClick\")")
    loader = _Fields(path, "loader", top.get("loader", dict, required=True))
    loader.unknown({"name", "options"})
    metrics_raw = top.get("metrics", list, required=True)
    if not metrics_raw:
        raise top.fail("metrics", "declare at least one [[metrics]] table")
    metrics = tuple(_metric(path, i, m) for i, m in enumerate(metrics_raw))
    names = [m.name for m in metrics]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise top.fail("metrics", f"duplicate metric name {sorted(dup)[0]!r}")
    for i, m in enumerate(metrics):
        for ref in m.mean_of:
            if ref not in names[:i]:
                raise SuiteConfigError(
                    f"{path}: metrics[{i}].mean_of: {ref!r} is not a metric declared before {m.name!r}"
                )
    baseline = _Fields(path, "baseline", top.get("baseline", dict, {}))
    baseline.unknown({"tolerance", "slice_tolerance", "regressions", "significant_level", "min_slice",
                      "require_power", "confirm"})
    tolerance, tolerance_samples = _tolerance(baseline, "tolerance", 2.0)
    slice_tolerance, slice_tolerance_samples = _tolerance(baseline, "slice_tolerance", 5.0)
    min_slice = baseline.get("min_slice", int, MIN_SLICE)
    if min_slice < 0:
        raise baseline.fail("min_slice", f"must be >= 0 (0 gates every slice), got {min_slice}")
    regressions = baseline.get("regressions", str, "each")
    if regressions not in REGRESSION_RULES:
        raise baseline.fail("regressions", f"{regressions!r} is not one of {', '.join(REGRESSION_RULES)}: 'each' "
                            "fails the run for every regressed sample, 'significant' only when regressions "
                            "outnumber fixes significantly")
    level = baseline.number("significant_level", default=0.05)
    if level is None or not 0.0 < level < 0.5:
        raise baseline.fail("significant_level", f"must be a number between 0 and 0.5 (e.g. 0.05), got {level!r}")
    confirm = baseline.get("confirm", int, 0)
    if confirm < 0:
        raise baseline.fail("confirm", f"must be a whole number >= 0 (re-asks of a regressed sample; 0: none, "
                            f"2 is a good start), got {confirm!r}")
    latency = _Fields(path, "latency", top.get("latency", dict, {}))
    latency.unknown({"p50_ms", "p95_ms", "benchmark_samples"})
    scorer = _Fields(path, "scorer", top.get("scorer", dict, {}))
    scorer.unknown({"name", "refusals"})
    policy = scorer.get("refusals", str)
    if policy is not None and policy not in REFUSAL_POLICIES:
        raise scorer.fail("refusals", f"{policy!r} is not one of {', '.join(REFUSAL_POLICIES)}: 'count' keeps the "
                          "samples whose answer should be a refusal in the denominator (the official rule), "
                          "'exclude' leaves them out")
    perturb = _Fields(path, "perturb", top.get("perturb", dict, {}))
    perturb.unknown({"variants"})
    limit = _Fields(path, "limit", top.get("limit", dict, {}))
    limit.unknown({"stratify"})
    bench_n = latency.get("benchmark_samples", int, 5)
    if bench_n < 1:
        raise latency.fail("benchmark_samples", f"must be >= 1, got {bench_n}")
    p50, p95 = latency.number("p50_ms"), latency.number("p95_ms")
    name = suite.get("name", str, required=True)
    if not SAFE_NAME.fullmatch(name) or ".." in name:
        raise suite.fail("name", f"{name!r} is not a safe name: it names the folder baselines/<name>/, so use "
                         "letters, digits, '_', '-' and '.' (no '/', no '..'), starting with a letter or digit")
    return SuiteConfig(
        name=name,
        version=str(suite.get("version", (str, int), required=True)),
        description=suite.get("description", str, ""),
        hub_dataset=hub_dataset,
        hub_task=suite.get("hub_task", str, ""),
        path=path,
        loader=loader.get("name", str, required=True),
        loader_options=loader.get("options", dict, {}),
        metrics=metrics,
        tolerance=tolerance,
        slice_tolerance=slice_tolerance,
        tolerance_samples=tolerance_samples,
        slice_tolerance_samples=slice_tolerance_samples,
        min_slice=min_slice,
        regressions=regressions,
        significant_level=level,
        require_power=baseline.get("require_power", bool, False),
        confirm=confirm,
        latency=LatencySpec(
            p50_ms=p50,
            p95_ms=p95,
            benchmark_samples=bench_n,
        ),
        stratify=limit.strings("stratify"),
        models=models,
        scorer=scorer.get("name", str, "task"),
        refusals=policy,
        perturb=_perturbations(perturb),
    )


def _perturbations(table: _Fields) -> tuple[str, ...]:
    """``[perturb] variants = ["scale:0.75", "letterbox:1920x720", "invert"]``, each checked, as canonical specs."""
    from pytest_uiground.perturb.transforms import PerturbSpecError, parse

    out: list[str] = []
    for text in table.strings("variants"):
        try:
            spec = parse(text).spec
        except PerturbSpecError as exc:
            raise table.fail("variants", str(exc)) from None
        if spec not in out:
            out.append(spec)
    return tuple(out)


_SAMPLES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*samples?\s*$")


def _tolerance(table: _Fields, key: str, default: float) -> tuple[float, float]:
    """``(points, samples)`` of a tolerance: a number of points, ``"auto"`` (the larger of ``default``
    points and one sample's worth) or ``"K samples"`` (K samples' worth alone)."""
    value = table.table.get(key)
    if isinstance(value, str):
        if value.strip() == "auto":
            return default, 1.0
        m = _SAMPLES.match(value)
        if m is None:
            raise table.fail(key, f"{value!r} is not a number of points, \"auto\" or \"K samples\" (e.g. "
                             "\"1 sample\": one flip's worth of points, 100/n for n samples)")
        return 0.0, float(m.group(1))
    return table.number(key, default=default) or 0.0, 0.0


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
