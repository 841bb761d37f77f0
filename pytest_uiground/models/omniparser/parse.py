"""OmniParser's screen parse as plain data: its overlap merge, its element list, its prompt and reader.

Why this module exists apart from the model: these are the rules that decide what OmniParser
*answers* (which boxes survive the merge, which element holds a click, what GPT-4o is asked
and how its reply is read), and they are pinned by tests without weights, torch or a server.
Everything here works on normalized ``(x0, y0, x1, y1)`` boxes and imports nothing heavy.

The references (microsoft/OmniParser @ 354021201345a96178360b28733573e27269f2de):

* ``util/utils.py`` ``remove_overlap_new``: :func:`remove_overlap_new` below, rule for rule;
* ``util/utils.py`` ``get_som_labeled_img``: the element order (OCR texts first, then icons
  whose box held OCR text, then the rest, which get captions), zero-area boxes dropped;
* ``eval/ss_pro_gpt4o_omniv2.py`` (the ScreenSpot-Pro run behind the published 39.5):
  ``reformat_messages`` (:func:`screen_info`), ``PROMPT_TEMPLATE_SEECLICK_PARSED_CONTENT_v1``
  (:data:`PROMPT_V1`), the system text (:data:`SYSTEM_PROMPT`), and the reply reading of
  ``ground_only_positive`` (:func:`read_box_id`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pytest_uiground.record.geometry import Box, Point

#: ``eval/ss_pro_gpt4o_omniv2.py`` ``omniparser_parse``: ``BOX_TRESHOLD = 0.05`` (``get_som_labeled_img``
#: defaults to 0.01); ``get_som_labeled_img`` calls ``predict_yolo(..., iou_threshold=0.1)`` (YOLO's NMS).
BOX_THRESHOLD: Final = 0.05
NMS_IOU: Final = 0.1
#: ``omniparser_parse``: ``get_som_labeled_img(..., iou_threshold=0.7)``, the overlap merge's threshold.
MERGE_IOU: Final = 0.7
#: ``check_ocr_box`` with ``use_paddleocr=True``: texts recognised with a score at or below this are dropped.
OCR_TEXT_THRESHOLD: Final = 0.5
#: ``remove_overlap_new.is_inside``: a box is inside another when this share of its area is.
INSIDE: Final = 0.80
#: How far (fraction of the image side) a click may fall outside an element and still select it
#: (the ``ocr`` model's ``detect_at`` slack; project rule, OmniParser has no click input).
CLICK_SLACK: Final = 0.005


@dataclass(frozen=True, slots=True)
class Element:
    """One parsed element, as ``get_som_labeled_img`` returns it: ``type`` ``text`` (an OCR line)
    or ``icon`` (a detector box), its normalized box, its content (the OCR text, the OCR texts
    found inside an icon box, or the icon's caption; None for an icon without one), where the
    content came from (the authors' ``source`` field) and the detector's or OCR's confidence."""

    type: str
    box: Box
    content: str | None
    source: str
    score: float

    # The annotator's proposal protocol (screens/review.py): .text, .box, .score,
    # and .element_type for the type it proposes.
    @property
    def text(self) -> str | None:
        return self.content

    @property
    def element_type(self) -> str:
        return self.type


def _area(b: Box) -> float:
    return (b[2] - b[0]) * (b[3] - b[1])


def _intersection(a: Box, b: Box) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def overlap(a: Box, b: Box) -> float:
    """``remove_overlap_new.IoU``: the largest of IoU and the two intersection-over-own-area ratios,
    so a box nested in another counts as fully overlapping it."""
    inter = _intersection(a, b)
    union = _area(a) + _area(b) - inter + 1e-6
    if _area(a) > 0 and _area(b) > 0:
        return max(inter / union, inter / _area(a), inter / _area(b))
    return inter / union


def is_inside(a: Box, b: Box) -> bool:
    """``remove_overlap_new.is_inside``: more than 80 % of ``a``'s area lies in ``b``."""
    area = _area(a)
    return area > 0 and _intersection(a, b) / area > INSIDE


def remove_overlap_new(icons: Sequence[Element], ocr: Sequence[Element],
                       iou_threshold: float = MERGE_IOU) -> list[Element]:
    """OmniParser's merge of detector boxes and OCR lines (``util/utils.py`` ``remove_overlap_new``).

    An icon box is dropped when it overlaps a *smaller* icon box by more than ``iou_threshold``
    (:func:`overlap`), so nested detections keep the inner one. A kept icon that lies inside an
    OCR line is dropped (the text box stands for it); OCR lines inside a kept icon are removed
    and their texts become the icon's content (``box_yolo_content_ocr``). The result lists the
    remaining OCR lines first, then the icons, in detector order. As in the reference, an OCR
    line already absorbed by an earlier icon still lends its text to a later one, and the
    search over OCR lines stops at the first one the icon lies inside.
    """
    kept: list[Element] = list(ocr)
    for i, icon in enumerate(icons):
        if any(i != j and overlap(icon.box, other.box) > iou_threshold and _area(icon.box) > _area(other.box)
               for j, other in enumerate(icons)):
            continue
        if not ocr:
            kept.append(icon)
            continue
        labels, inside_text = "", False
        for line in ocr:
            if is_inside(line.box, icon.box):
                labels += f"{line.content} "
                if line in kept:
                    kept.remove(line)
            elif is_inside(icon.box, line.box):
                inside_text = True
                break
        if inside_text:
            continue
        if labels:
            kept.append(Element("icon", icon.box, labels, "box_yolo_content_ocr", icon.score))
        else:
            kept.append(Element("icon", icon.box, None, "box_yolo_content_yolo", icon.score))
    return kept


def nonzero(box: Box, width: int, height: int) -> bool:
    """``get_som_labeled_img.int_box_area > 0``: the box still has area once its corners are whole pixels."""
    return (int(box[2] * width) - int(box[0] * width)) * (int(box[3] * height) - int(box[1] * height)) > 0


def ordered(elements: Sequence[Element]) -> list[Element]:
    """``get_som_labeled_img``'s stable sort: elements with content first, the captionless icons last
    (the box ids the LLM sees are positions in this list)."""
    return sorted(elements, key=lambda e: e.content is None)


def element_at(elements: Sequence[Element], click: Point) -> Element | None:
    """The element under a click: the smallest one containing it (within :data:`CLICK_SLACK`), or None.

    The seed's detector (OpenAdapt's evaluation plan, ``detect(image, click)``) answers with
    the element at the click; where parsed elements nest (an icon inside a toolbar box) the
    smallest is the most specific. Project rule: OmniParser itself takes no click.
    """
    s = CLICK_SLACK
    under = [e for e in elements if Box(e.box.x0 - s, e.box.y0 - s, e.box.x1 + s, e.box.y1 + s).contains(click)]
    return min(under, key=lambda e: _area(e.box)) if under else None


# -- the LLM path (eval/ss_pro_gpt4o_omniv2.py) ------------------------------------------------------

#: ``ground_only_positive``'s system message, verbatim (its indentation included).
SYSTEM_PROMPT: Final = (
    "You are an expert at completing instructions on GUI screens. \n"
    "               You will be presented with two images. The first is the original screenshot. The second is the "
    "same screenshot with some numeric tags. You will also be provided with some descriptions of the bbox, and your "
    "task is to choose the numeric bbox idx you want to click in order to complete the user instruction."
)

#: ``PROMPT_TEMPLATE_SEECLICK_PARSED_CONTENT_v1``, the template ``ground_only_positive`` formats with the
#: instruction and :func:`screen_info` (verbatim, typos and spacing included).
PROMPT_V1: Final = (
    "The instruction is to {}. \nHere is the list of all detected bounding boxes by IDs and their descriptions: {}. "
    "\nKeep in mind the description for Text Boxes are likely more accurate than the description for Icon Boxes. \n "
    "Requirement: 1. You should first give a reasonable description of the current screenshot, and give a some "
    "analysis of how can the user instruction be achieved by a single click. 2. Then make an educated guess of bbox "
    "id to click in order to complete the task using both the visual information from the screenshot image and the "
    "bounding boxes descriptions. REMEMBER: the task instruction must be achieved by one single click. 3. Your "
    "answer should follow the following format: {{'Analysis': 'xxx', 'Click BBox ID': 'y'}}. Please do not include "
    "any other info."
)


def screen_info(elements: Sequence[Element]) -> str:
    """``reformat_messages``: one HTML-like line per element, its id its position in the list."""
    out = ""
    for idx, e in enumerate(elements):
        if e.type == "text":
            out += f'<p id={idx} class="text" alt="{e.content}"> </p>\n'
        elif e.type == "icon":
            out += f'<img id={idx} class="icon" alt="{e.content}"> </img>\n'
    return out


def prompt(instruction: str, elements: Sequence[Element]) -> str:
    """The user text of ``ground_only_positive``: :data:`PROMPT_V1` with the instruction and the list."""
    return PROMPT_V1.format(instruction, screen_info(elements))


_ID_RE: Final = re.compile(r"""['"]Click BBox ID['"]\s*:\s*['"]?\s*(-?\d+)""")


def read_box_id(reply: str) -> int | None:
    """The box id of a reply, as ``ground_only_positive`` reads it, or None when there is none.

    The reference strips Markdown fences, evaluates the text as a Python literal and takes
    ``['Click BBox ID']``; when that fails it falls back to ``extract_dict_from_text`` (a helper
    of theirs not in the repository), which here is a regular expression for the same key
    (project wording). An id that is not a whole number is no answer.
    """
    text = reply.replace("```json", "").replace("```", "")
    value: object = None
    try:
        parsed = ast.literal_eval(text.strip())
        if isinstance(parsed, dict):
            value = parsed.get("Click BBox ID")
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = None
    if value is None:
        m = _ID_RE.search(text)
        value = m.group(1) if m else None
    try:
        return int(str(value).strip())
    except ValueError:
        return None
