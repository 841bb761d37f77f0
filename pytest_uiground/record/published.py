"""Others' published per-sample runs, read in place: one reader per layout, the layout told by the file.

Why: model makers and harness authors publish per-sample logs in their harness's own layout, not in
the replay format, and copying them into a hand-written replay file loses what a comparison needs:
the authors' own reading of each answer and their verdict. A log is read as it was published
(gzipped or not) and its records are matched to a suite's samples here (:func:`match`); what each
record holds decides how it can be scored (:mod:`pytest_uiground.run.against`,
:mod:`pytest_uiground.report.compare`).

The layouts (each reader cites the script that writes it):

* ``replay``: JSON lines ``{"sample_id", "output"}`` (:mod:`pytest_uiground.models.offline.replay`
  reads it): answers only, neither the authors' reading nor a verdict. :func:`layout_of` names it; the
  replay module reads it.
* ``screenspot-script``: what ``eval_screenspot_pro.py`` of likaixin2000/ScreenSpot-Pro-GUI-Grounding
  (and its forks, for ScreenSpot-v2 too) writes: a JSON object whose ``details`` hold one record per
  sample: ``img_path``, ``prompt_to_evaluate``, ``raw_response``, ``pred`` (the parsed point in pixels
  of the screenshot, null when unreadable) and ``correctness`` (``correct``, ``wrong``,
  ``wrong_format``); or the same records one per line (microsoft/OmniParser
  ``eval/logs_sspro_omniv2.json``, ``raw_response`` an object there).
* ``gelato-eval``: mlfoundations/Gelato ``evaluation/logs/grounding_eval_*.json``: a JSON object whose
  ``sample_results`` hold ``img_filename``, ``instruction``, ``response``, ``predicted_click``
  (pixels of the original screenshot; null on a refusal or an unreadable answer) and ``is_correct``.

Neither log carries a sample id (the ScreenSpot-v2 forks' ``id`` is the record's index in its split
file, not a dataset id): records are matched to samples by the screenshot's file name and the
instruction, the k-th record of a pair to the k-th sample of it (ScreenSpot-v2 holds one pair twice).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_uiground.record import jsontext

REPLAY = "replay"
SCREENSPOT_SCRIPT = "screenspot-script"
GELATO_EVAL = "gelato-eval"
LAYOUTS = {
    REPLAY: 'JSON lines {"sample_id", "output"} (--uiground-predictions\' format)',
    SCREENSPOT_SCRIPT: "eval_screenspot_pro.py's log (likaixin2000/ScreenSpot-Pro-GUI-Grounding): "
                       "{\"details\": [{img_path, prompt_to_evaluate, raw_response, pred, correctness}]}, or "
                       "those records one per line",
    GELATO_EVAL: "Gelato's grounding_eval log (mlfoundations/Gelato evaluation/logs): {\"sample_results\": "
                 "[{img_filename, instruction, response, predicted_click, is_correct}]}",
}
#: The refusal answer of Gelato's refusal prompt (its logs' ``response`` is the word alone).
_REFUSAL_WORDS = ("refusal", "refuse")


class PublishedError(ValueError):
    """A file that is no published run this module reads; the message names the file, the record and the fix."""


@dataclass(frozen=True)
class Answer:
    """One published record: what it answered, how its authors read and judged it, and its sample's keys."""

    record: int  # 1-based position in the file (a line for JSON lines)
    raw: str
    image: str | None = None  # the screenshot's path as the log wrote it
    instruction: str | None = None
    point: tuple[float, float] | None = None  # the authors' reading, pixels of the original screenshot
    refused: bool = False  # the authors' reading is "the element is not there"
    verdict: bool | None = None  # the authors' own verdict

    @property
    def image_name(self) -> str | None:
        return None if self.image is None else self.image.replace("\\", "/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Published:
    path: Path
    layout: str
    answers: tuple[Answer, ...]
    sha256: str


@dataclass(frozen=True)
class SampleKey:
    """What a sample is known by in a published log: the screenshot's file name and the instruction (None
    where unknown), beside the suite's id."""

    sample_id: str
    image_name: str | None = None
    instruction: str | None = None


def _text(path: Path) -> tuple[str, str]:
    """The file's text (gunzipped when it is gzip) and the sha256 of its bytes as stored."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PublishedError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    sha256 = hashlib.sha256(raw).hexdigest()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise PublishedError(f"{path}: a damaged gzip file ({exc}); published logs are read as they were "
                                 "published: download it again") from None
    try:
        return raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8"), sha256
    except UnicodeDecodeError as exc:
        raise PublishedError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _unknown(path: Path, found: str) -> PublishedError:
    known = "; ".join(f"{name}: {what}" for name, what in LAYOUTS.items())
    return PublishedError(f"{path}: not a published run in a layout this reads ({found}). Known layouts: {known}. "
                          'Convert it to replay JSON lines {"sample_id": ..., "output": "..."}')


def _records(path: Path, text: str) -> tuple[str, list[Any]]:
    """The layout and its records, told by the file's shape."""
    try:
        whole = jsontext.loads(text)
    except (ValueError, RecursionError):
        whole = None
    if isinstance(whole, dict):
        for key, layout in (("sample_results", GELATO_EVAL), ("details", SCREENSPOT_SCRIPT)):
            if isinstance(whole.get(key), list):
                return layout, list(whole[key])
    elif whole is not None:
        raise _unknown(path, f"one JSON {type(whole).__name__}")
    records: list[Any] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = jsontext.loads(line)
        except (ValueError, RecursionError) as exc:
            if not records:
                raise _unknown(path, f"line {n} is not JSON: {exc}") from None
            raise PublishedError(f"{path}:{n}: not a JSON record ({exc}); the file's earlier lines are") from None
        records.append(rec)
    first = records[0] if records else None
    if isinstance(first, dict) and "sample_id" in first and "output" in first:
        return REPLAY, records
    if isinstance(first, dict) and "img_path" in first and "raw_response" in first:
        return SCREENSPOT_SCRIPT, records
    found = "no records" if first is None else (
        f"{'JSON lines whose first record' if len(records) > 1 else 'a JSON object'} has the keys "
        + ", ".join(map(repr, list(first)[:8]))
        if isinstance(first, dict) else f"JSON lines of {type(first).__name__}")
    raise _unknown(path, found)


def _field(path: Path, n: int, rec: Mapping[str, Any], key: str, kinds: type | tuple[type, ...]) -> Any:
    if key not in rec:
        raise PublishedError(f"{path}, record {n}: no {key!r} field; a published log's records keep every field "
                             "its script wrote: read the file as published")
    value = rec[key]
    if not isinstance(value, kinds):
        raise PublishedError(f"{path}, record {n}: {key!r} is {value!r}, not "
                             + " or ".join(k.__name__ for k in (kinds if isinstance(kinds, tuple) else (kinds,))))
    return value


def _point(path: Path, n: int, key: str, value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    if (isinstance(value, list | tuple) and len(value) == 2
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)):
        return float(value[0]), float(value[1])
    raise PublishedError(f"{path}, record {n}: {key!r} is {value!r}, not a point [x, y] in pixels or null")


def _screenspot(path: Path, n: int, rec: Mapping[str, Any]) -> Answer:
    """One ``details`` record (``eval_screenspot_pro.py``: ``pred`` is the parsed point times the image size,
    None on ``wrong_format``)."""
    raw = _field(path, n, rec, "raw_response", (str, dict, list, type(None)))
    correctness = _field(path, n, rec, "correctness", str)
    if correctness not in ("correct", "wrong", "wrong_format"):
        raise PublishedError(f"{path}, record {n}: 'correctness' is {correctness!r}, not correct, wrong or "
                             "wrong_format")
    return Answer(record=n, raw=raw if isinstance(raw, str) else json.dumps(raw),
                  image=_field(path, n, rec, "img_path", str),
                  instruction=_field(path, n, rec, "prompt_to_evaluate", str),
                  point=_point(path, n, "pred", rec.get("pred")), verdict=correctness == "correct")


def _gelato(path: Path, n: int, rec: Mapping[str, Any]) -> Answer:
    """One ``sample_results`` record: ``predicted_click`` is None on a refusal (the response the word alone) and
    on an answer the authors could not read."""
    response = _field(path, n, rec, "response", (str, type(None))) or ""
    point = _point(path, n, "predicted_click", rec.get("predicted_click"))
    refused = point is None and response.strip().strip(".").lower() in _REFUSAL_WORDS
    return Answer(record=n, raw=response, image=_field(path, n, rec, "img_filename", str),
                  instruction=_field(path, n, rec, "instruction", str), point=point, refused=refused,
                  verdict=_field(path, n, rec, "is_correct", bool))


def layout_of(path: Path) -> str:
    """The file's layout (:data:`LAYOUTS`); raises :class:`PublishedError` for any other file."""
    return _records(path, _text(path)[0])[0]


def read(path: Path) -> Published:
    """A published log's answers (not the replay layout: :mod:`~pytest_uiground.models.offline.replay` reads it).
    Every record must read: a record dropped would become a sample "without a pair", blaming nobody."""
    text, sha256 = _text(path)
    layout, records = _records(path, text)
    if layout == REPLAY:
        raise PublishedError(f"{path}: replay JSON lines, read by the replay reader, not as a published log")
    reader = _gelato if layout == GELATO_EVAL else _screenspot
    answers = []
    for n, rec in enumerate(records, 1):
        if not isinstance(rec, dict):
            raise PublishedError(f"{path}, record {n}: expected a JSON object, got {type(rec).__name__}")
        answers.append(reader(path, n, rec))
    return Published(path, layout, tuple(answers), sha256)


def match(answers: Sequence[Answer], keys: Iterable[SampleKey]) -> tuple[dict[str, Answer], list[Answer]]:
    """Each sample's answer (sample id → answer), and the answers matched to no sample.

    A record is known by its screenshot's file name and instruction (the logs keep no id): the k-th record
    of a (file name, instruction) pair goes to the k-th sample of that pair, in the order given. A sample
    whose file name is unknown (a report that does not name it) is matched by its instruction alone, when
    exactly one record has it.
    """
    by_pair: dict[tuple[str | None, str | None], list[Answer]] = {}
    by_instruction: dict[str | None, list[Answer]] = {}
    for a in answers:
        by_pair.setdefault((a.image_name, _norm(a.instruction)), []).append(a)
        by_instruction.setdefault(_norm(a.instruction), []).append(a)
    used: set[int] = set()
    out: dict[str, Answer] = {}
    for key in keys:
        if key.instruction is None:
            continue
        if key.image_name is not None:
            pool = by_pair.get((key.image_name, _norm(key.instruction)), [])
        else:
            pool = by_instruction.get(_norm(key.instruction), [])
            pool = pool if len(pool) == 1 else []
        found = next((a for a in pool if a.record not in used), None)
        if found is not None:
            used.add(found.record)
            out[key.sample_id] = found
    return out, [a for a in answers if a.record not in used]


def _norm(text: str | None) -> str | None:
    return None if text is None else " ".join(text.split())
