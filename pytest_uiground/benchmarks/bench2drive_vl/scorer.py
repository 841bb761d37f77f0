"""Score one Bench2Drive-VL answer: ask the judge what the rules need, then apply them.

Which rule applies depends on the question id (see :mod:`.formulas`): Q19 ranks
objects, the multi-object questions list and judge objects one by one, Q43/Q50 read
control keys, everything else gets the judge's plain 0..100 score. Judge failures are
raised to the runner, which decides what they cost (see :mod:`pytest_uiground.judges.base`).
"""

from __future__ import annotations

from typing import Any

from pytest_uiground.judges.base import Judge, reply_list, reply_score
from pytest_uiground.prediction import Prediction
from pytest_uiground.sample import Sample
from pytest_uiground.score import Score
from pytest_uiground.scoring import Scorer

from . import formulas, prompts


def method_for(qid: int) -> str:
    if qid == formulas.RANKED_OBJECTS_QID:
        return "ranked_objects"
    if qid in formulas.MULTI_OBJECT_QIDS:
        return "multi_object"
    if qid in formulas.CONTROL_KEY_QIDS:
        return "control_keys"
    return "judge_score"


def _named_tags(reply: list[str], objects: tuple[formulas.GtObject, ...]) -> list[str]:
    """The judge's ``obj<i>`` ids → ground-truth tags; every other entry is a distinct extra."""
    out: list[str] = []
    for k, name in enumerate(reply):
        label = name.lower().strip()
        if label.startswith("obj") and label[3:].isdigit() and 1 <= int(label[3:]) <= len(objects):
            out.append(objects[int(label[3:]) - 1].tag)
        else:
            out.append(f"extra#{k}")
    return out


def score_vqa(sample: Sample, pred: Prediction, judge: Judge, repeat: int = 0) -> Score:
    """The sample's 0..100 score, with the judge's intermediate answers in the score's notes.

    An empty answer scores 0 without asking the judge (and counts as a format error):
    there is nothing to judge.
    """
    ctx = sample.context
    qid = int(ctx.get("qid", -1))
    method = method_for(qid)
    answer = (pred.answer or "").strip()
    details: dict[str, Any] = {"method": method, "qid": qid}
    if not answer:
        details.update(reason="empty answer: scored 0 without asking the judge", judge_calls=0)
        return Score(0.0, None, True, notes=details)
    objects: tuple[formulas.GtObject, ...] = tuple(ctx.get("objects", ()))
    if method == "multi_object" and not objects:
        # Not defined by the reference: with no object to list, judge the answer as a whole.
        method = details["method"] = "judge_score"
    rid = f"{sample.id}#r{repeat}"
    question, truth = sample.instruction, sample.target.answer or ""
    calls = 0

    def ask(messages: list[dict[str, str]], part: str) -> str:
        nonlocal calls
        calls += 1
        return judge.ask(messages, f"{rid}:{part}", repeat=repeat)

    if method == "judge_score":
        raw = ask(prompts.score_prompt(question, truth, answer, qid, ctx.get("ego_speed")), "score")
        value = reply_score(raw)
        details.update(judge_score=value)
    elif method == "ranked_objects":
        descriptions = list(ctx.get("descriptions", ()))
        named = _named_tags(reply_list(ask(prompts.objects_prompt(question, answer, descriptions), "objects"),
                                       "objects"), objects)
        r = formulas.ranked_objects_score(objects, named)
        value = r.score
        details.update(named=named, ndcg=r.ndcg, ndcg_uncapped=r.ndcg_uncapped, f1=r.f1)
    elif method == "multi_object":
        descriptions = list(ctx.get("descriptions", ()))
        named = _named_tags(reply_list(ask(prompts.objects_prompt(question, answer, descriptions), "objects"),
                                       "objects"), objects)
        matched = formulas.match_objects(objects, named).matched
        per_object = {
            objects[i].tag: reply_score(ask(prompts.one_object_prompt(question, truth, answer, descriptions[i]),
                                            f"object{i + 1}"))
            for i in matched
        }
        m = formulas.multi_object_score(qid, objects, named, per_object)
        value = m.score
        details.update(named=named, f1=m.f1, object_score=m.object_score, object_scores=per_object,
                       fp_weight=m.fp_weight)
    else:
        gt_keys = ctx.get("gt_keys")
        if not gt_keys:
            gt_keys = reply_list(ask(prompts.keys_prompt(question, truth), "truth_keys"), "keys")
            details["gt_keys_from"] = "judge"
        predicted = reply_list(ask(prompts.keys_prompt(question, answer), "keys"), "keys")
        c = formulas.control_keys_score(list(gt_keys), predicted)
        value = c.score
        details.update(gt_keys=formulas.normalize_keys(list(gt_keys)), predicted_keys=list(c.predicted), f1=c.f1,
                       speed_penalty=c.penalty)
    details["judge_calls"] = calls
    return Score(value, None, False, notes=details)


#: The suite's scorer (``[scorer] name = "bench2drive_vl"``, registered in pyproject.toml).
SCORER = Scorer(name="bench2drive_vl", judged=score_vqa, prompt_hash=prompts.PROMPT_HASH)
