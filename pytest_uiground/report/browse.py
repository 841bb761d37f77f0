"""The sample browser of ``report.html``: every sample in one filterable table, and a detail view.

A reviewer deciding whether a drop is real wants to *see* samples, not only the
worst few: the table lists all of them (id, slice values, outcome, score, latency,
a zoomed thumbnail), filters by outcome and slice and searches text; a click (or
``report.html#sample=<id>``) opens the detail view with the full screenshot, the
ground truth and prediction drawn over it, the zoomed crop, the instruction and
the raw output. A perturbed sample (``<id>@<spec>``, :mod:`pytest_uiground.perturb`) shows its
original's crop beside its own, each with its own target and answer drawn in its own image's
coordinates (a resized, letterboxed or photographed screen has its own), so a reviewer sees at
once whether the answer moved with the element; an original lists its variants. The table is
plain HTML (it reads without script); the per-sample data the detail view needs is one JSON
block, HTML-safe, read by the page's script (:mod:`~pytest_uiground.report.assets`). Raw model
output is untrusted text: it travels as JSON and is only ever inserted as text.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_uiground.perturb.derive import original_id
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import PERTURB_KEY
from pytest_uiground.report import gallery
from pytest_uiground.report.gallery import Images, Lookup
from pytest_uiground.report.markup import esc, fmt, is_number
from pytest_uiground.report.summary import SuiteSummary

if TYPE_CHECKING:
    from PIL import Image

    from pytest_uiground.record.sample import Sample

RAW_LIMIT = 4000  # characters of raw output in the page; samples.jsonl keeps all of it
MAX_SLICE_COLUMNS = 5
WRONG_OUTCOMES = (Outcome.KNOWN_FAILURE, Outcome.WRONG_NO_BASELINE, Outcome.WRONG_UPDATING)  # compared by ==
_NOTE_LIMIT = 300


_DATA_RE = re.compile(r'<script type="application/json" id="uig-data">(.*?)</script>', re.S)


def page_data(page: Path) -> dict[str, Any]:
    """The data a report.html carries (the ``uig-data`` block this module writes), for the readers of a
    finished page (``compare``'s instructions and published-run matching): ``{}`` when the page has none.
    Raises ``OSError`` for an unreadable file and ``ValueError`` for a damaged block."""
    found = _DATA_RE.search(page.read_text(encoding="utf-8"))
    doc = json.loads(found.group(1)) if found else {}
    return doc if isinstance(doc, dict) else {}


def rank(record: SampleResult) -> int:
    """Table order: regressions, errors, wrong answers, fixed, then the rest."""
    outcome = record.outcome
    if outcome == Outcome.REGRESSION:
        return 0
    if outcome == Outcome.UNSTABLE:
        return 2
    if outcome == Outcome.ERROR or record.error is not None:
        return 1
    if any(outcome == o for o in WRONG_OUTCOMES) or (not outcome and not record.right):
        return 2
    return 3 if outcome == Outcome.FIXED else 4


def outcome_of(record: SampleResult) -> str:
    if record.outcome:
        return record.outcome
    return "error" if record.error is not None else ("right" if record.right else "wrong")


def slice_keys(summary: SuiteSummary, records: Sequence[SampleResult]) -> list[str]:
    """The metadata keys shown as columns and filters: the metrics' slice keys, else the records' keys."""
    keys = [label.partition("=")[0] for m in summary.metrics.values() for label in m.slices]
    if not keys:
        keys = [k for r in records for k in r.meta]
    return list(dict.fromkeys(keys))[:MAX_SLICE_COLUMNS]


def _clip(text: str, limit: int = RAW_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f" ... (+{len(text) - limit} characters)"


def _jsonable(value: object) -> object:
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return round(value, 4) if is_number(value) and abs(value) != float("inf") else None
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return _clip(str(value), _NOTE_LIMIT)


#: The prediction fields each task kind is scored on; a model may fill others (a grounder's
#: default verdict), which say nothing about this sample and are left out.
RELEVANT = {"point": ("point", "box"), "detect": ("box", "point", "attempts"), "verdict": ("verdict",),
            "option": ("option",), "answer": ("answer",), "vqa": ("answer",)}


def prediction_fields(pred: Prediction | None, task: str) -> dict[str, Any]:
    """Only what the model returned that the task scores: a point task its point, a detector its box."""
    if pred is None:
        return {}
    out: dict[str, Any] = {"point": [round(v, 5) for v in pred.point] if pred.point is not None else None,
                           "box": gallery.box_list(pred.box), "verdict": pred.verdict, "option": pred.option,
                           "answer": pred.answer, "attempts": pred.attempts}
    keep = RELEVANT.get(task, tuple(out))
    return {k: v for k, v in out.items() if k in keep and v is not None and v == v}


def truth_fields(sample: Sample | None) -> dict[str, Any]:
    if sample is None:
        return {}
    t = sample.target
    out = {"box": gallery.box_list(t.box), "verdict": t.verdict, "option": t.option, "answer": t.answer,
           "polygon": list(t.polygon) if t.polygon is not None else None, "frame": t.frame,
           "refusal": True if t.refusal else None}
    return {k: v for k, v in out.items() if v is not None}


class _Screens:
    """One screenshot per image key, and a few decoded images kept for the crops.

    A drawn screen (:meth:`load`) is decoded, downscaled and stored; a linked one
    (:meth:`link`) is the dataset's own file, referenced from the page by a relative path
    and sized from the annotation or the header, so it costs no decoding at all.
    """

    def __init__(self, images: Images) -> None:
        self.images = images
        self.index: dict[str, int] = {}
        self.entries: list[dict[str, Any]] = []
        self.decoded: OrderedDict[str, Image.Image] = OrderedDict()

    def load(self, sample: Sample) -> tuple[Image.Image, int]:
        """The decoded image and its screen's index: the dataset's file, linked, where the page
        is beside its files and the image is a file (its downscaled copy would cost as much
        again as the decoding); else a downscaled copy stored in the page or beside it."""
        if not self.images.inline and sample.image.path is not None:
            return self.decode(sample), self.link(sample)[1]
        key = sample.image.key
        img = self.decode(sample)
        if key not in self.index or "linked" in self.entries[self.index[key]]:
            data, mime, size = gallery.screen(img)
            ext = "png" if mime == "image/png" else "jpg"
            n = self.index.get(key, len(self.entries))
            src = self.images.put(f"{gallery.FILES_DIR}/screens/{n}.{ext}", data, mime)
            entry = {"src": src, "w": size[0], "h": size[1], "W": img.width, "H": img.height}
            if key in self.index:
                self.entries[n] = entry
            else:
                self.index[key] = n
                self.entries.append(entry)
        return img, self.index[key]

    def decode(self, sample: Sample) -> Image.Image:
        key = sample.image.key
        img = self.decoded.get(key)
        if img is None:
            img = sample.image.load()
            img = img if img.mode == "RGB" else img.convert("RGB")
            self.decoded[key] = img
            if len(self.decoded) > 8:
                self.decoded.popitem(last=False)
        else:
            self.decoded.move_to_end(key)
        return img

    def link(self, sample: Sample) -> tuple[tuple[int, int], int]:
        """The screen as the dataset's file, for the page to draw lazily; raises when the image
        is not a file the page could reach (a parquet cell, a generator) or cannot be read."""
        key, path = sample.image.key, sample.image.path
        if key in self.index:
            entry = self.entries[self.index[key]]
            return (entry["W"], entry["H"]), self.index[key]
        if path is None:
            raise LookupError("not drawn (only the first samples to look at are; this image is not a file the "
                              "page can show)")
        width, height = sample.image.dimensions()
        src = gallery.file_src(path, self.images.root)
        self.index[key] = len(self.entries)
        self.entries.append({"src": src, "w": width, "h": height, "W": width, "H": height, "linked": True})
        return (width, height), self.index[key]


def sample_entry(record: SampleResult, sample: Sample | None, screens: _Screens,
                 draw: bool = True) -> tuple[dict[str, Any], str]:
    """The detail view's data for one sample, and its crop's ``src`` ("" without an image).

    ``draw``: decode the screenshot and draw the crop now; otherwise the page draws both
    from the dataset's file when the sample is opened (:meth:`_Screens.link`).
    """
    entry: dict[str, Any] = {
        "id": record.id, "task": record.task, "meta": dict(record.meta), "outcome": outcome_of(record),
        "value": _jsonable(record.value), "correct": record.correct,
        "latency": "cached" if record.cache == "hit" else _jsonable(record.latency_ms),
        "format_error": record.format_error, "error": _clip(record.error) if record.error else None,
        "raw": _clip(record.raw), "pred": prediction_fields(record.prediction, record.task),
        "components": _jsonable(record.score.components), "notes": _jsonable(record.score.notes),
        "instruction": sample.instruction if sample is not None else None, "truth": truth_fields(sample),
        # the screenshot's file name: how others' published logs know a sample (compare, report/beside.py)
        "image": sample.image.path.name if sample is not None and sample.image.path is not None else None,
        # The input click of a detection sample; a grounding sample's click (a loader's leftover) is not drawn.
        "click": [round(v, 5) for v in sample.click] if sample is not None and sample.click is not None
        and sample.task == "detect" else None,
        "before": prediction_fields(record.before, record.task) if record.before is not None else None,
        "stability": record.stability.text() if record.stability is not None else None,
    }
    crop_src = ""
    if sample is None:
        entry["img_note"] = "image unavailable: the sample is not in the loaded suite"
    elif not draw:
        try:
            (w, h), index = screens.link(sample)
            x0, y0, x1, y1 = gallery.crop_rect(sample, record.prediction, w, h, record.before)
            entry.update(screen=index, rect=[round(v, 5) for v in (x0 / w, y0 / h, x1 / w, y1 / h)])
        except Exception as exc:  # any loader failure: the sample still shows its text
            entry["img_note"] = f"image unavailable: {exc}" if isinstance(exc, LookupError) else \
                f"image unavailable: {type(exc).__name__}: {exc}"
    else:
        try:
            img, index = screens.load(sample)
            data, mime, rect = gallery.crop(img, sample, record.prediction, record.before)
            ext = "png" if mime == "image/png" else "jpg"
            crop_src = screens.images.put(f"{gallery.FILES_DIR}/crops/{gallery.safe_name(record.id)}.{ext}",
                                          data, mime, keep_file=True)
            entry.update(screen=index, rect=[round(v, 5) for v in rect])
        except Exception as exc:  # any loader failure: the sample still shows its text
            entry["img_note"] = f"image unavailable: {type(exc).__name__}: {exc}"
    return entry, crop_src


def drawn_first(ordered: Sequence[SampleResult], cap: int) -> set[str]:
    """The samples whose pictures are drawn while the report is written: every one in a run of
    at most ``cap`` samples; otherwise the first ``cap`` a person looks at (the table's order:
    regressions, errors, wrong answers, fixed), never a passing one. The rest cost nothing
    here: the page draws them from the dataset's file when opened (issue 25: a crop of every
    one of 1,581 4K screenshots took 2 minutes, longer than the run)."""
    if len(ordered) <= cap:
        return {r.id for r in ordered}
    return {r.id for r in ordered if rank(r) < 4}.intersection(r.id for r in ordered[:cap])


def link_variants(ordered: Sequence[SampleResult], entries: Sequence[dict[str, Any]]) -> None:
    """Each perturbed sample's entry names its original's index (``original``) and each original its
    variants' (``variants``), where both ran: the detail view puts their crops side by side."""
    index = {r.id: i for i, r in enumerate(ordered)}
    for i, r in enumerate(ordered):
        if PERTURB_KEY not in r.meta:
            continue
        j = index.get(original_id(r.id))
        if j is not None and j != i:
            entries[i]["original"] = j
            entries[j].setdefault("variants", []).append(i)


def data_json(doc: Mapping[str, Any]) -> str:
    """JSON safe inside ``<script type="application/json">`` (no ``</script>``, no ``<!--``)."""
    text = json.dumps(doc, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _row(i: int, record: SampleResult, keys: Sequence[str], crop_src: str, lazy: bool, instruction: str) -> str:
    outcome = outcome_of(record)
    thumb = (f'<img class="thumb" alt="" src="{esc(crop_src)}"{" loading=lazy" if lazy else ""}>'
             if crop_src else "")
    latency = record.latency_ms if record.latency_ms is not None and is_number(record.latency_ms) else None
    cells = [f'<td class="t">{thumb}</td>', f'<td class="l id" title="{esc(record.id)}">{esc(record.id)}</td>',
             f'<td class="l instr" title="{esc(instruction)}">{esc(_clip(instruction, 80))}</td>',
             f'<td class="l"><span class="tag {esc(outcome)}">{esc(outcome)}</span></td>',
             f"<td>{esc(fmt(record.value, digits=1))}</td>",
             # an answer from the prediction cache was not timed in this run: its stored time would read as one
             "<td>cached</td>" if record.cache == "hit" else f"<td>{esc(fmt(latency, digits=1))}</td>"]
    cells += [f'<td class="l">{esc(record.meta.get(k, ""))}</td>' for k in keys]
    return f'<tr data-i="{i}" data-o="{esc(outcome)}" id="row-{i}">' + "".join(cells) + "</tr>"


def _filters(records: Sequence[SampleResult], keys: Sequence[str]) -> str:
    counts: dict[str, int] = {}
    for r in records:
        counts[outcome_of(r)] = counts.get(outcome_of(r), 0) + 1
    opts = "".join(f'<option value="{esc(o)}">{esc(o)} ({n})</option>' for o, n in sorted(counts.items()))
    parts = [f'<label>outcome <select id="f-outcome"><option value="">all ({len(records)})</option>'
             f'<option value="!ok">not passing</option>{opts}</select></label>']
    for k in keys:
        values = sorted({r.meta[k] for r in records if k in r.meta})
        vopts = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
        parts.append(f'<label>{esc(k)} <select class="f-slice" data-key="{esc(k)}"><option value="">all</option>'
                     f"{vopts}</select></label>")
    parts.append('<label>search <input id="f-text" type="search" placeholder="id, instruction, raw output">'
                 '</label><span id="f-count" class="note"></span>')
    return '<div class="filters">' + "".join(parts) + "</div>"


def browser(summary: SuiteSummary, records: Sequence[SampleResult], lookup: Lookup | None, images: Images) -> str:
    """The "Samples" section: filters, the table of every sample, the detail view and its data."""
    if not records:
        return '<p class="note">no samples</p>'
    keys = slice_keys(summary, records)
    ordered = sorted(records, key=lambda r: (rank(r), r.id))
    screens = _Screens(images)
    entries: list[dict[str, Any]] = []
    rows: list[str] = []
    # A page of inline images is one file to mail: every picture is drawn into it. Beside-the-page
    # runs (large ones) draw only the samples looked at first; the page draws the rest itself.
    drawn = drawn_first(ordered, len(ordered) if images.inline else gallery.DRAWN_MAX)
    for i, r in enumerate(ordered):
        entry, crop_src = sample_entry(r, lookup(r.id) if lookup is not None else None, screens, r.id in drawn)
        entries.append(entry)
        rows.append(_row(i, r, keys, crop_src, lazy=not images.inline, instruction=entry["instruction"] or ""))
        images.tick(i + 1, len(ordered), len(drawn))
    link_variants(ordered, entries)
    head = ('<tr><th class="t">zoom</th><th class="l id">id</th><th class="l">instruction</th><th class="l">outcome'
            '</th><th>score</th><th>ms</th>' + "".join(f'<th class="l">{esc(k)}</th>' for k in keys) + "</tr>")
    # The blue swatch only where a sample has an input click (detection tasks): point suites have none.
    click = '<span class="sw b" data-mark="m-click"></span>input click ' if any(e["click"] for e in entries) else ""
    # The purple swatch only where a changed sample carries the baseline's answer.
    before = ('<span class="sw p" data-mark="m-before"></span>baseline\'s answer '
              if any(e["before"] for e in entries) else "")
    # The dashed amber box on the screenshot is the region the zoomed crop shows (issue 39: it had no legend).
    crop = ('<span class="sw c" data-mark="m-crop"></span>zoomed area (the crop beside it) '
            if any(e.get("rect") for e in entries) else "")
    legend = ('<p class="legend"><span class="sw g" data-mark="m-truth"></span>ground truth '
              '<span class="sw r" data-mark="m-pred"></span>prediction '
              f'{click}{before}{crop}&nbsp; Click a row (or use j/k) for the screenshot, the zoomed crop, the '
              "instruction and the raw output.</p>")
    doc = {"keys": keys, "screens": screens.entries, "samples": entries}
    return (legend + _filters(records, keys)
            + '<div class="browse"><div class="tablewrap"><table id="samples" class="sortable"><thead>' + head
            + "</thead><tbody>"
            + "\n".join(rows) + '</tbody></table></div><section id="detail" class="detail" aria-live="polite">'
            '<p class="note">Select a sample.</p></section></div>'
            + f'<script type="application/json" id="uig-data">{data_json(doc)}</script>')


def inline_images(records: Iterable[SampleResult]) -> bool:
    return sum(1 for _ in records) <= gallery.INLINE_MAX_SAMPLES
