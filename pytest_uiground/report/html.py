"""``report.html``: one self-contained page per suite run, for people.

``summary.json`` is for machines and the terminal table scrolls out of the CI log;
a reviewer deciding whether a drop is real wants the numbers with their intervals,
a picture of where accuracy sits by slice, and above all to *see* the samples that
regressed: the screenshot, the ground-truth box and where the model clicked.

The page is a single file (inline CSS, every image a ``data:`` URI, no script,
nothing fetched), so it can be attached to a CI run, mailed, or opened from disk
with no network. Plots use matplotlib's Agg canvas on a bare ``Figure`` (no pyplot
global state); matplotlib and PIL are imported inside the functions that draw, so
importing this module, and the plugin, stays cheap. Everything taken from the
summary or the model output is HTML-escaped: raw model output is untrusted text.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_uiground import stats
from pytest_uiground.baseline import atomic_write_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from PIL import Image

    from pytest_uiground.sample import Sample

Lookup = Callable[[str], "Sample | None"]
Interval = tuple[float, float]

THUMB_WIDTH = 480
THUMB_MAX_HEIGHT = 720
GALLERY_LIMIT = 30
RAW_LIMIT = 600
PNG_BUDGET = 200_000  # bytes; a larger (photographic) thumbnail is sent as JPEG if that is smaller
TRUTH_RGB = (0, 255, 0)
PREDICTION_RGB = (255, 0, 0)
CLICK_RGB = (0, 96, 255)
WRONG_OUTCOMES = frozenset({"known-failure", "wrong-no-baseline", "wrong-updating"})

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:1.5em;color:#1d1d1f;
background:#fff;line-height:1.35}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:right;white-space:nowrap}
th{background:#f4f4f6}td.l,th.l{text-align:left}tr.slice td.l{padding-left:1.6em;color:#444}
.FAIL{color:#b00020;font-weight:bold}.improved{color:#0a7d28;font-weight:bold}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:.15em 1em;font-size:.92em}
dl.meta dt{font-weight:600}dl.meta dd{margin:0;word-break:break-all}
img.plot{max-width:100%;display:block;margin:.5em 0}
.gallery{display:flex;flex-wrap:wrap;gap:1em}
.card{border:1px solid #ccc;border-radius:6px;padding:.6em;width:480px;margin:0;font-size:.88em}
.card img{max-width:100%;display:block}.card.text{background:#fafafa}
.card pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f6;padding:.4em;max-height:12em;overflow:auto}
.tag{display:inline-block;padding:0 .4em;border-radius:3px;background:#eee;font-weight:600}
.tag.regression,.tag.error{background:#fdd}.legend span{margin-right:1em}
.note{color:#666;font-size:.9em}
"""


# -- generic HTML and image helpers (also used by compare) --------------------------

def esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def page(title: str, body: str) -> str:
    """A complete HTML document: inline CSS, no script, nothing to fetch."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def fmt(value: object, signed: bool = False, digits: int = 2) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_interval(interval: object, signed: bool = False) -> str:
    if not isinstance(interval, (list, tuple)) or len(interval) != 2:
        return "-"
    return f"[{fmt(interval[0], signed)}, {fmt(interval[1], signed)}]"


def figure(width: float, height: float) -> Figure:
    """A matplotlib figure on its own Agg canvas (no pyplot, no global backend state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def figure_uri(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def img_tag(uri: str, alt: str, cls: str = "plot", extra: str = "") -> str:
    return f'<img class="{cls}" alt="{esc(alt)}" src="{uri}"{extra}>'


def bar_width(n_series: int) -> float:
    return 0.8 / max(1, n_series)


# -- numbers ------------------------------------------------------------------------

def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def split_slice(label: str) -> tuple[str, str]:
    key, _, value = label.partition("=")
    return key, value


def slice_interval(value: float, n: int, records: Sequence[Mapping[str, Any]]) -> Interval | None:
    """95% Wilson interval of one slice, which ``summary.json`` gives only as a value.

    Counted from the slice's own samples when they account for exactly the slice's
    value (the metric scores the samples' main outcome); otherwise from the value,
    when that is a whole number of successes (a binary component). A graded slice
    with no matching samples gets no interval rather than a wrong one.
    """
    if n <= 0 or not is_number(value):
        return None
    if len(records) == n and all(r.get("correct") is not None for r in records):
        mean = sum(float(r.get("value") or 0.0) for r in records) / n
        if abs(mean - value) < 1e-3:
            return stats.wilson_interval(sum(bool(r["correct"]) for r in records), n)
    successes = value * n / 100.0
    if abs(successes - round(successes)) <= 1e-6 * n + 1e-9:
        return stats.wilson_interval(round(successes), n)
    return None


def slice_records(records: Iterable[Mapping[str, Any]], label: str) -> list[Mapping[str, Any]]:
    key, value = split_slice(label)
    return [r for r in records if (r.get("meta") or {}).get(key) == value]


def latencies(records: Iterable[Mapping[str, Any]]) -> list[float]:
    """Per-sample latencies of samples that ran without error (as the summary's p50/p95)."""
    return [float(r["latency_ms"]) for r in records if is_number(r.get("latency_ms")) and r.get("error") is None]


def latency_percentiles(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    lat = summary.get("latency_ms")
    if isinstance(lat, Mapping) and is_number(lat.get("p50")) and is_number(lat.get("p95")):
        return float(lat["p50"]), float(lat["p95"])
    values = latencies(records)
    return stats.percentile(values, 50), stats.percentile(values, 95)


def comparison_for(summary: Mapping[str, Any], metric: str, label: str | None) -> Mapping[str, Any]:
    comps = summary.get("baseline_comparison") or {}
    found = comps.get(metric if label is None else f"{metric}.{label}")
    return found if isinstance(found, Mapping) else {}


def metrics_of(summary: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    metrics = summary.get("metrics") or {}
    return {str(k): v for k, v in metrics.items() if isinstance(v, Mapping)}


# -- header and tables ---------------------------------------------------------------

def header(summary: Mapping[str, Any]) -> str:
    prov = summary.get("provenance") or {}
    rows: list[tuple[str, object]] = [
        ("model", summary.get("model")),
        ("model fingerprint", _plain(summary.get("model_fingerprint"))),
        ("samples", summary.get("n_samples")),
        ("format errors", summary.get("format_errors", 0)),
        ("sample errors", len(summary.get("errors") or [])),
        ("regressed", len(summary.get("regressed") or [])),
        ("fixed", len(summary.get("fixed") or [])),
    ]
    rows += judge_rows(summary)
    shown = {"model": summary.get("model"), "model_fingerprint": summary.get("model_fingerprint"),
             "n_samples": summary.get("n_samples"), "judge": summary.get("judge")}
    rows += [(f"provenance: {k}", _plain(v)) for k, v in prov.items()
             if k != "packages" and v is not None and v != "" and not (k in shown and shown[k] == v)]
    if isinstance(prov.get("packages"), Mapping):
        rows.append(("packages", ", ".join(f"{k} {v}" for k, v in prov["packages"].items())))
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rows)
    return f"<h1>uiground report: {esc(summary.get('suite'))}</h1>\n<dl class=\"meta\">{items}</dl>"


def judge_rows(summary: Mapping[str, Any]) -> list[tuple[str, object]]:
    """For judged suites: who judged, unparseable replies and how stable the judge was."""
    judge = summary.get("judge") or (summary.get("provenance") or {}).get("judge")
    if judge is None:
        return []
    rows: list[tuple[str, object]] = [("judge", _plain(judge))]
    if summary.get("judge_parse_errors") is not None:
        rows.append(("judge parse errors", len(summary["judge_parse_errors"])))
    st = summary.get("judge_stability")
    if isinstance(st, Mapping) and st:
        brief = {k: (len(v) if isinstance(v, (list, tuple)) else v) for k, v in st.items()}
        rows.append(("judge stability", _plain(brief)))
    return rows


def _plain(value: object) -> object:
    return json.dumps(value, sort_keys=True) if isinstance(value, (Mapping, list)) else value


def metric_rows(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """Rows of (metric, slice, value, n, interval, baseline, delta, delta interval, verdict)."""
    rows: list[list[str]] = []
    for name, entry in metrics_of(summary).items():
        rows.append(_metric_row(name, None, entry.get("value"), entry.get("n"), entry.get("interval"),
                                comparison_for(summary, name, None)))
        slice_n = entry.get("slice_n") or {}
        for label, value in (entry.get("slices") or {}).items():
            n = int(slice_n.get(label, 0))
            interval = slice_interval(value, n, slice_records(records, label))
            rows.append(_metric_row(name, label, value, n, interval, comparison_for(summary, name, label)))
    return rows


def _metric_row(name: str, label: str | None, value: object, n: object, interval: object,
                comp: Mapping[str, Any]) -> list[str]:
    return [name, label or "(all)", fmt(value), str(n if n is not None else "-"), fmt_interval(interval),
            fmt(comp.get("baseline")), fmt(comp.get("delta"), signed=True),
            fmt_interval(comp.get("delta_interval"), signed=True), str(comp.get("verdict") or "-")]


def metrics_table(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> str:
    head = ("metric", "slice", "value", "n", "95% interval", "baseline", "delta", "delta 95% interval", "verdict")
    out = ["<table><tr>" + "".join(f'<th class="{"l" if i < 2 else ""}">{esc(h)}</th>'
                                   for i, h in enumerate(head)) + "</tr>"]
    for row in metric_rows(summary, records):
        cls = "slice" if row[1] != "(all)" else "all"
        cells = [f'<td class="l">{esc(row[0] if cls == "all" else "")}</td>', f'<td class="l">{esc(row[1])}</td>']
        cells += [f"<td>{esc(c)}</td>" for c in row[2:-1]]
        cells.append(f'<td class="{esc(row[-1])}">{esc(row[-1])}</td>')
        out.append(f'<tr class="{cls}">' + "".join(cells) + "</tr>")
    out.append("</table>")
    p50, p95 = latency_percentiles(summary, records)
    out.append(f'<p>latency per sample: p50 {fmt(p50, digits=1)} ms, p95 {fmt(p95, digits=1)} ms</p>')
    return "\n".join(out)


# -- plots --------------------------------------------------------------------------

def accuracy_plot(name: str, entry: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> str | None:
    """Bars of the metric per slice with 95% Wilson intervals; None for a metric without slices."""
    slices: Mapping[str, float] = entry.get("slices") or {}
    if not slices:
        return None
    labels = list(slices)
    values = [float(slices[k]) if is_number(slices[k]) else 0.0 for k in labels]
    slice_n = entry.get("slice_n") or {}
    lows, highs = [], []
    for label, v in zip(labels, values, strict=True):
        iv = slice_interval(v, int(slice_n.get(label, 0)), slice_records(records, label))
        lows.append(v - iv[0] if iv else 0.0)
        highs.append(iv[1] - v if iv else 0.0)
    fig = figure(min(14.0, 2.5 + 0.7 * len(labels)), 3.6)
    ax = fig.add_subplot()
    bars = ax.bar(range(len(labels)), values, yerr=[lows, highs], capsize=4, color="#4c78a8", ecolor="#333")
    ax.bar_label(bars, fmt="%.1f", padding=2, fontsize=8)
    if is_number(entry.get("value")):
        ax.axhline(float(entry["value"]), color="#e45756", linestyle="--", linewidth=1, label="overall")
        ax.legend(loc="lower right", fontsize=8)
    label_axes(ax, labels, f"{name} by slice (95% Wilson intervals)", "accuracy (%)")
    return img_tag(figure_uri(fig), f"{name} by slice")


def label_axes(ax: Any, labels: Sequence[str], title: str, ylabel: str) -> None:
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30 if len(labels) > 4 else 0, ha="right" if len(labels) > 4 else "center",
                       fontsize=8)
    ax.set_ylim(0, 110)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)


def latency_plot(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> str | None:
    values = latencies(records)
    if not values:
        return None
    p50, p95 = latency_percentiles(summary, records)
    fig = figure(6.5, 3.2)
    ax = fig.add_subplot()
    ax.hist(values, bins=min(40, max(5, 2 * int(math.sqrt(len(values))))), color="#72b7b2", edgecolor="#2d6a66")
    for q, v, style in (("p50", p50, "--"), ("p95", p95, ":")):
        if is_number(v):
            ax.axvline(v, color="#e45756", linestyle=style, label=f"{q} {v:.1f} ms")
    ax.set_xlabel("latency per sample (ms)")
    ax.set_ylabel("samples")
    ax.set_title(f"latency distribution ({len(values)} samples)", fontsize=10)
    ax.legend(fontsize=8)
    return img_tag(figure_uri(fig), "latency distribution")


def baseline_plot(name: str, entry: Mapping[str, Any], summary: Mapping[str, Any]) -> str | None:
    """Grouped bars baseline vs current, overall and per slice; None without baseline values."""
    labels: list[str] = []
    base: list[float] = []
    cur: list[float] = []
    for label in [None, *(entry.get("slices") or {})]:
        comp = comparison_for(summary, name, label)
        if is_number(comp.get("baseline")) and is_number(comp.get("value")):
            labels.append(label or "(all)")
            base.append(float(comp["baseline"]))
            cur.append(float(comp["value"]))
    if not labels:
        return None
    fig = figure(min(14.0, 2.5 + 0.9 * len(labels)), 3.6)
    ax = fig.add_subplot()
    w = bar_width(2)
    xs = range(len(labels))
    ax.bar([x - w / 2 for x in xs], base, w, label="baseline", color="#bab0ac")
    ax.bar([x + w / 2 for x in xs], cur, w, label="current", color="#4c78a8")
    ax.legend(fontsize=8, loc="lower right")
    label_axes(ax, labels, f"{name}: baseline vs current", "accuracy (%)")
    return img_tag(figure_uri(fig), f"{name} baseline vs current")


def plots(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> str:
    parts: list[str | None] = []
    for name, entry in metrics_of(summary).items():
        parts.append(accuracy_plot(name, entry, records))
    parts.append(latency_plot(summary, records))
    for name, entry in metrics_of(summary).items():
        parts.append(baseline_plot(name, entry, summary))
    shown = [p for p in parts if p]
    return "\n".join(shown) if shown else '<p class="note">nothing to plot</p>'


# -- gallery ------------------------------------------------------------------------

def gallery_rank(record: Mapping[str, Any]) -> int | None:
    """0 regression, 1 error, 2 wrong; None for a sample that needs no look."""
    outcome = record.get("outcome")
    if outcome == "regression":
        return 0
    if outcome == "error" or record.get("error") is not None:
        return 1
    if outcome in WRONG_OUTCOMES:
        return 2
    if not outcome:  # a record from before outcomes existed: judge it by its score
        right = record.get("correct")
        return None if (right if right is not None else float(record.get("value") or 0) >= 50) else 2
    return None


def gallery_records(records: Iterable[Mapping[str, Any]], limit: int = GALLERY_LIMIT) -> list[Mapping[str, Any]]:
    ranked = [(rank, str(r.get("id")), r) for r in records if (rank := gallery_rank(r)) is not None]
    ranked.sort(key=lambda t: (t[0], t[1]))
    return [r for _, _, r in ranked[:limit]]


def _pair(value: object, size: int) -> tuple[float, ...] | None:
    if not isinstance(value, (list, tuple)) or len(value) != size or not all(is_number(v) for v in value):
        return None
    return tuple(float(v) for v in value)


def draw_overlay(img: Image.Image, sample: Sample | None, prediction: Mapping[str, Any] | None) -> None:
    """Ground truth box in green, predicted box or point in red, the input click in blue (in place)."""
    from PIL import ImageDraw

    w, h = img.size
    draw = ImageDraw.Draw(img)
    truth = sample.target.box if sample is not None else None
    if truth is not None:
        draw.rectangle([truth.x0 * w, truth.y0 * h, truth.x1 * w, truth.y1 * h], outline=TRUTH_RGB, width=3)
    if sample is not None and sample.click is not None:
        cx, cy = sample.click.x * w, sample.click.y * h
        draw.ellipse([cx - 4, cy - 4, cx + 4, cy + 4], fill=CLICK_RGB)
    pred = prediction or {}
    box = _pair(pred.get("box"), 4)
    if box is not None:
        draw.rectangle([box[0] * w, box[1] * h, max(box[0], box[2]) * w, max(box[1], box[3]) * h],
                       outline=PREDICTION_RGB, width=2)
    point = _pair(pred.get("point"), 2)
    if point is not None:
        px, py = min(max(point[0], 0.0), 1.0) * (w - 1), min(max(point[1], 0.0), 1.0) * (h - 1)
        draw.line([px - 9, py, px + 9, py], fill=PREDICTION_RGB, width=2)
        draw.line([px, py - 9, px, py + 9], fill=PREDICTION_RGB, width=2)
        draw.ellipse([px - 6, py - 6, px + 6, py + 6], outline=PREDICTION_RGB, width=2)


def encode_thumbnail(img: Image.Image) -> str:
    """PNG (exact colours); JPEG instead when a photographic PNG would be large and JPEG is smaller."""
    png = io.BytesIO()
    img.save(png, format="PNG", optimize=True)
    data, mime = png.getvalue(), "image/png"
    if len(data) > PNG_BUDGET:
        jpg = io.BytesIO()
        img.save(jpg, format="JPEG", quality=85)
        if jpg.tell() < len(data):
            data, mime = jpg.getvalue(), "image/jpeg"
    return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")


def thumbnail(sample: Sample, prediction: Mapping[str, Any] | None) -> str:
    """The screenshot, at most ``THUMB_WIDTH`` wide, with the overlay drawn at that size."""
    img = sample.image.load().copy()
    img.thumbnail((THUMB_WIDTH, THUMB_MAX_HEIGHT))
    img = img if img.mode == "RGB" else img.convert("RGB")
    draw_overlay(img, sample, prediction)
    return encode_thumbnail(img)


def _prediction_text(pred: Mapping[str, Any]) -> str:
    shown = {k: pred[k] for k in ("point", "box", "verdict", "option", "answer") if pred.get(k) is not None}
    return json.dumps(shown) if shown else "nothing parsed"


def card(record: Mapping[str, Any], lookup: Lookup | None) -> str:
    sid = str(record.get("id"))
    sample = lookup(sid) if lookup is not None else None
    pred = record.get("prediction") or {}
    picture, note = "", ""
    if sample is not None:
        try:
            picture = img_tag(thumbnail(sample, pred), sid, cls="thumb", extra=f' data-id="{esc(sid)}"')
        except Exception as exc:  # any loader failure: the card still shows the text
            note = f"image unavailable: {type(exc).__name__}: {exc}"
    else:
        note = "image unavailable: the sample is not in the loaded suite"
    outcome = str(record.get("outcome") or "wrong")
    truth = sample.target.box if sample is not None else None
    lines = [f'<b>{esc(sid)}</b> <span class="tag {esc(outcome)}">{esc(outcome)}</span>',
             f"<div>instruction: {esc(sample.instruction if sample is not None else '-')}</div>",
             f"<div>target box: {esc(_box_text(truth))}</div>",
             f"<div>prediction: {esc(_prediction_text(pred))}"
             f"{' (format error)' if record.get('format_error') else ''}</div>"]
    raw = str(record.get("raw") or "")
    lines.append(f"<div>raw output:</div><pre>{esc(_clip(raw))}</pre>")
    if record.get("error"):
        lines.append(f"<div>error:</div><pre>{esc(_clip(str(record['error'])))}</pre>")
    if note:
        lines.append(f'<div class="note">{esc(note)}</div>')
    cls = "card" if picture else "card text"
    return f'<figure class="{cls}" id="sample-{esc(sid)}">{picture}<figcaption>{"".join(lines)}</figcaption></figure>'


def _box_text(box: Sequence[float] | None) -> str:
    return "[" + ", ".join(f"{v:.3f}" for v in box) + "]" if box is not None else "-"


def _clip(text: str) -> str:
    return text if len(text) <= RAW_LIMIT else text[:RAW_LIMIT] + f" ... (+{len(text) - RAW_LIMIT} characters)"


def gallery(records: Sequence[Mapping[str, Any]], lookup: Lookup | None, limit: int = GALLERY_LIMIT) -> str:
    chosen = gallery_records(records, limit)
    total = sum(gallery_rank(r) is not None for r in records)
    if not chosen:
        return '<p class="note">no regressed, errored or wrong samples</p>'
    legend = ('<p class="legend"><span style="color:#0a0">&#9632; ground truth</span>'
              '<span style="color:#d00">&#9632; prediction</span><span style="color:#06f">&#9632; input click</span>'
              f"<span>showing {len(chosen)} of {total}: regressions first, then errors, then wrong answers</span></p>")
    return legend + '<div class="gallery">' + "\n".join(card(r, lookup) for r in chosen) + "</div>"


# -- pages --------------------------------------------------------------------------

def render(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]], lookup: Lookup | None = None) -> str:
    """The whole page for one suite run: header, metrics table, plots and the gallery."""
    body = "\n".join([
        header(summary),
        "<h2>Metrics</h2>", metrics_table(summary, records),
        "<h2>Plots</h2>", plots(summary, records),
        "<h2>Samples to look at</h2>", gallery(records, lookup),
    ])
    return page(f"uiground: {summary.get('suite')}", body)


def write(path: Path, summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
          lookup: Lookup | None = None) -> Path:
    atomic_write_text(path, render(summary, records, lookup))
    return path


def render_failure(suite: str, exc: BaseException) -> str:
    body = (f"<h1>uiground report: {esc(suite)}</h1><p class=\"FAIL\">The HTML report could not be rendered: "
            f"{esc(type(exc).__name__)}: {esc(exc)}</p><p>summary.json and samples.jsonl beside this file "
            "are complete; the failure is in the report renderer only.</p>")
    return page(f"uiground: {suite} (report failed)", body)


def render_index(summaries: Mapping[str, Mapping[str, Any]]) -> str:
    """The top page of a run with several suites: one row and link per suite."""
    rows = ["<tr><th class=\"l\">suite</th><th class=\"l\">model</th><th>samples</th>"
            "<th class=\"l\">headline</th><th>value</th><th>regressed</th><th>errors</th></tr>"]
    for name, doc in summaries.items():
        metrics = metrics_of(doc)
        head = next(iter(metrics), None)
        value = metrics[head].get("value") if head is not None else None
        rows.append(f'<tr><td class="l"><a href="{esc(name)}/report.html">{esc(name)}</a></td>'
                    f'<td class="l">{esc(doc.get("model"))}</td><td>{esc(doc.get("n_samples"))}</td>'
                    f'<td class="l">{esc(head or "-")}</td><td>{esc(fmt(value))}</td>'
                    f'<td>{len(doc.get("regressed") or [])}</td><td>{len(doc.get("errors") or [])}</td></tr>')
    body = "<h1>uiground report</h1><table>" + "".join(rows) + "</table>"
    return page("uiground report", body)


@dataclass(frozen=True)
class SuitePage:
    """What one suite's page needs; ``lookup`` finds a sample's image and ground truth."""

    summary: Mapping[str, Any]
    records: Sequence[Mapping[str, Any]]
    lookup: Lookup | None = None


def write_reports(root: Path, pages: Sequence[SuitePage], warn: Callable[[str], None] | None = None) -> list[Path]:
    """Write ``report.html`` beside each suite's ``summary.json``; never raises for a render failure.

    One suite: ``root/report.html``. Several: ``root/<suite>/report.html`` and an
    index at ``root/report.html``. A page that fails to render is replaced by one that
    says what failed, and ``warn`` is told, so the session's outcome and the JSON
    outputs never depend on the renderer.
    """
    if not pages:
        return []
    single = len(pages) == 1
    written = []
    for p in pages:
        name = str(p.summary.get("suite"))
        path = root / "report.html" if single else root / name / "report.html"
        written.append(_write_safely(path, name, functools.partial(render, p.summary, p.records, p.lookup), warn))
    if not single:
        index = {str(p.summary.get("suite")): p.summary for p in pages}
        written.append(_write_safely(root / "report.html", "index", lambda: render_index(index), warn))
    return written


def _write_safely(path: Path, name: str, build: Callable[[], str], warn: Callable[[str], None] | None) -> Path:
    try:
        text = build()
    except Exception as exc:
        text = render_failure(name, exc)
        if warn is not None:
            warn(f"uiground: {path} could not be rendered ({type(exc).__name__}: {exc}); "
                 "summary.json and samples.jsonl are complete")
    atomic_write_text(path, text)
    return path
