"""The AutomotiveUI look-alike's plan: what each screen holds and every row's ground truth, from the seed
alone (pure arithmetic, no drawing), so :func:`expected_rows` knows every row without rendering.
See :mod:`.lookalike` for the on-disk schema and why the look-alike exists.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from random import Random
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    pass


# --------------------------------------------------------------------------- constants

COLUMNS: Final[tuple[str, ...]] = (
    "image",
    "box",
    "class",
    "test_action",
    "expectation",
    "conclusion",
    "language",
    "brand",
)
DEFAULT_BRANDS: Final[tuple[str, ...]] = ("Aurelia", "Nordwind", "Voltari", "Kestrel", "Lumen Motors")
DEFAULT_ROWS_PER_GROUP: Final = 16
TEST_ACTION: Final = "Test Action"
EXPECTED_RESULT: Final = "Expected Result"

#: Kinds of malformed rows :func:`write_fixture` can inject (``bad={row_index: kind}``), for tests of
#: readers' error handling. Each changes only the named row; the rest of the row stays valid.
BAD_KINDS: Final[Mapping[str, str]] = {
    "null_box": "box is null",
    "bad_box": "box has 3 numbers: [[x0, y0, x1]]",
    "inverted_box": "box has x0 > x1: [[x1, y0, x0, y1]]",
    "no_image": "image is null (the whole struct)",
    "corrupt_image": "image bytes are a truncated PNG (the header opens, decoding fails)",
    "bad_class": 'class is "Other"',
    "no_text": "the row's utterance (test_action or expectation) is null",
    "bad_conclusion": 'conclusion is "unknown" (Expected Result) or "passed" on a Test Action row',
}

_MIN_W, _MIN_H, _MAX_SIDE = 160, 90, 8192
_ROWS_PER_SCREEN: Final = (2, 6)  # inclusive; the real set averages 4.2 rows per image

# Tile vocabulary: (key, English label, German label). "{t}" is the set temperature.
_TILES: Final[tuple[tuple[str, str, str], ...]] = (
    ("navigation", "Navigation", "Navigation"),
    ("media", "Media", "Medien"),
    ("phone", "Phone", "Telefon"),
    ("settings", "Settings", "Einstellungen"),
    ("climate", "Climate {t}°C", "Klima {t}°C"),
    ("radio", "Radio", "Radio"),
    ("vehicle", "Vehicle", "Fahrzeug"),
    ("seat_heating", "Seat heating", "Sitzheizung"),
    ("driver_assist", "Driver assist", "Fahrassistenz"),
    ("charging", "Charging", "Laden"),
    ("camera", "Rear camera", "Rückfahrkamera"),
    ("messages", "Messages", "Nachrichten"),
    ("weather", "Weather", "Wetter"),
    ("devices", "Devices", "Geräte"),
    ("traffic", "Traffic", "Verkehr"),
    ("apps", "Apps", "Apps"),
)
_DOCK: Final[tuple[tuple[str, str], ...]] = (
    ("Home", "Start"),
    ("Back", "Zurück"),
    ("Mute", "Stumm"),
    ("Voice", "Sprache"),
)
# Per brand: (accent colour, background, tile colour, corner radius as a fraction of the tile height).
_STYLES: Final[tuple[tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int], float], ...]] = (
    ((0, 150, 255), (10, 12, 18), (30, 34, 44), 0.12),
    ((255, 120, 0), (14, 14, 14), (38, 38, 40), 0.04),
    ((0, 200, 150), (8, 16, 20), (24, 40, 46), 0.25),
    ((220, 40, 60), (16, 10, 12), (44, 30, 34), 0.08),
    ((180, 140, 255), (12, 10, 20), (34, 30, 52), 0.18),
)
_TEXT = (226, 230, 236)
_DIM = (140, 148, 160)

# --------------------------------------------------------------------------- plan (pure arithmetic)

NBox = tuple[float, float, float, float]  # normalized x0, y0, x1, y1


@dataclass(frozen=True, slots=True)
class _Element:
    """A clickable thing on the screen: what it says and where it is (normalized)."""

    label: str
    box: NBox
    kind: str  # "tile", "dock" or "clock"
    key: str = ""


@dataclass(frozen=True, slots=True)
class _Screen:
    """Everything needed to draw one screenshot and to write its rows, derived from the seed alone."""

    index: int
    path: str
    language: str
    brand: str
    style: int
    tiles: tuple[_Element, ...]
    dock: tuple[_Element, ...]
    clock: _Element
    highlighted: int  # index into tiles
    outside: str  # outside temperature text (decoration)
    rows: tuple[dict[str, Any], ...]



def _rgb(values: tuple[int, ...]) -> tuple[int, int, int]:
    """An RGB colour from a computed tuple (Pillow's types want exactly three ints)."""
    r, g, b = values[:3]
    return (r, g, b)

def _f32(x: float) -> float:
    """Round to float32 so the metadata equals what comes back from the float32 parquet column."""
    import numpy as np

    return float(np.float32(x))


def _nbox(x0: float, y0: float, x1: float, y1: float) -> NBox:
    return (_f32(x0), _f32(y0), _f32(x1), _f32(y1))


def _temperature(value: float, language: str) -> str:
    text = f"{value:.1f}"
    return text.replace(".", ",") if language == "DE" else text


def _quote(label: str, language: str) -> str:
    """English screens are named plainly; German UI text is quoted, as on the card."""
    return label if language == "EN" else f'"{label}"'


def _plan_screen(seed: int, index: int, brands: Sequence[str]) -> _Screen:
    """Lay out screen ``index`` and write its 2-6 annotation rows (metadata only)."""
    rng = Random(f"automotive-fixture:{seed}:{index}")
    language = rng.choice(("DE", "EN"))
    brand_i = rng.randrange(len(brands))
    brand = brands[brand_i]
    style = brand_i % len(_STYLES)
    temp = rng.randrange(32, 57) / 2  # 16.0 .. 28.0 °C in half degrees
    hour, minute = rng.randrange(24), rng.randrange(60)
    clock_text = f"{hour:02d}:{minute:02d}"

    # Tile grid inside x 0.04..0.96, y 0.11..0.85.
    grid_rows, grid_cols = rng.choice((2, 3)), rng.choice((3, 4))
    n_tiles = grid_rows * grid_cols
    climate = rng.random() < 0.8
    pool = [t for t in _TILES if t[0] != "climate"]
    picked = rng.sample(pool, n_tiles - 1 if climate else n_tiles)
    if climate:
        picked.insert(rng.randrange(len(picked) + 1), next(t for t in _TILES if t[0] == "climate"))
    gap = 0.015
    gx0, gy0, gx1, gy1 = 0.04, 0.11, 0.96, 0.85
    tw = (gx1 - gx0 - gap * (grid_cols - 1)) / grid_cols
    th = (gy1 - gy0 - gap * (grid_rows - 1)) / grid_rows
    tiles = []
    for i, (key, en, de) in enumerate(picked):
        r, c = divmod(i, grid_cols)
        x0, y0 = gx0 + c * (tw + gap), gy0 + r * (th + gap)
        label = (en if language == "EN" else de).format(t=_temperature(temp, language))
        tiles.append(_Element(label, _nbox(x0, y0, x0 + tw, y0 + th), "tile", key))
    # Four dock buttons centred at the bottom.
    bw, bgap = 0.12, 0.02
    dx0 = 0.5 - (4 * bw + 3 * bgap) / 2
    dock = tuple(
        _Element(en if language == "EN" else de, _nbox(dx0 + i * (bw + bgap), 0.895, dx0 + i * (bw + bgap) + bw, 0.975),
                 "dock")
        for i, (en, de) in enumerate(_DOCK)
    )
    clock = _Element(clock_text, _nbox(0.015, 0.012, 0.105, 0.068), "clock")
    highlighted = rng.randrange(n_tiles)
    outside = f"{rng.randrange(-10, 31)}°C"

    screen_rows: list[dict[str, Any]] = []
    used: set[str] = set()
    path = f"screen_{seed}_{index:05d}.png"
    for _ in range(rng.randint(*_ROWS_PER_SCREEN)):
        for _attempt in range(20):  # a few retries keep texts unique within a screen
            row = _plan_row(rng, language, tiles, dock, clock, highlighted, temp)
            text = row["test_action"] or row["expectation"]
            if text not in used:
                break
        used.add(text)
        row.update(language=language, brand=brand, image_path=path, image_index=index)
        screen_rows.append(row)
    return _Screen(index, path, language, brand, style, tuple(tiles), dock, clock, highlighted, outside,
                   tuple(screen_rows))


def _plan_row(rng: Random, language: str, tiles: list[_Element], dock: tuple[_Element, ...], clock: _Element,
              highlighted: int, temp: float) -> dict[str, Any]:
    """One annotation: a Test Action on any element, or an Expected Result whose verdict the pixels decide."""
    if rng.random() < 0.55:
        target = rng.choice([*tiles, *dock])
        name = _quote(target.label, language)
        template = rng.choice(("Tap on {n}", "Press the {n} button", "Open {n}", "Select {n}"))
        if target.kind == "tile" and target.key == "climate":
            template = rng.choice(("Open the climate settings via {n}", "Tap on {n}"))
        return _row(target, TEST_ACTION, test_action=template.format(n=name))
    passed = rng.random() < 0.5
    climate = [t for t in tiles if t.key == "climate"]
    kind = rng.choice(("highlight", "highlight", "climate", "clock") if climate else ("highlight", "clock"))
    if kind == "highlight":
        others = [t for i, t in enumerate(tiles) if i != highlighted]
        target = tiles[highlighted] if passed else rng.choice(others)
        text = f"The {_quote(target.label, language)} tile is highlighted"
    elif kind == "climate":
        target = climate[0]
        shown = temp if passed else temp + rng.choice((-2.5, -1.0, -0.5, 0.5, 1.0, 2.0))
        text = f"The climate temperature is set to {_temperature(shown, language)}°C"
    else:
        target = clock
        if passed:
            shown_time = clock.label
        else:
            h, m = map(int, clock.label.split(":"))
            shown_time = f"{h:02d}:{(m + rng.randrange(1, 59)) % 60:02d}"
        text = f"The status bar shows the time {shown_time}"
    return _row(target, EXPECTED_RESULT, expectation=text, conclusion="passed" if passed else "failed")


def _row(target: _Element, cls: str, *, test_action: str | None = None, expectation: str | None = None,
         conclusion: str | None = None) -> dict[str, Any]:
    return {
        "box": [list(target.box)],
        "class": cls,
        "test_action": test_action,
        "expectation": expectation,
        "conclusion": conclusion,
        "target": target.label,
    }


def _screens(rows: int, seed: int, brands: Sequence[str]) -> Iterator[tuple[_Screen, list[dict[str, Any]]]]:
    """Screens in order with the rows each contributes; the last screen is cut to reach ``rows``."""
    left, index = rows, 0
    while left > 0:
        screen = _plan_screen(seed, index, brands)
        take = [dict(r) for r in screen.rows[:left]]
        left -= len(take)
        index += 1
        yield screen, take


def _apply_bad(row: dict[str, Any], kind: str | None) -> dict[str, Any]:
    """Damage a row's metadata as ``kind`` says (image kinds are applied when writing)."""
    row["bad"] = kind
    if kind == "null_box":
        row["box"] = None
    elif kind == "bad_box":
        row["box"] = [row["box"][0][:3]]
    elif kind == "inverted_box":
        x0, y0, x1, y1 = row["box"][0]
        row["box"] = [[x1, y0, x0, y1]]
    elif kind == "bad_class":
        row["class"] = "Other"
    elif kind == "no_text":
        row["test_action" if row["class"] == TEST_ACTION else "expectation"] = None
    elif kind == "bad_conclusion":
        row["conclusion"] = "unknown" if row["class"] == EXPECTED_RESULT else "passed"
    return row


def _check(
    rows: int, bad: Mapping[int, str] | None, brands: Sequence[str] | None
) -> tuple[dict[int, str], tuple[str, ...]]:
    """Validate the row count, the injections and the brands; return them normalized."""
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
        raise ValueError(f"rows must be a positive integer, got {rows!r}")
    bad = dict(bad or {})
    for i, kind in bad.items():
        if kind not in BAD_KINDS:
            raise ValueError(f"bad[{i}] = {kind!r}: unknown kind; use one of {', '.join(BAD_KINDS)}")
        if not 0 <= i < rows:
            raise ValueError(f"bad row index {i} is outside 0..{rows - 1}")
    names = tuple(brands) if brands is not None else DEFAULT_BRANDS
    if not names or not all(isinstance(b, str) and b for b in names):
        raise ValueError(f"brands must be non-empty strings, got {brands!r}")
    return bad, names


def expected_rows(rows: int, seed: int, *, bad: Mapping[int, str] | None = None,
                  brands: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The metadata of each row (no image), in row order, as :func:`write_fixture` writes it.

    Keys: the dataset's columns except ``image`` (``box`` as ``[[x0, y0, x1, y1]]`` of float32-exact floats,
    or the injected damage), plus ``target`` (the referenced element's on-screen text), ``image_path`` (the
    ``path`` in the image struct; rows of one screenshot share it), ``image_index`` and ``bad`` (the
    injected kind or ``None``). Cheap: no pixels are drawn, and the result does not depend on image size.
    """
    bad_map, names = _check(rows, bad, brands)
    out: list[dict[str, Any]] = []
    for _screen, screen_rows in _screens(rows, seed, names):
        for row in screen_rows:
            out.append(_apply_bad(row, bad_map.get(len(out))))
    return out


