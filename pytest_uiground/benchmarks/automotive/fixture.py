"""A small, deterministic AutomotiveUI-Bench-4K look-alike, written in the hub's exact on-disk schema.

Why this exists: the real set (``sparks-solutions/AutomotiveUI-Bench-4K``, ~10.8 GB decoded) cannot be
downloaded in CI or on air-gapped machines, yet the loader, the scoring and the benchmarks need parquet
shards that look *exactly* like the downloaded repository: ``<root>/data/test-0000K-of-0000N.parquet``,
one split ``test``, the Hugging Face ``Image`` and ``Array2D`` features, and the card's nulls. This module
draws dark infotainment (IVI) screens with Pillow and writes them with that schema, so anything that
reads the real set (``pyarrow``, ``datasets.load_dataset("parquet", ...)``, ``datasets.load_dataset(root)``)
reads the fixture the same way.

What is written (one row per annotation, several rows per screenshot, like the 998 images / 4,208 rows
of the real set):

* ``image``: ``struct<bytes: binary, path: string>`` (the ``Image`` feature's storage), PNG bytes. Every
  row carries its screenshot's bytes, as in the hub shards; ``path`` is the screenshot's file name.
* ``box``: ``Array2D(shape=(1, 4), dtype="float32")``, stored as ``list<list<float>>``:
  ``[[x0, y0, x1, y1]]`` normalized to 0..1.
* ``class`` (``"Test Action"``/``"Expected Result"``), ``test_action`` (null on Expected Result rows),
  ``expectation`` and ``conclusion`` (``"passed"``/``"failed"``; both null on Test Action rows),
  ``language`` (``"DE"``/``"EN"``, the language of the screen's UI), ``brand`` (made-up brand names).
  As on the card, annotations are English; German UI labels are quoted (``Tap on "Klima 21,5°C"``).

The parquet schema carries the ``huggingface`` metadata that ``datasets`` writes, so ``image`` decodes as
an ``Image`` and ``box`` as ``Array2D`` without passing features. Row groups hold ``rows_per_group`` rows
(default :data:`DEFAULT_ROWS_PER_GROUP` = 16) so a reader can fetch one screenshot's bytes without
reading a shard (the hub's shards, written by ``push_to_hub``, typically hold ~100 rows per group; the size
matters for memory only, not for the schema).

A reader caveat this fixture reproduces: the schema embeds the ``datasets`` Array2D extension type, so in a
process that has imported ``datasets`` pyarrow reads ``box`` as that extension type, whose ``to_pylist``
reshapes to 1x4 and raises on a malformed box (``bad="bad_box"``) for the whole batch; read its
``.storage`` to get plain ``list<list<float>>``.

Ground truth is exact by construction: every referenced element (a tile, a dock button, the clock) is a
rectangle laid out in normalized coordinates from the seed alone (no text measuring), so
:func:`expected_rows` knows every row without rendering, and boxes do not depend on the image size.
Pixels are drawn at ``round(fraction * size)``, i.e. within half a pixel of the stored box. Texts are
unique within a screen, so every instruction names exactly one element; Expected Result verdicts are true
to the pixels (the highlighted tile, the set temperature, the clock).

Determinism: each screen has its own ``random.Random`` seeded from a string of ``(seed, screen index)``
(never ``hash()``, which is salted per process), and the only font is Pillow's bundled one
(``ImageFont.load_default(size=...)``), so the same seed gives the same bytes with the same Pillow/zlib.
Row ``i`` of ``rows=n`` is the same for every ``n > i`` (screens are generated in order and only the last
one is cut short), so fixtures of different sizes share a prefix.

Speed: PNG encoding dominates (``compress_level=1``); screens are flat-coloured, so a 2000x1125 PNG is
small and fast. Nothing is printed.
"""

from __future__ import annotations

import functools
import io
import json
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import pyarrow as pa
    from datasets import Features
    from PIL import ImageDraw, ImageFont

__all__ = [
    "BAD_KINDS",
    "COLUMNS",
    "DEFAULT_BRANDS",
    "DEFAULT_ROWS_PER_GROUP",
    "expected_rows",
    "features",
    "write_fixture",
    "write_fixture_save_to_disk",
]

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


# --------------------------------------------------------------------------- drawing


@functools.lru_cache(maxsize=32)
def _font(size: int) -> ImageFont.FreeTypeFont:
    """Pillow's bundled font only: a system font would make pixels depend on the machine."""
    from PIL import ImageFont

    font = ImageFont.load_default(size=max(6, size))
    if not isinstance(font, ImageFont.FreeTypeFont):  # Pillow built without FreeType
        raise RuntimeError("the fixture needs Pillow with FreeType (ImageFont.load_default(size=...))")
    return font


def _fit(text: str, size: int, max_width: float) -> ImageFont.FreeTypeFont:
    """The largest font at most ``size`` whose rendering of ``text`` fits ``max_width`` pixels."""
    font = _font(size)
    width = font.getlength(text)
    if width > max_width > 0:
        font = _font(int(size * max_width / width))
    return font


def _px(box: NBox, w: int, h: int) -> tuple[int, int, int, int]:
    """Pixel rectangle (inclusive corners) covering the normalized box, within half a pixel."""
    x0, y0, x1, y1 = box
    return round(x0 * w), round(y0 * h), max(round(x0 * w), round(x1 * w) - 1), max(round(y0 * h), round(y1 * h) - 1)


def _centered_text(draw: ImageDraw.ImageDraw, rect: tuple[int, int, int, int], text: str, size: int,
                   fill: tuple[int, int, int]) -> None:
    x0, y0, x1, y1 = rect
    font = _fit(text, size, (x1 - x0) * 0.9)
    draw.text(((x0 + x1) / 2, (y0 + y1) / 2), text, font=font, fill=fill, anchor="mm")


def _render(screen: _Screen, width: int, height: int) -> bytes:
    """Draw the screen (status bar, tile grid, dock) and return PNG bytes (``compress_level=1``)."""
    from PIL import Image, ImageDraw

    accent, background, tile_colour, radius_frac = _STYLES[screen.style]
    img = Image.new("RGB", (width, height), background)
    draw = ImageDraw.Draw(img)
    unit = min(height, width * 9 / 16)  # text scales with the shorter side of a 16:9 frame

    # Status bar: clock pill (a target), brand, outside temperature and signal bars (decoration).
    bar_h = round(0.08 * height)
    draw.rectangle((0, 0, width - 1, bar_h - 1), fill=_rgb(tuple(max(0, c - 4) for c in background)))
    clock = _px(screen.clock.box, width, height)
    draw.rounded_rectangle(clock, radius=(clock[3] - clock[1]) // 2, fill=tile_colour)
    _centered_text(draw, clock, screen.clock.label, round(unit * 0.035), _TEXT)
    draw.text((width / 2, bar_h / 2), screen.brand.upper(), font=_fit(screen.brand.upper(), round(unit * 0.032),
              width * 0.3), fill=_DIM, anchor="mm")
    draw.text((width * 0.86, bar_h / 2), screen.outside, font=_font(round(unit * 0.03)), fill=_DIM, anchor="rm")
    for i in range(4):
        bx = round(width * (0.9 + 0.012 * i))
        top = round(bar_h * (0.7 - 0.12 * i))
        draw.rectangle((bx, top, bx + max(1, round(width * 0.006)), round(bar_h * 0.75)), fill=_TEXT if i < 3 else _DIM)
    draw.line((0, bar_h, width, bar_h), fill=tile_colour, width=max(1, round(unit * 0.002)))

    # Tiles: an icon-like glyph above the label; the highlighted one is filled with the accent colour.
    for i, tile in enumerate(screen.tiles):
        rect = _px(tile.box, width, height)
        x0, y0, x1, y1 = rect
        radius = max(0, round((y1 - y0) * radius_frac))
        selected = i == screen.highlighted
        draw.rounded_rectangle(rect, radius=radius, fill=accent if selected else tile_colour,
                               outline=None if selected else _rgb(tuple(min(255, c + 18) for c in tile_colour)),
                               width=max(1, round(unit * 0.002)))
        cx, cy, r = (x0 + x1) / 2, y0 + (y1 - y0) * 0.38, (y1 - y0) * 0.14
        glyph = _TEXT if selected else accent
        shape = sum(map(ord, tile.key)) % 3
        if shape == 0:
            draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=glyph, width=max(1, round(r * 0.25)))
        elif shape == 1:
            draw.rounded_rectangle((cx - r, cy - r * 0.8, cx + r, cy + r * 0.8), radius=r * 0.3, fill=glyph)
        else:
            draw.polygon(((cx, cy - r), (cx + r, cy + r * 0.8), (cx - r, cy + r * 0.8)), fill=glyph)
        label_rect = (x0, round(y0 + (y1 - y0) * 0.62), x1, round(y0 + (y1 - y0) * 0.86))
        _centered_text(draw, label_rect, tile.label, round(unit * 0.04), _TEXT)

    # Dock buttons.
    for button in screen.dock:
        rect = _px(button.box, width, height)
        draw.rounded_rectangle(rect, radius=(rect[3] - rect[1]) // 3, fill=tile_colour)
        _centered_text(draw, rect, button.label, round(unit * 0.032), _TEXT)

    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


# --------------------------------------------------------------------------- writing


def features() -> Features:
    """The hub dataset's features (from the card's ``dataset_info``), in its column order."""
    from datasets import Array2D, Features, Image, Value

    return Features({
        "image": Image(),
        "box": Array2D(shape=(1, 4), dtype="float32"),
        "class": Value("string"),
        "test_action": Value("string"),
        "expectation": Value("string"),
        "conclusion": Value("string"),
        "language": Value("string"),
        "brand": Value("string"),
    })


def _check_size(width: int, height: int, shards: int, rows_per_group: int, rows: int) -> None:
    for name, value, lo, hi in (("width", width, _MIN_W, _MAX_SIDE), ("height", height, _MIN_H, _MAX_SIDE)):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= rows:
        raise ValueError(f"shards must be an integer in 1..rows ({rows}), got {shards!r}")
    if isinstance(rows_per_group, bool) or not isinstance(rows_per_group, int) or rows_per_group < 1:
        raise ValueError(f"rows_per_group must be a positive integer, got {rows_per_group!r}")


def _records(rows: int, seed: int, width: int, height: int, bad: Mapping[int, str] | None,
             brands: Sequence[str] | None) -> Iterator[dict[str, Any]]:
    """Every row as written (columns only), rendering each screenshot once for all its rows."""
    bad_map, names = _check(rows, bad, brands)
    n = 0
    for screen, screen_rows in _screens(rows, seed, names):
        png = _render(screen, width, height)
        for row in screen_rows:
            kind = bad_map.get(n)
            row = _apply_bad(row, kind)
            image: dict[str, Any] | None = {"bytes": png, "path": screen.path}
            if kind == "no_image":
                image = None
            elif kind == "corrupt_image":
                image = {"bytes": png[: max(64, len(png) // 3)], "path": screen.path}
            yield {"image": image, **{c: row[c] for c in COLUMNS[1:]}}
            n += 1


def _table(schema: pa.Schema, batch: list[dict[str, Any]]) -> pa.Table:
    """A table in the features' arrow schema (``box`` as the Array2D extension type, as ``datasets`` has it)."""
    import pyarrow as pa

    arrays = []
    for field in schema:
        values = [r[field.name] for r in batch]
        if isinstance(field.type, pa.ExtensionType):
            arrays.append(pa.ExtensionArray.from_storage(field.type, pa.array(values, type=field.type.storage_type)))
        else:
            arrays.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _shard_sizes(rows: int, shards: int) -> list[int]:
    base, extra = divmod(rows, shards)
    return [base + (1 if k < extra else 0) for k in range(shards)]


def _parquet_options(schema: pa.Schema) -> dict[str, Any]:
    """The per-column options ``datasets`` uses: image leaves stored plain and uncompressed (PNG bytes do
    not compress), the rest snappy with dictionaries."""
    import pyarrow as pa

    compression: dict[str, str] = {}
    encoding: dict[str, str] = {}
    dictionary: list[str] = []

    def leaves(path: str, t: pa.DataType) -> list[str]:
        if isinstance(t, pa.ExtensionType):
            t = t.storage_type
        if pa.types.is_struct(t):
            return [leaf for f in t for leaf in leaves(f"{path}.{f.name}", f.type)]
        if pa.types.is_list(t):
            return leaves(f"{path}.list.element", t.value_type)
        return [path]

    for field in schema:
        for leaf in leaves(field.name, field.type):
            if field.name == "image":
                compression[leaf], encoding[leaf] = "none", "PLAIN"
            else:
                compression[leaf] = "snappy"
                dictionary.append(leaf)
    return {"compression": compression, "column_encoding": encoding, "use_dictionary": dictionary}


_CARD = """---
dataset_info:
  features:
    - name: image
      dtype: image
    - name: box
      dtype:
        array2_d:
          shape:
            - 1
            - 4
          dtype: float32
    - name: class
      dtype: string
    - name: test_action
      dtype: string
    - name: expectation
      dtype: string
    - name: conclusion
      dtype: string
    - name: language
      dtype: string
    - name: brand
      dtype: string
  splits:
    - name: test
      num_examples: {rows}
configs:
  - config_name: default
    data_files:
      - split: test
        path: data/test-*
---

# AutomotiveUI-Bench-4K fixture

Synthetic look-alike written by `pytest_uiground.benchmarks.automotive.fixture` (seed {seed}, {rows} rows,
{width}x{height} images); not the real benchmark.
"""


def write_fixture(root: Path, *, rows: int = 40, seed: int = 0, width: int = 1280, height: int = 720,
                  shards: int = 1, rows_per_group: int = DEFAULT_ROWS_PER_GROUP,
                  bad: Mapping[int, str] | None = None, brands: Sequence[str] | None = None) -> Path:
    """Write ``root/data/test-0000K-of-0000N.parquet`` (and the card's ``README.md``); return ``root``.

    The layout of the downloaded hub repository, so a reader can be pointed at ``root`` exactly as at
    the real set. Rows are split into ``shards`` contiguous shards of near-equal size, each written with
    row groups of ``rows_per_group`` rows. Existing ``data/test-*-of-*.parquet`` files are removed first,
    so a stale shard of an earlier call cannot be globbed along. ``bad`` maps row indices to a kind of
    :data:`BAD_KINDS`; ``brands`` replaces :data:`DEFAULT_BRANDS`.
    """
    import pyarrow.parquet as pq

    _check(rows, bad, brands)
    _check_size(width, height, shards, rows_per_group, rows)
    root = Path(root)
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    for old in data.glob("test-*-of-*.parquet"):
        old.unlink()
    schema = features().arrow_schema
    options = _parquet_options(schema)
    records = _records(rows, seed, width, height, bad, brands)
    for k, size in enumerate(_shard_sizes(rows, shards)):
        path = data / f"test-{k:05d}-of-{shards:05d}.parquet"
        with pq.ParquetWriter(path, schema, write_page_index=True, **options) as writer:
            left = size
            while left:
                batch = [next(records) for _ in range(min(rows_per_group, left))]
                writer.write_table(_table(schema, batch), row_group_size=rows_per_group)
                left -= len(batch)
    (root / "README.md").write_text(_CARD.format(rows=rows, seed=seed, width=width, height=height), encoding="utf-8")
    return root


def write_fixture_save_to_disk(root: Path, *, rows: int = 40, seed: int = 0, width: int = 1280, height: int = 720,
                               shards: int = 1, rows_per_group: int = DEFAULT_ROWS_PER_GROUP,
                               bad: Mapping[int, str] | None = None, brands: Sequence[str] | None = None,
                               split: str | None = "test") -> Path:
    """The same rows in ``datasets``' ``save_to_disk`` layout (for ``datasets.load_from_disk``); return ``root``.

    With ``split="test"`` (default) a ``DatasetDict`` with that one split is saved, mirroring the hub's
    single split; with ``split=None`` a bare ``Dataset``. ``shards`` is the number of arrow files of the
    split; ``rows_per_group`` is the record-batch size of the intermediate arrow stream. Rows are streamed
    through a temporary arrow file (memory-mapped by ``datasets``), never held in memory at once.
    """
    import pyarrow as pa
    from datasets import Dataset, DatasetDict, are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    _check(rows, bad, brands)
    _check_size(width, height, shards, rows_per_group, rows)
    root = Path(root)
    schema = features().arrow_schema
    records = _records(rows, seed, width, height, bad, brands)
    was_disabled = are_progress_bars_disabled()
    with tempfile.TemporaryDirectory(prefix="automotive-fixture-") as tmp:
        stream = Path(tmp) / "rows.arrow"
        with pa.OSFile(str(stream), "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
            left = rows
            while left:
                batch = [next(records) for _ in range(min(rows_per_group, left))]
                writer.write_table(_table(schema, batch))
                left -= len(batch)
        disable_progress_bars()
        try:
            ds = Dataset.from_file(str(stream))
            if split is None:
                ds.save_to_disk(str(root), num_shards=shards)
            else:
                DatasetDict({split: ds}).save_to_disk(str(root), num_shards={split: shards})
            del ds
        finally:
            if not was_disabled:
                enable_progress_bars()
    return root


def _main() -> None:  # pragma: no cover - a developer convenience
    """``python -m pytest_uiground.benchmarks.automotive.fixture ROOT [ROWS [WIDTH HEIGHT]]``: write a fixture."""
    import sys

    args = sys.argv[1:]
    if not args:
        raise SystemExit("usage: python -m pytest_uiground.benchmarks.automotive.fixture ROOT [ROWS [WIDTH HEIGHT]]")
    rows = int(args[1]) if len(args) > 1 else 40
    size = (int(args[2]), int(args[3])) if len(args) > 3 else (1280, 720)
    write_fixture(Path(args[0]), rows=rows, width=size[0], height=size[1])
    print(json.dumps({"root": args[0], "rows": rows, "width": size[0], "height": size[1]}))


if __name__ == "__main__":  # pragma: no cover
    _main()

