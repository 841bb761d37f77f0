"""Bench2Drive-VL end to end against the independent re-implementation of the reference.

A dataset in the published layout (``published_b2d.write_dataset``), messy model outputs
replayed through the real suite, and one deterministic judge (``b2d_parity_judge``)
answering both the project and ``ref_bench2drive.evaluate_published``. Every figure of
``stats.py: make_stats`` (overall, per qid, per scenario type, per type x qid) and of
``tools/vqa_eval_stats.py`` (per route, per route x qid) is compared, each count exactly,
every sample's score, and the set of judge requests itself.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from . import published_b2d as pub
from . import ref_bench2drive as ref
from .b2d_parity_judge import MALFORMED, reply

HERE = Path(__file__).parent
SUITE = (HERE.parents[1] / "suites" / "bench2drive_vl" / "suite.toml").read_text()

SIGN = "the construction warning sign" + pub.T_SIGN
CAR = "the black car that is to the front of the ego vehicle" + pub.T_CAR
PED = "the pedestrian that is to the front left of the ego vehicle" + pub.T_PED
NAVY = "the navy car that is to the front left of the ego vehicle" + pub.T_NAVY


def _ref(text: str) -> str:
    """``Detailed_description(<tag>)`` from the constants above."""
    i = text.index("<")
    return f"{text[:i]}({text[i:]})"


OBJECT_ANSWERS = [
    f"{_ref(SIGN)}, {_ref(CAR)}, {_ref(PED)}, {_ref(NAVY)}.",                 # nested tags, as the GT
    f"The black car ahead(<c14785<CAM_FRONT,800.0,513.9>>) and {_ref(CAR)} again, then the pedestrian.",
    "<think>The sign is orange. The car is parked.</think>The construction warning sign and the black car.",
    "",
    "The black car that is to the fr",                                          # truncated
    "THE BLACK CAR, THE PEDESTRIAN AND A NAVY CAR. ALSO THE ROAD.",
    "The navy car is driving in the opposite direction; the black car is not moving.",
    "I see a pedestrian, a pedestrian, and another pedestrian near the sign.",
    f"{_ref(PED)}, because it may step out. {_ref(NAVY)}.",
]
PLAIN_ANSWERS = [
    "The speed limit is 30 km/h.",
    "<think>The sign shows 60.</think>60 km/h",
    "",
    "   Yes, brake for the black car.   ",
    "No need to brake; the road is clear.",
    "It can change to the left by one lane.",
    "Two lanes to the right",
    "yes, there is a construction sign meaning roadworks ahead",
]
KEY_ANSWERS_43 = [
    "The ego vehicle should change to the left lane and decelerate.",
    "The ego vehicle should change lanes and keep its speed.",
    "<think>Obstacle ahead.</think>Stop.",
    "",
    "Follow the lane and accelerate.",
    "The ego vehicle should deviate slightly and slow down",
]
KEY_ANSWERS_50 = [
    "CHANGE_LANE_LEFT, DECELERATE",
    "change_lane_left, decelerate",
    "I would not FOLLOW_LANE; DEVIATE_RIGHT and DECELERATE",
    "",
    "<think>KEEP or STOP?</think> CHANGE_LANE_LEFT, STOP",
    "GO_STRAIGHT, KEEP, ACCELERATE",
]


#: Two scenario types, three routes, seven frames (the ego of route 1301 is almost stopped: Q8's note).
SCENARIOS = (
    ("ParkedObstacle_Town12_Route1300_Weather0", 5.0, (5, 10, 15)),
    ("ParkedObstacle_Town12_Route1301_Weather1", 0.2, (5, 10)),
    ("HazardAtSideLane_Town12_Route1310_Weather3", 5.0, (10, 20)),
)


def waypoint_answers(frame: int, speed: float) -> list[str]:
    gt = pub.gt_waypoints(frame, speed)
    into_car = {f"{k * 0.5:.1f}s": [3.5 * k, 0.0] for k in range(1, 9)}  # 28 m, through the parked car
    around = {f"{k * 0.5:.1f}s": [3.0 * k, 3.5 if k > 2 else 1.0 * k] for k in range(1, 9)}
    return [json.dumps(gt), "```json\n" + json.dumps(into_car) + "\n```", json.dumps(around),
            json.dumps(gt)[:40], "<think>slow</think>" + json.dumps(gt), json.dumps({"1.0s": [0.0, 0.0]})]


def answer_for(scenario: str, frame: int, qid: int, k: int) -> str:
    """The messy output for one question (k: the frame's position, to vary the choice)."""
    speed = next(s for name, s, _ in SCENARIOS if name == scenario)
    pools = {19: OBJECT_ANSWERS, 24: OBJECT_ANSWERS, 28: OBJECT_ANSWERS, 43: KEY_ANSWERS_43, 50: KEY_ANSWERS_50,
             42: waypoint_answers(frame, speed)}
    pool = pools.get(qid, PLAIN_ANSWERS)
    return pool[(k if qid == 42 else qid + k) % len(pool)]


def sample_id(scenario: str, frame: int, qid: int) -> str:
    return f"{scenario}.{frame:05d}.q{qid}"


class Reference:
    """The re-implementation's records, figures and requests for the same outputs."""

    def __init__(self, data: pub.Written, answers: dict[str, str]) -> None:
        self.answers = answers
        self.requests: set[str] = set()
        self.malformed: set[str] = set()
        current: list[str] = [""]

        def answer(scenario: str, frame: int, category: str, index: int, qa: dict[str, Any]) -> str:
            current[0] = sample_id(scenario, frame, qa["qid"])
            return answers[current[0]]

        def judge(messages: list[dict[str, str]]) -> str:
            self.requests.add(hashlib.sha256("\0".join(m["content"] for m in messages).encode()).hexdigest())
            text = reply(messages)
            if text == MALFORMED:
                self.malformed.add(current[0])
            return text

        self.records = ref.evaluate_published(data.vqa_root, data.b2d_root, answer, judge)
        self.scores = {sample_id(r["scenario"], r["frame"], r["qid"]): r["score"] for r in self.records}
        self.stats = ref.make_stats((r["scenario"], r["qid"], r["score"]) for r in self.records)
        route: dict[str, list[float]] = defaultdict(list)
        route_qid: dict[str, list[float]] = defaultdict(list)
        for r in self.records:
            route[r["scenario"]].append(r["score"])
            route_qid[f"{r['scenario']}/q{r['qid']}"].append(r["score"])
        self.route, self.route_qid = route, route_qid


def _mean(v: list[float]) -> float:
    return sum(v) / len(v)


@pytest.fixture
def parity(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> tuple[pytest.Pytester, Reference, Path]:
    (pytester.path / "suites" / "b2d").mkdir(parents=True)
    (pytester.path / "suites" / "b2d" / "suite.toml").write_text(SUITE)
    pytester.makepyfile(b2d_parity_judge=(HERE / "b2d_parity_judge.py").read_text())
    pytester.makeconftest("")
    pytester.makeini("[pytest]\n")
    data = pub.write_dataset(pytester.path / "data", scenarios=SCENARIOS)
    answers: dict[str, str] = {}
    for k, (scenario, frame) in enumerate(data.frames):
        doc = json.loads((data.vqa_root / scenario / f"{frame:05d}.json").read_text())
        for qa in (q for cat in doc["QA"].values() for q in cat):
            answers[sample_id(scenario, frame, qa["qid"])] = answer_for(scenario, frame, qa["qid"], k)
    with (pytester.path / "answers.jsonl").open("w") as fh:
        for sid, text in answers.items():
            fh.write(json.dumps({"sample_id": sid, "output": text}) + "\n")
    want = Reference(data, answers)
    monkeypatch.setenv("B2D_PARITY_LOG", str(pytester.path / "requests.log"))
    return pytester, want, pytester.path


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "suites/b2d", "--model", "replay", "--uiground-predictions", "answers.jsonl", "--uiground-replay-parser",
        "qwen-vl", "--uiground-data-path", "data", "--uiground-judge", "b2d_parity_judge:create",
        "--uiground-report", "out", "-p", "no:cacheprovider", "-p", "no:randomly", *args)


def test_the_messy_outputs_cover_what_the_brief_asks() -> None:
    distinct = {*OBJECT_ANSWERS, *PLAIN_ANSWERS, *KEY_ANSWERS_43, *KEY_ANSWERS_50, *waypoint_answers(5, 5.0)}
    assert len(distinct) >= 30
    assert any("<think>" in a for a in distinct) and "" in distinct
    assert any(a.count("<c14785") == 2 for a in distinct)  # one object named twice


@pytest.mark.slow
def test_every_figure_equals_the_reference(parity: tuple[pytest.Pytester, Reference, Path],
                                           xdist: list[str]) -> None:
    pytester, want, root = parity
    assert want.malformed, "the judge must produce some unreadable replies for this test to mean anything"
    _run(pytester, "--uiground-judge-parse-errors", "zero", *xdist)
    doc = json.loads((root / "out" / "summary.json").read_text())
    m = doc["metrics"]["vqa_score"]
    assert m["n"] == len(want.records) == 77 and m["errors"] == 0
    assert len(set(want.answers.values())) >= 30
    assert m["value"] == pytest.approx(want.stats["overall_avg"], abs=0.1)
    figures = {f"qid={q}": v for q, v in want.stats["qid_avg_scores"].items()}
    figures |= {f"scenario={t}": v for t, v in want.stats["scenario_avg_scores"].items()}
    figures |= {f"scenario_qid={t}/q{q}": v for t, d in want.stats["scenario_qid_avg_scores"].items()
                for q, v in d.items()}
    figures |= {f"route={r}": _mean(v) for r, v in want.route.items()}
    figures |= {f"route_qid={k}": _mean(v) for k, v in want.route_qid.items()}
    got = {k: v for k, v in m["slices"].items() if not k.startswith("category=")}
    assert set(got) == set(figures)
    for label, value in figures.items():
        assert got[label] == pytest.approx(value, abs=0.1), label
    counts: dict[str, int] = defaultdict(int)
    for r in want.records:
        t = ref.scenario_type(r["scenario"])
        for label in (f"qid={r['qid']}", f"scenario={t}", f"scenario_qid={t}/q{r['qid']}",
                      f"route={r['scenario']}", f"route_qid={r['scenario']}/q{r['qid']}"):
            counts[label] += 1
    assert {k: v for k, v in m["slice_n"].items() if not k.startswith("category=")} == counts
    # Every sample's score, and the unreadable replies counted (not silent) under "zero".
    samples = {r["id"]: r for r in map(json.loads, (root / "out" / "samples.jsonl").read_text().splitlines())}
    assert {i: s["score"]["value"] for i, s in samples.items()} == pytest.approx(want.scores, abs=0.01)
    assert sorted(doc["judge_parse_errors"]) == sorted(want.malformed)
    empty = {i for i, s in samples.items() if not (s["prediction"]["raw"] or "").strip()}
    assert m["format_errors"] == len(want.malformed | empty)
    # The same requests, message for message (replies are cached, so compare the sets).
    asked = set((root / "requests.log").read_text().split())
    assert asked == want.requests


@pytest.mark.slow
def test_unreadable_replies_are_errors_by_default(parity: tuple[pytest.Pytester, Reference, Path]) -> None:
    pytester, want, root = parity
    result = _run(pytester)
    doc = json.loads((root / "out" / "summary.json").read_text())
    assert sorted(doc["errors"]) == sorted(want.malformed) == sorted(doc["judge_parse_errors"])
    assert result.parseoutcomes()["failed"] == len(want.malformed)
