"""The judge's prompts for Bench2Drive-VL, and their hash.

Every reply is asked for as one JSON object so that it can be parsed or reported as
unparseable. The templates' hash (:data:`PROMPT_HASH`) is part of the judge's
fingerprint: change a word here and old baselines are flagged as made with another
judge.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from .formulas import BRAKING_QID, CONTROL_KEYS, SPEED_LIMIT_QID, STOPPED_SPEED_MPS

SYSTEM = (
    "You are a strict, consistent evaluator of answers to questions about a driving scene seen from the ego "
    "vehicle. You never add commentary outside the JSON object you are asked for."
)

SCORE = (
    "Question: {question}\n"
    "Ground-truth answer: {truth}\n"
    "Answer to evaluate: {answer}\n"
    "{guidance}"
    "Score how well the answer to evaluate agrees with the ground-truth answer, from 0 (wrong or "
    "unrelated) to 100 (fully correct). Reply with exactly one JSON object: "
    '{{"reason": "<one sentence>", "score": <integer 0..100>}}'
)

OBJECTS = (
    "Question: {question}\n"
    "Answer to evaluate: {answer}\n"
    "Objects of the ground truth (id: description):\n{objects}\n"
    "List the objects the answer to evaluate mentions, in the order it mentions them. Use the id of a listed "
    'object when the answer refers to it, and write "extra" once for each object it mentions that is not '
    "listed. Reply with exactly one JSON object: "
    '{{"reason": "<one sentence>", "objects": ["obj2", "extra", ...]}}'
)

ONE_OBJECT = (
    "Question: {question}\n"
    "Ground-truth answer: {truth}\n"
    "Answer to evaluate: {answer}\n"
    "Consider only what the answer to evaluate says about this object: {object}.\n"
    "Score how well that part agrees with what the ground-truth answer says about the same object, from 0 to "
    '100. Reply with exactly one JSON object: {{"reason": "<one sentence>", "score": <integer 0..100>}}'
)

KEYS = (
    "Question: {question}\n"
    "Text: {answer}\n"
    "Which control keys does the text imply for the ego vehicle? Choose only from: {keys}. Use one speed key "
    "(KEEP, ACCELERATE, DECELERATE, STOP) and the direction keys that apply. Reply with exactly one JSON "
    'object: {{"reason": "<one sentence>", "keys": ["KEEP", "FOLLOW_LANE"]}}'
)

BRAKING_GUIDANCE = (
    "Note: the ego vehicle is already (almost) stopped, so an answer saying that no braking is needed because "
    "the vehicle is stopped is also correct.\n"
)
SPEED_LIMIT_GUIDANCE = (
    "Note: overestimating the speed limit is a more serious error than underestimating it; score an "
    "overestimate lower than an underestimate of the same size.\n"
)

_TEMPLATES = (SYSTEM, SCORE, OBJECTS, ONE_OBJECT, KEYS, BRAKING_GUIDANCE, SPEED_LIMIT_GUIDANCE)
PROMPT_VERSION = "b2d-1"
PROMPT_HASH = hashlib.sha256("\0".join((PROMPT_VERSION, *_TEMPLATES)).encode()).hexdigest()[:16]


def messages(user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def guidance(qid: int, ego_speed: float | None) -> str:
    """Extra guidance the reference code gives its judge for some questions.

    Q8 (braking) accepts "no braking needed" only when the ego speed is known and
    below 0.5 m/s. code: the speed-limit guidance goes with Q7 (the docs say Q15).
    """
    if qid == BRAKING_QID and ego_speed is not None and ego_speed < STOPPED_SPEED_MPS:
        return BRAKING_GUIDANCE
    if qid == SPEED_LIMIT_QID:
        return SPEED_LIMIT_GUIDANCE
    return ""


def score_prompt(question: str, truth: str, answer: str, qid: int, ego_speed: float | None) -> list[dict[str, str]]:
    return messages(SCORE.format(question=question, truth=truth, answer=answer, guidance=guidance(qid, ego_speed)))


def objects_prompt(question: str, answer: str, descriptions: Sequence[str]) -> list[dict[str, str]]:
    listed = "\n".join(f"obj{i + 1}: {d}" for i, d in enumerate(descriptions)) or "(none)"
    return messages(OBJECTS.format(question=question, answer=answer, objects=listed))


def one_object_prompt(question: str, truth: str, answer: str, description: str) -> list[dict[str, str]]:
    return messages(ONE_OBJECT.format(question=question, truth=truth, answer=answer, object=description))


def keys_prompt(question: str, text: str) -> list[dict[str, str]]:
    return messages(KEYS.format(question=question, answer=text, keys=", ".join(CONTROL_KEYS)))
