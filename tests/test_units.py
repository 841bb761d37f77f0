"""Unit tests of the plain modules, without running pytest inside pytest."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_uiground import registry
from pytest_uiground.gate import baseline as baseline_mod
from pytest_uiground.gate.checks import build_checks
from pytest_uiground.gate.metrics import compute
from pytest_uiground.models.hf.device import resolve_device, worker_index
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.outcome import Outcome, classify
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import DuplicateSampleIdError, Sample, Target, check_sample_ids
from pytest_uiground.record.score import Score
from pytest_uiground.run.subset import stratified_subset
from pytest_uiground.suite.config import MetricSpec, SuiteConfigError, load_suite_config


def result(sid: str, right: bool, **meta: str) -> SampleResult:
    return SampleResult(suite="s", id=sid, task="point", meta=meta, score=Score(100.0 if right else 0.0, right))


def sample(sid: str, **meta: str) -> Sample:
    return Sample(sid, ImageRef.from_path("x.png"), "do", "point", Target(box=Box(0, 0, 1, 1)), meta)


# -- outcome ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("right", "base", "updating", "error", "expected"),
    [
        (True, True, False, False, Outcome.PASS),
        (True, False, False, False, Outcome.FIXED),
        (True, None, False, False, Outcome.NEW),
        (False, True, False, False, Outcome.REGRESSION),
        (False, False, False, False, Outcome.KNOWN_FAILURE),
        (False, None, False, False, Outcome.WRONG_NO_BASELINE),
        (False, True, True, False, Outcome.WRONG_UPDATING),
        (True, True, False, True, Outcome.ERROR),
    ],
)
def test_classify(right: bool, base: bool | None, updating: bool, error: bool, expected: Outcome) -> None:
    assert classify(right, base, updating=updating, error=error) is expected


# -- metrics ---------------------------------------------------------------------------------------
def test_micro_and_macro_by_hand() -> None:
    # group a: 3 of 4 right (75), group b: 0 of 1 right (0)
    rs = [result("1", True, g="a"), result("2", True, g="a"), result("3", True, g="a"),
          result("4", False, g="a"), result("5", False, g="b")]
    micro = compute(MetricSpec(name="m", slices=("g",)), rs)
    assert micro.overall.value == pytest.approx(60.0)  # 3/5
    assert micro.slices["g=a"].value == pytest.approx(75.0)
    assert micro.slices["g=b"].value == pytest.approx(0.0)
    macro = compute(MetricSpec(name="m", average="macro", macro_over="g"), rs)
    assert macro.overall.value == pytest.approx(37.5)  # (75 + 0) / 2
    assert macro.overall.n == 5


def test_metric_filters_by_task_and_where() -> None:
    rs = [result("1", True, cls="A"), result("2", False, cls="B")]
    rs.append(SampleResult("s", "3", "verdict", {"cls": "A"}, Score(0.0, False)))
    m = compute(MetricSpec(name="m", tasks=("point",), where={"cls": "A"}), rs)
    assert m.overall.n == 1 and m.overall.value == 100.0


def test_checks_pair_with_baseline_and_count_flips() -> None:
    rs = [result(str(i), i < 6) for i in range(10)]  # now: 0-5 right
    base = baseline_mod.Baseline(Path("b"), {str(i): baseline_mod.BaselineEntry(i < 8, 100.0 if i < 8 else 0.0)
                                             for i in range(10)})  # baseline: 0-7 right
    spec = MetricSpec(name="acc")
    (check,) = build_checks(
        load_config_stub(), [compute(spec, rs)], rs, base, partial=False, updating=False, suite_file="x")
    assert check.paired is not None
    assert check.paired.baseline_value == pytest.approx(80.0)
    assert check.paired.delta == pytest.approx(-20.0)
    assert (check.paired.regressed, check.paired.fixed) == (2, 0)
    assert check.paired.p_value == pytest.approx(0.5)  # 2 * C(2,0) / 2**2
    assert any("dropped from 80.00 to 60.00" in p for p in check.problems())


def load_config_stub():  # type: ignore[no-untyped-def]
    from pytest_uiground.suite.config import SuiteConfig

    return SuiteConfig(name="s", version="1", path=Path("s/suite.toml"), loader="x", loader_options={},
                       metrics=(MetricSpec(name="acc"),), tolerance=2.0)


# -- suite.toml ------------------------------------------------------------------------------------
GOOD = """
[suite]
name = "x"
version = "1"
[loader]
name = "synthetic"
[[metrics]]
name = "acc"
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[suite]\nname='x'\nversion='1'", "suite.toml: [loader]: is required"),
        (GOOD.replace('version = "1"', ""), "suite.toml: suite.version: is required"),
        (GOOD + "floor = 'high'", "metrics[0].floor: expected int or float, got 'high'"),
        (GOOD + "average = 'macro'", "metrics[0].macro_over: is required when average = 'macro'"),
        (GOOD + "tasks = ['click']", "metrics[0].tasks: unknown task kind 'click'"),
        (GOOD + "colour = 1", "metrics[0].colour: unknown field"),
        (GOOD + "[baseline]\ntolerance = true", "baseline.tolerance: expected a number, got True"),
        ("not toml = = 1", "not valid TOML"),
    ],
)
def test_suite_config_errors_name_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(text)
    with pytest.raises(SuiteConfigError) as info:
        load_suite_config(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_the_shipped_synthetic_suite_parses() -> None:
    config = load_suite_config(Path(__file__).parents[1] / "suites" / "synthetic" / "suite.toml")
    assert config.name == "synthetic" and config.metrics[0].name == "grounding_accuracy"


# -- samples, subsets ------------------------------------------------------------------------------
def test_duplicate_and_unusable_ids_rejected() -> None:
    with pytest.raises(DuplicateSampleIdError, match="duplicate sample id 'a'"):
        check_sample_ids([sample("a"), sample("a")], source="suite")
    with pytest.raises(ValueError, match="'a b' is not usable"):
        check_sample_ids([sample("a b")], source="suite")


def test_stratified_subset_is_seeded_and_proportional() -> None:
    samples = [sample(f"a{i:03d}", k="a") for i in range(80)] + [sample(f"b{i:03d}", k="b") for i in range(20)]
    one = stratified_subset(samples, 10, ["k"], seed=0)
    assert one == stratified_subset(list(reversed(samples)), 10, ["k"], seed=0)
    assert [s.meta["k"] for s in one].count("a") == 8 and len(one) == 10
    assert stratified_subset(samples, 10, ["k"], seed=1) != one
    tiny = stratified_subset([*samples, sample("c000", k="c")], 3, ["k"], seed=0)
    assert {s.meta["k"] for s in tiny} == {"a", "b", "c"}  # every stratum gets a seat first


# -- devices and registry --------------------------------------------------------------------------
def test_device_auto_pins_each_worker_to_its_own_gpu() -> None:
    assert [resolve_device("auto", f"gw{i}", lambda: 4) for i in range(6)] == [
        "cuda:0", "cuda:1", "cuda:2", "cuda:3", "cuda:0", "cuda:1"]
    assert resolve_device("auto", "gw3", lambda: 0) == "cpu"
    assert resolve_device("auto", "master", lambda: 2) == "cuda:0"
    assert resolve_device("cuda:1", "gw0", lambda: 4) == "cuda:1"
    assert worker_index("gw12") == 12
    with pytest.raises(RuntimeError, match="no CUDA device"):
        resolve_device("cuda", "gw0", lambda: 0)


def test_registry_unknown_name_lists_known() -> None:
    known = ("center, elam, gelato, gta1, gui-owl, holo, mai-ui, molmo, ocr, omniparser, openai, qwen-vl, replay, "
             "tinyclick, uground, ui-venus, uitars")
    with pytest.raises(registry.UnknownNameError, match=rf"no model named 'elma'; known: {known}"):
        registry.resolve(registry.MODEL_GROUP, "elma", what="model", option="--model")
    assert registry.resolve(registry.MODEL_GROUP, "pytest_uiground.models.offline.center:create", what="model",
                            option="--model").__name__ == "create"


# -- baseline files --------------------------------------------------------------------------------
def test_baseline_round_trip_and_errors(tmp_path: Path) -> None:
    rs = [result("b", False), result("a", True)]
    path = baseline_mod.write(tmp_path, "s", rs, {"model": "m"}, snapshots={})
    loaded = baseline_mod.load(tmp_path, "s")
    assert loaded is not None and loaded.right("a") is True and loaded.right("b") is False
    assert loaded.right("zzz") is None and loaded.provenance == {"model": "m"}
    assert list(json.loads(path.read_text())["samples"]) == ["a", "b"]
    # A damaged file is not raised (that was a collection error the advised --snapshot-update could not
    # get past): it comes back marked damaged, naming the file, the field and the fix.
    path.write_text(json.dumps({"format": 2, "samples": {}}))
    damaged = baseline_mod.load(tmp_path, "s")
    assert damaged is not None and damaged.entries == {}
    assert damaged.damaged is not None and "field 'format' is 2" in damaged.damaged and str(path) in damaged.damaged
    path.write_text("{")
    damaged = baseline_mod.load(tmp_path, "s")
    assert damaged is not None and damaged.damaged is not None and "not valid JSON" in damaged.damaged
    assert "--snapshot-update" in damaged.damaged


# -- loading the plugin stays light ----------------------------------------------------------------
def test_loading_the_plugin_imports_no_heavy_library() -> None:
    code = (
        "import sys, pytest_uiground.plugin, pytest_uiground.models.offline.ocr, "
        "pytest_uiground.benchmarks.synthetic.loader;"
        "print(','.join(m for m in ('torch', 'transformers', 'datasets', 'rapidocr_onnxruntime', 'msgspec') "
        "if m in sys.modules))"
    )  # msgspec (the schemas, record/schema.py) is light, but loads when a file is read, not with the plugin
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.slow
def test_collecting_a_suite_imports_no_heavy_library(pytester: pytest.Pytester) -> None:
    shipped = Path(__file__).parents[1] / "suites" / "synthetic" / "suite.toml"
    (pytester.path / "suites" / "synthetic").mkdir(parents=True)
    (pytester.path / "suites" / "synthetic" / "suite.toml").write_text(shipped.read_text())
    pytester.makeconftest(
        "import sys\n"
        "def pytest_collection_finish(session):\n"
        "    heavy = [m for m in ('torch', 'transformers', 'datasets') if m in sys.modules]\n"
        "    print('HEAVY=' + ','.join(heavy))\n"
    )
    result = pytester.runpytest_subprocess("suites", "--collect-only", "-q", "-s", "-p", "no:cacheprovider")
    result.stdout.re_match_lines([r"^HEAVY=$"])
    result.stdout.fnmatch_lines(["*test_sample[[]syn-0-00000-00[]]*"])


def test_mean_of_metric_is_the_unweighted_mean_of_its_parts(tmp_path: Path) -> None:
    from pytest_uiground.gate.metrics import compute_all

    # basic: 3 of 4 right (75); advanced: 0 of 1 right (0) → headline (75 + 0) / 2 = 37.5
    rs = [result("1", True, g="basic"), result("2", True, g="basic"), result("3", True, g="basic"),
          result("4", False, g="basic"), result("5", False, g="advanced")]
    specs = [MetricSpec(name="basic", where={"g": "basic"}), MetricSpec(name="advanced", where={"g": "advanced"}),
             MetricSpec(name="average", mean_of=("basic", "advanced"))]
    out = {m.spec.name: m.overall for m in compute_all(specs, rs)}
    assert out["basic"].value == 75.0 and out["advanced"].value == 0.0
    assert out["average"].value == 37.5 and out["average"].n == 5
    bad = tmp_path / "suite.toml"
    bad.write_text(GOOD + "mean_of = ['later']\n[[metrics]]\nname = 'later'\n")
    with pytest.raises(SuiteConfigError, match=r"metrics\[0\]\.mean_of: 'later' is not a metric declared before"):
        load_suite_config(bad)


def test_model_options_are_composed_not_copied() -> None:
    """RunOptions holds the ModelOptions a factory gets; each worker only sets its id."""
    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.options import RunOptions, model_options

    mo = ModelOptions(name="uitars", path="/m", device="cuda:1", batch_size=8, dtype="bfloat16",
                      max_new_tokens=64, served_model="srv", parser="uitars", concurrency=16)
    run = RunOptions(model=mo)
    got = model_options(run, "gw3")
    assert got.worker_id == "gw3" and got == replace(mo, worker_id="gw3")


def test_atomic_writes_are_readable_by_others(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pytest_uiground.record.files import atomic_write_text

    path = tmp_path / "f.json"
    atomic_write_text(path, "{}")
    assert path.stat().st_mode & 0o777 == 0o644 and path.read_text() == "{}"


def test_cached_prediction_keeps_every_field(tmp_path: Path) -> None:
    """A cached prediction reads back equal, ``attempts`` included (it used to be dropped, so every
    cached ``--uiground-cropping`` prediction scored ``attempts_to_success`` as 1)."""
    from pytest_uiground.record.geometry import Box, Point
    from pytest_uiground.record.prediction import Prediction
    from pytest_uiground.run.prediction_cache import PredictionCache

    pred = Prediction(point=Point(0.25, 0.5), box=Box(0.1, 0.2, 0.3, 0.4), verdict="passed", raw="x",
                      latency_ms=12.5, format_error=True, attempts=3)
    cache = PredictionCache(tmp_path, {"model": "m"})
    key = cache.key({"sample": "s1"})
    cache.put(key, pred)
    assert cache.get(key).value == pred
    assert Prediction.from_json(pred.to_json()) == pred


def test_record_json_round_trip() -> None:
    """One record shape from the worker to the report: ``samples.jsonl`` reads back equal."""
    from pytest_uiground.record.geometry import Point
    from pytest_uiground.record.prediction import Prediction

    r = SampleResult(suite="s", id="a", task="point", meta={"k": "v"},
                     score=Score(100.0, True, False, {"point_hit": True}, {"point_hit": False}, {"why": "x"}),
                     prediction=Prediction(point=Point(0.5, 0.5), raw="(500, 500)", latency_ms=3.0),
                     latency_ms=3.0, outcome="pass", cache="hit", model={"name": "m"})
    back = SampleResult.from_json(json.loads(json.dumps(r.to_json())))
    assert back == r and back.raw == "(500, 500)"
    assert "raw" not in r.to_json()  # stored once, in the prediction


def test_no_core_module_imports_a_benchmark() -> None:
    """The core (everything outside ``benchmarks/``) imports no benchmark folder."""
    import ast

    root = Path(__file__).parents[1] / "pytest_uiground"
    offenders = []
    for path in root.rglob("*.py"):
        if "benchmarks" in path.relative_to(root).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"{path.name}: {n}" for n in names if "benchmarks" in n.split(".")]
    assert offenders == []


def test_no_import_cycle_between_package_modules() -> None:
    """Imports inside the package, lazy ones included, form no cycle (TYPE_CHECKING blocks aside)."""
    import ast

    root = Path(__file__).parents[1] / "pytest_uiground"

    def name_of(path: Path) -> str:
        parts = ["pytest_uiground", *path.relative_to(root).with_suffix("").parts]
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    modules = {name_of(p): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        tree = ast.parse(path.read_text())
        typing_only = {id(n) for top in ast.walk(tree) if isinstance(top, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(top.test) for n in ast.walk(top)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
                target = ".".join([*base, *([node.module] if node.module else [])])
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    deps.add(full if full in modules else target)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = {d for d in deps if d in modules and d != name}

    def cycle_from(start: str) -> list[str] | None:
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    return [*path, start]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
        return None

    cycles = [c for m in sorted(graph) if (c := cycle_from(m))]
    assert cycles == []
