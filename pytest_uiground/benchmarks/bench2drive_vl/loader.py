"""Bench2Drive-VL VQA in its published layout: one sample per question of each frame.

Layout (Thinklab-SJTU/Bench2Drive-VL ``B2DVL_Adapter/eval_dataset.py``, ``b2dvl_dataset.py``)::

    <data>/vqa/<route folder>/<frame:05d>.json                   key_object_infos, QA, extra_flags
    <data>/images/<route folder>/camera/rgb_front/<frame>.jpg    the camera the model sees
    <data>/images/<route folder>/anno/<frame:05d>.json.gz        Bench2Drive annotation: bounding_boxes
                                                                 with the ego_vehicle record

Route folders are named ``<ScenarioType>_<Town>_<Route>_<Weather>``; as in the
reference, folders without "_" are not benchmark routes and are skipped, and the
scenario *type* (``stats.py: make_stats``) is the name up to the first "_". ``QA`` is
``{perception, prediction, planning, behaviour: [{Q, A, qid, object_tags, ...}]}``;
answers name objects as ``Detailed_description(<tag>)`` (see :mod:`.objects`).

The judge sees the published ``Q`` and ``A`` unchanged, as in the reference. What each
rule needs is read here, so a bad record fails its own sample with the file, the record
and the field named: Q8's ego speed (the ego record's ``speed``; 4.0 m/s when the
annotation file does not exist, as ``evaluator.py: brake_eval``), Q42's current ego
record, the multi-object questions' ``object_tags`` entries. Sample ids are
``<route folder>.<frame>.q<qid>``.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_uiground.benchmarks.bench2drive_vl.formulas import (
    BRAKING_QID,
    DEFAULT_EGO_SPEED,
    MULTI_OBJECT_QIDS,
    TRAJECTORY_QID,
)
from pytest_uiground.benchmarks.bench2drive_vl.objects import parse_objects
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target, safe_id
from pytest_uiground.suite.loading import LoaderContext

CATEGORIES = ("perception", "prediction", "planning", "behaviour")
EGO_FIELDS = ("location", "rotation", "extent", "world2ego")


def _root(options: Mapping[str, Any], ctx: LoaderContext) -> Path:
    if ctx.data_path is not None:
        return ctx.data_path
    if options.get("path"):
        path = Path(str(options["path"]))
        return path if path.is_absolute() else ctx.suite_dir / path
    raise ValueError(
        f"suite {ctx.suite_name!r} needs the Bench2Drive-VL data: pass --uiground-data-path DIR, a folder holding "
        "vqa/<route>/<frame:05d>.json and images/<route>/camera/rgb_front/<frame>.jpg plus "
        "images/<route>/anno/<frame:05d>.json.gz (see suites/bench2drive_vl/README.md)"
    )


def scenario_type(folder: str) -> str:
    """stats.py: make_stats groups by the route folder's name up to the first "_"."""
    return folder.split("_")[0]


class Annotations:
    """Bench2Drive ``anno/<frame:05d>.json.gz`` files of one route, read once each."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._docs: OrderedDict[int, Any] = OrderedDict()
        self._lock = threading.Lock()

    def path(self, frame: int) -> Path:
        return self.folder / f"{frame:05d}.json.gz"

    def doc(self, frame: int) -> Mapping[str, Any]:
        with self._lock:
            if frame in self._docs:
                return self._docs[frame]  # type: ignore[no-any-return]
        path = self.path(frame)
        try:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                doc = json.load(fh)
        except FileNotFoundError:
            raise ValueError(f"annotation {path} does not exist") from None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"annotation {path} is not gzipped JSON ({exc})") from None
        if not isinstance(doc, dict):
            raise ValueError(f"annotation {path}: expected a JSON object at the top level")
        with self._lock:
            self._docs[frame] = doc
            while len(self._docs) > 64:
                self._docs.popitem(last=False)
        return doc

    def boxes(self, frame: int) -> list[Mapping[str, Any]]:
        boxes = self.doc(frame).get("bounding_boxes")
        if not isinstance(boxes, list):
            raise ValueError(f"annotation {self.path(frame)}: field 'bounding_boxes' must be a list of boxes")
        return [b for b in boxes if isinstance(b, Mapping)]

    def ego(self, frame: int, fields: tuple[str, ...] = EGO_FIELDS) -> Mapping[str, Any]:
        """The ``class == "ego_vehicle"`` record (the reference's ``next(...)``), with ``fields``."""
        ego = next((b for b in self.boxes(frame) if b.get("class") == "ego_vehicle"), None)
        where = f"annotation {self.path(frame)}: bounding_boxes"
        if ego is None:
            raise ValueError(f"{where} has no record with \"class\": \"ego_vehicle\"")
        for name in fields:
            if name not in ego:
                raise ValueError(f"{where}[ego_vehicle] has no field {name!r}")
        return ego

    def ego_speed(self, frame: int) -> float:
        """evaluator.py: brake_eval: the ego record's speed; 4.0 when the file does not exist."""
        if not self.path(frame).exists():
            return DEFAULT_EGO_SPEED
        value = self.ego(frame, ("speed",))["speed"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"annotation {self.path(frame)}: bounding_boxes[ego_vehicle].speed must be a number, "
                             f"got {value!r}")
        return float(value)


def _check_question(qa: Any, where: str, qid_raw: Any) -> str | None:
    if not isinstance(qa, Mapping):
        return f"{where} is not an object"
    for name in ("Q", "A", "qid"):
        if name not in qa:
            return f"{where} has no field {name!r}"
    if not isinstance(qid_raw, int) or isinstance(qid_raw, bool):
        return f"{where}.qid must be a whole number, got {qid_raw!r}"
    if not isinstance(qa["Q"], str) or not isinstance(qa["A"], str):
        return f"{where}: fields 'Q' and 'A' must be text"
    tags = qa.get("object_tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        return f"{where}.object_tags must be a list of tag strings, got {tags!r}"
    return None


def _rule_inputs(qid: int, qa: Mapping[str, Any], infos: Mapping[str, Any], annos: Annotations,
                 frame: int, where: str) -> dict[str, Any]:
    """What the question's rule needs beyond Q and A; ValueError naming what is wrong."""
    out: dict[str, Any] = {}
    if qid in MULTI_OBJECT_QIDS:
        for tag in qa.get("object_tags") or []:
            info = infos.get(tag)
            if not isinstance(info, Mapping):
                raise ValueError(f"{where}.object_tags names {tag}, which is not in key_object_infos")
            if not isinstance(info.get("Detailed_description"), str):
                raise ValueError(f"key_object_infos[{tag!r}] has no text field 'Detailed_description' "
                                 f"(needed by {where})")
    if qid == BRAKING_QID:
        out["ego_speed"] = annos.ego_speed(frame)
    if qid == TRAJECTORY_QID:
        annos.ego(frame)  # the current ego record must be complete; future ones are read when scoring
        out["annotations"] = annos
    return out


def _question(route: str, frame_name: str, category: str, index: int, qa: Any, infos: Mapping[str, Any],
              image: ImageRef, annos: Annotations, path: Path, problem: str | None) -> Sample:
    qid_raw = qa.get("qid") if isinstance(qa, Mapping) else None
    qid = qid_raw if isinstance(qid_raw, int) and not isinstance(qid_raw, bool) else None
    stem = f"{safe_id(route) or '_'}.{frame_name}"
    sid = f"{stem}.q{qid}" if qid is not None else f"{stem}.{category}{index}"
    kind = scenario_type(route)
    meta = {"scenario": kind, "route": route, "frame": frame_name, "category": category,
            "qid": str(qid) if qid is not None else "?", "scenario_qid": f"{kind}/q{qid}",
            "route_qid": f"{route}/q{qid}"}
    where = f"QA.{category}[{index}]"
    problem = problem or _check_question(qa, where, qid_raw)

    def invalid(reason: str) -> Sample:
        return Sample(id=sid, image=image, instruction="", task="vqa", target=Target(answer=""), meta=meta,
                      invalid=f"frame file {path}: {reason}")

    if problem is not None:
        return invalid(problem)
    assert isinstance(qa, Mapping) and qid is not None
    try:
        extra = _rule_inputs(qid, qa, infos, annos, int(frame_name), where)
    except ValueError as exc:
        return invalid(f"{where} (qid {qid}): {exc}")
    context = {"qid": qid, "Q": qa["Q"], "A": qa["A"], "object_tags": tuple(qa.get("object_tags") or ()),
               "gt_objects": parse_objects(qa["A"]), "key_object_infos": infos, "frame": int(frame_name), **extra}
    return Sample(id=sid, image=image, instruction=qa["Q"], task="vqa", target=Target(answer=qa["A"]), meta=meta,
                  context=context)


def load_frame(path: Path, route: str, image: ImageRef, annos: Annotations) -> list[Sample]:
    """The samples of one frame file: an unreadable file is one invalid sample; a frame
    without ``key_object_infos`` fails each of its questions; a bad question fails alone."""
    frame_name = path.name.removesuffix(".json")
    meta = {"scenario": scenario_type(route), "route": route, "frame": frame_name, "category": "?", "qid": "?"}

    def broken(reason: str) -> list[Sample]:
        return [Sample(id=f"{safe_id(route)}.{frame_name}", image=image, instruction="", task="vqa",
                       target=Target(answer=""), meta=meta, invalid=f"frame file {path}: {reason}")]

    if not frame_name.isdigit():
        return broken("the name must be the frame number, <frame:05d>.json (the published layout)")
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
        problem = "missing field 'key_object_infos'"
    elif not isinstance(infos, dict):
        problem = "field 'key_object_infos' must be an object of tag -> object record"
    out: list[Sample] = []
    for category, items in qa_all.items():
        if not isinstance(items, list):
            out += broken(f"field 'QA.{category}' must be a list of questions")
            continue
        for i, qa in enumerate(items):
            out.append(_question(route, frame_name, str(category), i, qa, infos if isinstance(infos, dict) else {},
                                 image, annos, path, problem))
    return _dedupe(out)


def _dedupe(samples: list[Sample]) -> list[Sample]:
    """A frame may ask the same qid twice (one per object): suffix the repeats."""
    seen: dict[str, int] = {}
    out = []
    for s in samples:
        n = seen.get(s.id, 0)
        seen[s.id] = n + 1
        out.append(replace(s, id=f"{s.id}-{n + 1}") if n else s)
    return out


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    root = _root(options, ctx)
    vqa_dir = root / str(options.get("vqa_dir", "vqa"))
    image_dir = root / str(options.get("image_dir", "images"))
    camera = str(options.get("camera", "rgb_front"))
    ext = str(options.get("image_ext", "jpg")).lstrip(".")
    if not vqa_dir.is_dir():
        raise ValueError(f"no VQA folder {vqa_dir}: expected vqa/<route>/<frame:05d>.json under --uiground-data-path "
                         f"{root} (or set [loader.options] vqa_dir)")
    qids = {int(q) for q in options.get("qids", [])}
    samples: list[Sample] = []
    for route_dir in sorted(p for p in vqa_dir.iterdir() if p.is_dir() and "_" in p.name):
        route = route_dir.name
        annos = Annotations(image_dir / route / "anno")
        files = [p for p in route_dir.iterdir() if p.name.endswith(".json") and p.is_file()]
        files.sort(key=lambda p: (0, int(p.stem), "") if p.stem.isdigit() else (1, 0, p.name))
        for path in files:
            image = ImageRef.from_path(image_dir / route / "camera" / camera / f"{path.stem}.{ext}")
            for s in load_frame(path, route, image, annos):
                if not qids or s.invalid is not None or int(s.meta["qid"]) in qids:
                    samples.append(s)
    if not samples:
        raise ValueError(f"no frame files under {vqa_dir}: expected <ScenarioType>_<Town>_<Route>_<Weather>/"
                         "<frame:05d>.json (folders without '_' are not routes and are skipped, as in the reference)")
    return samples
