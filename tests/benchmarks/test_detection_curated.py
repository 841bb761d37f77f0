"""The committed curated detection set (``suites/detection_curated``) loads as valid
``detect`` samples: text and icon elements, every size bucket, boxes inside the screen.
Reads only the annotation file and image headers; no OCR runs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pytest_uiground.benchmarks.openadapt import loader as openadapt
from pytest_uiground.record.sample import Sample, check_sample_ids
from pytest_uiground.suite.config import load_suite_config
from pytest_uiground.suite.loading import LoaderContext

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "detection_curated"
TEXT_TYPES = {"text", "button", "tab", "link", "menu", "textbox", "listitem"}


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    config = load_suite_config(SUITE / "suite.toml")
    assert config.name == "detection_curated"
    assert config.loader == "openadapt"
    assert dict(config.loader_options) == {"annotations": "annotations.json", "dataset": "curated"}
    loaded = openadapt.load(config.loader_options, LoaderContext(config.name, SUITE))
    check_sample_ids(loaded, source=str(SUITE / "suite.toml"))
    return loaded


def test_same_metrics_as_the_detection_suite() -> None:
    curated = load_suite_config(SUITE / "suite.toml")
    synthetic = load_suite_config(REPO / "suites" / "detection" / "suite.toml")
    assert curated.metrics == synthetic.metrics


def test_every_sample_is_a_valid_detect_sample(samples: list[Sample]) -> None:
    assert 40 <= len(samples) <= 100
    invalid = [(s.id, s.invalid) for s in samples if s.invalid]
    assert invalid == []
    for s in samples:
        assert s.task == "detect"
        assert s.meta["dataset"] == "curated"
        assert s.meta["form"] == "code"
        assert s.image.path is not None and s.image.path.is_file(), s.id
        assert s.instruction.strip(), s.id


def test_element_types_include_icons_and_text(samples: list[Sample]) -> None:
    types = Counter(s.meta["element_type"] for s in samples)
    assert types["icon"] > 0
    assert TEXT_TYPES & set(types), types
    assert "unknown" not in types


def test_all_size_buckets_occur(samples: list[Sample]) -> None:
    sizes = Counter(s.meta["size"] for s in samples)
    assert set(sizes) == {"lt32", "32to100", "gt100"}, sizes


def test_boxes_lie_inside_the_screen_with_positive_area(samples: list[Sample]) -> None:
    for s in samples:
        box = s.target.box
        assert box is not None, s.id
        assert 0.0 <= box.x0 < box.x1 <= 1.0, (s.id, box)
        assert 0.0 <= box.y0 < box.y1 <= 1.0, (s.id, box)
        assert s.click is not None and box.contains(s.click), s.id
