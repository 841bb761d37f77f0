"""A deterministic stand-in for Bench2Drive-VL's judge, shared by the project and the reference.

The reply is a function of the exact messages (system prompt and user message), so
the project and ``tests/parity/ref_bench2drive.py`` get the same reply only when they
send the same request: a difference in any prompt, message format, object name or
answer text changes the reply and shows up in the scores. Every request is logged
(``B2D_PARITY_LOG``) so a test can compare the two request sets as well.

Replies cover what a real judge does: object lists with repeats, extras and any order;
scores 0..100, sometimes above 100 (the reference does not clamp); sometimes prose that
is not JSON (scored 0 by the reference). Q43 key replies are always JSON (a lists or an
object), since the reference crashes on anything else. Self-contained: it is copied
into pytester's folder and loaded with ``--uiground-judge b2d_parity_judge:create``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

MALFORMED = "I think the answer is mostly right, maybe 70."


def _h(messages: Sequence[Mapping[str, str]]) -> int:
    blob = "\0".join(m["content"] for m in messages)
    return int(hashlib.sha256(blob.encode("utf-8")).hexdigest(), 16)


def _mentioned(name: str, sentence: str) -> bool:
    words = [w for w in re.findall(r"[a-z]+", name.lower()) if len(w) > 3 and w not in {"that", "vehicle", "front"}]
    return bool(words) and words[0] in sentence.lower()


def _objects(user: str, h: int) -> str:
    data = json.loads(user)
    if h % 11 == 0:
        return MALFORMED
    names = [n for n in data["list"] if _mentioned(n, data["sentence"])]
    if h % 3 == 0:
        names.reverse()
    if names and h % 5 == 0:
        names.append(names[0])  # named twice
    if h % 4 == 0:
        names.insert(min(1, len(names)), "the road")  # an extra object
    return json.dumps({"list": names})


def _keys(system: str, user: str, h: int) -> str:
    text = json.loads(user).lower()
    if "left lane" in text or "to the left" in text or "change_lane_left" in text:
        direction = "CHANGE_LANE_LEFT"
    elif ("change lane" in text or "changing lane" in text) and "'CHANGE_LANE'," in system:
        direction = "CHANGE_LANE"
    elif "deviate" in text:
        direction = "DEVIATE_RIGHT"
    elif "follow" in text and "'CHANGE_LANE'," in system:
        direction = "FOLLOW_LANE"
    else:
        direction = "GO_STRAIGHT"
    speed = next((k for w, k in (("decelerat", "DECELERATE"), ("slow", "DECELERATE"), ("stop", "STOP"),
                                 ("accelerat", "ACCELERATE")) if w in text), "KEEP")
    if h % 4 == 0:
        return json.dumps({"Direction_key": direction, "Speed_key": speed})
    if h % 7 == 0:
        return json.dumps([direction, speed, speed])  # a key twice: the speed penalty counts it twice
    return json.dumps([direction, speed])


def _score(h: int, malformed_every: int) -> str:
    if h % malformed_every == 0:
        return MALFORMED
    score = 120 if h % 10 == 1 else h % 101
    return json.dumps({"reason": "scripted", "score": score})


def reply(messages: Sequence[Mapping[str, str]]) -> str:
    system, user = messages[0]["content"], messages[-1]["content"]
    h = _h(messages)
    log = os.environ.get("B2D_PARITY_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(hashlib.sha256("\0".join(m["content"] for m in messages).encode()).hexdigest() + "\n")
    if "identify the objects from the list" in system:
        return _objects(user, h)
    if "extract a speed key and a direction key" in system:
        return _keys(system, user, h)
    if "we only focus on one object" in system:
        return _score(h, 13)
    return _score(h, 9)


class ParityJudge:
    name = "b2d-parity"

    def __init__(self, options: Any) -> None:
        self.options = options

    def chat(self, messages: Sequence[Mapping[str, str]], request_id: str) -> str:
        return reply(messages)

    def fingerprint(self) -> dict[str, Any]:
        return {"judge": self.name, "model": "b2d-parity-1"}


def create(options: Any) -> ParityJudge:
    return ParityJudge(options)
