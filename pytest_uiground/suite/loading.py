"""The loader interface: suite.toml names a loader and passes it options.

A loader returns the suite's samples without decoding any image: it runs at
collection, on the controller and again on every xdist worker, so it must be cheap
and deterministic.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pytest_uiground import registry
from pytest_uiground.record import image as image_mod
from pytest_uiground.record.files import hex_digest
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target, check_sample_ids
from pytest_uiground.record.sample import safe_id as safe_id  # loaders import it from here
from pytest_uiground.scoring import scorer as scoring
from pytest_uiground.scoring.scorer import Scorer
from pytest_uiground.suite.config import SuiteConfig, SuiteConfigError, check_against_samples, load_suite_config


@dataclass(frozen=True)
class LoaderContext:
    """What a loader may need beyond its own options."""

    suite_name: str
    suite_dir: Path
    data_path: Path | None = None


Loader = Callable[[Mapping[str, Any], LoaderContext], list[Sample]]


@dataclass(frozen=True)
class LoadedSuite:
    config: SuiteConfig
    samples: tuple[Sample, ...]
    scorer: Scorer
    quirks: tuple[str, ...] = ()  # records scored as the reference scores them though they look wrong

    @property
    def fingerprint(self) -> str:
        """Dataset fingerprint for provenance: the sample ids and the loader options."""
        ids = "".join(s.id + "\0" for s in self.samples)
        return hex_digest(repr(sorted(self.config.loader_options.items())) + ids, short=True)


class SuiteLoadError(Exception):
    pass


def check_loader_result(samples: object, who: str) -> None:
    """The loader contract: a list (or tuple) of :class:`Sample`. A generator would be used up by the
    first pass over it (the id check), leaving "no sample has the key ..." later; a dict per sample
    would fail deep inside with an AttributeError. Both are named here, with the expected type."""
    if not isinstance(samples, (list, tuple)):
        raise SuiteLoadError(f"{who} returned {type(samples).__name__}, expected a list of "
                             "pytest_uiground.record.sample.Sample (a generator is read only once: return "
                             "list(...) of it)")
    for i, s in enumerate(samples):
        if not isinstance(s, Sample):
            raise SuiteLoadError(f"{who} returned a {type(s).__name__} at index {i}, expected a "
                                 "pytest_uiground.record.sample.Sample (build one per record: Sample(id=..., "
                                 "image=..., instruction=..., target=...))")


@cache
def load_suite(path: Path, data_path: Path | None = None) -> LoadedSuite:
    """Parse suite.toml and run its loader once per process."""
    config = load_suite_config(path)
    loader = registry.resolve(registry.LOADER_GROUP, config.loader, what="loader", option=f"{path} [loader] name",
                              near=path.parent)
    ctx = LoaderContext(suite_name=config.name, suite_dir=path.parent, data_path=data_path)
    try:
        with collecting_quirks() as quirks:
            samples = loader(config.loader_options, ctx)
    except (ValueError, FileNotFoundError, OSError, ImportError) as exc:  # ImportError: an extra is missing
        raise SuiteLoadError(f"{path}: loader {config.loader!r} failed: {exc}") from exc
    check_loader_result(samples, f"{path}: loader {config.loader!r}")
    check_sample_ids(samples, source=str(path))
    if not samples:
        raise SuiteLoadError(f"{path}: loader {config.loader!r} found no samples; an empty suite would pass while "
                             "testing nothing: check --uiground-data-path and [loader.options]")
    try:
        check_against_samples(config, (s.meta for s in samples))
    except SuiteConfigError as exc:
        raise SuiteLoadError(str(exc)) from exc
    try:
        scorer = scoring.load(config.scorer)
    except registry.UnknownNameError as exc:
        raise SuiteLoadError(f"{path}: [scorer] name: {exc}") from exc
    return LoadedSuite(config=config, samples=tuple(samples), scorer=scorer, quirks=tuple(quirks))


def header_size(path: Path, sizes: dict[Path, tuple[int, int] | str], *, missing_hint: str = "",
                unreadable_hint: str = "") -> tuple[int, int] | str:
    """(width, height) from the image header (the pixels are not decoded), or why it cannot
    be read; cached per file in ``sizes``. Loaders call this at collection, so it must stay cheap."""
    if path not in sizes:
        try:
            sizes[path] = image_mod.header_size(path)
        except FileNotFoundError:
            sizes[path] = f"image {str(path)!r} does not exist{missing_hint}"
        except image_mod.ImageTooLarge as exc:
            sizes[path] = str(exc)
        except (OSError, ValueError, image_mod.ImageError) as exc:
            sizes[path] = f"image {str(path)!r} is not a readable image ({exc}){unreadable_hint}"
    return sizes[path]


def inside(root: Path, relative: str, field: str, start: Path | None = None) -> Path:
    """``root / relative``, refused with a :class:`RecordError` naming ``field`` unless it
    stays inside ``root``: an annotation must not send ``../../etc/passwd`` or an absolute
    path to the model (or to an API server). The check is on the text of the path (``..``
    resolved lexically), so a dataset folder whose images are symlinks the user made
    still works; only what the annotation says is distrusted. ``start``: the folder the
    path is relative to (an annotation file's folder inside ``root``), default ``root``."""
    if "\0" in relative or Path(relative).is_absolute() or Path(relative).drive:
        raise RecordError(field, f"{relative!r} is not a relative path inside the dataset folder {str(root)!r}")
    base = os.path.normpath(root)
    target = os.path.normpath(os.path.join(start if start is not None else base, relative))
    if os.path.commonpath([base, target]) != base:
        raise RecordError(field, f"{relative!r} points outside the dataset folder {str(root)!r}; image paths "
                          "must be relative paths inside it")
    return Path(target)


def image_in(root: Path, relative: Any, field: str) -> ImageRef:
    """The image a record names, inside ``root`` (see :func:`inside`); a RecordError otherwise."""
    if not isinstance(relative, str) or not relative:
        raise RecordError(field, f"expected a file name, got {relative!r}")
    return ImageRef.from_path(inside(root, relative, field))




class LayoutError(FileNotFoundError):
    """The dataset is not where it was looked for, or not in the published layout.

    A ``FileNotFoundError`` so that collection reports it as the suite's load error
    (with the suite file), before any sample runs.
    """


class RecordError(ValueError):
    """One record is malformed; the message names the field. Becomes an invalid sample."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"field {field!r}: {detail}")
        self.field, self.detail = field, detail

    def within(self, parent: str) -> RecordError:
        """The same problem, named from the enclosing record (``groups[2].answer``)."""
        return RecordError(f"{parent}.{self.field}", self.detail)


# -- helpers for loaders of published record files -----------------------------------------------
def check_options(options: Mapping[str, Any], known: Iterable[str]) -> None:
    """Unknown loader options are a suite.toml mistake: fail naming the known ones."""
    allowed = sorted(known)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"unknown loader option(s) {unknown}; known: {', '.join(allowed)}")


def read_records(path: Path) -> list[Any]:
    """A JSON list of records; anything else fails the whole suite naming the file.

    A file that is not a list cannot be split into per-record failures, so it is a layout
    error rather than an invalid sample.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}); re-download the file") from exc
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of records, got a {type(data).__name__}")
    return data


def numbers(value: Any, n: int, field: str) -> list[float]:
    """Exactly ``n`` finite numbers, or a :class:`RecordError` naming ``field``."""
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise RecordError(field, f"expected a list of {n} numbers, got {value!r}")
    out: list[float] = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
            raise RecordError(field, f"expected a list of {n} numbers, got {value!r}")
        out.append(float(v))
    return out


def clipped_box(x0: float, y0: float, x1: float, y1: float, field: str) -> Box:
    """A normalized box clipped to the image, or a :class:`RecordError`.

    Clipping never changes a hit (predicted points are clipped to [0, 1] too); a box with
    negative size or one lying wholly outside the image is refused, since no point could
    ever hit it and the record is wrong.
    """
    if x0 > x1 or y0 > y1:
        raise RecordError(field, f"box [{x0:g}, {y0:g}, {x1:g}, {y1:g}] has negative size")
    if x1 < 0 or y1 < 0 or x0 > 1 or y0 > 1:
        raise RecordError(field, f"box [{x0:g}, {y0:g}, {x1:g}, {y1:g}] lies outside the image")
    return Box(max(0.0, x0), max(0.0, y0), min(1.0, x1), min(1.0, y1))


def text_field(record: Mapping[str, Any], field: str) -> str:
    value = record.get(field)
    if not isinstance(value, str) or not value.strip():
        raise RecordError(field, f"expected non-empty text, got {value!r}")
    return value


_QUIRKS: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("uiground_quirks", default=None)


def quirk(where: str, detail: str) -> None:
    """Note one record the reference scores although it looks wrong (an empty instruction, an empty
    ``app_name``): it stays a sample, scored as there, and the note names it so that a user knows the
    figure includes it. Only what the reference cannot score either is an invalid sample.

    The note goes to the suite being loaded (:attr:`LoadedSuite.quirks`), which the terminal section
    and ``summary.json`` list; never a Python warning, which a project with ``filterwarnings =
    ["error"]`` turns into a collection error that stops the whole suite (issue 38)."""
    notes = _QUIRKS.get()
    if notes is not None:
        notes.append(f"{where}: {detail}")


@contextlib.contextmanager
def collecting_quirks() -> Iterator[list[str]]:
    """The quirks :func:`quirk` notes while the block runs (a loader's run)."""
    notes: list[str] = []
    token = _QUIRKS.set(notes)
    try:
        yield notes
    finally:
        _QUIRKS.reset(token)


def text_or_empty(record: Mapping[str, Any], field: str, where: str, why: str) -> str:
    """Text that may be empty: the reference sends an empty (or blank) string to the model and
    scores the answer, so it is a sample here too, with a :func:`quirk` warning naming the record;
    a missing field or a non-string is still a :class:`RecordError` (the reference cannot use it)."""
    value = record.get(field)
    if not isinstance(value, str):
        raise RecordError(field, f"expected text, got {value!r}")
    if not value.strip():
        quirk(where, f"field {field!r} is {value!r}; {why}")
    return value


def meta_field(record: Mapping[str, Any], field: str) -> str:
    """A slicing key as text; a missing one is a record error (its slice would be wrong)."""
    value = record.get(field)
    if value is None or isinstance(value, (dict, list)) or (isinstance(value, str) and not value):
        raise RecordError(field, f"expected a value, got {value!r}")
    return str(value)


def known_meta(record: Mapping[str, Any], fields: Iterable[str]) -> dict[str, str]:
    """The slicing keys a record does carry, read before validation so that an invalid
    sample still lands in its slices (and in ``where`` filters) as a wrong answer."""
    return {f: str(record[f]) for f in fields
            if record.get(f) is not None and not isinstance(record[f], (dict, list)) and str(record[f])}


#: The slice value of a field that a benchmark's reference reads as optional (``sample[k] if k in sample
#: else None``) on a record that lacks it: the sample lands in this slice, as the reference's tables key
#: such records ``None``, and a copy of a dataset without the field still loads (never "no sample has the key").
ABSENT = "none"


def optional_meta(record: Mapping[str, Any], fields: Iterable[str]) -> dict[str, str]:
    """Every one of ``fields``: the record's value, or :data:`ABSENT` where the record has none
    (the reference's ``None``); for the fields its reference reads with a default, never required."""
    known = known_meta(record, fields)
    return {f: known.get(f, ABSENT) for f in fields}




def candidates(data_path: Path | None, folder: str) -> list[Path]:
    return [] if data_path is None else [data_path, data_path / folder]


def invalid_sample(sid: str, image: ImageRef, task: str, meta: Mapping[str, str], reason: str) -> Sample:
    return Sample(id=sid, image=image, instruction="", task=task, target=Target(),  # type: ignore[arg-type]
                  meta=dict(meta), invalid=reason)


def unused_id(base: str, taken: set[str], suffix: str = "") -> str:
    """A fallback sample id for a record whose own id is missing or repeated: ``base + suffix``, else
    ``base-2 + suffix``, ``base-3 ...``, the first not in ``taken`` (which it joins). A loader puts every
    real id in ``taken`` first, so a fallback can never take a real sample's id (issue 34, hostile 10)."""
    sid, n = f"{base}{suffix}", 2
    while sid in taken:
        sid, n = f"{base}-{n}{suffix}", n + 1
    taken.add(sid)
    return sid
