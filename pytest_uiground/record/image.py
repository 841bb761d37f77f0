"""Lazy image references: collection must never decode an image.

A sample holds an :class:`ImageRef`; the pixels are produced only when a test runs
(``load()``), so collecting 50,000 samples stays cheap and a 10 GB dataset is never
held in memory. A missing or corrupt image raises :class:`ImageError` naming the
sample's image, which fails that one sample and nothing else.
"""

from __future__ import annotations

import hashlib
import io
import os
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image


class ImageError(Exception):
    """An image could not be read or decoded; the message names it and the fix."""


class ImageTooLarge(ImageError):
    """The image header declares more pixels than ``--uiground-max-pixels`` (a decompression bomb)."""


#: Pillow's own default; ``--uiground-max-pixels`` changes it for the session (:func:`set_pixel_limit`).
_LIMIT = {"pixels": 89_478_485}
_OPEN_LOCK = threading.Lock()


def set_pixel_limit(pixels: int) -> None:
    _LIMIT["pixels"] = int(pixels)


def pixel_limit() -> int:
    return _LIMIT["pixels"]


def open_checked(fp: str | Path | IO[bytes], name: str) -> Image.Image:
    """``Image.open`` (the header only) with the harness's pixel limit instead of Pillow's.

    Pillow warns above its limit (an error under ``filterwarnings = error``, which would
    stop collection) and raises above twice that; here an image over the configured limit
    is an :class:`ImageTooLarge` naming it, and Pillow's warning is silenced because the
    size was checked. The warnings filter is process-wide, hence the lock.
    """
    from PIL import Image

    limit = pixel_limit()
    try:
        with _OPEN_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            if limit > 2 * (Image.MAX_IMAGE_PIXELS or 0) and Image.MAX_IMAGE_PIXELS is not None:
                Image.MAX_IMAGE_PIXELS = limit  # a larger limit was asked for explicitly
            img = Image.open(fp)
    except Image.DecompressionBombError as exc:
        raise ImageTooLarge(f"image {name!r} is too large to open safely ({exc}); raise --uiground-max-pixels "
                            "if it is genuine") from exc
    w, h = img.size
    if w * h > limit:
        img.close()
        raise ImageTooLarge(f"image {name!r} declares {w}x{h} = {w * h} pixels, over the limit of {limit} "
                            "(a decompression bomb, or a very large screenshot); raise --uiground-max-pixels N "
                            "if it is genuine")
    return img


def header_size(path: Path) -> tuple[int, int]:
    """(width, height) from the header, pixels not decoded, the file closed; raises
    FileNotFoundError, :class:`ImageTooLarge`, OSError or ValueError."""
    from PIL import UnidentifiedImageError

    try:
        with open_checked(path, str(path)) as im:
            return int(im.size[0]), int(im.size[1])
    except UnidentifiedImageError as exc:
        raise ValueError(str(exc)) from exc


_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_digest(path: Path) -> str:
    """Content hash of a file, computed once per (path, size, mtime) in this process: the
    cache key of a prediction holds the image's content, so a screenshot replaced under
    the same name is predicted again instead of replaying a stale answer."""
    st = os.stat(path)
    key = (str(path), st.st_size, st.st_mtime_ns)
    found = _DIGESTS.get(key)
    if found is None:
        h = hashlib.blake2b(digest_size=16)
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        found = _DIGESTS[key] = h.hexdigest()
    return found


@dataclass(frozen=True)
class ImageRef:
    """Where a sample's image comes from, resolved only on :meth:`load`.

    Exactly one of ``path`` or ``source`` is set. ``source`` returns encoded bytes
    (a parquet cell, a zip member) or a ready PIL image (a generator). ``key`` is a
    stable name used in messages and caches. ``size`` is the (width, height) the
    annotation declares, when it does (ScreenSpot-Pro's ``img_size``) or the loader has
    already read the header: :meth:`dimensions` then opens no file at all.
    """

    key: str
    path: Path | None = None
    source: Callable[[], bytes | Image.Image] | None = field(default=None, compare=False)
    size: tuple[int, int] | None = field(default=None, compare=False)

    @classmethod
    def from_path(cls, path: str | Path, size: tuple[int, int] | None = None) -> ImageRef:
        p = Path(path)
        return cls(key=str(p), path=p, size=size)

    def dimensions(self) -> tuple[int, int]:
        """(width, height) without decoding a pixel: the declared ``size``, else the image header.

        Why: a replay needs only the size to turn a pixel answer into a normalized point, and
        decoding a 4K screenshot costs 50-100 ms where its header costs 0.3 ms (issue 25: a
        1,581-sample ScreenSpot-Pro replay took 32.5 s decoding). Raises :class:`ImageError`
        as :meth:`load` would, naming the image.
        """
        from PIL import UnidentifiedImageError

        if self.size is not None:
            return self.size
        try:
            if self.path is not None:
                if not self.path.is_file():
                    raise ImageError(f"image {self.key!r} does not exist; check the dataset path "
                                     "(e.g. --uiground-data-path) or re-download the dataset")
                with open_checked(self.path, self.key) as img:
                    return int(img.size[0]), int(img.size[1])
            if self.source is not None:
                raw = self.source()
                if not isinstance(raw, bytes):
                    return int(raw.size[0]), int(raw.size[1])
                with open_checked(io.BytesIO(raw), self.key) as img:
                    return int(img.size[0]), int(img.size[1])
        except ImageError:
            raise
        except (OSError, UnidentifiedImageError, ValueError) as exc:
            raise ImageError(f"image {self.key!r} could not be read ({exc}); the file is corrupt or not an "
                             "image") from exc
        raise ImageError(f"image {self.key!r} has neither a path nor a source")

    @classmethod
    def from_source(cls, key: str, source: Callable[[], bytes | Image.Image]) -> ImageRef:
        return cls(key=key, source=source)

    def content_key(self) -> str:
        """What identifies the pixels for a cache key: the file's content hash for a file
        (once per path, size and mtime), the stable ``key`` for a source (a dataset row,
        a generator), which does not change under the same name. Raises OSError when the
        file cannot be read (the sample then runs uncached and fails on its own)."""
        if self.path is not None:
            return f"sha:{file_digest(self.path)}"
        return f"key:{self.key}"

    def load(self) -> Image.Image:
        """Decode to an RGB PIL image, or raise :class:`ImageError`."""
        from PIL import Image, UnidentifiedImageError

        try:
            if self.path is not None:
                if not self.path.is_file():
                    raise ImageError(
                        f"image {self.key!r} does not exist; check the dataset path "
                        "(e.g. --uiground-data-path) or re-download the dataset"
                    )
                img: Image.Image = open_checked(self.path, self.key)
            elif self.source is not None:
                raw = self.source()
                img = raw if isinstance(raw, Image.Image) else open_checked(io.BytesIO(raw), self.key)
            else:
                raise ImageError(f"image {self.key!r} has neither a path nor a source")
            try:
                img.load()
            except BaseException:
                img.close()  # a truncated file must not leak its handle (a ResourceWarning later)
                raise
        except ImageError:
            raise
        except (OSError, UnidentifiedImageError, ValueError) as exc:
            raise ImageError(
                f"image {self.key!r} could not be decoded ({exc}); the file is corrupt or not an image"
            ) from exc
        if img.mode != "RGB" or getattr(img, "fp", None) is not None:
            # An animated GIF (or any multi-frame file) keeps its file open after load() for seeking
            # to other frames; the RGB copy is detached and the original closed, or its handle would
            # leak (a ResourceWarning, an error under filterwarnings = error).
            out = img.convert("RGB")
            img.close()
            return out
        return img


def image_digest(img: Image.Image) -> str:
    """Content hash of decoded pixels: the cache key for per-image work such as OCR."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{img.mode}:{img.size}".encode())
    h.update(img.tobytes())
    return h.hexdigest()


def encode_png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()
