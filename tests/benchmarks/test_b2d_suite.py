"""Bench2Drive-VL end to end: generated frames, a replayed model, the scripted judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_uiground.benchmarks.bench2drive_vl.loader import load
from pytest_uiground.benchmarks.bench2drive_vl.lookalike import frame_doc, write_frames
from pytest_uiground.suite.loading import LoaderContext

HERE = Path(__file__).parents[1]  # tests/
SUITE = (Path(__file__).parents[2] / "suites" / "bench2drive_vl" / "suite.toml").read_text()

# The scripted model's answer per question id and the score the reference's rules give it.
WAYPOINTS = json.dumps({f"{k * 0.5:.1f}s": [round(3.0 * 0.5 * k, 2), 0.0] for k in range(1, 5)})
ANSWERS = {
    7: ("SCORE 90 the limit is 30 km/h", 90.0),
    19: ("OBJECTS obj1,obj2,obj3", 100.0),
    # Q24: red sedan (role, 3) named, judged 50; pedestrian (3) missed, judged 50 too; one extra at 0.25.
    24: ("OBJECTS obj1,extra OBJSCORE 50", round(100 * (2 * (3 / 3.25) * 0.5 / ((3 / 3.25) + 0.5)) * 0.5, 2)),
    # Q28: the pedestrian (3) plus one extra at 1.5: F1 0.8, judged 80.
    28: ("OBJECTS obj1,extra OBJSCORE 80", 64.0),
    8: ("SCORE 70", 70.0),
    # Q43: the judge reads GO_STRAIGHT, DECELERATE off the GT sentence; FOLLOW_LANE counts as GO_STRAIGHT.
    43: ("KEYS DECELERATE,FOLLOW_LANE", 100.0),
    # Q42: the recorded path itself, no collision, full distance (offline simulation, no judge).
    42: (WAYPOINTS, 100.0),
    # Q50: regex keys, GT GO_STRAIGHT, KEEP; FOLLOW_LANE counts as GO_STRAIGHT; ACCELERATE for KEEP x1.2.
    50: ("FOLLOW_LANE, ACCELERATE", 60.0),
    12: ("SCORE 40", 40.0),
}


class B2D:
    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pytester, self.monkeypatch = pytester, monkeypatch
        self.root = pytester.path
        (self.root / "suites" / "b2d").mkdir(parents=True)
        (self.root / "suites" / "b2d" / "suite.toml").write_text(SUITE)
        pytester.makepyfile(scripted_judge=(HERE / "scripted_judge.py").read_text())
        pytester.makeconftest("")
        pytester.makeini("[pytest]\n")
        self.data = write_frames(self.root / "data")
        self.ids = sorted(s.id for s in load({}, LoaderContext("b2d", self.root, self.data)))
        self.log = self.root / "judge.log"
        monkeypatch.setenv("UIGROUND_JUDGE_LOG", str(self.log))

    def answers(self, overrides: dict[str, str] | None = None) -> Path:
        path = self.root / "answers.jsonl"
        with path.open("w") as fh:
            for sid in self.ids:
                qid = int(sid.rsplit(".q", 1)[1])
                text = (overrides or {}).get(sid, ANSWERS[qid][0])
                fh.write(json.dumps({"sample_id": sid, "output": text, "image_size": [320, 180]}) + "\n")
        return path

    def run(self, *args: str, overrides: dict[str, str] | None = None) -> pytest.RunResult:
        return self.pytester.runpytest_subprocess(
            "suites/b2d", "--model", "replay", "--uiground-predictions", str(self.answers(overrides)),
            "--uiground-replay-parser", "qwen-vl", "--uiground-data-path", str(self.data), "--uiground-judge",
            "scripted_judge:create",
            "-p", "no:cacheprovider", "-p", "no:randomly", *args,
        )

    def summary(self) -> dict:
        return json.loads((self.root / "out" / "summary.json").read_text())

    def judge_calls(self) -> int:
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0


@pytest.fixture
def b2d(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> B2D:
    return B2D(pytester, monkeypatch)


def expected_mean(ids: list[str], broken: str | None = None) -> float:
    values = [0.0 if sid == broken else ANSWERS[int(sid.rsplit(".q", 1)[1])][1] for sid in ids]
    return sum(values) / len(values)


@pytest.mark.slow
def test_scores_match_the_rules_with_and_without_xdist(b2d: B2D, xdist: list[str]) -> None:
    bad = next(i for i in b2d.ids if i.endswith(".q12"))
    result = b2d.run("--uiground-report", "out", "--uiground-cache", "cache", *xdist, overrides={bad: "MALFORMED"})
    doc = b2d.summary()
    metric = doc["metrics"]["vqa_score"]
    assert metric["value"] == pytest.approx(expected_mean(b2d.ids, bad), abs=1e-3)
    assert metric["slices"]["qid=19"] == pytest.approx(100.0)
    assert metric["slices"]["qid=24"] == pytest.approx(ANSWERS[24][1], abs=1e-3)
    assert metric["slices"]["qid=50"] == pytest.approx(60.0)
    route = b2d.ids[0].split(".")[0]
    # The scenario slice is the scenario type (stats.py: make_stats); routes have their own slice.
    assert set(metric["slices"]) >= {"category=perception", "category=behaviour", "scenario=ParkingExit",
                                     f"route={route}", f"route_qid={route}/q19", "scenario_qid=ParkingExit/q19"}
    assert metric["slice_n"]["scenario=ParkingExit"] == len(b2d.ids)
    # The unparseable reply is an error on its sample, counted and named; never a silent zero.
    assert doc["errors"] == [bad] and doc["judge_parse_errors"] == [bad]
    assert metric["errors"] == 1
    # Graded scores count as right at >= 50: Q24 (32.4) and Q12 (40) are the wrong ones, less the broken one.
    outcomes = result.parseoutcomes()
    assert (outcomes["failed"], outcomes["xfailed"]) == (1, 2 * len(b2d.ids) // len(ANSWERS) - 1)
    result.stdout.fnmatch_lines(["*judge's reply could not be parsed*", "*unparseable replies: 1*"])
    assert doc["provenance"]["judge"]["prompt_hash"] and doc["provenance"]["judge"]["settings"]["temperature"] == 0
    # Every judge reply is cached: a second run asks nothing new.
    first = b2d.judge_calls()
    b2d.run("--uiground-report", "out", "--uiground-cache", "cache", *xdist, overrides={bad: "MALFORMED"})
    # Identical requests (the same question and answer in another frame) are asked once, even when
    # in flight at the same time: q7, q19, q12 once; q24 three times (the object list, then each of
    # its two object_tags), q28 twice, q43 twice (the GT's keys, the answer's); q8 twice (stopped and
    # moving frames get different prompts); q42 and q50 never (no judge) = 12; the malformed answer is
    # one more distinct request (+1). Under xdist the two workers share only the on-disk cache, so a
    # request both have in flight before either reply is written is asked by each: at most twice per
    # distinct request (timing decides).
    if xdist:
        assert 13 <= first <= 26
    else:
        assert first == 13
    assert b2d.judge_calls() == first  # raw replies are cached, the unparseable one too


@pytest.mark.slow
def test_parse_errors_zero_reproduces_the_reference(b2d: B2D) -> None:
    bad = next(i for i in b2d.ids if i.endswith(".q7"))
    recorded = b2d.run("--snapshot-update", "--uiground-judge-parse-errors", "zero", overrides={bad: "MALFORMED"})
    assert recorded.ret == 0, recorded.stdout.str()[-3000:]
    result = b2d.run("--uiground-report", "out", "--uiground-judge-parse-errors", "zero", overrides={bad: "MALFORMED"})
    doc = b2d.summary()
    assert doc["errors"] == [] and doc["judge_parse_errors"] == [bad]
    assert doc["metrics"]["vqa_score"]["value"] == pytest.approx(expected_mean(b2d.ids, bad), abs=1e-3)
    assert doc["metrics"]["vqa_score"]["format_errors"] == 1
    assert result.ret == 0


@pytest.mark.slow
def test_judge_repeat_reports_the_spread(b2d: B2D) -> None:
    unstable = {i: "UNSTABLE SCORE 40" for i in b2d.ids if i.endswith(".q12")}
    result = b2d.run("--uiground-report", "out", "--uiground-judge-repeat", "3", "--uiground-judge-repeat-samples",
    "100",
                     overrides=unstable)
    st = b2d.summary()["judge_stability"]
    assert st["samples"] == len(b2d.ids) and st["repeats"] == 3
    assert st["unstable"] == sorted(unstable)
    assert st["max_range"] == pytest.approx(20.0)  # 40, 50, 60
    result.stdout.fnmatch_lines([f"*stability over {len(b2d.ids)} samples x 3*{len(unstable)} unstable*"])


@pytest.mark.slow
def test_unreachable_judge_stops_the_run_at_the_first_call(b2d: B2D) -> None:
    b2d.monkeypatch.setenv("UIGROUND_JUDGE_DOWN", "1")
    result = b2d.run()
    assert result.ret != 0
    assert b2d.judge_calls() == 1
    result.stdout.fnmatch_lines(["*unreachable (first failure on*check --uiground-judge-api-base*"])
    assert result.parseoutcomes().get("failed", 0) == 1


@pytest.mark.slow
def test_missing_judge_is_one_clear_error(b2d: B2D) -> None:
    result = b2d.pytester.runpytest_subprocess(
        "suites/b2d", "--model", "replay", "--uiground-predictions", str(b2d.answers()), "--uiground-replay-parser",
        "qwen-vl",
        "--uiground-data-path", str(b2d.data), "-p", "no:cacheprovider", "-p", "no:randomly")
    assert result.parseoutcomes().get("failed", 0) == 1
    result.stdout.fnmatch_lines(["*scores free-text answers with an LLM judge: pass --uiground-judge openai*"])


@pytest.mark.slow
def test_baseline_from_another_judge_is_not_comparable(b2d: B2D) -> None:
    assert b2d.run("--snapshot-update").ret == 0
    prov = json.loads((b2d.root / "baselines" / "bench2drive_vl" / "samples.json").read_text())["provenance"]
    assert prov["judge"]["settings"]["seed"] == 0
    same = b2d.run()
    assert same.ret == 0
    other = b2d.run("--uiground-judge-seed", "1")
    assert other.ret != 0
    out = other.stdout.str()
    assert "baseline NOT comparable" in out and '"seed": 1' in out and "different judges are not comparable" in out
    assert "REGRESSION" not in other.stdout.str()


def test_bad_frames_fail_only_their_samples(tmp_path: Path) -> None:
    no_objects = frame_doc()
    del no_objects["key_object_infos"]
    no_answer = frame_doc()
    del no_answer["QA"]["behaviour"][1]["A"]
    unknown_tag = frame_doc()
    unknown_tag["QA"]["prediction"][0]["object_tags"] = ["<c9<CAM_FRONT,1.0,1.0>>"]
    data = write_frames(tmp_path, scenarios=1, frames=5, docs={
        (0, 1): no_objects, (0, 2): no_answer, (0, 3): "{not json", (0, 4): unknown_tag})
    samples = {s.id: s for s in load({}, LoaderContext("b2d", tmp_path, data))}
    invalid = {i: s.invalid for i, s in samples.items() if s.invalid}
    scn = "ParkingExit_Town12_Route1300_Weather0"
    frame1 = [i for i in samples if i.startswith(f"{scn}.00005.")]
    assert len(frame1) == 9 and all("missing field 'key_object_infos'" in str(invalid.get(i)) for i in frame1)
    assert all("00005.json" in str(invalid[i]) for i in frame1)
    assert list(i for i in invalid if i.startswith(f"{scn}.00010.")) == [f"{scn}.00010.q12"]
    assert "QA.behaviour[1] has no field 'A'" in str(invalid[f"{scn}.00010.q12"])
    assert "not readable JSON" in str(invalid[f"{scn}.00015"]) and "00015.json" in str(invalid[f"{scn}.00015"])
    why = str(invalid[f"{scn}.00020.q24"])
    assert "00020.json" in why and "QA.prediction[0].object_tags names <c9<CAM_FRONT,1.0,1.0>>" in why
    assert "not in key_object_infos" in why
    assert sum(1 for i in samples if i.startswith(f"{scn}.00000.") and i not in invalid) == 9
    assert samples[f"{scn}.00000.q8"].context["ego_speed"] == pytest.approx(0.2)


def test_loader_needs_a_data_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs the Bench2Drive-VL data: pass --uiground-data-path"):
        load({}, LoaderContext("bench2drive_vl", tmp_path, None))
