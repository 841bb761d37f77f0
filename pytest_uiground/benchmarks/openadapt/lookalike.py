"""Small OpenAdapt-style datasets on disk, for tests and docs of the ``openadapt`` and
``recorded_sessions`` loaders.

Why this exists: the loaders must be tested on both annotation forms and on recorded
sessions without any download, and a test must be able to compute the expected boxes,
click points and size buckets by hand. These writers draw a few PNG screenshots (each
element a labelled rectangle exactly where its box says) and write the annotation file:

* :func:`write_annotations` → ``<root>/annotations.json`` and ``<root>/samples/NNN.png``,
  in the ``code`` form (``image_path``, ``element_type``, bbox ``[x, y, w, h]``, click = box
  centre) or the ``docs`` form (``image``, ``type``, bbox ``[x0, y0, x1, y1]`` and a stored
  ``click_point``). The docs form's click is a third of the way across the box, not its
  centre, so a test can tell a stored click from a computed one.
* :func:`write_recorded` → ``<root>/clicks.jsonl`` and ``<root>/frame_NNNN.png``, pixel
  ``click_xy`` and ``bbox`` per line, optionally with the last line's box left out (the
  state of a session before a person has drawn the boxes).

Everything is deterministic: fixed layouts in integer pixels and Pillow's bundled font.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

DEFAULT_SIZE: tuple[int, int] = (400, 300)


class Element(NamedTuple):
    """One drawn element, in pixels."""

    kind: str
    text: str
    x: int
    y: int
    w: int
    h: int


# Sizes cover the three size buckets: 120 px wide (gt100), 24 px (lt32), 60 px (32to100).
_LAYOUTS: tuple[tuple[Element, ...], ...] = (
    (Element("button", "Login", 40, 40, 120, 40), Element("icon", "search", 300, 30, 24, 24),
     Element("text_field", "Email", 40, 120, 200, 30), Element("link", "Help", 40, 200, 60, 20)),
    (Element("button", "Sign Up", 200, 220, 110, 36), Element("icon", "settings", 20, 20, 28, 28),
     Element("text", "Welcome", 120, 80, 90, 24)),
)
_THEMES = ("light", "dark")
_COLOURS = {"light": ((245, 245, 245), (30, 30, 30), (70, 110, 200)),
            "dark": ((32, 32, 36), (235, 235, 235), (90, 140, 230))}


def layout(i: int) -> tuple[Element, ...]:
    """The elements of screen ``i`` (layouts repeat, shifted down 4 px per round)."""
    base = _LAYOUTS[i % len(_LAYOUTS)]
    dy = 4 * (i // len(_LAYOUTS))
    return tuple(e._replace(y=e.y + dy) for e in base)


def draw_screen(path: Path, elements: Sequence[Element], size: tuple[int, int], theme: str) -> None:
    """A PNG with every element drawn inside its box (filled buttons, outlined fields)."""
    from PIL import Image, ImageDraw, ImageFont

    background, ink, accent = _COLOURS[theme]
    img = Image.new("RGB", size, background)
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default()
    for e in elements:
        box = (e.x, e.y, e.x + e.w - 1, e.y + e.h - 1)
        if e.kind == "button":
            draw.rectangle(box, fill=accent)
            draw.text((e.x + 6, e.y + 4), e.text, fill=(255, 255, 255), font=font)
        elif e.kind == "icon":
            draw.ellipse(box, outline=ink, width=2)
        else:
            if e.kind == "text_field":
                draw.rectangle(box, outline=ink)
            draw.text((e.x + 3, e.y + 3), e.text, fill=ink, font=font)
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path)


def _instruction(e: Element) -> str:
    return f"Click on the {e.text} icon" if e.kind == "icon" else f"Click on the '{e.text}' {e.kind}"


def _code_element(sample_id: str, j: int, e: Element, width: int, height: int) -> dict[str, Any]:
    return {"id": f"{sample_id}_elem_{j:03d}", "bbox": [e.x / width, e.y / height, e.w / width, e.h / height],
            "text": e.text, "element_type": e.kind, "instruction": _instruction(e)}


def _docs_element(sample_id: str, j: int, e: Element, width: int, height: int) -> dict[str, Any]:
    return {"id": f"{sample_id}_elem_{j:03d}",
            "bbox": [e.x / width, e.y / height, (e.x + e.w) / width, (e.y + e.h) / height],
            "text": e.text, "type": e.kind,
            "click_point": [(e.x + e.w / 3) / width, (e.y + e.h / 2) / height]}


def write_annotations(root: Path, form: Literal["code", "docs"] = "code", *, screens: int = 2,
                      size: tuple[int, int] = DEFAULT_SIZE, dataset: str = "curated",
                      file_name: str = "annotations.json") -> Path:
    """Draw ``screens`` screenshots under ``root/samples`` and write the annotation JSON in
    ``form``; returns the JSON's path. Screen ``i`` has id ``sample_{i:03d}``, the elements
    of :func:`layout`, theme light/dark alternating and difficulty ``easy``."""
    if form not in ("code", "docs"):
        raise ValueError(f"form must be 'code' or 'docs', got {form!r}")
    width, height = size
    samples: list[dict[str, Any]] = []
    for i in range(screens):
        sid, theme, elements = f"sample_{i:03d}", _THEMES[i % 2], layout(i)
        rel = f"samples/{i + 1:03d}.png"
        draw_screen(root / rel, elements, size, theme)
        if form == "code":
            samples.append({"id": sid, "image_path": rel, "width": width, "height": height,
                            "elements": [_code_element(sid, j, e, width, height) for j, e in enumerate(elements)],
                            "metadata": {"difficulty": "easy", "theme": theme, "num_elements": len(elements)}})
        else:
            samples.append({"id": sid, "image": rel, "width": width, "height": height,
                            "elements": [_docs_element(sid, j, e, width, height) for j, e in enumerate(elements)]})
    data: dict[str, Any] = ({"name": dataset, "version": "1.0", "metadata": {"num_samples": screens}}
                            if form == "code" else {"version": "1.0", "dataset": dataset})
    data["samples"] = samples
    path = root / file_name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def write_recorded(root: Path, *, frames: int = 2, size: tuple[int, int] = DEFAULT_SIZE,
                   missing_box: bool = False) -> Path:
    """A recorded session: ``frame_{n:04d}.png`` and ``clicks.jsonl`` with one click per
    element of :func:`layout` (centre click, pixel box); returns the log's path. With
    ``missing_box`` the last line has no ``bbox`` (a person has not drawn it yet)."""
    lines: list[dict[str, Any]] = []
    for i in range(frames):
        name, elements = f"frame_{i + 1:04d}.png", layout(i)
        draw_screen(root / name, elements, size, "light")
        for e in elements:
            lines.append({"image": name, "click_xy": [e.x + e.w // 2, e.y + e.h // 2], "label": e.text,
                          "type": e.kind, "bbox": [e.x, e.y, e.x + e.w, e.y + e.h]})
    if missing_box and lines:
        del lines[-1]["bbox"]
    path = root / "clicks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
