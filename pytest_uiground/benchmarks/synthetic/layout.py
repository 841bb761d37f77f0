"""Synthetic screens as pure arithmetic: vocabularies, themes and the seeded grid layout with exact boxes.

No pixels here (see :mod:`.render`): collection computes layouts only. See :mod:`.loader` for the design rules.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from random import Random
from typing import TYPE_CHECKING, Final, NamedTuple

from pytest_uiground.record.geometry import Box, size_bucket

if TYPE_CHECKING:
    pass

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
