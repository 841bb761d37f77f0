"""A scripted judge for Bench2Drive-VL tests: it replies canned JSON read off the answer.

The answer under evaluation carries directives the judge obeys, so a test decides
every judge reply without a language model:

* ``SCORE n``: plain questions score n; ``OBJSCORE n``: each per-object question scores n;
* ``OBJECTS obj1,extra``: the objects the answer names, in order;
* ``KEYS KEEP,GO_STRAIGHT``: the control keys the answer implies;
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


def reply_for(user: str) -> str:
    """The canned reply to one judge prompt (the user message's text)."""
    m = re.search(r"^(?:Answer to evaluate|Text): (.*)$", user, re.MULTILINE)
    answer = m.group(1) if m else ""
    if "MALFORMED" in answer:
        return "I would say the answer is mostly fine."
    if '"objects"' in user:
        names = (_directive(answer, "OBJECTS") or "").split(",")
        return "```json\n" + json.dumps({"reason": "scripted", "objects": [n for n in names if n]}) + "\n```"
    if '"keys"' in user:
        keys = (_directive(answer, "KEYS") or "").split(",")
        return json.dumps({"reason": "scripted", "keys": [k for k in keys if k]})
    if "Consider only what" in user:
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
