"""Suite: a benchmark declared in ``suites/<name>/suite.toml``.

The file names the loader and its options, the metrics and their slices, the
absolute floors, the baseline tolerance and the latency budget. Adding a benchmark
adds a loader and a suite file and changes nothing in the core. Every problem in
the file is reported with the file and the field, before any sample runs.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .sample import TASK_KINDS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

AVERAGES = ("micro", "macro")


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
    latency: LatencySpec = LatencySpec()
    stratify: tuple[str, ...] = ()
    description: str = ""
    models: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # per-model overrides
    scorer: str = "task"  # [scorer] name: a registered scorer or package.module:attribute

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

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.get(key, list, [])
        if not all(isinstance(v, str) for v in value):
            raise self.fail(key, f"expected a list of strings, got {value!r}")
        return tuple(value)

    def unknown(self, allowed: set[str]) -> None:
        extra = sorted(set(self.table) - allowed)
        if extra:
            raise self.fail(extra[0], f"unknown field; allowed: {', '.join(sorted(allowed))}")


def _metric(path: Path, i: int, table: Any) -> MetricSpec:
    f = _Fields(path, f"metrics[{i}]", table)
    f.unknown({"name", "score", "tasks", "where", "average", "macro_over", "slices", "floor", "slice_floors",
               "mean_of", "given", "higher_is_better", "tolerance", "ceiling"})
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
    floor = f.get("floor", (int, float))
    slice_floors = f.get("slice_floors", dict, {})
    for key, value in {**where, **slice_floors}.items():
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise f.fail("where" if key in where else "slice_floors", f"bad value for {key!r}: {value!r}")
    return MetricSpec(
        name=name,
        score=score,
        tasks=tasks,
        where={k: str(v) for k, v in where.items()},
        average=average,
        macro_over=macro_over,
        slices=f.strings("slices"),
        floor=float(floor) if floor is not None else None,
        slice_floors={k: float(v) for k, v in slice_floors.items()},
        mean_of=f.strings("mean_of"),
        given=f.get("given", str),
        higher_is_better=f.get("higher_is_better", bool, True),
        tolerance=_opt_float(f.get("tolerance", (int, float))),
        ceiling=_opt_float(f.get("ceiling", (int, float))),
    )


def _opt_float(value: int | float | None) -> float | None:
    return float(value) if value is not None else None


def load_suite_config(path: Path) -> SuiteConfig:
    """Parse and validate a suite.toml file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SuiteConfigError(f"{path}: not valid TOML: {exc}") from exc
    top = _Fields(path, "", data)
    top.unknown({"suite", "loader", "metrics", "baseline", "latency", "limit", "models", "scorer"})
    models = top.get("models", dict, {})
    from pytest_uiground.models.overrides import from_table

    for model_name, table in models.items():
        if not isinstance(table, dict):
            raise top.fail("models", f"[models.{model_name}] must be a table")
        try:
            from_table(table, where=f"[models.{model_name}]")
        except ValueError as exc:
            raise SuiteConfigError(f"{path}: {exc}") from exc
    suite = _Fields(path, "suite", top.get("suite", dict, required=True))
    suite.unknown({"name", "version", "description"})
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
    baseline.unknown({"tolerance", "slice_tolerance"})
    latency = _Fields(path, "latency", top.get("latency", dict, {}))
    latency.unknown({"p50_ms", "p95_ms", "benchmark_samples"})
    scorer = _Fields(path, "scorer", top.get("scorer", dict, {}))
    scorer.unknown({"name"})
    limit = _Fields(path, "limit", top.get("limit", dict, {}))
    limit.unknown({"stratify"})
    bench_n = latency.get("benchmark_samples", int, 5)
    if bench_n < 1:
        raise latency.fail("benchmark_samples", f"must be >= 1, got {bench_n}")
    p50, p95 = latency.get("p50_ms", (int, float)), latency.get("p95_ms", (int, float))
    return SuiteConfig(
        name=suite.get("name", str, required=True),
        version=str(suite.get("version", (str, int), required=True)),
        description=suite.get("description", str, ""),
        path=path,
        loader=loader.get("name", str, required=True),
        loader_options=loader.get("options", dict, {}),
        metrics=metrics,
        tolerance=float(baseline.get("tolerance", (int, float), 2.0)),
        slice_tolerance=float(baseline.get("slice_tolerance", (int, float), 5.0)),
        latency=LatencySpec(
            p50_ms=float(p50) if p50 is not None else None,
            p95_ms=float(p95) if p95 is not None else None,
            benchmark_samples=bench_n,
        ),
        stratify=limit.strings("stratify"),
        models=models,
        scorer=scorer.get("name", str, "task"),
    )
