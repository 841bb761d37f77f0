# ruff: noqa: E501  (the reference prompts are kept line for line)
"""An independent re-implementation of Bench2Drive-VL's VQA scoring, for parity tests.

Reference: github.com/Thinklab-SJTU/Bench2Drive-VL at commit
5896a851ed9308d56f8f9db8a3160993679ee008 (2025-07-11), folder ``B2DVL_Adapter/``
(``evaluator.py``, ``math_utils.py``, ``offline_simulation.py``, ``prompt_utils.py``,
``io_utils.py``, ``stats.py``, ``eval_dataset.py``, ``eval_workers.py``) and
``tools/vqa_eval_stats.py``. Each function names the reference function it mirrors.
Where the reference's own behaviour is odd (a crash, a missing newline, a duplicated
mention counted twice) it is kept on purpose and marked ``quirk:``.

The judge is a parameter: ``judge(messages) -> str | None`` receives the exact chat
messages the reference would send (``[{"role": "system", ...}, {"role": "user", ...}]``)
and returns the reply text (``None`` = the API gave nothing, as the reference's
``DeepseekInterface.ask`` does after its retries). The reference sends every request to
``deepseek-chat`` with ``max_tokens=512`` and ``response_format={"type": "json_object"}``
and no temperature or seed (``api_interface.py: DeepseekInterface.get_chat_response``);
those settings are in :data:`JUDGE_REQUEST`.

Where the reference would raise (and so stop its worker thread), this module raises
:class:`ReferenceCrash` instead of inventing a score.

The prompt texts below are the reference's strings, verbatim (``prompt_utils.py``, with
its f-strings expanded); ``tests/parity/test_b2d_ref_selfcheck.py`` checks their sha256.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import string
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

Messages = list[dict[str, str]]
Judge = Callable[[Messages], "str | None"]

REFERENCE_REPO = "Thinklab-SJTU/Bench2Drive-VL"
REFERENCE_COMMIT = "5896a851ed9308d56f8f9db8a3160993679ee008"

#: evaluator.py: evaluate_question(max_tokens=512) -> llm_client.ask(..., response_format=...);
#: api_interface.py: DeepseekInterface (model 'deepseek-chat', no temperature, no seed).
JUDGE_REQUEST: dict[str, Any] = {"model": "deepseek-chat", "max_tokens": 512,
                                 "response_format": {"type": "json_object"}}

SCORE_ROUND_DIGIT = 2        # evaluator.py: SCORE_ROUND_DIGIT
TRAFFIC_SIGN_FUTURE = 10     # evaluator.py: TRAFFIC_SIGN_FUTURE
STATS_ROUND_DIGIT = 4        # stats.py: ROUND_DIGIT
ORDER_RATIO = 5.0            # evaluator.py: important_obj_eval
EXTRA_RATIO = 2.0            # evaluator.py: important_obj_eval
ROLE_WEIGHT = 3.0            # evaluator.py: listed_eval
DANGER_WEIGHT = 3.0          # evaluator.py: listed_eval
DEFAULT_EGO_SPEED = 4.0      # evaluator.py: brake_eval (anno file missing)
LOW_SPEED = 0.5              # evaluator.py: brake_eval
FRAME_RATE = 10              # eval_configure.py: DEFAULT_EVAL_CONFIGS['FRAME_PER_SEC']

LISTED_QIDS = frozenset({27, 24, 25, 28, 29, 46, 47})    # evaluator.py: evaluate_question
HEAVY_FP_QIDS = frozenset({28, 29, 46, 47})              # evaluator.py: listed_eval FP_WEIGHT
FUTURE_QIDS = frozenset({2, 3, 4, 15})                   # evaluator.py: future_acceptable_eval


class ReferenceCrash(Exception):
    """The reference would raise here (uncaught), not return a score."""


# --------------------------------------------------------------------------------------
# Prompts, verbatim from B2DVL_Adapter/prompt_utils.py (f-strings expanded).
# --------------------------------------------------------------------------------------

COLOR_PROMPT = (
    "\n"
    "Notice that the VLM might answer a different but similar color, which is tolerable.\n"
    "eg. Silver - White, Maroon - Red, Olive - Yellow - Orange. Black car - Police car.\n"
)

SYSTEM_PROMPT = (
    "\n"
    "You're evaluating answers about autonomous driving given by other visual-language models. \n"
    "The question, its ground truth and anwser to be reviewed will be given below.\n"
    "Rate the answer whith a score in 0-100, and give reasons. use JSON output.\n"
    "\n"
    "Notice that the VLM might answer a different but similar color, which is tolerable.\n"
    "eg. Silver - White, Maroon - Red, Olive - Yellow - Orange. Black car - Police car.\n"
    "\n"
)

NORMAL_EXAMPLE = (
    "\n"
    "EXAMPLE INPUT 1\n"
    "question: \"What is the rough moving status of the black cat to the front?\"\n"
    "gt: \"It is steering to its right, driving slowly.\"\n"
    "anwser from VLM: \"It is turning right, driving slowly.\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 1\n"
    "{\n"
    "    \"reason\": \"This answer is perfectly accurate\",\n"
    "    \"score\": 100\n"
    "}\n"
    "\n"
    "EXAMPLE INPUT 2\n"
    "question: \"What is the rough moving status of the black cat to the front?\"\n"
    "gt: \"It is steering to its right, driving slowly.\"\n"
    "anwser from VLM: \"It is going straight, driving at normal speed.\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 2\n"
    "{\n"
    "    \"reason\": \"Both direction and speed are not correct.\",\n"
    "    \"score\": 0\n"
    "}\n"
)

LISTED_PROMPT = (
    "\n"
    "You're evaluating answers about autonomous driving given by other visual-language models. \n"
    "The question, its ground truth and anwser to be reviewed will be given below.\n"
    "Notice that the question and answer may involve multiple objects,\n"
    "but we only focus on one object which will be specified. DO NOT CARE ABOUT OTHER OBJECTS.\n"
    "\n"
    "Notice that the VLM might answer a different but similar color, which is tolerable.\n"
    "eg. Silver - White, Maroon - Red, Olive - Yellow - Orange. Black car - Police car.\n"
    "\n"
    "Rate the answer whith a score in 0-100, and give reasons. use JSON output. DO NOT CARE ABOUT OTHER OBJECTS.\n"
)

LISTED_EXAMPLE = (
    "\n"
    "EXAMPLE INPUT 1\n"
    "question: \"The list of important vehicles in current scene is 'the navy car that is to the front left of the ego vehicle(c49442, CAM_FRONT, CAM_FRONT_LEFT), the black SUV that is to the rear left of the ego vehicle(c49443, CAM_BACK), the white car that is to the front left of the ego vehicle(c49448, CAM_FRONT_LEFT.' List deep colored vehicles among them.\"\n"
    "gt: \"the navy car that is to the front left of the ego vehicle(c49442, CAM_FRONT, CAM_FRONT_LEFT), the black SUV that is to the rear left of the ego vehicle(c49443, CAM_BACK).\"\n"
    "anwser from VLM: \"the black SUV that is to the rear left of the ego vehicle(c49443, CAM_BACK), the white car that is to the front left of the ego vehicle(c49448, CAM_FRONT_LEFT.\"\n"
    "focus: \"the navy car that is to the front left of the ego vehicle <c49442, <CAM_FRONT,...,...>, <CAM_FRONT_LEFT,...,...>>\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 1\n"
    "{\n"
    "    \"reason\": \"According to gt, the navy car is deep colored, but VLM didn't include it.\",\n"
    "    \"score\": 0\n"
    "}\n"
    "\n"
    "EXAMPLE INPUT 2\n"
    "question: \"What are the rough moving speed and moving direction of the important vehicles?\"\n"
    "gt: \"The navy car that is to the front left of the ego vehicle(<c49442<CAM_FRONT,378.2,581.1><CAM_FRONT_LEFT,1767.2,615.2>>) is driving at a normal speed in the same direction of the ego vehicle, going straight. The olive car that is to the front left of the ego vehicle(<c49441<CAM_FRONT,651.9,482.4>>) is driving at a normal speed in the same direction of the ego vehicle, going straight. The maroon car that is to the front left of the ego vehicle(<c49448<CAM_FRONT,558.0,469.8>>) is driving at a normal speed in the opposite direction of the ego vehicle, going straight.\"\n"
    "anwser from VLM: \"A(frame 30): \"The orange car is moving forward at a moderate speed, likely maintaining its lane position. The blue car is also moving forward, slightly behind the orange car, indicating it might be following the same lane. The blue car appears to be moving at a similar speed to the orange car.\"\n"
    "\n"
    "For the ego vehicle:\n"
    "- Moving forward at a moderate speed, likely maintaining its lane position.\n"
    "- Following the orange car, which is moving forward at a moderate speed.\n"
    "\n"
    "The other vehicles (yellow sign, garages, trees, buildings, streetlights, and sidewalk) do not have specific speeds or directions mentioned in the description.\"\n"
    "focus: \"The olive car that is to the front left of the ego vehicle(<c49441<CAM_FRONT,651.9,482.4>>)\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 2\n"
    "{\n"
    "    \"reason\": \"According to gt, the olive car, which the vlm recognized as the orange car, is driving at a normal speed in the same direction of the ego vehicle, going straight, which fits the vlm's description, it's moving forward at a moderate speed, likely maintaining its lane position.\",\n"
    "    \"score\": 100\n"
    "}\n"
    "\n"
    "EXAMPLE INPUT 3\n"
    "question: \"Basic infos of the actors: [..] What are the rough moving speed and moving direction of the important vehicles?\"\n"
    "gt: \"The black car that is to the front of the ego vehicle(<c14785<CAM_FRONT,799.8,531.8>>) is driving slowly in the same direction of the ego vehicle, going straight.\"\n"
    "answer from VLM: \"Based on the information provided, here are the rough moving speeds and directions for the important vehicles:\n"
    "\n"
    "1. **Ego Vehicle (Maroon SUV)**:\n"
    "   - Speed: 1.0 m/s\n"
    "   - Direction: Same direction as the ego vehicle\n"
    "\n"
    "2. **Black Car**:\n"
    "   - Speed: 2.1 m/s\n"
    "   - Direction: Same direction as the ego vehicle\n"
    "\n"
    "3. **Maroon SUV**:\n"
    "   - Speed: 1.0 m/s\n"
    "   - Direction: Same direction as the ego vehicle\n"
    "\n"
    "The ego vehicle is moving at a speed of 0.8 m/s, while the black car is moving at a speed of 2.1 m/s. Both the maroon SUV and the black car are moving in the same direction as the ego vehicle.\"\n"
    "focus: \"The black car that is to the front of the ego vehicle\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 3\n"
    "{\n"
    "    \"reason\": \"The VLM correctly identified the direction of the black car as the same as the ego vehicle, which matches the gt. However, the VLM provided a specific speed (2.1 m/s) for the black car, whereas the gt only mentions it is driving slowly without specifying the speed.\",\n"
    "    \"score\": 90\n"
    "}\n"
    "\n"
    "again, DO NOT CARE ABOUT NON-FOCUS OBJECTS.\n"
)

FUTURE_PROMPT = (
    "\n"
    "In this task, I will provide answers for some future frames related to this question. If the VLM's answer for the current frame is incorrect but it correctly predicts the answers for future frames, a small portion of the score (e.g., 5-10 points) can be deducted at your discretion. Further in the future, more the score deducted. \n"
)

IMPORTANT_OBJECT_PROMPT1 = (
    "\n"
    "In this sentence, please identify each vehicle and object, convert it into a list and clear their ids (content within parentheses), use JSON output.\n"
    "\n"
    "EXAMPLE INPUT 1\n"
    "The black car that is to the front of the ego vehicle(<c1741<CAM_FRONT,1099.8,642.8><CAM_FRONT_RIGHT,-493.6,729.8>>), the junction, the gray car that is to the front right of the ego vehicle(<c1740<CAM_FRONT_RIGHT,397.4,496.8><CAM_FRONT,1677.0,505.8>>), the black car that is to the front right of the ego vehicle(<c1748<CAM_FRONT,1367.2,491.6><CAM_FRONT_RIGHT,134.6,494.1>>), the black car that is to the front right of the ego vehicle(<c1749<CAM_FRONT,1500.2,486.1><CAM_FRONT_RIGHT,274.8,484.2>>).\n"
    "\n"
    "EXAMPLE JSON OUTPUT 1\n"
    "{\n"
    "    \"list\": [\"The black car that is to the front of the ego vehicle\", \"the junction\", \"the gray car that is to the front right of the ego vehicle\", \"the black car that is to the front right of the ego vehicle 1\", \"the black car that is to the front right of the ego vehicle 2\"]\n"
    "}\n"
)

IMPORTANT_OBJECT_PROMPT2 = (
    "\n"
    "Next, you will be provided with a list and a sentence. Your task is to identify the objects from the list.\n"
    "If it is likely an item included in the list, use description from the list, otherwise use original description. \n"
    "\n"
    "Notice that the VLM might answer a different but similar color, which is tolerable.\n"
    "eg. Silver - White, Maroon - Red, Olive - Yellow - Orange. Black car - Police car.\n"
    "\n"
    "Return the result as a list in JSON format.\n"
    "\n"
    "EXAMPLE INPUT 1\n"
    "{\n"
    "    \"list\": [\"The black car that is to the front of the ego vehicle\", \"the junction\", \"the gray car that is to the front right of the ego vehicle\", \"the black car that is to the front right of the ego vehicle 1\", \"the black car that is to the front right of the ego vehicle 2\"]\n"
    "    \"sentence\": \"In this context, the important objects in the scene are:\n"
    "\n"
    "1. The road itself, which is the primary path for the ego vehicle to follow, and the junction ahead.\n"
    "2. The car in front of the ego vehicle, which is the immediate object of interest for the vehicle's autonomous driving system.\n"
    "3. The streetlights on the side of the road, which provide illumination for the vehicle's sensors and help guide the vehicle.\"\n"
    "}\n"
    "\n"
    "EXAMPLE JSON OUTPUT 1\n"
    "{\n"
    "    \"list\": [\"the road\", \"the junction\", \"The black car that is to the front of the ego vehicle\", \"the streetlights\"]\n"
    "}\n"
)

KEY_43_GT_PROMPT = (
    "\n"
    "Your task is to extract a speed key and a direction key from below.\n"
    "direction_keys = {'CHANGE_LANE_LEFT', 'CHANGE_LANE_RIGHT', 'GO_STRAIGHT', 'TURN_LEFT', 'TURN_RIGHT', 'DEVIATE_LEFT', 'DEVIATE_RIGHT'}\n"
    "'GO_STRAIGHT' is used in both following lane scenarios and going straight in junction scenarios.\n"
    "'DEVIATE_LEFT' and 'DEVIATE_RIGHT' are used when the ego vehicle wants to occupy a position slightly to the left/right within the current lane.\n"
    "speed_keys = {'KEEP', 'ACCELERATE', 'DECELERATE', 'STOP'}\n"
    "\n"
    "EXAMPLE INPUT 1\n"
    "\"The ego vehicle should align to the target lane beacuse the ego vehicle is still changing lane to circumvent the obstacle. The ego vehicle doesn't need to brake because it is changing to the left lane now.\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 1\n"
    "['CHANGE_LANE_LEFT', 'KEEP']\n"
    "\n"
    "EXAMPLE INPUT 2\n"
    "\"A: Okay, The ego vehicle needs to initiate a lane change to the *right*. Here's a prioritized breakdown of the steps:\n"
    "\n"
    "1.  **Accelerate:** The ego vehicle *must* begin to accelerate. It's currently at 0.0 m/s and needs a positive velocity to execute the lane change and follow the road's curve. A moderate acceleration is appropriate, not excessively fast, but enough to gain momentum. 2.  **Signal Intent:** Simultaneously with initiating acceleration, the ego vehicle should activate its right turn signal to indicate its intention to change lanes. This provides a warning to other vehicles.\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 2\n"
    "['CHANGE_LANE_RIGHT', 'ACCELERATE']\n"
    "\n"
    "EXAMPLE INPUT 3\n"
    "\"The ego vehicle should continue turning right at the current intersection.\"\n"
    "\n"
    "EXAMPLE OUTPUT 3\n"
    "['TURN_RIGHT', 'KEEP']\n"
    "\n"
    "EXAMPLE INPUT 4\n"
    "\"The ego vehicle should deviate slightly to the right from its current lane to avoid the invading vehicles.\"\n"
    "\n"
    "EXAMPLE OUTPUT 4\n"
    "['DEVIATE_RIGHT', 'KEEP']\n"
)

KEY_43_A_PROMPT = (
    "\n"
    "Your task is to extract a speed key and a direction key from below.\n"
    "direction_keys = {'CHANGE_LANE_LEFT', 'CHANGE_LANE_RIGHT', 'CHANGE_LANE', 'GO_STRAIGHT', 'TURN_LEFT', 'TURN_RIGHT', 'DEVIATE_LEFT', 'DEVIATE_RIGHT'}\n"
    "'GO_STRAIGHT' is used in both following lane scenarios and going straight in junction scenarios.\n"
    "'DEVIATE_LEFT' and 'DEVIATE_RIGHT' are used when the ego vehicle wants to occupy a position slightly to the left/right within the current lane.\n"
    "'CHANGE_LANE' is used when the answer mentioned lane changing but didn't specify the answer.\n"
    "speed_keys = {'KEEP', 'ACCELERATE', 'DECELERATE', 'STOP'}\n"
    "\n"
    "EXAMPLE INPUT 1\n"
    "\"The ego vehicle should align to the target lane beacuse the ego vehicle is still changing lane to circumvent the obstacle. The ego vehicle doesn't need to brake because it is changing to the left lane now.\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 1\n"
    "['CHANGE_LANE_LEFT', 'KEEP']\n"
    "\n"
    "EXAMPLE INPUT 2\n"
    "\"A: Okay, The ego vehicle needs to initiate a lane change to the *right*. Here's a prioritized breakdown of the steps:\n"
    "\n"
    "1.  **Accelerate:** The ego vehicle *must* begin to accelerate. It's currently at 0.0 m/s and needs a positive velocity to execute the lane change and follow the road's curve. A moderate acceleration is appropriate, not excessively fast, but enough to gain momentum. 2.  **Signal Intent:** Simultaneously with initiating acceleration, the ego vehicle should activate its right turn signal to indicate its intention to change lanes. This provides a warning to other vehicles.\"\n"
    "\n"
    "EXAMPLE JSON OUTPUT 2\n"
    "['CHANGE_LANE_RIGHT', 'ACCELERATE']\n"
    "\n"
    "EXAMPLE INPUT 3\n"
    "\"The ego vehicle should continue turning right at the current intersection.\"\n"
    "\n"
    "EXAMPLE OUTPUT 3\n"
    "['TURN_RIGHT', 'KEEP']\n"
    "\n"
    "EXAMPLE INPUT 4\n"
    "\"The ego vehicle should change lanes or deviate from the lane to maintain safety and avoid potential collisions with the faster-moving police cars and trucks.\"\n"
    "\n"
    "EXAMPLE OUTPUT 4\n"
    "['CHANGE_LANE', 'KEEP']\n"
)

#: evaluator.py: speed_limit_eval (qid 7), appended right after SYSTEM_PROMPT (no example).
Q7_APPENDIX = ("Moreover, in this question, answering a higher speed limit than gt is a more serious mistake than "
               "answering a lower one, because it is more dangerous.")
#: evaluator.py: ego_change_lane_dir (qid 31).
Q31_APPENDIX = ("Moreover, in this task, predicting more lanes than the ground truth is a more severe error compared "
                "to predicting fewer lanes, as overprediction can lead to dangerous situations.")
#: evaluator.py: other_vehicle_change_lane_dir (qid 30).
Q30_APPENDIX = ("Moreover, in this task, predicting fewer lanes than the ground truth is a more severe error compared "
                "to predicting more lanes, as underprediction can lead to dangerous situations.")


def q8_appendix(ego_speed: float) -> str:
    """evaluator.py: brake_eval's APPENDIX (only when ego_speed < 0.5)."""
    return (f"Moreover, given the ego vehicle's low speed ({ego_speed:.2f} m/s), "
            "it is reasonable for the VLM to omit braking, even if the ground truth indicates deceleration or stopping.")


#: prompt_utils.py: MISINTERPRET_COLORS
MISINTERPRET_COLORS: dict[str, list[str]] = {
    "navy": ["blue"], "olive": ["orange", "yellow"], "maroon": ["red"], "silver": ["white"],
}


def color_hint(raw: str) -> str:
    """prompt_utils.py: check_misinterpret_color. Note the list is formatted with str(list)."""
    low = raw.lower()
    parts = [f"Color '{c}' might be mistaken for '{alts}'. " for c, alts in MISINTERPRET_COLORS.items() if c in low]
    return f"Tolerable mistakes: {''.join(parts)}" if parts else ""


PROMPTS: dict[str, str] = {
    "COLOR_PROMPT": COLOR_PROMPT, "SYSTEM_PROMPT": SYSTEM_PROMPT, "NORMAL_EXAMPLE": NORMAL_EXAMPLE,
    "LISTED_PROMPT": LISTED_PROMPT, "LISTED_EXAMPLE": LISTED_EXAMPLE, "FUTURE_PROMPT": FUTURE_PROMPT,
    "IMPORTANT_OBJECT_PROMPT1": IMPORTANT_OBJECT_PROMPT1, "IMPORTANT_OBJECT_PROMPT2": IMPORTANT_OBJECT_PROMPT2,
    "KEY_43_GT_PROMPT": KEY_43_GT_PROMPT, "KEY_43_A_PROMPT": KEY_43_A_PROMPT,
}


# --------------------------------------------------------------------------------------
# Files (io_utils.py)
# --------------------------------------------------------------------------------------

LOAD_ERROR = "Error loading JSON"


def load_json_gz(path: str | os.PathLike[str]) -> Any:
    """io_utils.py: load_json_gz. quirk: any failure returns the *string* "Error loading JSON"."""
    p = str(path)
    try:
        if p.endswith(".gz"):
            with gzip.open(p, "rt", encoding="utf-8") as fh:
                return json.load(fh)
        with open(p, encoding="utf-8") as fh:
            return json.load(fh)
    except Exception:
        return LOAD_ERROR


def clean_json_string(text: str) -> str:
    """io_utils.py: clean_json_string: drops a leading "```json" and a trailing "```".
    quirk: it calls trim_braces but throws the result away, so nothing else is trimmed."""
    if text.startswith("```json"):
        text = text[7:]
    if text.endswith("```"):
        text = text[:-3]
    return text


def _anno_file(anno_dir: str | os.PathLike[str], frame_number: int) -> str:
    return os.path.join(str(anno_dir), f"{frame_number:05d}.json.gz")


def _ego_record(measurement: Any) -> Mapping[str, Any]:
    """The ``class == "ego_vehicle"`` entry of ``bounding_boxes`` (the reference's next(...));
    the reference raises when the file did not load or has no such entry."""
    if not isinstance(measurement, Mapping):
        raise ReferenceCrash(f"annotation did not load ({measurement!r}): .get() on a str")
    boxes = measurement.get("bounding_boxes", [])
    ego = next((b for b in boxes if b.get("class") == "ego_vehicle"), None)
    if ego is None:
        raise ReferenceCrash("annotation has no bounding_boxes entry with class 'ego_vehicle' (None['...'])")
    return ego


# --------------------------------------------------------------------------------------
# Objects named in answers (math_utils.py)
# --------------------------------------------------------------------------------------

#: math_utils.py: parse_objects. A description runs from the end of the previous match to
#: the first "(", the tag is everything up to the next ")" and holds no parentheses:
#: "the black car ...(<c14785<CAM_FRONT,800.0,513.9>>)" -> tag "<c14785<CAM_FRONT,800.0,513.9>>".
OBJECT_PATTERN = re.compile(r"([^(]+?)\(([^()]+?)\)")


def clean_key(desc: str) -> str:
    """math_utils.py: clean_key: strip spaces and punctuation at both ends, capitalise the first letter."""
    desc = desc.strip().strip(string.punctuation + " ")
    return desc[:1].upper() + desc[1:] if desc else desc


def parse_objects(text: str) -> dict[str, str]:
    """math_utils.py: parse_objects: cleaned description -> tag, in order of mention.
    A description seen before gets " 2", " 3", ... (the first keeps no number)."""
    seen: dict[str, int] = defaultdict(int)
    out: dict[str, str] = {}
    for m in OBJECT_PATTERN.finditer(text):
        desc = clean_key(m.group(1))
        seen[desc] += 1
        if seen[desc] > 1:
            desc = f"{desc} {seen[desc]}"
        out[desc] = m.group(2).strip()
    return out


def dcg(gains: Sequence[float]) -> float:
    """math_utils.py: dcg: sum of gain / log2(rank + 1), rank from 1."""
    return sum(g / math.log2(k + 2) for k, g in enumerate(gains))


def ndcg(gt_list: Sequence[str], vlma_list: Sequence[Any], weights: Mapping[Any, float]) -> float:
    """math_utils.py: ndcg. DCG: the answer's objects that are in the ground truth, in the
    answer's order (a repeated mention counts again). Ideal DCG: the *same matched objects'*
    weights in ground-truth order (not the k largest weights, not the GT's first k)."""
    got = [weights[o] for o in vlma_list if o in weights and o in gt_list]
    ideal = [weights[o] for o in gt_list if o in weights and o in vlma_list]
    i = dcg(ideal)
    return dcg(got) / i if i > 0 else 0


# --------------------------------------------------------------------------------------
# The judge (evaluator.py: single_eval, single_eval_in_list)
# --------------------------------------------------------------------------------------

def user_message(Q: Any, gt: Any, A: Any) -> str:
    """evaluator.py: single_eval's user message."""
    return f"question: {Q}\ngt: {gt}\nanswer from VLM: {A}"


def _score_reply(reply: str | None) -> tuple[Any, str]:
    """evaluator.py: single_eval's try block: strict json.loads (a code fence fails), then
    ``["score"]``; reason from "reason", else "reasons", else "Parse error!". Any failure -> (0, "error").
    The score is returned as the judge wrote it (not clamped, not converted)."""
    try:
        data = json.loads(reply)  # type: ignore[arg-type]
        reason = data.get("reason", data.get("reasons", "Parse error!"))
        return data["score"], reason
    except Exception:
        return 0, "error"


def single_eval(judge: Judge, system_prompt: str, Q: Any, gt: Any, A: Any) -> tuple[Any, str]:
    """evaluator.py: single_eval."""
    return _score_reply(judge([{"role": "system", "content": system_prompt},
                               {"role": "user", "content": user_message(Q, gt, A)}]))


def listed_focus(detailed_description: str, tag: str) -> str:
    """evaluator.py: listed_eval + single_eval_in_list: the focus is Detailed_description
    and the tag glued together (no space), plus " (Tolerable mistakes: ...)" when a colour
    that VLMs misread (navy, olive, maroon, silver) occurs in it."""
    focus = detailed_description + tag
    hint = color_hint(focus)
    return f"{focus} ({hint})" if hint else focus


def listed_user_message(Q: Any, gt: Any, A: Any, focus: str) -> str:
    """evaluator.py: single_eval_in_list. quirk: no newline before "focus:"."""
    return f"question: {Q}\ngt: {gt}\nanswer from VLM: {A}focus: {focus}"


def single_eval_in_list(judge: Judge, Q: Any, gt: Any, A: Any, focus: str) -> tuple[Any, str]:
    """evaluator.py: single_eval_in_list with system prompt LISTED_PROMPT + LISTED_EXAMPLE."""
    return _score_reply(judge([{"role": "system", "content": LISTED_PROMPT + LISTED_EXAMPLE},
                               {"role": "user", "content": listed_user_message(Q, gt, A, focus)}]))


def objects_messages(gt_obj_list: Sequence[str], A: Any) -> Messages:
    """evaluator.py: important_obj_eval / listed_eval: the object-extraction request."""
    return [{"role": "system", "content": IMPORTANT_OBJECT_PROMPT2},
            {"role": "user", "content": json.dumps({"list": list(gt_obj_list), "sentence": A})}]


def _list_reply(reply: str | None) -> list[Any] | None:
    """evaluator.py: ``json.loads(response)['list']``; None when that raises (-> 0, "Error")."""
    try:
        return json.loads(reply)["list"]  # type: ignore[arg-type]
    except Exception:
        return None


# --------------------------------------------------------------------------------------
# System prompt per question (evaluator.py: evaluate_question's dispatch)
# --------------------------------------------------------------------------------------

def future_gt_string(frame_number: int, future_answers: Sequence[Mapping[str, Any]] | None,
                     frame_rate: float = FRAME_RATE, n: int = 5) -> str:
    """evaluator.py: get_future_gt_string (only used when LOOK_FUTURE is on; off by default)."""
    if future_answers is None:
        return ""
    out = f"Current frame is {frame_number}. Here are gts of this question now and in the future: "
    for fa in future_answers[:min(n, len(future_answers))]:
        idx = fa["frame_number"]
        out += json.dumps({"frame": f"{idx} ({(idx - frame_number) / frame_rate}s later)",
                           "gt": fa["qdata"][0]["actual_gt"]})
    return out


def ego_speed(anno_dir: str | os.PathLike[str], frame_number: int) -> float:
    """evaluator.py: brake_eval: the ``speed`` of the ego_vehicle record in
    ``anno/<frame:05d>.json.gz`` ``bounding_boxes`` (not the file's top-level "speed");
    4.0 when the file does not exist; a file that exists but does not load, or has no
    ego record, crashes the reference."""
    path = _anno_file(anno_dir, frame_number)
    if not os.path.exists(path):
        return DEFAULT_EGO_SPEED
    ego = _ego_record(load_json_gz(path))
    if "speed" not in ego:
        raise ReferenceCrash("ego_vehicle record has no 'speed'")
    return ego["speed"]


def system_prompt_for(qid: int, *, speed: float | None = None, frame_number: int = 0,
                      future_answers: Sequence[Mapping[str, Any]] | None = None,
                      frame_rate: float = FRAME_RATE) -> str:
    """The system prompt of a judge-scored question (evaluator.py: speed_limit_eval,
    brake_eval, ego_change_lane_dir, other_vehicle_change_lane_dir, future_acceptable_eval,
    simple_eval). ``speed`` is Q8's ego speed (see :func:`ego_speed`)."""
    if qid == 7:  # speed_limit_eval: no NORMAL_EXAMPLE
        p = SYSTEM_PROMPT + (FUTURE_PROMPT if future_answers is not None else "")
        return p + future_gt_string(frame_number, future_answers, frame_rate, TRAFFIC_SIGN_FUTURE) + Q7_APPENDIX
    if qid == 8:  # brake_eval
        s = DEFAULT_EGO_SPEED if speed is None else speed
        return SYSTEM_PROMPT + NORMAL_EXAMPLE + (q8_appendix(s) if s < LOW_SPEED else "")
    if qid == 31:
        return SYSTEM_PROMPT + NORMAL_EXAMPLE + Q31_APPENDIX
    if qid == 30:
        return SYSTEM_PROMPT + NORMAL_EXAMPLE + Q30_APPENDIX
    if qid in FUTURE_QIDS:  # future_acceptable_eval: no NORMAL_EXAMPLE
        p = SYSTEM_PROMPT + (FUTURE_PROMPT if future_answers is not None else "")
        return p + future_gt_string(frame_number, future_answers, frame_rate, TRAFFIC_SIGN_FUTURE)
    return SYSTEM_PROMPT + NORMAL_EXAMPLE  # simple_eval


# --------------------------------------------------------------------------------------
# Q19: important objects, ranked (evaluator.py: important_obj_eval)
# --------------------------------------------------------------------------------------

def q19_weights(gt_obj_dict: Mapping[str, str], key_object_infos: Mapping[str, Any]) -> tuple[dict[str, float], float]:
    """evaluator.py: important_obj_eval, weights: base 3 when the tag's info has is_role or
    is_dangerous (1 when the tag is not in key_object_infos), position n*5/4 - i, product
    normalised by max(sum, 1). Returns (description -> weight, extra-object weight =
    smallest normalised final weight / 2). With no GT object the extra weight is 100 / 2."""
    n = len(gt_obj_dict)
    raw: dict[str, float] = {}
    low = 100.0
    for i, (desc, tag) in enumerate(gt_obj_dict.items()):
        info = key_object_infos.get(tag) if tag is not None else None
        base = 3.0 if info is not None and (info.get("is_role", False) or info.get("is_dangerous", False)) else 1.0
        raw[desc] = base * (n * ORDER_RATIO / (ORDER_RATIO - 1.0) - i)
        low = min(low, raw[desc])
    total = max(sum(raw.values()), 1.0)
    return {d: w / total for d, w in raw.items()}, (low / total) / EXTRA_RATIO


def q19_from_lists(gt_obj_dict: Mapping[str, str], vlma_obj_list: Sequence[Any],
                   key_object_infos: Mapping[str, Any]) -> tuple[float, dict[str, Any]]:
    """evaluator.py: important_obj_eval after the judge: score = min(100*NDCG, 100) * F1.
    Every mention counts (a repeated object adds its weight to TP again, a repeated extra
    to FP again). No GT object -> NDCG 0 -> score 0."""
    gt_list = list(gt_obj_dict)
    weights, extra_w = q19_weights(gt_obj_dict, key_object_infos)
    try:
        included = [o for o in vlma_obj_list if o in gt_list]
        ndcg_score = min(ndcg(gt_list, included, weights) * 100.0, 100.0)
        all_w = dict(weights)
        for o in vlma_obj_list:
            if o not in gt_list:
                all_w[o] = extra_w
        tp = sum(all_w[o] for o in vlma_obj_list if o in gt_obj_dict)
        fp = sum(all_w[o] for o in vlma_obj_list if o not in gt_obj_dict)
        fn = sum(weights[o] for o in gt_list if o not in vlma_obj_list)
    except TypeError as exc:  # e.g. a dict inside the judge's list
        raise ReferenceCrash(f"Q19: {exc}") from exc
    precision = tp / (tp + fp) if tp + fp > 0 else 0
    recall = tp / (tp + fn) if tp + fn > 0 else 0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return ndcg_score * f1, {"gt_obj_list": gt_list, "vlma_obj_list": list(vlma_obj_list), "weights": all_w,
                             "ndcg_score": ndcg_score, "f1_score": f1 * 100.0}


def important_obj_eval(Q: Any, gt: str, A: Any, key_object_infos: Mapping[str, Any],
                       judge: Judge) -> tuple[float, Any]:
    """evaluator.py: important_obj_eval: GT objects parsed from the GT text; one judge call
    (IMPORTANT_OBJECT_PROMPT2) names the answer's objects with the GT descriptions; a reply
    without a JSON "list" -> (0, "Error")."""
    gt_obj_dict = parse_objects(gt)
    got = _list_reply(judge(objects_messages(list(gt_obj_dict), A)))
    if got is None:
        return 0, "Error"
    return q19_from_lists(gt_obj_dict, got, key_object_infos)


# --------------------------------------------------------------------------------------
# Multi-object questions 24, 25, 27, 28, 29, 46, 47 (evaluator.py: listed_eval)
# --------------------------------------------------------------------------------------

def fp_weight(qid: int) -> float:
    """evaluator.py: listed_eval: FP_WEIGHT."""
    return 1.5 if qid in HEAVY_FP_QIDS else 0.25


def listed_weights(object_tags: Sequence[str], key_object_infos: Mapping[str, Any]) -> dict[str, float]:
    """evaluator.py: listed_eval step 3: tag -> 3 (is_role or is_dangerous) else 1, for the
    question's ``object_tags`` only (not normalised)."""
    out: dict[str, float] = {}
    for tag in object_tags:
        if tag not in key_object_infos:
            raise ReferenceCrash(f"object_tags names {tag!r}, not in key_object_infos (KeyError)")
        info = key_object_infos[tag]
        out[tag] = ROLE_WEIGHT if info.get("is_role", False) else DANGER_WEIGHT if info.get("is_dangerous", False) else 1
    return out


def listed_from_lists(qid: int, gt_obj_dict: Mapping[str, str], vlma_obj_list: Sequence[Any],
                      weights: Mapping[str, float], object_scores: Mapping[str, Any]) -> tuple[float, dict[str, Any]]:
    """evaluator.py: listed_eval steps 5-6.

    F1: a mentioned GT object adds its tag's weight to TP only when the tag is one of the
    question's object_tags; a mention not in the GT list adds FP_WEIGHT; an unmentioned GT
    object whose tag is in object_tags adds its weight to FN. Object score:
    sum(s * w) / max(1, sum(w)) over mentions of GT objects, where a GT object whose tag is
    not in object_tags weighs FP_WEIGHT in the denominator and nothing in the numerator.
    Score = min(F1 * object score, 100); the judge's per-object scores are not clamped.
    """
    fp_w = fp_weight(qid)
    gt_list = list(gt_obj_dict)
    for tag, s in object_scores.items():  # the reference formats every one with :.2f
        if not isinstance(s, (int, float)):
            raise ReferenceCrash(f"per-object score {s!r} for {tag} is not a number")
    tp = fp = fn = 0.0
    for o in vlma_obj_list:
        if o in gt_list:
            if gt_obj_dict[o] in weights:
                tp += weights[gt_obj_dict[o]]
        else:
            fp += fp_w
    for o in gt_list:
        if o not in vlma_obj_list and gt_obj_dict[o] in weights:
            fn += weights[gt_obj_dict[o]]
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    den = max(1.0, sum(weights.get(gt_obj_dict[o], fp_w) for o in vlma_obj_list if o in gt_list))
    num = sum(object_scores[gt_obj_dict[o]] * weights.get(gt_obj_dict[o], fp_w)
              for o in vlma_obj_list if o in gt_list and gt_obj_dict[o] in object_scores)
    raw = num / den
    return min(f1 * raw, 100.0), {"gt_obj_list": gt_list, "vlma_obj_list": list(vlma_obj_list),
                                  "f1_score": f1 * 100.0, "raw_score": raw}


def listed_eval(qid: int, Q: Any, gt: str, A: Any, object_tags: Sequence[str],
                key_object_infos: Mapping[str, Any], judge: Judge) -> tuple[float, Any]:
    """evaluator.py: listed_eval: 1 judge call naming the answer's objects (a failed reply
    -> (0, "Error") before anything else), then one judge call per tag of ``object_tags``
    (in order, whether or not the answer mentions it) with the focus
    Detailed_description + tag."""
    gt_obj_dict = parse_objects(gt)
    got = _list_reply(judge(objects_messages(list(gt_obj_dict), A)))
    if got is None:
        return 0, "Error"
    weights = listed_weights(object_tags, key_object_infos)
    scores: dict[str, Any] = {}
    for tag in object_tags:
        desc = key_object_infos[tag].get("Detailed_description")
        if not isinstance(desc, str):
            raise ReferenceCrash(f"key_object_infos[{tag!r}] has no Detailed_description text")
        scores[tag] = single_eval_in_list(judge, Q, gt, A, listed_focus(desc, tag))[0]
    return listed_from_lists(qid, gt_obj_dict, got, weights, scores)


# --------------------------------------------------------------------------------------
# Q43 / Q50: control keys (evaluator.py)
# --------------------------------------------------------------------------------------

DIRECTION_KEYS = frozenset({"FOLLOW_LANE", "CHANGE_LANE_LEFT", "CHANGE_LANE_RIGHT", "DEVIATE_LEFT", "DEVIATE_RIGHT",
                            "GO_STRAIGHT", "TURN_LEFT", "TURN_RIGHT"})
SPEED_KEYS = frozenset({"KEEP", "ACCELERATE", "DECELERATE", "STOP"})
#: evaluator.py: extract_keys: whole words, case-sensitive.
KEY_PATTERN = re.compile(r"\b(FOLLOW_LANE|CHANGE_LANE_LEFT|DEVIATE_LEFT|DEVIATE_RIGHT|CHANGE_LANE_RIGHT|GO_STRAIGHT"
                         r"|TURN_LEFT|TURN_RIGHT|KEEP|ACCELERATE|DECELERATE|STOP)\b")
#: evaluator.py: compute_weighted_f1_score: speed_penalty[gt][pred] (a missing pair, and the same key, is 1.0).
SPEED_PENALTY: dict[str, dict[str, float]] = {
    "KEEP": {"ACCELERATE": 1.2, "DECELERATE": 1.1, "STOP": 1.0},
    "ACCELERATE": {"KEEP": 1.0, "DECELERATE": 1.0, "STOP": 1.0},
    "DECELERATE": {"KEEP": 1.0, "ACCELERATE": 0.8, "STOP": 1.0},
    "STOP": {"KEEP": 0.5, "ACCELERATE": 0.25, "DECELERATE": 1.0},
}


def extract_keys(text: str) -> list[str]:
    """evaluator.py: extract_keys (Q50): every key word anywhere in the text, as a set
    (direction keys, then speed keys; sorted here, the reference's set order is arbitrary
    and does not matter)."""
    found = set(KEY_PATTERN.findall(text))
    return sorted(found & DIRECTION_KEYS) + sorted(found & SPEED_KEYS)


def compute_weighted_f1_score(gt: Sequence[Any], pred: Sequence[Any]) -> tuple[float, float, float]:
    """evaluator.py: compute_weighted_f1_score -> (min(1, F1 * penalty), F1, penalty).
    F1 over the key sets (both empty -> 0); FOLLOW_LANE in pred becomes GO_STRAIGHT when the
    GT has GO_STRAIGHT; penalty = product of SPEED_PENALTY[g].get(p, 1) over every GT
    speed key g and every predicted label p (lists, repeats included)."""
    if "GO_STRAIGHT" in gt:
        pred = ["GO_STRAIGHT" if p == "FOLLOW_LANE" else p for p in pred]
    try:
        gs, ps = set(gt), set(pred)
    except TypeError as exc:
        raise ReferenceCrash(f"unhashable key: {exc}") from exc
    tp, fp, fn = len(gs & ps), len(ps - gs), len(gs - ps)
    precision = tp / (tp + fp) if tp + fp > 0 else 0
    recall = tp / (tp + fn) if tp + fn > 0 else 0
    penalty = 1.0
    for g in gt:
        if g in SPEED_PENALTY:
            for p in pred:
                penalty *= SPEED_PENALTY[g].get(p, 1.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0
    return min(1, f1 * penalty), f1, penalty


def spd_dir_key_eval(gt: Sequence[Any], pred: Sequence[Any]) -> tuple[float, dict[str, Any]]:
    """evaluator.py: spd_dir_key_eval: 100 * weighted F1."""
    w, f1, pen = compute_weighted_f1_score(gt, pred)
    return w * 100, {"gt": list(gt), "prediction": list(pred), "weighted_f1-score": w, "f1-score": f1,
                     "penalty": pen}


def q50_eval(A: str, gt_text: str) -> tuple[float, dict[str, Any]]:
    """evaluator.py: spd_dir_key_eval_50: regex keys from both texts, no judge."""
    return spd_dir_key_eval(extract_keys(gt_text), extract_keys(A))


def keys_messages(text: Any, is_answer: bool) -> Messages:
    """evaluator.py: extract_keys_by_llm's request (KEY_43_A_PROMPT for the answer,
    KEY_43_GT_PROMPT for the ground truth; the text JSON-encoded as a string)."""
    return [{"role": "system", "content": KEY_43_A_PROMPT if is_answer else KEY_43_GT_PROMPT},
            {"role": "user", "content": json.dumps(text)}]


def parse_keys_reply(reply: str | None) -> list[Any] | None:
    """evaluator.py: extract_keys_by_llm's parsing: a JSON list is returned as is; an object
    gives [direction_key (or Direction_key), speed_key (or Speed_key)] leaving out absent or
    null ones; any other JSON -> []; unparseable -> None (which later crashes the reference)."""
    try:
        data = json.loads(reply)  # type: ignore[arg-type]
    except Exception:
        return None
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        direction = data.get("Direction_key", data.get("direction_key"))
        speed = data.get("Speed_key", data.get("speed_key"))
        return [k for k in (direction, speed) if k is not None]
    return []


def q43_eval(A: Any, gt_text: Any, judge: Judge) -> tuple[float, Any]:
    """evaluator.py: spd_dir_key_eval_43: the judge extracts the GT's keys, then the
    answer's. When the GT has CHANGE_LANE_LEFT/RIGHT and the answer only CHANGE_LANE, the
    score is the mean of the score as is and with CHANGE_LANE replaced by the GT's
    direction. An unparseable reply crashes the reference (``in None``)."""
    gt = parse_keys_reply(judge(keys_messages(gt_text, False)))
    pred = parse_keys_reply(judge(keys_messages(A, True)))
    if gt is None or pred is None:
        raise ReferenceCrash("Q43: a key-extraction reply is not JSON (the reference does 'x in None')")
    if ("CHANGE_LANE_LEFT" in gt or "CHANGE_LANE_RIGHT" in gt) and "CHANGE_LANE" in pred:
        s1, r1 = spd_dir_key_eval(gt, pred)
        lane = "CHANGE_LANE_LEFT" if "CHANGE_LANE_LEFT" in gt else "CHANGE_LANE_RIGHT"
        s2, r2 = spd_dir_key_eval(gt, [lane if p == "CHANGE_LANE" else p for p in pred])
        return (s1 + s2) / 2.0, {"unspecified_lane_change": True, "as_is": r1, "as_gt": r2}
    return spd_dir_key_eval(gt, pred)


# --------------------------------------------------------------------------------------
# Q42: offline waypoint simulation (offline_simulation.py, math_utils.py)
# --------------------------------------------------------------------------------------

COLLISION_PENALTY = 0.5      # offline_simulation.py: simulate_action
COLLISION_RADIUS = 0.1       # offline_simulation.py: simulate_action
COLLISION_RANGE = 60.0       # offline_simulation.py: check_scene_overlap
COLLISION_SHARE = 0.6        # final = 0.6 * collision + 0.4 * efficiency
EFFICIENCY_SHARE = 0.4


def to_world(ego_xyz: Sequence[float], world2ego: Sequence[Sequence[float]]) -> tuple[float, float, float]:
    """math_utils.py: transform_to_world_coordinates: inverse(world2ego) @ [x, y, z, 1]."""
    p = np.linalg.inv(np.array(world2ego, dtype=float)) @ np.array([*ego_xyz, 1.0], dtype=float)
    return float(p[0]), float(p[1]), float(p[2])


def yaw_deg(start: Sequence[float], end: Sequence[float]) -> float:
    """math_utils.py: calculate_yaw: atan2(dy, dx) in degrees, moved into [0, 360)."""
    y = float(np.degrees(np.arctan2(end[1] - start[1], end[0] - start[0])))
    return y + 360 if y < 0 else y


def mean_angle(a1: float, a2: float) -> float:
    """math_utils.py: get_mean_angle: a2 (mod 360) shifted by -360/-180/0/+180, whichever is
    nearest a1 (mod 360), averaged with a1 (quirk: a 180-degree flip counts as the same heading)."""
    a1, a2 = a1 % 360, a2 % 360
    near = min((a2 - 360, a2 - 180, a2, a2 + 180), key=lambda c: abs(c - a1))
    return (a1 + near) / 2


def planar_distance(p: Sequence[float], q: Sequence[float]) -> float:
    """math_utils.py: calculate_distance (x, y only)."""
    return math.sqrt((q[0] - p[0]) ** 2 + (q[1] - p[1]) ** 2)


def rect_corners(cx: float, cy: float, yaw: float, ex: float, ey: float) -> list[tuple[float, float]]:
    """math_utils.py: calculate_rectangle_corners (half extents, yaw in degrees)."""
    t = math.radians(yaw)
    c, s = math.cos(t), math.sin(t)
    return [(cx + x * c - y * s, cy + x * s + y * c) for x, y in ((-ex, ey), (ex, ey), (ex, -ey), (-ex, -ey))]


def rects_intersect(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]]) -> bool:
    """math_utils.py: is_intersecting_and_iou's flag: shapely's intersection is not empty,
    i.e. the rectangles overlap *or touch*. Separating-axis test on the edge normals;
    touching (projections meeting at a point) counts as intersecting."""
    for poly in (a, b):
        for i in range(len(poly)):
            x1, y1 = poly[i]
            x2, y2 = poly[(i + 1) % len(poly)]
            nx, ny = y2 - y1, x1 - x2
            pa = [nx * x + ny * y for x, y in a]
            pb = [nx * x + ny * y for x, y in b]
            if max(pa) < min(pb) or max(pb) < min(pa):
                return False
    return True


def scene_collisions(ego_xy: Sequence[float], ego_yaw: float, ego_extent: Sequence[float], measurement: Any,
                     radius: float = COLLISION_RADIUS) -> list[Mapping[str, Any]]:
    """offline_simulation.py: check_scene_overlap: the 'vehicle' and 'walker' boxes closer
    than 60 m (their own 'distance' field) whose rectangle, grown by ``radius`` on each
    half extent, meets the ego's grown rectangle. Returns those boxes."""
    if not isinstance(measurement, Mapping):
        raise ReferenceCrash(f"future annotation did not load ({measurement!r})")
    ego = rect_corners(ego_xy[0], ego_xy[1], ego_yaw, ego_extent[0] + radius, ego_extent[1] + radius)
    hits = []
    try:
        for box in measurement.get("bounding_boxes", []):
            if box["class"] in ("vehicle", "walker") and box["distance"] < COLLISION_RANGE:
                _ = box["world_cord"]  # read (and required) by the reference, unused
                loc, ext = box["location"], box["extent"]
                other = rect_corners(loc[0], loc[1], box["rotation"][2], ext[0] + radius, ext[1] + radius)
                if rects_intersect(ego, other):
                    hits.append(box)
    except KeyError as exc:
        raise ReferenceCrash(f"bounding box without {exc}") from exc
    return hits


def simulate_action(A: Any, anno_dir: str | os.PathLike[str], frame_number: int,
                    frame_rate: float = FRAME_RATE) -> tuple[float, Any]:
    """offline_simulation.py: simulate_action (Q42), no judge.

    The answer is a JSON object {"<t>s": [x, y], ...} of ego-frame waypoints, taken in the
    object's order. Each waypoint goes to world coordinates with the current frame's
    ego world2ego; its heading is the mean of the headings in and out of it (the previous
    heading when it moved <= 0.1 m); the ego box (current extent) is checked against the
    annotation of frame + int(t * frame_rate). Each distinct colliding object id halves the
    collision score. Efficiency = min(1, predicted distance / GT distance) from the current
    position to the farthest-in-time waypoint vs the ego's real position then (1 when the
    real ego moved <= 1 m). Score = 100 * (0.6 * collision + 0.4 * efficiency).
    Not JSON -> (0, "JSON has incorrect format.").
    """
    if isinstance(A, list):
        A = A[0]
    text = clean_json_string(A)
    try:
        wps = json.loads(text)
    except json.JSONDecodeError:
        return 0, "JSON has incorrect format."
    if not isinstance(wps, dict):
        raise ReferenceCrash(f"waypoints are not a JSON object: {type(wps).__name__}.keys()")
    ego = _ego_record(load_json_gz(_anno_file(anno_dir, frame_number)))
    world2ego, here, rotation, extent = ego["world2ego"], ego["location"], ego["rotation"], ego["extent"]

    points: list[dict[str, Any]] = [{"dt": 0.0, "frame": frame_number, "world": here}]
    max_df, last_wp = 0, here
    last_dt = 0.0
    for key, rel in wps.items():
        try:
            dt = float(key[:-1])
        except ValueError as exc:
            raise ReferenceCrash(f"waypoint key {key!r}") from exc
        df = int(dt * frame_rate)
        if not isinstance(rel, list) or len(rel) != 2:
            raise ReferenceCrash(f"waypoint {key!r} is not [x, y]: {rel!r}")
        world = to_world([*rel, 0], world2ego)
        if df > max_df:
            max_df, last_wp = df, world
        points.append({"dt": dt, "frame": frame_number + df, "world": world})
        last_dt = dt

    collided: dict[Any, Mapping[str, Any]] = {}
    last_yaw = rotation[2]
    for i in range(1, len(points)):
        prev, cur = points[i - 1]["world"], points[i]["world"]
        if planar_distance(prev, cur) > 0.1:
            y1 = yaw_deg(prev, cur)
            y2 = yaw_deg(cur, points[i + 1]["world"]) if i < len(points) - 1 else y1
            yaw = mean_angle(y1, y2)
        else:
            yaw = last_yaw
        for box in scene_collisions(cur, yaw, extent, load_json_gz(_anno_file(anno_dir, points[i]["frame"]))):
            collided.setdefault(box["id"], box)
        last_yaw = yaw
    collision = COLLISION_PENALTY ** len(collided)

    last = _ego_record(load_json_gz(_anno_file(anno_dir, frame_number + max_df)))
    gt_dist = planar_distance(here, last["location"])
    pred_dist = planar_distance(here, last_wp)
    efficiency = min(1.0, float(pred_dist) / float(gt_dist)) if gt_dist > 1.0 else 1.0
    score = (collision * COLLISION_SHARE + efficiency * EFFICIENCY_SHARE) * 100
    return score, {"collided_ids": list(collided), "collision_score": collision, "efficiency": efficiency,
                   "gt_distance": gt_dist, "pred_distance": pred_dist,
                   "reported_delta_time": last_dt}  # quirk: the reference reports the last key's time


# --------------------------------------------------------------------------------------
# One question (evaluator.py: evaluate_question)
# --------------------------------------------------------------------------------------

def score_question(qid: int, Q: Any, gt: Any, A: Any, *, judge: Judge, key_object_infos: Mapping[str, Any],
                   object_tags: Sequence[str] = (), anno_dir: str | os.PathLike[str] = "",
                   frame_number: int = 0, frame_rate: float = FRAME_RATE,
                   future_answers: Sequence[Mapping[str, Any]] | None = None) -> tuple[float, Any]:
    """evaluator.py: evaluate_question: dispatch on qid, then round(score, 2).
    ``gt`` is the question's ``actual_gt``, which is the published ``A`` unchanged
    (qa_process.py: process_qa_by_qid keeps the GT); ``Q`` is the published ``Q``."""
    while isinstance(A, list):
        A = A[0]
    if qid == 19:
        score, why = important_obj_eval(Q, gt, A, key_object_infos, judge)
    elif qid in LISTED_QIDS:
        score, why = listed_eval(qid, Q, gt, A, object_tags, key_object_infos, judge)
    elif qid == 42:
        score, why = simulate_action(A, anno_dir, frame_number, frame_rate)
    elif qid == 43:
        score, why = q43_eval(A, gt, judge)
    elif qid == 50:
        if not isinstance(A, str):
            raise ReferenceCrash("Q50 answer is not text")
        score, why = q50_eval(A, gt)
    else:
        speed = ego_speed(anno_dir, frame_number) if qid == 8 else None
        system = system_prompt_for(qid, speed=speed, frame_number=frame_number, future_answers=future_answers,
                                   frame_rate=frame_rate)
        score, why = single_eval(judge, system, Q, gt, A)
    try:
        return round(score, SCORE_ROUND_DIGIT), why
    except TypeError as exc:
        raise ReferenceCrash(f"score {score!r} cannot be rounded") from exc


def evaluate_question(qdict: Mapping[str, Any], *, judge: Judge, key_object_infos: Mapping[str, Any],
                      anno_dir: str | os.PathLike[str], frame_number: int, frame_rate: float = FRAME_RATE,
                      future_answers: Sequence[Mapping[str, Any]] | None = None) -> tuple[float, Any]:
    """evaluator.py: evaluate_question on an inference record (``qid``, ``Q``,
    ``actual_gt`` (else ``A``), ``VLM_answer``, ``object_tags``)."""
    gt = qdict["actual_gt"] if "actual_gt" in qdict else qdict["A"]
    return score_question(int(qdict["qid"]), qdict["Q"], gt, qdict["VLM_answer"], judge=judge,
                          key_object_infos=key_object_infos, object_tags=qdict.get("object_tags") or (),
                          anno_dir=anno_dir, frame_number=frame_number, frame_rate=frame_rate,
                          future_answers=future_answers)


# --------------------------------------------------------------------------------------
# Data layout (eval_dataset.py: B2DVLEvalDataset) and a whole run (eval_workers.py)
# --------------------------------------------------------------------------------------

def published_frames(vqa_root: str | os.PathLike[str]) -> list[tuple[str, int, Path]]:
    """eval_dataset.py / b2dvl_dataset.py: ``<VQA>/<scenario>/<frame:05d>.json``: scenario
    folders containing "_" (others ignored), sorted; frames by number. The annotation is
    ``<B2D>/<scenario>/anno/<frame:05d>.json.gz``; the images
    ``<B2D>/<scenario>/camera/<rgb_front|rgb_front_left|...>/<frame:05d>.jpg``."""
    root = Path(vqa_root)
    out = []
    for sdir in sorted(p for p in root.iterdir() if p.is_dir() and "_" in p.name):
        frames = sorted((int(f.name.split(".")[0]), f) for f in sdir.iterdir() if f.name.endswith(".json"))
        out += [(sdir.name, n, f) for n, f in frames]
    return out


def evaluate_published(vqa_root: str | os.PathLike[str], b2d_root: str | os.PathLike[str],
                       answer: Callable[[str, int, str, int, Mapping[str, Any]], Any], judge: Judge,
                       frame_rate: float = FRAME_RATE) -> list[dict[str, Any]]:
    """eval_workers.py: EvalWorker.process_scenario over a published layout, as if the
    inference run had asked every published question: one record per question
    (scenario, frame, category, index, qid, score, reason). ``answer(scenario, frame,
    category, index, qa)`` is the model's answer. (The real inference output puts every
    question under one category "Category"; the score does not depend on it.)"""
    records = []
    for scenario, frame, path in published_frames(vqa_root):
        doc = json.loads(path.read_text(encoding="utf-8"))
        infos = doc["key_object_infos"]
        for category, items in doc["QA"].items():
            for i, qa in enumerate(items):
                rec = dict(qa, actual_gt=qa["A"], VLM_answer=answer(scenario, frame, category, i, qa))
                score, why = evaluate_question(rec, judge=judge, key_object_infos=infos,
                                               anno_dir=Path(b2d_root) / scenario / "anno", frame_number=frame,
                                               frame_rate=frame_rate)
                records.append({"scenario": scenario, "frame": frame, "category": category, "index": i,
                                "qid": qa["qid"], "score": score, "reason": why})
    return records


# --------------------------------------------------------------------------------------
# Aggregation (stats.py: make_stats; tools/vqa_eval_stats.py: process_run_eval)
# --------------------------------------------------------------------------------------

def scenario_type(folder: str) -> str:
    """stats.py: make_stats: the scenario *type* is the folder name up to the first "_"."""
    return folder.split("_")[0]


def make_stats(records: Iterable[tuple[str, Any, float]]) -> dict[str, Any]:
    """stats.py: make_stats on (folder, qid, score) triples: plain means (numpy), rounded to
    4 digits, overall / per qid / per scenario type / per type and qid; 0 with no score."""
    every: list[float] = []
    by_qid: dict[Any, list[float]] = defaultdict(list)
    by_type: dict[str, list[float]] = defaultdict(list)
    by_type_qid: dict[str, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for folder, qid, score in records:
        t = scenario_type(folder)
        every.append(score)
        by_qid[qid].append(score)
        by_type[t].append(score)
        by_type_qid[t][qid].append(score)

    def mean(xs: list[float]) -> float:
        return round(float(np.mean(xs)), STATS_ROUND_DIGIT)

    return {"overall_avg": mean(every) if every else 0,
            "qid_avg_scores": {q: mean(v) for q, v in by_qid.items()},
            "scenario_avg_scores": {t: mean(v) for t, v in by_type.items()},
            "scenario_qid_avg_scores": {t: {q: mean(v) for q, v in d.items()} for t, d in by_type_qid.items()}}


def make_stats_from_dir(eval_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """stats.py: make_stats(eval_dir): ``<eval_dir>/<folder>/<frame>.json`` with
    ``QA: {category: [{qid, score}]}``; frames in numeric order."""
    recs = []
    root = Path(eval_dir)
    for sdir in sorted(root.iterdir(), key=lambda p: p.name):
        if not sdir.is_dir():
            continue
        for f in sorted((f for f in sdir.iterdir() if f.name.endswith(".json")), key=lambda f: int(f.stem)):
            qa = json.loads(f.read_text(encoding="utf-8"))["QA"]
            recs += [(sdir.name, item["qid"], item["score"]) for cat in qa for item in qa[cat]]
    return make_stats(recs)


def route_stats(eval_base: str | os.PathLike[str], save_names: Sequence[str]) -> dict[str, Any]:
    """tools/vqa_eval_stats.py: process_run_eval: for each route folder
    ``<eval_base>/<save_name>`` (missing ones skipped), the mean and count of each qid's
    scores over ``QA["Category"]`` of its *.json files (unrounded sum/len); "overall" pools
    every route. qid keys are strings."""
    per: dict[str, Any] = {}
    pooled: dict[Any, list[float]] = defaultdict(list)
    for name in save_names:
        d = Path(eval_base) / name
        if not d.exists():
            continue
        mine: dict[Any, list[float]] = defaultdict(list)
        for f in sorted(p for p in d.iterdir() if p.name.endswith(".json")):
            for qa in json.loads(f.read_text()).get("QA", {}).get("Category", []):
                q, s = qa.get("qid"), qa.get("score")
                if q is not None and s is not None:
                    mine[q].append(s)
                    pooled[q].append(s)
        per[name] = {str(q): {"average_score": sum(v) / len(v), "count": len(v)} for q, v in mine.items()}
    return {"per_scenario": per,
            "overall": {str(q): {"average_score": sum(v) / len(v), "count": len(v)} for q, v in pooled.items()}}
