"""Score one Bench2Drive-VL answer as the reference's ``evaluator.py: evaluate_question`` does.

Dispatch by question id (Thinklab-SJTU/Bench2Drive-VL @5896a851): Q19 ranks objects
(one judge call), Q24/25/27/28/29/46/47 extract the objects and judge every
``object_tags`` entry, Q42 drives the waypoints through the recorded future (no judge),
Q43 asks the judge for the keys of the ground truth and of the answer, Q50 reads the
keys with a regex (no judge), everything else gets the judge's 0..100 with the
question's system prompt. Every score is rounded to 2 digits before averaging.

The judge sees the raw model output (not trimmed), as the reference's ``VLM_answer``.

Judge replies: a Markdown fence or text around the JSON is tolerated, a score written as
text ("85") is read, a Q43 key list in Python quotes is read (the reference scores these
0 or crashes; see the README). A reply that still cannot be read is an error on the
sample by default (raised as :class:`JudgeParseError`, counted); with
``--uiground-judge-parse-errors zero`` that one call counts 0 exactly where the reference's
silent 0 goes (a plain question: the score; Q19 or the object list: the whole question;
one object of a multi-object question: that object only), and the sample is still
marked and counted as a judge parse error.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from pytest_uiground.benchmarks.bench2drive_vl import formulas as f
from pytest_uiground.benchmarks.bench2drive_vl import prompts
from pytest_uiground.benchmarks.bench2drive_vl.objects import focus_text
from pytest_uiground.benchmarks.bench2drive_vl.simulation import simulate
from pytest_uiground.judges.base import Judge, JudgeParseError, parse_reply, reply_number
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import Score
from pytest_uiground.scoring.scorer import Scorer

_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.IGNORECASE)


def method_for(qid: int) -> str:
    if qid == f.RANKED_OBJECTS_QID:
        return "ranked_objects"
    if qid in f.MULTI_OBJECT_QIDS:
        return "multi_object"
    if qid == f.TRAJECTORY_QID:
        return "trajectory"
    if qid == f.JUDGED_KEYS_QID:
        return "judged_keys"
    if qid == f.REGEX_KEYS_QID:
        return "regex_keys"
    return "judge_score"


def _label(item: Any) -> str:
    return item if isinstance(item, str) else json.dumps(item)


def reply_score(raw: str) -> float:
    """``{"score": n}`` → n as given (not clamped: the reference averages a 120 as 120)."""
    return reply_number(raw)


def reply_names(raw: str) -> list[str]:
    """``{"list": [...]}`` → the object names, in order, repeats kept."""
    value = parse_reply(raw, "list")["list"]
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise JudgeParseError(f"the judge's 'list' is not a list of names: {value!r}", raw)
    return [_label(v) for v in value]


_UNREAD = object()


def _literal(text: str) -> Any:
    """JSON, else a Python literal (the reference's own examples write ['KEEP'])."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _UNREAD


def reply_keys(raw: str) -> list[str]:
    """extract_keys_by_llm's reading: a list as is; an object → [direction_key, speed_key]
    (either capitalisation, nulls dropped); other JSON → no keys."""
    text = _FENCE.sub("", raw.strip())
    data: Any = _literal(text)
    if data is _UNREAD:  # a list or object inside prose
        for opening, closing in (("{", "}"), ("[", "]")):
            start, end = text.find(opening), text.rfind(closing)
            if 0 <= start < end:
                data = _literal(text[start:end + 1])
                if data is not _UNREAD:
                    break
        else:
            raise JudgeParseError("the judge's reply holds no JSON list or object of keys", raw)
    if isinstance(data, (list, tuple)):
        return [_label(k) for k in data]
    if isinstance(data, dict):
        keys = (data.get("Direction_key", data.get("direction_key")), data.get("Speed_key", data.get("speed_key")))
        return [_label(k) for k in keys if k is not None]
    return []


class _Calls:
    """One question's judge calls: counts them and applies the parse-error policy."""

    def __init__(self, judge: Judge, rid: str, repeat: int) -> None:
        self.judge, self.rid, self.repeat = judge, rid, repeat
        self.zero = judge.options.parse_errors == "zero"
        self.count = 0
        self.problems: list[JudgeParseError] = []

    def ask(self, messages: list[dict[str, str]], part: str) -> str:
        self.count += 1
        return self.judge.ask(messages, f"{self.rid}:{part}", repeat=self.repeat)

    def failed(self, exc: JudgeParseError) -> None:
        """The reference's silent 0 for this call under ``zero``; else the sample's error."""
        if not self.zero:
            raise exc
        self.problems.append(exc)


def _ranked(ctx: Mapping[str, Any], answer: str, calls: _Calls) -> tuple[float, dict[str, Any]]:
    gt: dict[str, str] = dict(ctx["gt_objects"])
    try:
        named = reply_names(calls.ask(prompts.objects_messages(list(gt), answer), "objects"))
    except JudgeParseError as exc:
        calls.failed(exc)
        return 0.0, {"gt_objects": list(gt), "named": None}
    r = f.ranked_objects_score(gt, ctx["key_object_infos"], named)
    return r.score, {"gt_objects": list(gt), "named": named, "ndcg": r.ndcg, "f1": r.f1}


def _listed(qid: int, ctx: Mapping[str, Any], answer: str, calls: _Calls) -> tuple[float, dict[str, Any]]:
    gt: dict[str, str] = dict(ctx["gt_objects"])
    infos: Mapping[str, Any] = ctx["key_object_infos"]
    tags: tuple[str, ...] = tuple(ctx["object_tags"])
    try:
        named = reply_names(calls.ask(prompts.objects_messages(list(gt), answer), "objects"))
    except JudgeParseError as exc:
        calls.failed(exc)
        return 0.0, {"gt_objects": list(gt), "named": None}
    scores: dict[str, float] = {}
    for k, tag in enumerate(tags):  # every object_tags entry is judged, named or not
        focus = focus_text(str(infos[tag]["Detailed_description"]), tag)
        messages = prompts.object_score_messages(ctx["Q"], ctx["A"], answer, focus)
        try:
            scores[tag] = reply_score(calls.ask(messages, f"object{k + 1}"))
        except JudgeParseError as exc:
            calls.failed(exc)
            scores[tag] = 0.0
    m = f.multi_object_score(qid, gt, named, f.listed_weights(tags, infos), scores)
    return m.score, {"gt_objects": list(gt), "named": named, "object_scores": scores, "f1": m.f1,
                     "object_score": m.object_score, "fp_weight": m.fp_weight}


def _judged_keys(ctx: Mapping[str, Any], answer: str, calls: _Calls) -> tuple[float, dict[str, Any]]:
    lists: list[list[str]] = []
    for part, text, is_answer in (("truth_keys", ctx["A"], False), ("keys", answer, True)):
        raw = calls.ask(prompts.keys_messages(text, answer=is_answer), part)
        try:
            lists.append(reply_keys(raw))
        except JudgeParseError as exc:  # the reference crashes here; no keys scores 0
            calls.failed(exc)
            lists.append([])
    value, parts = f.q43_score(lists[0], lists[1])
    return value, {"gt_keys": lists[0], "predicted_keys": lists[1], "f1": parts[0].f1,
                   "speed_penalty": parts[0].penalty, "unspecified_lane_change": len(parts) == 2}


def score_vqa(sample: Sample, pred: Prediction, judge: Judge, repeat: int = 0) -> Score:
    """The sample's 0..100 score (rounded to 2 digits), the judge's lists in the notes."""
    ctx = sample.context
    qid = int(ctx["qid"])
    method = method_for(qid)
    answer = pred.raw if pred.raw or not pred.answer else pred.answer
    calls = _Calls(judge, f"{sample.id}#r{repeat}", repeat)
    details: dict[str, Any]
    if method == "ranked_objects":
        value, details = _ranked(ctx, answer, calls)
    elif method == "multi_object":
        value, details = _listed(qid, ctx, answer, calls)
    elif method == "judged_keys":
        value, details = _judged_keys(ctx, answer, calls)
    elif method == "regex_keys":
        c = f.control_keys_score(f.extract_keys(ctx["A"]), f.extract_keys(answer))
        value, details = c.score, {"gt_keys": list(c.gt), "predicted_keys": list(c.predicted), "f1": c.f1,
                                   "speed_penalty": c.penalty}
    elif method == "trajectory":
        annos = ctx["annotations"]
        t = simulate(answer, int(ctx["frame"]), annos.ego, annos.boxes)
        value, details = t.score, {"collided_ids": t.collided, "collision": t.collision,
                                   "efficiency": t.efficiency, "reason": t.reason}
    else:
        messages = prompts.score_messages(qid, ctx["Q"], ctx["A"], answer, ctx.get("ego_speed"))
        try:
            value = reply_score(calls.ask(messages, "score"))
        except JudgeParseError as exc:
            calls.failed(exc)
            value = 0.0
        details = {"judge_score": value}
    notes: dict[str, Any] = {"method": method, "qid": qid, **details, "judge_calls": calls.count}
    if calls.problems:
        first = calls.problems[0]
        notes.update(judge_parse_error=True, judge_problem=first.problem, judge_reply=first.raw[:300],
                     judge_parse_failures=len(calls.problems))
    return Score(round(value, f.SCORE_DIGITS), None, pred.format_error or bool(calls.problems), notes=notes)


#: The suite's scorer (``[scorer] name = "bench2drive_vl"``, registered in pyproject.toml).
SCORER = Scorer(name="bench2drive_vl", judged=score_vqa, prompt_hash=prompts.PROMPT_HASH)
