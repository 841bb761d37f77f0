"""Bench2Drive-VL VQA: one sample per question of each frame (loader ``bench2drive_vl``).

The layout is DriveCommenter's output beside the Bench2Drive images::

    <data>/vqa/<scenario>/<frame:05d>.json                  key_object_infos + QA
    <data>/images/<scenario>/camera/rgb_front/<frame>.jpg   the camera the model sees
    <data>/images/<scenario>/anno/<frame>.json.gz           optional: ego ``speed`` (m/s)

Each frame file holds ``key_object_infos`` (tag → {Category, Visual_description,
is_role, is_dangerous, ...}) and ``QA`` ({perception, prediction, planning,
behaviour: [{Q, A, qid, object_tags}]}). Ground-truth answers name objects as
``desc(<tag>)``; the loader expands them to the objects' descriptions for the model
and the judge, and keeps the tags, in order, for the rule-based questions.

A frame that cannot be read fails as one sample named after the frame; a frame with
a missing field fails all its questions, each naming the field; one bad question
fails only itself. Sample ids are ``<scenario>.<frame>.q<qid>``.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_uiground.image import ImageRef
from pytest_uiground.loading import LoaderContext
from pytest_uiground.sample import Sample, Target

from .formulas import BRAKING_QID, CONTROL_KEY_QIDS, CONTROL_KEYS, GtObject

CATEGORIES = ("perception", "prediction", "planning", "behaviour")
DESC = re.compile(r"desc\((<[^<>]*>)\)")
_KEY_TOKEN = re.compile(r"\b(" + "|".join(sorted(CONTROL_KEYS, key=len, reverse=True)) + r")\b")
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_.:+\-]")


def _root(options: Mapping[str, Any], ctx: LoaderContext) -> Path:
    if ctx.data_path is not None:
        return ctx.data_path
    if options.get("path"):
        path = Path(str(options["path"]))
        return path if path.is_absolute() else ctx.suite_dir / path
    raise ValueError(
        f"suite {ctx.suite_name!r} needs the Bench2Drive-VL data: pass --uiground-data-path DIR, a folder holding "
        "vqa/<scenario>/<frame>.json and images/<scenario>/camera/rgb_front/<frame>.jpg "
        "(see suites/bench2drive_vl/README.md)"
    )


def _safe(text: str) -> str:
    return _ID_UNSAFE.sub("_", text) or "_"


def describe_object(tag: str, info: Mapping[str, Any]) -> str:
    """The words the model and the judge see for an object."""
    desc = info.get("Visual_description") or info.get("visual_description") or ""
    category = info.get("Category") or info.get("category") or "object"
    text = str(desc).strip().rstrip(".") or str(category)
    return text


def expand(text: str, infos: Mapping[str, Any]) -> str:
    """``desc(<tag>)`` → the object's description (unknown tags are left as written)."""
    def sub(m: re.Match[str]) -> str:
        info = infos.get(m.group(1))
        return describe_object(m.group(1), info) if isinstance(info, Mapping) else m.group(0)
    return DESC.sub(sub, text)


def _ego_speed(frame: Mapping[str, Any], anno: Path) -> float | None:
    for key in ("ego_speed", "speed"):
        value = frame.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    if anno.is_file():
        try:
            with gzip.open(anno, "rt", encoding="utf-8") as fh:
                value = json.load(fh).get("speed")
        except (OSError, ValueError, AttributeError):
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def gt_objects(answer: str, qa: Mapping[str, Any], infos: Mapping[str, Any]) -> tuple[GtObject, ...]:
    """The question's ground-truth objects, in order: ``desc(<tag>)`` in the answer, else
    ``object_tags``. Raises ValueError naming a tag or field that is missing."""
    tags = list(dict.fromkeys(DESC.findall(answer)))
    if not tags:
        raw = qa.get("object_tags") or []
        tags = [str(t) for t in raw] if isinstance(raw, list) else []
    out = []
    for tag in tags:
        info = infos.get(tag)
        if not isinstance(info, Mapping):
            raise ValueError(f"object {tag} is not in key_object_infos")
        for flag in ("is_role", "is_dangerous"):
            if flag not in info:
                raise ValueError(f"key_object_infos[{tag!r}] has no field {flag!r}")
        out.append(GtObject(tag, bool(info["is_role"]), bool(info["is_dangerous"])))
    return tuple(out)


def _question(scenario: str, frame_name: str, category: str, index: int, qa: Any, infos: Any,
              frame: Mapping[str, Any], image: ImageRef, anno: Path, problem: str | None) -> Sample:
    qid_raw = qa.get("qid") if isinstance(qa, Mapping) else None
    qid = qid_raw if isinstance(qid_raw, int) and not isinstance(qid_raw, bool) else None
    stem = f"{_safe(scenario)}.{frame_name}"
    sid = f"{stem}.q{qid}" if qid is not None else f"{stem}.{category}{index}"
    meta = {"scenario": scenario, "frame": frame_name, "category": category,
            "qid": str(qid) if qid is not None else "?"}
    where = f"QA.{category}[{index}]"
    if problem is None and not isinstance(qa, Mapping):
        problem = f"{where} is not an object"
    if problem is None:
        for name in ("Q", "A", "qid"):
            if name not in qa:
                problem = f"{where} has no field {name!r}"
                break
        else:
            if qid is None:
                problem = f"{where}.qid must be a whole number, got {qid_raw!r}"
            elif not isinstance(qa["Q"], str) or not isinstance(qa["A"], str):
                problem = f"{where}: fields 'Q' and 'A' must be text"
    if problem is not None:
        return Sample(id=sid, image=image, instruction="", task="vqa", target=Target(answer=""), meta=meta,
                      invalid=problem)
    assert isinstance(qa, Mapping) and qid is not None
    truth_raw = str(qa["A"])
    try:
        objects = gt_objects(truth_raw, qa, infos)
    except ValueError as exc:
        return Sample(id=sid, image=image, instruction=str(qa["Q"]), task="vqa", target=Target(answer=truth_raw),
                      meta=meta, invalid=f"{where}: {exc}")
    keys = tuple(dict.fromkeys(_KEY_TOKEN.findall(truth_raw))) if qid in CONTROL_KEY_QIDS else ()
    context = {
        "qid": qid,
        "objects": objects,
        "descriptions": tuple(describe_object(o.tag, infos[o.tag]) for o in objects),
        "ego_speed": _ego_speed(frame, anno) if qid == BRAKING_QID else None,
        "gt_keys": keys or None,
    }
    return Sample(id=sid, image=image, instruction=expand(str(qa["Q"]), infos), task="vqa",
                  target=Target(answer=expand(truth_raw, infos)), meta=meta, context=context)


def load_frame(path: Path, scenario: str, image: ImageRef, anno: Path) -> list[Sample]:
    """The samples of one frame file (see the module docstring for what fails how)."""
    frame_name = path.stem
    fid = f"{_safe(scenario)}.{frame_name}"
    meta = {"scenario": scenario, "frame": frame_name, "category": "?", "qid": "?"}

    def broken(reason: str) -> list[Sample]:
        return [Sample(id=fid, image=image, instruction="", task="vqa", target=Target(answer=""), meta=meta,
                       invalid=f"frame file {path}: {reason}")]

    try:
        frame = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return broken(f"not readable JSON ({exc})")
    if not isinstance(frame, dict):
        return broken("expected a JSON object at the top level")
    qa_all = frame.get("QA")
    if not isinstance(qa_all, dict):
        return broken("missing field 'QA' (an object of perception/prediction/planning/behaviour lists)"
                      if qa_all is None else f"field 'QA' must be an object, got {type(qa_all).__name__}")
    infos = frame.get("key_object_infos")
    problem = None
    if infos is None:
        problem = f"frame file {path}: missing field 'key_object_infos'"
    elif not isinstance(infos, dict):
        problem = f"frame file {path}: field 'key_object_infos' must be an object"
    out: list[Sample] = []
    for category in CATEGORIES:
        items = qa_all.get(category, [])
        if not isinstance(items, list):
            out += broken(f"field 'QA.{category}' must be a list")
            continue
        for i, qa in enumerate(items):
            out.append(_question(scenario, frame_name, category, i, qa, infos or {}, frame, image, anno, problem))
    return _dedupe(out)


def _dedupe(samples: list[Sample]) -> list[Sample]:
    """A frame may ask the same qid twice (one per object): suffix the repeats."""
    seen: dict[str, int] = {}
    out = []
    for s in samples:
        n = seen.get(s.id, 0)
        seen[s.id] = n + 1
        if n:
            s = replace(s, id=f"{s.id}-{n + 1}")
        out.append(s)
    return out


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    root = _root(options, ctx)
    vqa_dir = root / str(options.get("vqa_dir", "vqa"))
    image_dir = root / str(options.get("image_dir", "images"))
    camera = str(options.get("camera", "rgb_front"))
    ext = str(options.get("image_ext", "jpg")).lstrip(".")
    if not vqa_dir.is_dir():
        raise ValueError(f"no VQA folder {vqa_dir}: expected vqa/<scenario>/<frame:05d>.json under "
                         "--uiground-data-path "
                         f"{root} (or set [loader.options] vqa_dir)")
    qids = {int(q) for q in options.get("qids", [])}
    samples: list[Sample] = []
    for scenario_dir in sorted(p for p in vqa_dir.iterdir() if p.is_dir()):
        scenario = scenario_dir.name
        for path in sorted(scenario_dir.glob("*.json")):
            image = ImageRef.from_path(image_dir / scenario / "camera" / camera / f"{path.stem}.{ext}")
            anno = image_dir / scenario / "anno" / f"{path.stem}.json.gz"
            for s in load_frame(path, scenario, image, anno):
                if not qids or s.invalid is not None or int(s.meta["qid"]) in qids:
                    samples.append(s)
    if not samples:
        raise ValueError(f"no frame files under {vqa_dir} (expected <scenario>/<frame:05d>.json)")
    return samples
