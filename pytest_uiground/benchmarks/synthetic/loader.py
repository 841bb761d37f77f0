"""Deterministic synthetic UI screens with exact ground truth (loader ``synthetic``).

Why this exists: real grounding datasets cannot be downloaded everywhere (CI, air-gapped
machines), yet a regression suite needs *some* screenshots whose ground truth is exact.
This module draws plausible UI screens (buttons, labels, input fields, checkboxes and
icon-only buttons) from a seed, so a suite is reproducible anywhere without data files.

Design rules, each with its reason:

* **Determinism.** Every screen has its own ``random.Random`` seeded from
  ``(seed, screen index)`` with integer arithmetic (never ``hash()`` of a string, which
  is salted per process, and never the global ``random`` state, which other code may
  touch). The only font is the one bundled with Pillow (``ImageFont.load_default``), so
  no system font can change the pixels. Layout does not even depend on FreeType: text
  widths come from an embedded advance table of that font, so ground-truth boxes depend
  only on the seed and this file.
* **Cheap collection.** Layout is pure arithmetic with grid-cell placement (no
  rejection loops, elements never overlap). Pixels are drawn only when a test loads the
  sample's image, and a small LRU cache lets the several samples of one screen share one
  rendering.
* **Unambiguous ground truth.** Texts are unique within a screen, the vocabularies of the
  element types are disjoint, and no text uses the words that describe icons, so every
  instruction names exactly one element.
* **Sliceable.** Every sample's ``meta`` holds ``difficulty``, ``theme``,
  ``element_type`` and ``size`` (the size bucket, see :func:`size_bucket`), so a report
  can say *where* a model regressed.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from random import Random
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from pytest_uiground.geometry import Box, size_bucket
from pytest_uiground.image import ImageRef
from pytest_uiground.loading import LoaderContext
from pytest_uiground.sample import Sample, Target

if TYPE_CHECKING:
    from PIL import Image, ImageDraw, ImageFont

# --------------------------------------------------------------------------- constants

DIFFICULTIES: Final[tuple[str, ...]] = ("easy", "medium", "hard")
THEMES: Final[tuple[str, ...]] = ("light", "dark")
ELEMENT_TYPES: Final[tuple[str, ...]] = ("button", "label", "input", "checkbox", "icon")

DEFAULT_SEED: Final = 0
DEFAULT_SCREENS: Final = 50
DEFAULT_WIDTH: Final = 800
DEFAULT_HEIGHT: Final = 600
DEFAULT_TARGETS_PER_SCREEN: Final = 6

_MIN_SIDE, _MIN_HEIGHT, _MAX_SIDE = 320, 240, 4096
_MAX_SCREENS = 100_000  # ids format the screen index with five digits
_MAX_TARGETS = 20  # the most elements a screen has (hard)
_OPTIONS: Final = frozenset({"seed", "screens", "width", "height", "targets_per_screen", "task"})




@dataclass(frozen=True, slots=True)
class _Difficulty:
    """Per-difficulty layout parameters: grid shape bounds the element count."""

    cols: int
    rows: int
    min_elements: int
    max_elements: int
    font_sizes: tuple[int, ...]
    icon_sizes: tuple[int, int]  # inclusive range of the icon square side, in pixels


_DIFFICULTY: Final[dict[str, _Difficulty]] = {
    "easy": _Difficulty(2, 3, 4, 6, (20, 22, 24, 26), (30, 44)),
    "medium": _Difficulty(3, 4, 6, 12, (14, 15, 16, 17), (22, 32)),
    "hard": _Difficulty(4, 5, 12, 20, (10, 11), (16, 24)),
}

# Disjoint vocabularies (checked by the tests). None contains an icon word (close, add,
# plus, search, menu, play, settings, gear) so icon instructions stay unambiguous.
BUTTON_TEXTS: Final[tuple[str, ...]] = (
    "Save", "Save as", "Cancel", "OK", "Apply", "Delete", "Submit", "Continue", "Back",
    "Next", "Sign in", "Sign up", "Log out", "Download report", "Upload file", "Export",
    "Import", "Share", "Send", "Retry", "Confirm", "Edit profile", "New folder",
    "Create account", "Reset password", "Refresh", "Undo", "Redo", "Print", "Subscribe",
    "Checkout", "Archive", "Duplicate", "Rename", "Publish", "Preview",
)  # fmt: skip
LABEL_TEXTS: Final[tuple[str, ...]] = (
    "Help", "Name", "Total", "Home", "Tags", "Docs", "Inbox", "Drafts", "Dashboard",
    "Analytics", "Messages", "Calendar", "Projects", "Team members", "Invoices",
    "Order status", "Notifications", "Account overview", "Billing history",
    "Privacy policy", "Terms of service", "Help center", "Recent files", "Shared with me",
    "Storage used", "Last updated", "Profile", "Security", "Language", "Appearance",
    "Keyboard shortcuts", "Total amount",
)  # fmt: skip
INPUT_PLACEHOLDERS: Final[tuple[str, ...]] = (
    "Email address", "Full name", "Phone number", "Enter password", "Company name",
    "Street address", "City", "Postal code", "Card number", "Username", "First name",
    "Last name", "Website URL", "Job title", "Message subject", "Type a message",
    "Enter coupon code", "Date of birth", "Country", "Confirm password", "Display name",
    "Your comment", "Expiry date", "Project title",
)  # fmt: skip
CHECKBOX_TEXTS: Final[tuple[str, ...]] = (
    "Remember me", "Keep me signed in", "I agree to the terms", "Send me updates",
    "Enable notifications", "Dark mode", "Show hidden files", "Auto-save",
    "Make profile public", "Two-factor login", "Receive newsletter", "Use default printer",
    "Mark as read", "Include subfolders", "Allow comments", "Private repository",
    "Save password", "Email receipts", "Compact view", "Open links in new tab",
)  # fmt: skip
# Icon kind -> description used in the instruction (the visible "text" of an icon).
ICON_DESCRIPTIONS: Final[dict[str, str]] = {
    "close": "the close button (X icon)",
    "plus": "the add button (plus icon)",
    "menu": "the menu button (hamburger icon)",
    "search": "the search button (magnifier icon)",
    "play": "the play button (triangle icon)",
    "gear": "the settings button (gear icon)",
}
_ICON_KINDS: Final[tuple[str, ...]] = tuple(ICON_DESCRIPTIONS)

_VOCAB: Final[dict[str, tuple[str, ...]]] = {
    "button": BUTTON_TEXTS,
    "label": LABEL_TEXTS,
    "input": INPUT_PLACEHOLDERS,
    "checkbox": CHECKBOX_TEXTS,
    "icon": _ICON_KINDS,
}

# Templates keep the element text verbatim so text-matching models can find it.
_TEMPLATES: Final[dict[str, tuple[str, ...]]] = {
    "button": ("Click the '{t}' button", 'Click "{t}"', "Press the {t} button", "Tap {t}"),
    "label": ("Click the text '{t}'", 'Tap "{t}"', "Click on the {t} label"),
    "input": (
        "Click the '{t}' input field",
        'Tap the field with placeholder "{t}"',
        "Click the {t} text box",
    ),
    "checkbox": ("Select the {t} checkbox", "Tick the '{t}' checkbox", 'Check "{t}"'),
    "icon": ("Click {t}", "Tap {t}", "Press {t}"),
}
_N_TEMPLATES: Final[dict[str, int]] = {k: len(v) for k, v in _TEMPLATES.items()}

# Advance widths of Pillow's bundled Aileron font, in 1/100 em (measured once with
# FreeType). Layout uses this table instead of FreeType so ground-truth boxes do not move
# with the FreeType or Pillow version; rendering shrinks text that would not fit.
_ADVANCE: Final[dict[str, int]] = {
    **dict(zip("abcdefghijklm", (54, 60, 53, 62, 55, 29, 62, 59, 24, 24, 52, 25, 85), strict=True)),
    **dict(zip("nopqrstuvwxyz", (59, 58, 60, 62, 33, 45, 32, 60, 51, 79, 48, 51, 46), strict=True)),
    **dict(zip("ABCDEFGHIJKLM", (64, 63, 70, 71, 59, 57, 71, 73, 27, 55, 61, 58, 87), strict=True)),
    **dict(zip("NOPQRSTUVWXYZ", (72, 74, 60, 73, 62, 58, 61, 68, 62, 95, 63, 58, 59), strict=True)),
    **dict.fromkeys("0123456789", 58),
    **dict(zip(" .,'-&?!/()", (22, 23, 22, 18, 27, 65, 50, 25, 30, 31, 32), strict=True)),
}
_LINE_EM: Final = 1.2  # ascent + descent of the font, in em

# Colours: (background, text, muted text, panel/input background, border).
_THEME_COLORS: Final[dict[str, dict[str, str]]] = {
    "light": {
        "bg": "#f6f7f9", "fg": "#1f2328", "muted": "#5c6570", "field": "#ffffff",
        "border": "#8c959f", "secondary": "#e4e7eb", "icon_bg": "#e9ecef",
    },
    "dark": {
        "bg": "#1b1d21", "fg": "#e8eaed", "muted": "#b0b6bd", "field": "#2a2d33",
        "border": "#6e7681", "secondary": "#3a3f47", "icon_bg": "#30343b",
    },
}  # fmt: skip
# Primary button fills: all dark enough for white text (contrast >= 4.5:1).
_ACCENTS: Final[tuple[str, ...]] = ("#1a56db", "#0e7a3d", "#b42318", "#6d28d9", "#0b6e99")


# ----------------------------------------------------------------------------- layout


class Element(NamedTuple):
    """One UI element of a screen, in pixels (``x1``/``y1`` exclusive edges).

    ``text`` is the visible text (the placeholder for inputs, the icon kind for icons);
    ``style`` is a rendering variant (button fill, checked state) that never changes the
    box, so the renderer can vary looks without touching ground truth. A NamedTuple
    rather than a frozen dataclass because it is built ~100,000 times at collection for
    large suites and is four times cheaper to construct.
    """

    kind: str
    text: str
    x0: int
    y0: int
    x1: int
    y1: int
    font_size: int
    style: str
    instruction: str

    @property
    def size(self) -> str:
        return size_bucket(self.x1 - self.x0, self.y1 - self.y0)

    def box(self, width: int, height: int) -> Box:
        """The normalized ground-truth box."""
        return Box(self.x0 / width, self.y0 / height, self.x1 / width, self.y1 / height)


@dataclass(frozen=True, slots=True)
class ScreenLayout:
    """Everything needed to draw one screen and score its elements.

    ``elements`` are in *target priority order*: the first five have distinct types, so
    taking the first ``k`` elements as targets covers as many element types as ``k``
    allows, and a smaller ``k`` selects a prefix of a larger one (sample ids stay stable
    when ``targets_per_screen`` changes).
    """

    seed: int
    index: int
    width: int
    height: int
    difficulty: str
    theme: str
    accent: str
    elements: tuple[Element, ...]


def _screen_seed(seed: int, index: int) -> int:
    """Mix (seed, index) into a 64-bit integer (splitmix64), stable on every machine.

    ``hash()`` of a str is salted per process, and ``seed * N + index`` would make
    neighbouring seeds share screens, hence an explicit integer mixer.
    """
    z = (seed * 0x9E3779B97F4A7C15 + index + 1) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def _text_em(text: str) -> float:
    """Width of ``text`` in em of the bundled font, from the embedded advance table."""
    return sum(_ADVANCE.get(c, 58) for c in text) / 100.0


@functools.cache
def _natural_size(kind: str, text: str, font: int) -> tuple[int, int, int]:
    """(width, height, extra width) of a text element before clamping to its cell.

    Cached because the vocabulary and font sizes are few while collection lays out up
    to ~100,000 elements. ``extra width`` is the room an input field may grow beyond
    its placeholder (fields are wider than their placeholder, as in real forms).
    """
    text_w = _text_em(text) * font
    line_h = _LINE_EM * font
    if kind == "button":
        return round(text_w + 1.8 * font), round(line_h + 1.0 * font), 0
    if kind == "input":
        return round(1.3 * text_w + 1.2 * font), round(line_h + 1.0 * font), round(0.6 * text_w)
    if kind == "checkbox":
        square = round(0.95 * font)
        return round(square + 0.5 * font + text_w + 4), round(max(square, line_h) + 4), 0
    return round(text_w + 4), round(line_h + 4), 0  # label


@functools.cache
def _instruction(kind: str, template_index: int, text: str) -> str:
    """The instruction for an element; cached for the same reason as the sizes."""
    shown = ICON_DESCRIPTIONS[text] if kind == "icon" else text
    return _TEMPLATES[kind][template_index].format(t=shown)


def _layout_screen(seed: int, index: int, width: int, height: int, limit: int | None = None) -> ScreenLayout:
    """Lay out one screen from its own RNG, optionally only its first ``limit`` elements.

    Element ``j`` uses only draws made before element ``j + 1``, so a truncated layout is
    an exact prefix of the full one: the loader lays out just the target elements (about
    half of all elements) and the renderer lays out the whole screen again when needed.
    Every draw is ``int(rnd() * n)`` rather than ``randrange``/``sample``/``shuffle``:
    identical on every platform (IEEE doubles from the Mersenne Twister) and about five
    times faster, which matters when collection lays out 10,000 screens.
    """
    rnd = Random(_screen_seed(seed, index)).random
    difficulty = DIFFICULTIES[index % len(DIFFICULTIES)]
    # Theme changes every len(DIFFICULTIES) screens so all six combinations recur.
    theme = THEMES[(index // len(DIFFICULTIES)) % len(THEMES)]
    spec = _DIFFICULTY[difficulty]
    n = spec.min_elements + int(rnd() * (spec.max_elements - spec.min_elements + 1))
    font = spec.font_sizes[int(rnd() * len(spec.font_sizes))]
    accent = _ACCENTS[int(rnd() * len(_ACCENTS))]

    margin, gutter = 16, 6
    cols = spec.cols
    n_cells = cols * spec.rows
    cell_w = (width - 2 * margin) // cols
    cell_h = (height - 2 * margin) // spec.rows
    inner_w, inner_h = cell_w - 2 * gutter, cell_h - 2 * gutter

    icon_lo, icon_span = spec.icon_sizes[0], spec.icon_sizes[1] - spec.icon_sizes[0] + 1
    cells = list(range(n_cells))
    pools: dict[str, list[str]] = {}
    used: dict[str, int] = {}
    elements: list[Element] = []
    n_types = len(ELEMENT_TYPES)
    for j in range(n if limit is None else min(n, limit)):
        # Types cycle from the screen index: the first five elements have distinct types
        # (priority order, see ScreenLayout) and every type is equally common overall.
        kind = ELEMENT_TYPES[(index + j) % n_types]
        # One partial Fisher-Yates step each for the cell and the text: no repeats, no
        # rejection loop, so elements never overlap and texts are unique on the screen.
        c = j + int(rnd() * (n_cells - j))
        cells[j], cells[c] = cells[c], cells[j]
        cell = cells[j]
        pool = pools.get(kind)
        if pool is None:
            pool = pools[kind] = list(_VOCAB[kind])
        i = used.get(kind, 0)
        used[kind] = i + 1
        t = i + int(rnd() * (len(pool) - i))
        pool[i], pool[t] = pool[t], pool[i]
        text = pool[i]

        if kind == "icon":
            w = h = icon_lo + int(rnd() * icon_span)
        else:
            w, h, extra = _natural_size(kind, text, font)
            if extra:
                w += int(rnd() * extra)
        if w > inner_w:
            w = inner_w
        if h > inner_h:
            h = inner_h
        x0 = margin + (cell % cols) * cell_w + gutter + int(rnd() * (inner_w - w + 1))
        y0 = margin + (cell // cols) * cell_h + gutter + int(rnd() * (inner_h - h + 1))
        instruction = _instruction(kind, int(rnd() * _N_TEMPLATES[kind]), text)
        if kind == "button":
            style = "primary" if rnd() < 0.5 else "secondary"
        elif kind == "checkbox":
            style = "checked" if rnd() < 0.5 else "unchecked"
        else:
            style = "plain"
        elements.append(Element(kind, text, x0, y0, x0 + w, y0 + h, font, style, instruction))
    return ScreenLayout(seed, index, width, height, difficulty, theme, accent, tuple(elements))


def generate_layouts(
    seed: int = DEFAULT_SEED,
    n_screens: int = DEFAULT_SCREENS,
    width: int = DEFAULT_WIDTH,
    height: int = DEFAULT_HEIGHT,
) -> list[ScreenLayout]:
    """Lay out ``n_screens`` screens; pure arithmetic, nothing is drawn.

    Screen ``i`` depends only on ``(seed, i, width, height)``, so a suite with more
    screens extends a smaller one instead of reshuffling it.
    """
    _check_int("seed", seed, 0, 2**63 - 1)
    _check_int("screens", n_screens, 1, _MAX_SCREENS)
    _check_int("width", width, _MIN_SIDE, _MAX_SIDE)
    _check_int("height", height, _MIN_HEIGHT, _MAX_SIDE)
    return [_layout_screen(seed, i, width, height) for i in range(n_screens)]


# -------------------------------------------------------------------------- rendering


@functools.lru_cache(maxsize=16)
def _font(size: int) -> ImageFont.FreeTypeFont:
    """The font bundled with Pillow at ``size`` px: never a system font (determinism)."""
    from PIL import ImageFont

    font = ImageFont.load_default(size=size)
    if not isinstance(font, ImageFont.FreeTypeFont):  # Pillow built without FreeType
        raise RuntimeError(
            "the synthetic loader needs Pillow with FreeType support "
            "(ImageFont.load_default(size=...) returned a bitmap font); install the Pillow wheel"
        )
    return font


def _fitted_font(text: str, size: int, max_width: float) -> ImageFont.FreeTypeFont:
    """Largest font <= ``size`` whose text fits ``max_width`` (layout clamps to the cell)."""
    font = _font(size)
    while size > 6 and font.getlength(text) > max_width:
        size -= 1
        font = _font(size)
    return font


def _draw_icon(draw: ImageDraw.ImageDraw, el: Element, colors: Mapping[str, str]) -> None:
    x0, y0, x1, y1 = el.x0, el.y0, el.x1 - 1, el.y1 - 1
    side = el.x1 - el.x0
    draw.rounded_rectangle((x0, y0, x1, y1), radius=max(2, side // 5), fill=colors["icon_bg"])
    fg = colors["fg"]
    lw = max(2, side // 10)
    inset = side * 0.27
    a0, b0, a1, b1 = x0 + inset, y0 + inset, x1 - inset, y1 - inset
    cx, cy = (a0 + a1) / 2, (b0 + b1) / 2
    if el.text == "close":
        draw.line((a0, b0, a1, b1), fill=fg, width=lw)
        draw.line((a0, b1, a1, b0), fill=fg, width=lw)
    elif el.text == "plus":
        draw.line((cx, b0, cx, b1), fill=fg, width=lw)
        draw.line((a0, cy, a1, cy), fill=fg, width=lw)
    elif el.text == "menu":
        for y in (b0 + lw / 2, cy, b1 - lw / 2):
            draw.line((a0, y, a1, y), fill=fg, width=lw)
    elif el.text == "search":
        r = (a1 - a0) * 0.36
        mx, my = a0 + r, b0 + r
        draw.ellipse((mx - r, my - r, mx + r, my + r), outline=fg, width=lw)
        draw.line((mx + r * 0.7, my + r * 0.7, a1, b1), fill=fg, width=lw)
    elif el.text == "play":
        draw.polygon(((a0 + lw / 2, b0), (a1, cy), (a0 + lw / 2, b1)), fill=fg)
    else:  # gear: a toothed ring
        r_out = (a1 - a0) / 2
        r_in = r_out * 0.72
        tooth = max(1.5, r_out * 0.22)
        for k in range(8):
            dx, dy = ((1, 0), (0.7071, 0.7071), (0, 1), (-0.7071, 0.7071))[k % 4]
            sign = 1 if k < 4 else -1
            tx, ty = cx + sign * dx * r_in, cy + sign * dy * r_in
            draw.ellipse((tx - tooth, ty - tooth, tx + tooth, ty + tooth), fill=fg)
        draw.ellipse((cx - r_in, cy - r_in, cx + r_in, cy + r_in), fill=fg)
        hole = r_in * 0.45
        draw.ellipse((cx - hole, cy - hole, cx + hole, cy + hole), fill=colors["icon_bg"])


def _draw_element(draw: ImageDraw.ImageDraw, el: Element, colors: Mapping[str, str], accent: str) -> None:
    x0, y0, x1, y1 = el.x0, el.y0, el.x1 - 1, el.y1 - 1
    w, h = el.x1 - el.x0, el.y1 - el.y0
    cy = (el.y0 + el.y1) / 2
    if el.kind == "icon":
        _draw_icon(draw, el, colors)
    elif el.kind == "button":
        primary = el.style == "primary"
        draw.rounded_rectangle(
            (x0, y0, x1, y1), radius=max(2, h // 5), fill=accent if primary else colors["secondary"]
        )
        font = _fitted_font(el.text, el.font_size, w - 0.6 * el.font_size)
        fg = "#ffffff" if primary else colors["fg"]
        draw.text(((el.x0 + el.x1) / 2, cy), el.text, font=font, fill=fg, anchor="mm")
    elif el.kind == "input":
        draw.rectangle((x0, y0, x1, y1), fill=colors["field"], outline=colors["border"], width=1)
        pad = 0.6 * el.font_size
        font = _fitted_font(el.text, el.font_size, w - 2 * pad)
        draw.text((el.x0 + pad, cy), el.text, font=font, fill=colors["muted"], anchor="lm")
    elif el.kind == "checkbox":
        square = min(round(0.95 * el.font_size), h)
        sy0 = round(cy - square / 2)
        box = (el.x0 + 1, sy0, el.x0 + square, sy0 + square - 1)
        if el.style == "checked":
            draw.rectangle(box, fill=accent, outline=accent)
            lw = max(1, square // 7)
            draw.line(
                (
                    (box[0] + square * 0.2, sy0 + square * 0.5),
                    (box[0] + square * 0.42, sy0 + square * 0.72),
                    (box[0] + square * 0.8, sy0 + square * 0.28),
                ),
                fill="#ffffff",
                width=lw,
            )
        else:
            draw.rectangle(box, fill=colors["field"], outline=colors["border"], width=max(1, square // 10))
        tx = el.x0 + square + 0.5 * el.font_size
        font = _fitted_font(el.text, el.font_size, el.x1 - tx)
        draw.text((tx, cy), el.text, font=font, fill=colors["fg"], anchor="lm")
    else:  # label
        font = _fitted_font(el.text, el.font_size, w - 2)
        draw.text((el.x0 + 2, cy), el.text, font=font, fill=colors["fg"], anchor="lm")


def render_screen(layout: ScreenLayout) -> Image.Image:
    """Draw a screen: same layout and Pillow version give byte-identical pixels."""
    from PIL import Image, ImageDraw

    colors = _THEME_COLORS[layout.theme]
    img = Image.new("RGB", (layout.width, layout.height), colors["bg"])
    draw = ImageDraw.Draw(img)
    for el in layout.elements:
        _draw_element(draw, el, colors, layout.accent)
    return img


@functools.lru_cache(maxsize=8)
def _render_cached(seed: int, index: int, width: int, height: int) -> Image.Image:
    """One rendering per screen per process: the samples of a screen are adjacent in a
    suite, so a small cache turns ~6 renderings per screen into one."""
    return render_screen(_layout_screen(seed, index, width, height))


def _screen_image(seed: int, index: int, width: int, height: int) -> Image.Image:
    """The image source of a sample; a copy, so a caller drawing on it cannot corrupt the cache."""
    return _render_cached(seed, index, width, height).copy()


# ----------------------------------------------------------------------------- loader


def _check_int(name: str, value: object, low: int, high: int) -> int:
    """Validate an integer option, naming it, the bad value and what is allowed."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            f"synthetic loader option {name!r}: expected an integer from {low} to {high}, got {value!r}"
        )
    if not low <= value <= high:
        raise ValueError(
            f"synthetic loader option {name!r}: {value!r} is out of range; allowed {low} to {high}"
        )
    return value


def _samples(layouts: Iterable[ScreenLayout], targets_per_screen: int, task: str = "point") -> list[Sample]:
    """Samples for the first ``targets_per_screen`` elements of each layout (no pixels).

    ``task = "detect"``: find the element's box from the click at its centre (what a
    recorded click gives), with the instruction as a hint for grounders.
    """
    samples: list[Sample] = []
    append = samples.append
    for layout in layouts:
        seed, index, width, height = layout.seed, layout.index, layout.width, layout.height
        image = ImageRef.from_source(
            f"synthetic:{seed}:{index:05d}:{width}x{height}",
            functools.partial(_screen_image, seed, index, width, height),
        )
        difficulty, theme = layout.difficulty, layout.theme
        for j, el in enumerate(layout.elements[:targets_per_screen]):
            x0, y0, x1, y1 = el.x0, el.y0, el.x1, el.y1
            box = Box(x0 / width, y0 / height, x1 / width, y1 / height)
            append(
                Sample(
                    id=f"syn-{seed}-{index:05d}-{j:02d}",
                    image=image,
                    instruction=el.instruction,
                    task="detect" if task == "detect" else "point",
                    target=Target(box=box),
                    meta={
                        "difficulty": difficulty,
                        "theme": theme,
                        "element_type": el.kind,
                        "size": size_bucket(x1 - x0, y1 - y0),
                        **({"dataset": "synthetic"} if task == "detect" else {}),
                    },
                    click=box.center if task == "detect" else None,
                )
            )
    return samples


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """Loader entry point: options ``seed``, ``screens``, ``width``, ``height``, ``targets_per_screen``.

    With the defaults (50 screens of 800x600, 6 targets per screen) this yields about
    280 samples covering every difficulty, theme, element type and size bucket. Each
    sample's image is rendered only when a test loads it.
    """
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise ValueError(
            f"suite {ctx.suite_name!r}: unknown synthetic loader option(s) {unknown}; "
            f"allowed: {sorted(_OPTIONS)}"
        )
    seed = _check_int("seed", options.get("seed", DEFAULT_SEED), 0, 2**63 - 1)
    screens = _check_int("screens", options.get("screens", DEFAULT_SCREENS), 1, _MAX_SCREENS)
    width = _check_int("width", options.get("width", DEFAULT_WIDTH), _MIN_SIDE, _MAX_SIDE)
    height = _check_int("height", options.get("height", DEFAULT_HEIGHT), _MIN_HEIGHT, _MAX_SIDE)
    task = options.get("task", "point")
    if task not in ("point", "detect"):
        raise ValueError(f"synthetic loader option 'task': {task!r} is not 'point' or 'detect'")
    targets = _check_int(
        "targets_per_screen", options.get("targets_per_screen", DEFAULT_TARGETS_PER_SCREEN), 1, _MAX_TARGETS
    )
    # Collection builds a few objects per sample and no reference cycles; pausing the
    # cyclic GC avoids repeated full passes over the growing list (~30% of the time).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        layouts = (_layout_screen(seed, i, width, height, targets) for i in range(screens))
        return _samples(layouts, targets, task)
    finally:
        if gc_was_enabled:
            gc.enable()
