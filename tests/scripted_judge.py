"""A scripted judge for Bench2Drive-VL tests: it replies canned JSON read off the answer.

The answer under evaluation carries directives the judge obeys, so a test decides
every judge reply without a language model:

* ``SCORE n``: plain questions score n; ``OBJSCORE n``: each per-object question scores n;
* ``OBJECTS obj1,extra``: the objects the answer names, in order (``obj<i>``: the i-th
  ground-truth name the judge is given; anything else an extra object);
* ``KEYS KEEP,GO_STRAIGHT``: the control keys the answer implies (Q43; a ground truth's keys
  are its capitals, else read off keywords);
* ``MALFORMED``: the reply is not JSON; ``UNSTABLE``: the score grows by 10 with
  each repeat of the same request in this process (a judge that drifts).

``UIGROUND_JUDGE_LOG`` names a file that gets one line per request (cache checks);
``UIGROUND_JUDGE_DOWN=1`` makes every request fail as unreachable.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_uiground.judges.base import JudgeOptions, JudgeUnreachable

_seen: Counter[str] = Counter()


def _directive(answer: str, name: str) -> str | None:
    m = re.search(rf"\b{name} (\S+)", answer)
    return m.group(1) if m else None


def _truth_keys(text: str) -> list[str]:
    """Keys a judge would read off a ground-truth sentence (capitals first, else keywords)."""
    caps = re.findall(r"\b(?:GO_STRAIGHT|FOLLOW_LANE|CHANGE_LANE_LEFT|CHANGE_LANE_RIGHT|TURN_LEFT|TURN_RIGHT|KEEP|"
                      r"ACCELERATE|DECELERATE|STOP)\b", text)
    if caps:
        return caps
    low = text.lower()
    direction = "CHANGE_LANE_LEFT" if "left lane" in low else "GO_STRAIGHT"
    speed = next((k for w, k in (("decelerat", "DECELERATE"), ("stop", "STOP"), ("accelerat", "ACCELERATE"))
                  if w in low), "KEEP")
    return [direction, speed]


def reply_for(user: str) -> str:
    """The canned reply to one judge prompt (the user message's text, in the reference's formats:
    ``{"list": names, "sentence": answer}``, a JSON string for Q43 keys, ``question/gt/answer from
    VLM`` with ``focus:`` for one object; ``Answer to evaluate:`` is accepted too)."""
    if user.startswith('{"list"'):
        data = json.loads(user)
        answer = data["sentence"]
        if "MALFORMED" in answer:
            return "I would say the answer is mostly fine."
        names: list[str] = []
        for n in (_directive(answer, "OBJECTS") or "").split(","):
            if n.startswith("obj") and n[3:].isdigit() and int(n[3:]) <= len(data["list"]):
                names.append(data["list"][int(n[3:]) - 1])
            elif n:
                names.append(f"{n} object")
        return json.dumps({"list": names})
    if user.startswith('"'):
        text = json.loads(user)
        keys = _directive(text, "KEYS")
        return json.dumps(keys.split(",") if keys is not None else _truth_keys(text))
    m = re.search(r"^(?:Answer to evaluate|Text|answer from VLM): (.*?)(?:focus: .*)?\Z", user,
                  re.MULTILINE | re.DOTALL)
    answer = m.group(1) if m else ""
    if "MALFORMED" in answer:
        return "I would say the answer is mostly fine."
    if "focus: " in user:
        return json.dumps({"reason": "scripted", "score": int(_directive(answer, "OBJSCORE") or 0)})
    score = int(_directive(answer, "SCORE") or 0)
    if "UNSTABLE" in answer:
        score += 10 * (_seen[user] % 3)
        _seen[user] += 1
    return f'Sure. {{"reason": "scripted", "score": {score}}}'


class ScriptedJudge:
    name = "scripted"

    def __init__(self, options: JudgeOptions) -> None:
        self.options = options

    def chat(self, messages: Sequence[Mapping[str, str]], request_id: str) -> str:
        log = os.environ.get("UIGROUND_JUDGE_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(request_id + "\n")
        if os.environ.get("UIGROUND_JUDGE_DOWN"):
            raise JudgeUnreachable("could not connect to http://127.0.0.1:9/v1 (scripted)")
        return reply_for(messages[-1]["content"])

    def fingerprint(self) -> dict[str, Any]:
        return {"judge": self.name, "model": "scripted-judge-1"}


def create(options: JudgeOptions) -> ScriptedJudge:
    return ScriptedJudge(options)
