"""The PNG encoder of the OpenAI wire: a decoded image (a generator's) as PNG bytes, fast.

Only :func:`~pytest_uiground.models.openai.wire.encode_image` needs it: an image that exists
only as pixels must travel to an OpenAI-compatible server as a PNG data URL, and at 32
requests in flight the encoding is on every request's path. Moved here from
``record/image.py``, which keeps the plain :func:`~pytest_uiground.record.image.encode_png`
that the rest of the package uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL import Image

FAST_PNG_LEVEL = 1
"""Compression level of :func:`encode_png_fast` (measured in ``perf/bench_openai.py``)."""


STRIP_ROWS = 64
"""Rows filtered and compressed at a time by :func:`encode_png_fast`."""


def _compressor() -> Any:
    """A streaming zlib-format compressor at :data:`FAST_PNG_LEVEL`: ISA-L's (the ``isal``
    package, in the ``openai`` extra) where installed, else the standard library's.

    Both write the zlib format PNG's IDAT holds and both release the GIL. At level 1 on
    the "Up"-filtered rows of a 1920x1080 screen, ISA-L takes 0.5-1.5 ms where zlib
    takes 8-20 ms for about the same size (``perf/bench_openai.py``), which is what
    brings a decoded image's encoding under the 5 ms issue 16 asks for.
    """
    try:
        from isal import isal_zlib
    except ImportError:
        import zlib

        return zlib.compressobj(FAST_PNG_LEVEL)
    return isal_zlib.compressobj(FAST_PNG_LEVEL)


def _raw_encoder_factory() -> Callable[..., Any] | None:
    """Pillow's encoder factory (private, but what ``Image.tobytes`` and ``ImageFile._save`` call)."""
    from PIL import Image

    factory = getattr(Image, "_getencoder", None)
    return factory if callable(factory) else None


def _strip_reader(rgb: Image.Image) -> Callable[[int, int], bytes]:
    """``(top, rows) -> bytes``: packed RGB rows of ``rgb``, read straight from the image.

    Pillow's raw encoder is pointed at the strip itself (``setimage`` with the strip's
    extent, as ``ImageFile._save`` does for a tile), which reads the rows in one pass;
    ``crop(...).tobytes()`` first copies the strip into a new image, then packs it in
    64 KB pieces, 2-3 ms of the 4 ms a 1080p screen took. Where the encoder is not
    available (a future Pillow), the crop is the fallback.
    """
    width = rgb.width

    def cropped(top: int, n: int) -> bytes:
        return rgb.crop((0, top, width, top + n)).tobytes()

    getencoder = _raw_encoder_factory()
    if getencoder is None:
        return cropped
    rgb.load()
    core = rgb.im

    def direct(top: int, n: int) -> bytes:
        encoder = getencoder("RGB", "raw", ("RGB", 0, 1))
        encoder.setimage(core, (0, top, width, top + n))
        parts = []
        while True:
            _, status, data = encoder.encode(width * 3 * n + 1)
            parts.append(data)
            if status:
                break
        if status < 0:
            raise ValueError(f"Pillow's raw encoder failed with status {status}")
        return b"".join(parts)

    return direct


def encode_png_fast(img: Image.Image) -> bytes:
    """A lossless RGB PNG of ``img``, written for speed rather than size.

    For images that exist only as pixels (a generator's) and must travel as PNG (an
    HTTP model). Pillow's encoder tries all five PNG row filters on every row (the
    "adaptive" choice), which costs more than the compression itself at level 1; here
    every row uses the "Up" filter (the difference with the row above, one vectorized
    subtraction: screenshots repeat rows, so it leaves long runs of zeros) and the rows
    are compressed at level 1 by :func:`_compressor`.

    The image is read, filtered and compressed :data:`STRIP_ROWS` rows at a time rather
    than whole: two fresh 6 MB buffers per call cost ~1,700 page faults, 5-8 ms on the
    virtual machines measured here (more than the encoding itself), where 64-row strips
    reuse the same small blocks. Measured on a 1920x1080 synthetic screen: 2-3 ms with
    ISA-L, against 18 ms for Pillow at level 1 and 28-49 ms at its default level 6, at
    the size of Pillow's level 1.
    """
    import struct
    import zlib

    import numpy as np

    rgb = img if img.mode == "RGB" else img.convert("RGB")
    width, height = rgb.size
    stride = width * 3
    deflate = _compressor()
    strip = np.empty((STRIP_ROWS, stride + 1), dtype=np.uint8)
    strip[:, 0] = 2  # filter type "Up"
    parts: list[bytes] = []
    above: Any = None  # the last row of the previous strip
    read = _strip_reader(rgb)
    for top in range(0, height, STRIP_ROWS):
        n = min(STRIP_ROWS, height - top)
        rows = np.frombuffer(read(top, n), dtype=np.uint8).reshape(n, stride)
        out = strip[:n]
        if above is None:
            out[0, 1:] = rows[0]
        else:
            np.subtract(rows[0], above, out=out[0, 1:])
        np.subtract(rows[1:], rows[:-1], out=out[1:, 1:])  # uint8 arithmetic wraps modulo 256, as PNG's does
        parts.append(deflate.compress(out.data.cast("B") if n == STRIP_ROWS else out.tobytes()))
        above = rows[-1]
    parts.append(deflate.flush())
    idat = b"".join(parts)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(body, zlib.crc32(kind)))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    return b"".join((b"\x89PNG\r\n\x1a\n", chunk(b"IHDR", header), chunk(b"IDAT", idat), chunk(b"IEND", b"")))
