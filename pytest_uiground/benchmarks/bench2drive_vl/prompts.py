"""The judge's messages for Bench2Drive-VL, built exactly as the reference builds them.

The texts are the reference's (:mod:`.reference_prompts`), so judged numbers are
comparable with published tables made with the same judge model. Message shapes follow
Thinklab-SJTU/Bench2Drive-VL @5896a851 ``B2DVL_Adapter/evaluator.py``: ``single_eval``
(``question: ...\\ngt: ...\\nanswer from VLM: ...``), ``single_eval_in_list`` (the same plus
``focus: ...`` with no newline before it: the reference's), ``important_obj_eval`` /
``listed_eval`` (``json.dumps({"list": names, "sentence": answer})``) and
``extract_keys_by_llm`` (``json.dumps(text)``). The system prompt per question follows
``evaluate_question``'s dispatch. :data:`PROMPT_HASH` covers every text and template; it
joins the judge's fingerprint, so a baseline judged with other prompts is never compared.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pytest_uiground.benchmarks.bench2drive_vl import reference_prompts as ref
from pytest_uiground.benchmarks.bench2drive_vl.formulas import (
    BRAKING_QID,
    DEFAULT_EGO_SPEED,
    LOW_SPEED_MPS,
    NO_EXAMPLE_QIDS,
    SPEED_LIMIT_QID,
)
from pytest_uiground.record.files import hex_digest

Messages = list[dict[str, str]]

PLAIN_USER = "question: {Q}\ngt: {gt}\nanswer from VLM: {A}"
LISTED_USER = PLAIN_USER + "focus: {focus}"
LISTED_SYSTEM = ref.LISTED_PROMPT + ref.LISTED_EXAMPLE


def system_for(qid: int, ego_speed: float | None = None) -> str:
    """evaluate_question's system prompt for a judge-scored question (LOOK_FUTURE off, the
    reference's default): Q7 speed-limit note without the example; Q2/3/4/15 without the
    example; Q8 the low-speed note below 0.5 m/s; Q30/Q31 the lane-count notes."""
    if qid == SPEED_LIMIT_QID:
        return ref.SYSTEM_PROMPT + ref.SPEED_LIMIT_NOTE
    if qid in NO_EXAMPLE_QIDS:
        return ref.SYSTEM_PROMPT
    plain = ref.SYSTEM_PROMPT + ref.NORMAL_EXAMPLE
    if qid == BRAKING_QID:
        speed = DEFAULT_EGO_SPEED if ego_speed is None else ego_speed
        return plain + (ref.braking_note(speed) if speed < LOW_SPEED_MPS else "")
    if qid == 31:
        return plain + ref.EGO_LANES_NOTE
    if qid == 30:
        return plain + ref.OTHER_LANES_NOTE
    return plain


def _chat(system: str, user: str) -> Messages:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def score_messages(qid: int, question: str, truth: str, answer: str, ego_speed: float | None = None) -> Messages:
    return _chat(system_for(qid, ego_speed), PLAIN_USER.format(Q=question, gt=truth, A=answer))


def objects_messages(gt_names: Sequence[str], answer: str) -> Messages:
    """The object-extraction request: the judge names the answer's objects with the GT names."""
    return _chat(ref.IMPORTANT_OBJECT_PROMPT2, json.dumps({"list": list(gt_names), "sentence": answer}))


def object_score_messages(question: str, truth: str, answer: str, focus: str) -> Messages:
    return _chat(LISTED_SYSTEM, LISTED_USER.format(Q=question, gt=truth, A=answer, focus=focus))


def keys_messages(text: str, *, answer: bool) -> Messages:
    """Q43: the ground truth's keys (no CHANGE_LANE) or the answer's (CHANGE_LANE allowed)."""
    return _chat(ref.KEY_43_A_PROMPT if answer else ref.KEY_43_GT_PROMPT, json.dumps(text))


def _hash() -> str:
    parts = (ref.SYSTEM_PROMPT, ref.NORMAL_EXAMPLE, ref.LISTED_PROMPT, ref.LISTED_EXAMPLE,
             ref.IMPORTANT_OBJECT_PROMPT2, ref.KEY_43_GT_PROMPT, ref.KEY_43_A_PROMPT, ref.SPEED_LIMIT_NOTE,
             ref.EGO_LANES_NOTE, ref.OTHER_LANES_NOTE, ref.braking_note(0.0), PLAIN_USER, LISTED_USER)
    return hex_digest("".join(part + "\0" for part in parts), short=True)


#: Every text and template the judge sees; part of the judge's fingerprint.
PROMPT_HASH = _hash()
