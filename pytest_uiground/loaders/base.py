"""The loader interface: suite.toml names a loader and passes it options.

A loader returns the suite's samples without decoding any image: it runs at
collection, on the controller and again on every xdist worker, so it must be cheap
and deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sample import Sample


@dataclass(frozen=True)
class LoaderContext:
    """What a loader may need beyond its own options."""

    suite_name: str
    suite_dir: Path
    data_path: Path | None = None


Loader = Callable[[Mapping[str, Any], LoaderContext], list[Sample]]


def header_size(path: Path, sizes: dict[Path, tuple[int, int] | str], *, missing_hint: str = "",
                unreadable_hint: str = "") -> tuple[int, int] | str:
    """(width, height) from the image header (the pixels are not decoded), or why it cannot
    be read; cached per file in ``sizes``. Loaders call this at collection, so it must stay cheap."""
    if path not in sizes:
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(path) as im:
                sizes[path] = (int(im.size[0]), int(im.size[1]))
        except FileNotFoundError:
            sizes[path] = f"image {str(path)!r} does not exist{missing_hint}"
        except (OSError, UnidentifiedImageError, ValueError) as exc:
            sizes[path] = f"image {str(path)!r} is not a readable image ({exc}){unreadable_hint}"
    return sizes[path]
