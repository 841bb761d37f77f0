"""Generated Bench2Drive-VL frames in the published layout, for tests and demos.

The real data is large and needs a download; tests need a few frames whose every
field is known. :func:`write_frames` writes ``vqa/<scenario>/<frame:05d>.json`` (with
``key_object_infos`` and ``QA`` as DriveCommenter writes them), the front camera
JPEG and the ``anno/<frame>.json.gz`` holding the ego speed, and returns the answers
a scripted model should give (``answers[sample_id]``) for end-to-end runs.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _obj(oid: str, category: str, desc: str, bbox: list[float], role: bool, danger: bool,
         distance: float) -> dict[str, Any]:
    return {"id": oid, "Category": category, "Visual_description": desc, "2d_bbox": bbox, "is_role": role,
            "is_dangerous": danger, "position": [distance, 0.0], "distance": distance}


OBJECTS: dict[str, dict[str, Any]] = {
    "<c1,CAM_FRONT,800.0,450.0>": _obj("101", "Vehicle", "red sedan ahead", [640, 300, 960, 600], True, False, 12.0),
    "<c2,CAM_FRONT,300.0,500.0>": _obj("102", "Pedestrian", "pedestrian on the crosswalk", [280, 420, 330, 560],
                                       False, True, 8.5),
    "<c3,CAM_FRONT,1200.0,400.0>": _obj("103", "Traffic light", "green traffic light", [1180, 360, 1220, 440],
                                        False, False, 30.3),
}
T1, T2, T3 = list(OBJECTS)

QA: dict[str, list[dict[str, Any]]] = {
    "perception": [
        {"Q": "What is the current speed limit?", "A": "The speed limit is 30 km/h.", "qid": 7, "object_tags": []},
        {"Q": "What are the important objects in the scene? List them in order of importance.",
         "A": f"The important objects are desc({T1}), desc({T2}) and desc({T3}).", "qid": 19,
         "object_tags": [T1, T2, T3]},
    ],
    "prediction": [
        {"Q": "Identify the important objects and describe their motion.",
         "A": f"desc({T1}) is slowing down; desc({T2}) is crossing from the left.", "qid": 24,
         "object_tags": [T1, T2]},
        {"Q": "Which objects may collide with the ego vehicle?", "A": f"desc({T2}) may collide with the ego vehicle.",
         "qid": 28, "object_tags": [T2]},
    ],
    "planning": [
        {"Q": "Does the ego vehicle need to brake? Why?", "A": f"Yes, brake for desc({T2}).", "qid": 8,
         "object_tags": [T2]},
        {"Q": "What should the ego vehicle do next?", "A": "DECELERATE, FOLLOW_LANE", "qid": 43, "object_tags": []},
    ],
    "behaviour": [
        {"Q": "What are the current control key values?", "A": "KEEP, GO_STRAIGHT", "qid": 50, "object_tags": []},
        {"Q": "Is the ego vehicle changing lanes?", "A": "No, it keeps its lane.", "qid": 12, "object_tags": []},
    ],
}


def frame_doc(qa: Mapping[str, Any] | None = None, objects: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {"key_object_infos": dict(objects if objects is not None else OBJECTS),
            "QA": json.loads(json.dumps(qa if qa is not None else QA))}


def _image(path: Path, shade: int) -> None:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (320, 180), (90 + shade, 110, 130))
    draw = ImageDraw.Draw(img)
    draw.rectangle((128, 80, 192, 140), fill=(200, 30, 30))  # the "red sedan"
    draw.rectangle((0, 150, 320, 180), fill=(60, 60, 60))
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, format="JPEG", quality=85)


def write_frames(root: Path, *, scenarios: int = 2, frames: int = 2, speed: float = 3.0,
                 docs: Mapping[tuple[int, int], Any] | None = None) -> Path:
    """Write the layout under ``root`` and return ``root``.

    ``docs[(scenario, frame)]`` replaces one frame's JSON document (a dict, or a string
    written verbatim to produce a broken file). Frame 0 of each scenario has the ego
    stopped (speed 0.2 m/s), the others ``speed``.
    """
    for s in range(scenarios):
        scenario = f"ParkingExit_Town12_Route{1300 + s}_Weather{s}"
        for f in range(frames):
            name = f"{f * 5:05d}"
            doc = (docs or {}).get((s, f), frame_doc())
            vqa = root / "vqa" / scenario / f"{name}.json"
            vqa.parent.mkdir(parents=True, exist_ok=True)
            vqa.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=1), encoding="utf-8")
            _image(root / "images" / scenario / "camera" / "rgb_front" / f"{name}.jpg", 10 * f)
            anno = root / "images" / scenario / "anno" / f"{name}.json.gz"
            anno.parent.mkdir(parents=True, exist_ok=True)
            with gzip.open(anno, "wt", encoding="utf-8") as fh:
                json.dump({"speed": 0.2 if f == 0 else speed, "x": 0.0, "y": 0.0}, fh)
    return root
