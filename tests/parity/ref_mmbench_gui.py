"""Independent re-implementation of MMBench-GUI's reference scoring (L1 and L2).

Source read: github.com/open-compass/MMBench-GUI at 896ddf1d3aa4d6464d0c55c6416518f889d78d77
(2025-07-25). Every function names the reference function it mirrors. Pure Python, no
numpy/pandas/vlmeval; the reference's bugs are reproduced on purpose, and each buggy rule
has an ``intended_*`` twin. Points and boxes are normalized (x, y) / [x1, y1, x2, y2].

Reference semantics kept exactly:
* the per-sample code of ``GUIElementGrounding.evaluate``: 1 hit, 0 miss, -1 "error format"
  (any exception inside its ``try``, including the parser returning ``None``);
* numbers are percentages (x100) in L2 and fractions (0..1) in L1, as the reference prints.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Point = tuple[float, float]
HIT, MISS, ERROR_FORMAT = 1, 0, -1

# --------------------------------------------------------------------------------------
# L1: option letters
# --------------------------------------------------------------------------------------

# utils/misc.py: parser_answers_into_option -- six patterns tried in this order, each with
# re.IGNORECASE | re.MULTILINE; the first pattern with any match (leftmost) wins.
OPTION_PATTERNS = (
    r"\b([A-F])[\.:](?!\w)",  # "A."  "b:"
    r"\bOption\s+([A-F])\b",  # "Option B"
    r"\bAnswer\s*[:：]?\s*([A-F])\b",  # "Answer: C"  (NOT "answer is C")
    r"^[ \t]*([A-F])[\.:]?",  # BUG: delimiter optional -> "Based on ..." is B
    r"[\'\"]([A-F])[\'\"]",  # 'A' or "B"
    r"\b([A-F])\b(?!\s+\w)",  # a lone letter not followed by a word
)
_FLAGS = re.IGNORECASE | re.MULTILINE


def parse_option(text: str) -> str | None:
    """utils/misc.py ``parser_answers_into_option`` (also models/local_uitars.py
    ``parse_understanding_response`` and l1_content_understanding.py
    ``default_parse_response``, which only wrap it). Upper-cased letter or None."""
    for pattern in OPTION_PATTERNS:
        m = re.search(pattern, text, _FLAGS)
        if m:
            return m.group(1).upper()
    return None


_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)


def intended_parse_option(text: str, strip_think: bool = False) -> str | None:
    """What pattern 4 was meant to read ("the first letter in a row: A. or A:"): an option
    letter leading its line, not the first letter of a word -- ``^[ \t]*([A-F])\b`` -- so a
    capitalised word ("Based on", "Clicking", "answer is D") is never an answer while "A",
    "E is the best choice" and "A) x" still read as the reference reads them. This is the
    smallest change that removes the bug; the suite's parser
    (pytest_uiground/benchmarks/mmbench_gui/parsers.py) implements it. ``strip_think`` (off
    by default, as the reference) optionally drops ``<think>`` blocks."""
    if strip_think:
        text = _THINK.sub("", text)
    patterns = list(OPTION_PATTERNS)
    patterns[3] = r"^[ \t]*([A-F])\b"
    for pattern in patterns:
        m = re.search(pattern, text, _FLAGS)
        if m:
            return m.group(1).upper()
    return None


def flatten_l1(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """l1_content_understanding.py ``GUIContentUnderstanding.prepare_tsv`` mode "all": every
    group becomes a row carrying the record's image_path/image_size/platform/app_name and a
    running ``index`` 0, 1, 2, ... over all groups (the record's own index is dropped)."""
    rows: list[dict[str, Any]] = []
    for rec in records:
        for group in rec["groups"]:
            row = dict(group)
            row.update(image_path=rec["image_path"], image_size=rec["image_size"],
                       platform=rec["platform"], app_name=rec["app_name"], index=len(rows))
            rows.append(row)
    return rows


def l1_hits(rows: Sequence[Mapping[str, Any]], outputs: Sequence[str],
            parse: Callable[[str], str | None] = parse_option) -> list[int]:
    """l1_content_understanding.py ``eval_vanilla_single`` (exact matching, no judge):
    hit = 1 when the parsed letter equals the ``answer`` field exactly (a None parse is a miss)."""
    return [1 if parse(str(out)) == row["answer"] else 0 for row, out in zip(rows, outputs, strict=True)]


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan  # np.mean([]) is nan (with a warning)


def score_l1(rows: Sequence[Mapping[str, Any]], outputs: Sequence[str],
             parse: Callable[[str], str | None] = parse_option, weighted: bool = False) -> dict[str, Any]:
    """benchmarks/matrics.py ``level1_calculate_scores_normal`` (``weighted=False``) or
    ``level1_calculate_scores_weighted``; rows are flattened L1 rows (:func:`flatten_l1`).

    Result: ``{difficulty: {platform: {"score", "sample_num"[, "score_weighted", "score_base"]},
    "level_sample_num", "level_score"}, "total_sample_num"}``; scores are fractions 0..1.
    Reference bug kept: every platform of the whole file is iterated under every difficulty,
    so an empty difficulty x platform cell has score nan and makes that level_score nan.
    There is no overall score in the reference.
    """
    hits = l1_hits(rows, outputs, parse)
    platforms = sorted({r["platform"] for r in rows})
    res: dict[str, Any] = {}
    for split in sorted({r["difficulty"] for r in rows}):
        level: dict[str, Any] = {}
        for platform in platforms:
            cell = [(h, len(r["options"])) for h, r in zip(hits, rows, strict=False)
                    if r["difficulty"] == split and r["platform"] == platform]
            if weighted:
                sw = _mean([h * (n - 1) / n for h, n in cell])
                sb = _mean([(n - 1) / n for _, n in cell])
                score = sw / sb if cell else math.nan
                level[platform] = {"score": score, "score_weighted": sw, "score_base": sb, "sample_num": len(cell)}
            else:
                level[platform] = {"score": _mean([h for h, _ in cell]), "sample_num": len(cell)}
        num = sum(v["sample_num"] for v in level.values())
        level["level_sample_num"] = num
        level["level_score"] = sum(v["score"] * v["sample_num"] for k, v in level.items()
                                   if k != "level_sample_num") / num
        res[split] = level
    res["total_sample_num"] = sum(v["level_sample_num"] for v in res.values())
    return res


def intended_score_l1(rows: Sequence[Mapping[str, Any]], outputs: Sequence[str],
                      parse: Callable[[str], str | None] = intended_parse_option) -> dict[str, Any]:
    """As :func:`score_l1` (normal) but empty cells are left out (no nan), plus ``overall``
    = sample-weighted mean over every row (the reference prints none)."""
    hits = l1_hits(rows, outputs, parse)
    res: dict[str, Any] = {}
    for split in sorted({r["difficulty"] for r in rows}):
        level: dict[str, Any] = {}
        for platform in sorted({r["platform"] for r in rows if r["difficulty"] == split}):
            cell = [h for h, r in zip(hits, rows, strict=False)
                    if r["difficulty"] == split and r["platform"] == platform]
            level[platform] = {"score": _mean(cell), "sample_num": len(cell)}
        in_split = [h for h, r in zip(hits, rows, strict=False) if r["difficulty"] == split]
        level["level_sample_num"] = len(in_split)
        level["level_score"] = _mean(in_split)
        res[split] = level
    res["total_sample_num"] = len(hits)
    res["overall"] = _mean(hits)
    return res


# --------------------------------------------------------------------------------------
# L2: coordinates
# --------------------------------------------------------------------------------------

IMAGE_FACTOR = 28
MIN_PIXELS = 100 * 28 * 28
MAX_PIXELS = 16384 * 28 * 28
MAX_RATIO = 200


def smart_resize(height: int, width: int, factor: int = IMAGE_FACTOR,
                 min_pixels: int = MIN_PIXELS, max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """models/local_uitars.py ``smart_resize`` -> (height, width). Python ``round`` (halves to
    even); ``max(factor, ...)`` only on the first rounding; area above max_pixels floors,
    below min_pixels ceils. These constants are used whatever the config's min/max_pixels."""
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise ValueError("absolute aspect ratio must be smaller than 200")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = math.floor(height / beta / factor) * factor
        w_bar = math.floor(width / beta / factor) * factor
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def uitars_parse(text: str, image_w: int, image_h: int) -> Point | None:
    """models/local_uitars.py ``parse_grounding_response`` + ``uitars_postprocess``.

    Every run of digits in the WHOLE text (``\\d+``: a decimal "12.5" is two runs, "-5" is
    "5", digits in a thought count) must number exactly two; they are divided by the
    smart-resized (width, height) of the record's ``image_size``. Never clipped. None (-> "error
    format" in the scorer) otherwise."""
    runs = re.findall(r"\d+", text)
    if len(runs) != 2:
        return None
    h, w = smart_resize(image_h, image_w)
    return int(runs[0]) / w, int(runs[1]) / h


def default_parse_coordinates(text: str) -> Point | None:
    """utils/misc.py ``parser_response_into_coordinates``: the FIRST "x, y" pair of
    decimals (optional ``x:``/``y=`` labels and brackets, separators ``,`` ``;`` or spaces),
    as floats; no scaling."""
    num = r"([-+]?(?:\d+\.\d+|\.\d+|\d+))"
    pattern = rf"(?:x\s*[:=]?\s*)?[\(\[\{{]?\s*{num}\s*[,\s;]+(?:y\s*[:=]?\s*)?\s*{num}\s*[\)\]\}}]?"
    m = re.search(pattern, text, re.IGNORECASE)
    return (float(m.group(1)), float(m.group(2))) if m else None


def reference_default_parse(text: str, meta: Any = None) -> Point | None:
    """l2_element_grounding.py ``GUIElementGrounding.default_parse_response``: defined as
    ``(self, response)`` but called as ``parse_function(prediction, meta=line)``, so it raises
    TypeError on every sample: with no ``parse_function`` configured, every L2 sample is
    "error format"."""
    raise TypeError("default_parse_response() got an unexpected keyword argument 'meta'")


def l2_box(bbox: Sequence[float], img_w: float, img_h: float) -> list[float]:
    """l2_element_grounding.py ``evaluate`` (``is_normalized``/``make_safe``): if every raw
    value is in [0, 1] keep it (a -1 becomes 0); else divide by the OPENED image's size after
    -1 -> 0. BUG: a normalized box holding a -1 fails ``is_normalized`` and is divided by the
    image size. Any value outside [0, 1] afterwards raises ValueError (stops the whole run)."""
    safe = [0 if v == -1 else v for v in bbox]
    if all(0 <= v <= 1 for v in bbox):
        box = safe
    else:
        box = [safe[0] / img_w, safe[1] / img_h, safe[2] / img_w, safe[3] / img_h]
    if any(v < 0 or v > 1 for v in box):
        raise ValueError(f"bbox out of range: {box}")
    return box


def intended_l2_box(bbox: Sequence[float], img_w: float, img_h: float) -> list[float]:
    """-1 -> 0 first, then the normalized check (a normalized box with -1 stays normalized)."""
    safe = [0.0 if v == -1 else float(v) for v in bbox]
    if all(0 <= v <= 1 for v in safe):
        return safe
    return [safe[0] / img_w, safe[1] / img_h, safe[2] / img_w, safe[3] / img_h]


def l2_code(record: Mapping[str, Any], output: str, parse: Callable[[str, Mapping[str, Any]], Point | None],
            opened_size: tuple[int, int] | None = None) -> int:
    """l2_element_grounding.py ``evaluate`` for one sample -> 1 / 0 / -1.

    ``parse(output, record)`` is the configured ``parse_function``; its None or any exception
    is -1. Then "Do Normalization By Default": if x > 1 or y > 1 BOTH are divided by the
    opened image's size -- applied even after a parser that already normalized (UI-TARS), so
    a point beyond the resized input (x/w' > 1) is divided a second time (the "double
    division"). Hit: edges inclusive. ``opened_size`` defaults to the record's image_size."""
    w, h = opened_size or tuple(record["image_size"])
    box = l2_box(record["bbox"], w, h)  # outside the try in the reference: raises
    try:
        p = parse(str(output), record)
        x, y = p[0], p[1]  # type: ignore[index]  # None -> TypeError -> -1
        if x > 1 or y > 1:
            x, y = x / w, y / h
    except Exception:
        return ERROR_FORMAT
    return HIT if box[0] <= x <= box[2] and box[1] <= y <= box[3] else MISS


def uitars_parse_fn(text: str, record: Mapping[str, Any]) -> Point | None:
    """``parse_function`` = models.local_uitars.parse_grounding_response (configs/config_local_uitars.json)."""
    w, h = record["image_size"]
    return uitars_parse(text, w, h)


def default_parse_fn_as_intended(text: str, record: Mapping[str, Any]) -> Point | None:
    """What the default parser was meant to do: first pair; pixels (any value > 1) / image_size."""
    p = default_parse_coordinates(text)
    if p is None:
        return None
    if p[0] > 1 or p[1] > 1:
        w, h = record["image_size"]
        return p[0] / w, p[1] / h
    return p


def intended_l2_code(record: Mapping[str, Any], output: str,
                     parse: Callable[[str, Mapping[str, Any]], Point | None]) -> int:
    """No second division: the parser owns its convention; a point outside [0, 1] is a miss."""
    w, h = record["image_size"]
    box = intended_l2_box(record["bbox"], w, h)
    p = parse(str(output), record)
    if p is None:
        return ERROR_FORMAT
    return HIT if box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3] else MISS


def l2_stats(records: Sequence[Mapping[str, Any]], codes: Sequence[int]) -> dict[str, dict[str, dict[str, list[int]]]]:
    """``stats[grounding_type][platform][key].append(code)`` with key = data_type, or
    ``category + ":" + data_type`` when the record has a ``category`` field."""
    stats: dict[str, dict[str, dict[str, list[int]]]] = {}
    for rec, code in zip(records, codes, strict=True):
        key = rec["data_type"] if "category" not in rec else f"{rec['category']}:{rec['data_type']}"
        stats.setdefault(rec["grounding_type"], {}).setdefault(rec["platform"], {}).setdefault(key, []).append(code)
    return stats


def level2_scores(stats: Mapping[str, Mapping[str, Mapping[str, list[int]]]], intended: bool = False) -> dict[str, Any]:
    """benchmarks/matrics.py ``level2_calculate_scores``.

    Per level ("basic"/"advanced") x platform: Total/Icon/Text num, Total/Icon/Text accuracy
    (x100), Correct num, "Wrong num" (= misses, code 0) and "Error format num" (code -1).
    "Basic accuracy"/"Advanced accuracy": platform Total accuracies weighted by Total num
    (= micro over the level); "Average accuracy" = their plain mean. Reference bugs (kept
    unless ``intended``): a platform with no "icon" or no "text" list divides by zero
    (ZeroDivisionError: Python ints); keys "cat:icon" (records with ``category``) are never
    "icon"/"text" so they divide by zero too; a missing level is a KeyError. Intended: an
    empty icon/text accuracy is None; a missing level scores None and is left out of the mean.
    """
    out: dict[str, Any] = {}
    for level, platforms in stats.items():
        out[level] = {}
        for platform, by_key in platforms.items():
            icon, text = by_key.get("icon", []), by_key.get("text", [])
            total = sum(len(v) for v in by_key.values())
            ic, tc = icon.count(HIT), text.count(HIT)

            def pct(c: int, n: int) -> float | None:
                if n == 0 and intended:
                    return None
                return c / n * 100  # ZeroDivisionError when n == 0

            out[level][platform] = {
                "Total num": total, "Icon num": len(icon), "Text num": len(text),
                "Total accuracy": pct(ic + tc, total), "Icon accuracy": pct(ic, len(icon)),
                "Text accuracy": pct(tc, len(text)), "Correct num": ic + tc,
                "Wrong num": icon.count(MISS) + text.count(MISS),
                "Error format num": icon.count(ERROR_FORMAT) + text.count(ERROR_FORMAT),
            }

    def summary(level: str) -> float | None:
        if intended and level not in out:
            return None
        cells = out[level].values()  # KeyError when the level is absent
        n = sum(c["Total num"] for c in cells)
        return sum(c["Total accuracy"] * c["Total num"] / n for c in cells)

    basic, advanced = summary("basic"), summary("advanced")
    parts = [v for v in (basic, advanced) if v is not None]
    avg = sum(parts) / len(parts) if parts else None
    return {"Average accuracy": avg, "Basic accuracy": basic, "Advanced accuracy": advanced, **out}


def score_l2(records: Sequence[Mapping[str, Any]], outputs: Sequence[str],
             parse: Callable[[str, Mapping[str, Any]], Point | None] = uitars_parse_fn,
             intended: bool = False) -> dict[str, Any]:
    """The whole L2 evaluation: every figure ``GUIElementGrounding.evaluate`` writes to
    ``*_score.json`` (see :func:`level2_scores`). ``parse`` is the configured
    ``parse_function`` (default: the UI-TARS one; pass :func:`reference_default_parse` for an
    unconfigured run). ``intended=True`` uses :func:`intended_l2_code` and no divide-by-zero."""
    if intended:
        codes = [intended_l2_code(r, o, parse) for r, o in zip(records, outputs, strict=True)]
    else:
        codes = [l2_code(r, o, parse) for r, o in zip(records, outputs, strict=True)]
    return level2_scores(l2_stats(records, codes), intended=intended)
