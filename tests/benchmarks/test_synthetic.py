"""The synthetic loader: determinism, coverage, exact ground truth and lazy rendering.

These properties are what make a synthetic suite usable as a regression baseline: the
same seed must give the same samples and pixels everywhere, and collection must stay
cheap however many samples a suite asks for.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_uiground.benchmarks.synthetic import loader as synthetic
from pytest_uiground.record.geometry import SIZE_BUCKETS, size_bucket
from pytest_uiground.record.image import encode_png
from pytest_uiground.record.sample import Sample, check_sample_ids
from pytest_uiground.suite.loading import LoaderContext

REPO = Path(__file__).resolve().parents[2]
CTX = LoaderContext(suite_name="synthetic-test", suite_dir=REPO)


@pytest.fixture
def fresh_render_cache() -> Iterator[None]:
    """Render-cache statistics are per process; start each counting test from zero."""
    synthetic._render_cached.cache_clear()
    yield
    synthetic._render_cached.cache_clear()


@pytest.fixture(scope="module")
def default_samples() -> list[Sample]:
    return synthetic.load({}, CTX)


def _png_sha(seed: int, index: int) -> str:
    layout = synthetic.generate_layouts(seed, index + 1, 800, 600)[index]
    return hashlib.sha256(encode_png(synthetic.render_screen(layout))).hexdigest()


# ------------------------------------------------------------------------ determinism


def test_same_seed_gives_identical_layouts() -> None:
    assert synthetic.generate_layouts(7, 30, 800, 600) == synthetic.generate_layouts(7, 30, 800, 600)


def test_different_seed_gives_different_layouts() -> None:
    a = synthetic.generate_layouts(0, 10, 800, 600)
    b = synthetic.generate_layouts(1, 10, 800, 600)
    assert [x.elements for x in a] != [x.elements for x in b]


def test_screen_depends_only_on_seed_and_index() -> None:
    """A longer suite extends a shorter one instead of reshuffling it."""
    assert synthetic.generate_layouts(3, 40, 800, 600)[:10] == synthetic.generate_layouts(3, 10, 800, 600)


def test_rendering_is_byte_identical_in_process_and_in_a_subprocess() -> None:
    first = [_png_sha(5, i) for i in range(3)]
    assert first == [_png_sha(5, i) for i in range(3)]
    code = (
        "import hashlib\n"
        "from pytest_uiground.record.image import encode_png\n"
        "from pytest_uiground.benchmarks.synthetic import loader as s\n"
        "for l in s.generate_layouts(5, 3, 800, 600):\n"
        "    print(hashlib.sha256(encode_png(s.render_screen(l))).hexdigest())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env["PYTHONHASHSEED"] = "random"  # str hashing must not leak into the pixels
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == first
    assert _png_sha(6, 0) != first[0]


def test_ids_are_unique_stable_and_valid(default_samples: list[Sample]) -> None:
    check_sample_ids(default_samples, source="synthetic")  # raises on duplicates or bad ids
    assert default_samples[0].id == "syn-0-00000-00"
    assert [s.id for s in synthetic.load({}, CTX)] == [s.id for s in default_samples]
    again = synthetic.load({"seed": 0}, CTX)
    assert [(s.instruction, s.target, dict(s.meta)) for s in again] == [
        (s.instruction, s.target, dict(s.meta)) for s in default_samples
    ]


def test_fewer_targets_per_screen_selects_a_prefix() -> None:
    """Changing targets_per_screen must not rename or move existing samples."""
    six = {s.id: s for s in synthetic.load({"screens": 12}, CTX)}
    three = synthetic.load({"screens": 12, "targets_per_screen": 3}, CTX)
    assert three
    assert all(six[s.id].target == s.target and six[s.id].instruction == s.instruction for s in three)


# --------------------------------------------------------------------------- coverage


def test_defaults_cover_every_slice(default_samples: list[Sample]) -> None:
    assert 250 <= len(default_samples) <= 320
    assert all(set(s.meta) == {"difficulty", "theme", "element_type", "size"} for s in default_samples)
    assert {s.meta["difficulty"] for s in default_samples} == set(synthetic.DIFFICULTIES)
    assert {s.meta["theme"] for s in default_samples} == set(synthetic.THEMES)
    assert {s.meta["element_type"] for s in default_samples} == set(synthetic.ELEMENT_TYPES)
    assert {s.meta["size"] for s in default_samples} == set(SIZE_BUCKETS)
    combos = {(s.meta["difficulty"], s.meta["theme"]) for s in default_samples}
    assert combos == set(itertools.product(synthetic.DIFFICULTIES, synthetic.THEMES))
    assert all(s.task == "point" and s.invalid is None for s in default_samples)


@pytest.mark.parametrize(
    ("side", "bucket"), [(1, "lt32"), (31, "lt32"), (32, "32to100"), (100, "32to100"), (101, "gt100")]
)
def test_size_bucket_uses_the_longer_side(side: int, bucket: str) -> None:
    assert size_bucket(side, 5) == bucket
    assert size_bucket(5, side) == bucket


def test_vocabularies_are_disjoint_and_avoid_icon_words() -> None:
    vocabularies = [
        synthetic.BUTTON_TEXTS,
        synthetic.LABEL_TEXTS,
        synthetic.INPUT_PLACEHOLDERS,
        synthetic.CHECKBOX_TEXTS,
    ]
    folded = [t.casefold() for v in vocabularies for t in v]
    assert len(folded) == len(set(folded))
    icon_words = {"close", "add", "plus", "search", "menu", "play", "settings", "gear"}
    assert not [t for t in folded if icon_words & set(t.split())]


# ----------------------------------------------------------------------- ground truth


@pytest.mark.parametrize(("width", "height"), [(800, 600), (320, 240), (1920, 1080)])
def test_boxes_are_normalized_inside_the_screen_and_never_overlap(width: int, height: int) -> None:
    for layout in synthetic.generate_layouts(11, 60, width, height):
        boxes = [e.box(width, height) for e in layout.elements]
        assert all(0.0 <= b.x0 < b.x1 <= 1.0 and 0.0 <= b.y0 < b.y1 <= 1.0 for b in boxes)
        for a, b in itertools.combinations(layout.elements, 2):
            assert a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0, (layout.index, a, b)


def test_texts_unique_and_verbatim_in_instructions() -> None:
    for layout in synthetic.generate_layouts(2, 60, 800, 600):
        texts = [e.text.casefold() for e in layout.elements]
        assert len(texts) == len(set(texts)), layout.index
        for e in layout.elements:
            shown = synthetic.ICON_DESCRIPTIONS[e.text] if e.kind == "icon" else e.text
            assert shown in e.instruction


def test_sample_box_matches_layout_element() -> None:
    layout = synthetic.generate_layouts(0, 1, 800, 600)[0]
    sample = synthetic.load({"screens": 1}, CTX)[0]
    el = layout.elements[0]
    assert sample.target.box == el.box(800, 600)
    assert sample.instruction == el.instruction
    assert sample.meta["element_type"] == el.kind and sample.meta["size"] == el.size


# ---------------------------------------------------------------------------- laziness


def test_fifty_thousand_samples_are_built_without_rendering(
    monkeypatch: pytest.MonkeyPatch, fresh_render_cache: None
) -> None:
    def no_render(layout: synthetic.ScreenLayout) -> None:
        raise AssertionError("rendered at collection")

    monkeypatch.setattr(synthetic, "render_screen", no_render)
    samples = synthetic.load({"screens": 9000}, CTX)
    assert len(samples) >= 50_000
    assert synthetic._render_cached.cache_info().misses == 0


def test_a_screen_renders_once_for_all_its_samples(fresh_render_cache: None) -> None:
    samples = [s for s in synthetic.load({"screens": 2}, CTX) if s.id.startswith("syn-0-00001-")]
    assert len(samples) >= 2
    images = [s.image.load() for s in samples]
    info = synthetic._render_cached.cache_info()
    assert (info.misses, info.hits) == (1, len(samples) - 1)
    assert all(img.size == (800, 600) and img.mode == "RGB" for img in images)
    images[0].paste((255, 0, 0), (0, 0, 50, 50))  # a caller's drawing must not leak into the cache
    assert samples[1].image.load().getpixel((0, 0)) != (255, 0, 0)


# -------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"seed": -1}, "seed"),
        ({"seed": "1"}, "seed"),
        ({"seed": True}, "seed"),
        ({"screens": 0}, "screens"),
        ({"screens": 2.5}, "screens"),
        ({"width": 100}, "width"),
        ({"height": 10_000}, "height"),
        ({"targets_per_screen": 0}, "targets_per_screen"),
        ({"targets_per_screen": 21}, "targets_per_screen"),
        ({"sceens": 5}, "sceens"),
    ],
)
def test_bad_options_name_the_option_and_value(options: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name) as info:
        synthetic.load(options, CTX)
    assert repr(next(iter(options.values()))) in str(info.value) or name == "sceens"
