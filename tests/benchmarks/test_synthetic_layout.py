"""pytest_uiground.benchmarks.synthetic.layout: seeded screen layouts with exact boxes (no pixels)."""

from __future__ import annotations

import itertools

import pytest

from pytest_uiground.benchmarks.synthetic import layout as L


def _overlap(a: L.Element, b: L.Element) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_screens_depend_only_on_seed_index_and_size() -> None:
    small = L.generate_layouts(seed=7, n_screens=3)
    large = L.generate_layouts(seed=7, n_screens=6)
    assert large[:3] == small  # more screens extend a smaller suite
    assert L.generate_layouts(seed=7, n_screens=6) == large  # reproducible
    assert [s.elements for s in L.generate_layouts(seed=8, n_screens=3)] != [s.elements for s in small]


def test_a_truncated_layout_is_a_prefix_of_the_full_one() -> None:
    full = L._layout_screen(3, 5, 800, 600)
    for limit in range(len(full.elements) + 1):
        assert L._layout_screen(3, 5, 800, 600, limit).elements == full.elements[:limit]


def test_every_screen_follows_its_difficulty_and_keeps_elements_apart() -> None:
    for screen in L.generate_layouts(seed=2, n_screens=24, width=1024, height=768):
        assert screen.difficulty == L.DIFFICULTIES[screen.index % 3]
        assert screen.theme == L.THEMES[(screen.index // 3) % 2]
        spec = L._DIFFICULTY[screen.difficulty]
        assert spec.min_elements <= len(screen.elements) <= spec.max_elements
        els = screen.elements
        assert len({e.kind for e in els[:5]}) == min(5, len(els))  # priority order: distinct types first
        assert len({e.text for e in els}) == len(els)  # every instruction names one element
        for e in els:
            assert 0 <= e.x0 < e.x1 <= screen.width and 0 <= e.y0 < e.y1 <= screen.height
            shown = L.ICON_DESCRIPTIONS[e.text] if e.kind == "icon" else e.text
            assert shown in e.instruction  # the text is kept verbatim
            box = e.box(screen.width, screen.height)
            assert (box.x0, box.y1) == (e.x0 / screen.width, e.y1 / screen.height)
        for a, b in itertools.combinations(els, 2):
            assert not _overlap(a, b), (screen.index, a, b)


def test_vocabularies_are_disjoint_and_free_of_icon_words() -> None:
    vocabularies = [L.BUTTON_TEXTS, L.LABEL_TEXTS, L.INPUT_PLACEHOLDERS, L.CHECKBOX_TEXTS]
    for a, b in itertools.combinations(vocabularies, 2):
        assert not set(a) & set(b)
    icon_words = {"close", "add", "plus", "search", "menu", "play", "settings", "gear"}
    for text in itertools.chain(*vocabularies):
        assert not set(text.lower().split()) & icon_words, text


def test_element_size_is_the_bucket_of_its_longer_side() -> None:
    assert L.Element("icon", "play", 0, 0, 20, 31, 10, "plain", "").size == "lt32"
    assert L.Element("button", "OK", 0, 0, 100, 20, 10, "plain", "").size == "32to100"
    assert L.Element("input", "City", 0, 0, 101, 20, 10, "plain", "").size == "gt100"


@pytest.mark.parametrize(("kwargs", "option"), [
    ({"seed": -1}, "seed"), ({"seed": True}, "seed"), ({"n_screens": 0}, "screens"),
    ({"width": 319}, "width"), ({"height": 4097}, "height"), ({"width": 800.0}, "width"),
])
def test_bad_options_name_the_option_and_the_allowed_range(kwargs: dict[str, object], option: str) -> None:
    with pytest.raises(ValueError, match=rf"synthetic loader option '{option}'.*(allowed|expected an integer)"):
        L.generate_layouts(**kwargs)  # type: ignore[arg-type]
