"""The AutomotiveUI-Bench-4K suite on generated fixture data in the dataset's exact schema."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import Project, needs

from pytest_uiground.benchmarks.automotive.lookalike import expected_rows, write_fixture

# Imported here, not inside a test: pytester restores sys.modules after each test, and
# numpy's extension modules cannot be imported twice in one process.
datasets = pytest.importorskip("datasets", reason=needs("automotive"))
pq = pytest.importorskip("pyarrow.parquet", reason=needs("automotive"))

pytestmark = pytest.mark.slow

SUITE = Path(__file__).parents[2] / "suites" / "automotive" / "suite.toml"
ROWS = 48

# Outputs chosen to hit every rule of the card's script (cycled over the rows).
TRICKY = [
    "hit",                                   # the box centre, in the card's format
    '<point x="{x0:.1f}" y="{cy:.1f}" alt="edge">left edge</point>',   # on the left edge (inclusive)
    '<point x="150.0" y="250.0" alt="a">outside, clipped to (1, 1)</point>',
    "I see no such element.",                # no point
    '<point x="61" y="40">no decimals: the card regex misses it</point>',
    "two points: first wins {first} then {second}",
    "",                                      # empty output
]


def card_scores(lines: list[dict]) -> dict[str, float]:  # type: ignore[type-arg]
    """The card's scoring script, re-implemented from its description for this test."""
    regex = re.compile(r'<point x="(\d+\.\d+)" y="(\d+\.\d+)"')

    def point(text: str) -> tuple[float, float]:
        m = regex.search(text)
        if not m:
            return (-1.0, -1.0)
        return (min(1.0, max(0.0, float(m.group(1)) / 100)), min(1.0, max(0.0, float(m.group(2)) / 100)))

    def hit(p: tuple[float, float], box: list[float]) -> bool:
        return box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3]

    ta: dict[str, list[bool]] = {"all": [], "DE": [], "EN": []}
    er: dict[str, list[bool]] = {"all": [], "DE": [], "EN": []}
    ev: dict[str, list[bool]] = {"all": [], "DE": [], "EN": [], "passed": [], "failed": []}
    for line in lines:
        out, lang = line["output"], line["language"]
        h = hit(point(out), line["gt_box"])
        if line["gt_class"] == "Test Action":
            ta["all"].append(h)
            ta[lang].append(h)
            continue
        er["all"].append(h)
        er[lang].append(h)
        gt = line["gt_status"] == "PASSED"
        if "FAILED" in out or "is not met" in out:
            pred = False
        elif "PASSED" in out or "is met" in out:
            pred = True
        else:
            pred = not gt
        ev["all"].append(pred == gt)
        ev[lang].append(pred == gt)
        ev["passed" if gt else "failed"].append(pred == gt)

    def pct(xs: list[bool]) -> float:
        return 100.0 * sum(xs) / len(xs)

    return {
        "ta": pct(ta["all"]), "ta_de": pct(ta["DE"]), "ta_en": pct(ta["EN"]),
        "er": pct(er["all"]), "er_de": pct(er["DE"]), "er_en": pct(er["EN"]),
        "ev": pct(ev["all"]), "ev_de": pct(ev["DE"]), "ev_en": pct(ev["EN"]),
        "ev_passed": pct(ev["passed"]), "ev_failed": pct(ev["failed"]),
    }


def card_outputs(rows: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    """model_outputs.jsonl as the card's inference script writes it."""
    lines = []
    for i, row in enumerate(rows):
        x0, y0, x1, y1 = (100 * v for v in row["box"][0])
        kind = TRICKY[i % len(TRICKY)]
        text = {
            "hit": f'<point x="{(x0 + x1) / 2:.1f}" y="{(y0 + y1) / 2:.1f}" alt="t">t</point>',
        }.get(kind, kind).format(
            x0=x0, cy=(y0 + y1) / 2, first=f'<point x="{(x0 + x1) / 2:.1f}" y="{(y0 + y1) / 2:.1f}"',
            second='<point x="1.0" y="1.0"')
        if row["class"] == "Expected Result":
            verdict = ["The condition is not met, but PASSED was expected", "Result: PASSED", "FAILED",
                       "it is met", "passed (lowercase)", ""][i % 6]
            text = f"{verdict} {text}".strip()
        lines.append({
            "sample_id": i, "input": "prompt", "output": text, "image_size": [1280, 720],
            "gt_class": row["class"], "gt_box": row["box"][0],
            "gt_status": row["conclusion"].upper() if row["conclusion"] else None, "language": row["language"],
        })
    return lines


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixture(tmp_path_factory.mktemp("aui") / "AutomotiveUI-Bench-4K", rows=ROWS, seed=1,
                         width=640, height=360)


@pytest.fixture
def auto(project: Project) -> Project:
    dest = project.root / "suites" / "automotive"
    dest.mkdir(parents=True)
    shutil.copy(SUITE, dest / "suite.toml")
    shutil.rmtree(project.root / "suites" / "mini")
    return project


def run(project: Project, *args: str) -> pytest.RunResult:
    project.monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return project.pytester.runpytest_subprocess(
        "suites/automotive", "-p", "no:cacheprovider", "--benchmark-disable", "--uiground-cache", "off", *args)


def test_replay_matches_the_card_script(auto: Project, dataset: Path, xdist: list[str]) -> None:
    rows = expected_rows(ROWS, seed=1)
    lines = card_outputs(rows)
    outputs = auto.root / "model_outputs.jsonl"
    outputs.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = run(auto, "--snapshot-update",
                 "--uiground-data-path", str(dataset.parent), "--model", "replay", "--uiground-predictions",
                 str(outputs), "--uiground-replay-parser", "elam", "--uiground-report", "out", *xdist)
    assert result.ret == 0, result.stdout.str()[-3000:]
    m = auto.summary()["metrics"]
    want = card_scores(lines)
    got = {
        "ta": m["test_action_grounding"]["value"],
        "ta_de": m["test_action_grounding"]["slices"]["language=DE"],
        "ta_en": m["test_action_grounding"]["slices"]["language=EN"],
        "er": m["expected_result_grounding"]["value"],
        "er_de": m["expected_result_grounding"]["slices"]["language=DE"],
        "er_en": m["expected_result_grounding"]["slices"]["language=EN"],
        "ev": m["expected_result_evaluation"]["value"],
        "ev_de": m["expected_result_evaluation"]["slices"]["language=DE"],
        "ev_en": m["expected_result_evaluation"]["slices"]["language=EN"],
        "ev_passed": m["expected_result_evaluation"]["slices"]["conclusion=passed"],
        "ev_failed": m["expected_result_evaluation"]["slices"]["conclusion=failed"],
    }
    assert got == pytest.approx(want, abs=0.1)
    assert 0 < want["ta"] < 100 and 0 < want["ev"] < 100, "the fixture must exercise both outcomes"
    assert m["test_action_grounding"]["format_errors"] > 0
    assert m["expected_result_evaluation"]["format_errors"] > 0
    assert any(k.startswith("brand=") for k in m["test_action_grounding"]["slices"])


def test_ocr_model_end_to_end(auto: Project, dataset: Path, xdist: list[str]) -> None:
    result = run(auto, "--snapshot-update",
                 "--uiground-data-path", str(dataset), "--model", "ocr", "--uiground-report", "out", *xdist)
    assert result.ret == 0, result.stdout.str()[-3000:]
    summary = auto.summary()
    assert summary["n_samples"] == ROWS
    m = summary["metrics"]
    assert m["test_action_grounding"]["value"] > 30, "OCR should find most tile labels"
    assert m["expected_result_evaluation"]["value"] == 0.0  # OCR never gives a verdict


def test_tiny_vlm_end_to_end(auto: Project, dataset: Path, tiny_models: dict[str, Path], xdist: list[str]) -> None:
    pytest.importorskip("torchvision", reason=needs("hf"))
    result = run(auto, "--snapshot-update",
                 "--uiground-data-path", str(dataset), "--model", "uitars", "--model-path",
                 str(tiny_models["qwen2_5_vl"]), "--uiground-max-new-tokens", "8", "--uiground-batch-size", "4",
                 "--uiground-report", "out", *xdist)
    assert result.ret == 0, result.stdout.str()[-3000:]
    records = [json.loads(x) for x in (auto.root / "out" / "samples.jsonl").read_text().splitlines()]
    assert len(records) == ROWS and all(r["error"] is None for r in records)
    assert {r["task"] for r in records} == {"point", "verdict"}
    metrics = auto.summary()["metrics"]
    assert set(metrics) == {"test_action_grounding", "expected_result_grounding", "expected_result_evaluation"}


def test_save_to_disk_and_data_root_layouts(auto: Project, tmp_path: Path) -> None:
    from pytest_uiground.benchmarks.automotive.lookalike import write_fixture_save_to_disk

    folder = write_fixture_save_to_disk(tmp_path / "root" / "AutomotiveUI-Bench-4K", rows=8, seed=2,
                                        width=320, height=180)
    result = run(auto, "--snapshot-update",
                 "--uiground-data-path", str(folder.parent), "--model", "center", "--uiground-report", "out")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert auto.summary()["n_samples"] == 8


def test_bad_rows_fail_alone(auto: Project, tmp_path: Path) -> None:
    data = write_fixture(tmp_path / "bad", rows=12, seed=3, width=320, height=180,
                         bad={1: "null_box", 4: "bad_box", 6: "no_image", 9: "bad_class"})
    result = run(auto, "--uiground-data-path", str(data), "--model", "center", "--uiground-report", "out", "-rf")
    assert result.ret == 1
    out = result.stdout.str()
    for row in (1, 4, 6, 9):
        assert f"FAILED suites/automotive/suite.toml::test_sample[aui-{row:05d}]" in out
        assert f"row {row}:" in out
    assert "row 9: unknown class 'Other'" in out and "row 1: box is null" in out
    assert auto.summary()["errors"] == [f"aui-{r:05d}" for r in (1, 4, 6, 9)]


def test_missing_dataset_names_every_place_and_the_fix(auto: Project, tmp_path: Path) -> None:
    auto.monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    result = run(auto, "--uiground-data-path", str(tmp_path / "nowhere"), "--model", "center")
    assert result.ret != 0
    out = result.stdout.str()
    assert "dataset sparks-solutions/AutomotiveUI-Bench-4K not found" in out
    assert str(tmp_path / "nowhere") in out and "Hugging Face cache" in out and "HF_HUB_OFFLINE" in out
    assert "hf download" in out and "--uiground-data-path" in out
