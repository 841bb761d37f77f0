"""The judge: reply parsing, caching, pinning, the scorer's use of it, the OpenAI backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import scripted_judge
from chat_server import ChatServer, Reply, prompt_of

from pytest_uiground.benchmarks.bench2drive_vl.loader import Annotations, load, load_frame
from pytest_uiground.benchmarks.bench2drive_vl.scorer import score_vqa
from pytest_uiground.judges.base import (
    Judge,
    JudgeOptions,
    JudgeParseError,
    JudgeUnreachable,
    incomparable,
    repeat_subset,
    reply_list,
    reply_score,
)
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.suite.loading import LoaderContext


def test_reply_score_tolerates_fences_and_prose_and_clamps() -> None:
    assert reply_score('```json\n{"reason": "ok", "score": 85}\n```') == 85.0
    assert reply_score('Here you go: {"reason": "r", "score": "70"} thanks') == 70.0
    assert reply_score('{"score": 105}') == 100.0
    assert reply_score('{"score": -3}') == 0.0


@pytest.mark.parametrize(("raw", "problem"), [
    ("It is fine.", "not a JSON object"),
    ('{"reason": "no score"}', "no 'score' field"),
    ('{"score": "high"}', "not a number"),
    ('{"score": true}', "not a number"),
])
def test_unparseable_replies_say_why(raw: str, problem: str) -> None:
    with pytest.raises(JudgeParseError, match=problem) as info:
        reply_score(raw)
    assert info.value.raw == raw


def test_reply_list() -> None:
    assert reply_list('{"objects": ["obj1", " extra "]}', "objects") == ["obj1", "extra"]
    assert reply_list('{"keys": "KEEP"}', "keys") == ["KEEP"]
    with pytest.raises(JudgeParseError):
        reply_list('{"keys": {"a": 1}}', "keys")


class Counting:
    """An in-process backend counting its calls."""

    name = "counting"

    def __init__(self, down: bool = False) -> None:
        self.calls: list[str] = []
        self.down = down

    def chat(self, messages, request_id):  # type: ignore[no-untyped-def]
        self.calls.append(request_id)
        if self.down:
            raise JudgeUnreachable("connection refused")
        return scripted_judge.reply_for(messages[-1]["content"])

    def fingerprint(self):  # type: ignore[no-untyped-def]
        return {"judge": "counting", "model": "m"}


def _samples(tmp_path: Path, doc: dict | None = None, anno: Path | None = None) -> dict[int, Sample]:
    from pytest_uiground.benchmarks.bench2drive_vl.lookalike import frame_doc

    path = tmp_path / "00000.json"
    path.write_text(json.dumps(doc or frame_doc()))
    annos = Annotations(anno or tmp_path / "no-anno")
    return {int(s.meta["qid"]): s for s in load_frame(path, "Scn_1", ImageRef.from_path(tmp_path / "x.jpg"), annos)
            if s.invalid is None}


def _judge(parse_errors: str = "error", backend: object | None = None) -> Judge:
    return Judge(backend=backend or Counting(), options=JudgeOptions(name="counting", parse_errors=parse_errors),
                 prompt_hash="h")


def test_scorer_applies_each_rule(tmp_path: Path) -> None:
    qs = _samples(tmp_path)
    backend = Counting()
    judge = _judge(backend=backend)

    def run(qid: int, answer: str) -> float:
        return score_vqa(qs[qid], Prediction(answer=answer), judge).value

    assert run(12, "SCORE 40") == 40.0
    assert run(12, "SCORE 120") == 120.0  # not clamped: the reference averages what the judge says
    assert run(19, "OBJECTS obj1,obj2,obj3") == pytest.approx(100.0)
    # Q28: GT the pedestrian (dangerous, 3); named plus one extra at 1.5: F1 0.8, judged 80.
    s28 = score_vqa(qs[28], Prediction(answer="OBJECTS obj1,extra OBJSCORE 80"), judge)
    assert s28.value == pytest.approx(64.0)
    assert s28.notes["judge_calls"] == 2  # the object list, then one per object_tags entry
    # Q24: two object_tags, both judged even though the answer names only one (1 + 2 calls).
    s24 = score_vqa(qs[24], Prediction(answer="OBJECTS obj1 OBJSCORE 50"), judge)
    assert s24.notes["judge_calls"] == 3
    # GT: sedan (role, 3), pedestrian (dangerous, 3); named the sedan: F1 2/3; object score 50*3/3.
    assert s24.value == pytest.approx(round(100 * (2 / 3) * 0.5, 2))
    # Q50: regex on both texts, no judge; GT GO_STRAIGHT, KEEP.
    s50 = score_vqa(qs[50], Prediction(answer="FOLLOW_LANE, ACCELERATE"), judge)
    assert (s50.value, s50.notes["judge_calls"]) == (60.0, 0)
    # Q43: the judge reads the keys of the GT sentence (GO_STRAIGHT, DECELERATE) and of the answer.
    s43 = score_vqa(qs[43], Prediction(answer="KEYS GO_STRAIGHT,DECELERATE"), judge)
    assert (s43.value, s43.notes["judge_calls"]) == (100.0, 2)
    # An empty answer is judged as the reference judges it (the judge gives it 0 here), and flagged.
    empty = score_vqa(qs[12], Prediction(answer=None, raw="  ", format_error=True), judge)
    assert (empty.value, empty.format_error, empty.notes["judge_calls"]) == (0.0, True, 1)


def test_each_score_is_rounded_to_two_digits(tmp_path: Path) -> None:
    qs = _samples(tmp_path)
    s = score_vqa(qs[24], Prediction(answer="OBJECTS obj1 OBJSCORE 50"), _judge())
    assert s.value == 33.33  # 33.333... as evaluator.py: round(score, 2)


def test_the_judge_gets_the_reference_messages(tmp_path: Path) -> None:
    from pytest_uiground.benchmarks.bench2drive_vl import prompts
    from pytest_uiground.benchmarks.bench2drive_vl import reference_prompts as rp

    sent: list[list[dict[str, str]]] = []

    class Recording(Counting):
        def chat(self, messages, request_id):  # type: ignore[no-untyped-def]
            sent.append(list(messages))
            return super().chat(messages, request_id)

    qs = _samples(tmp_path)
    score_vqa(qs[12], Prediction(raw="SCORE 5 ", answer="SCORE 5"), _judge(backend=Recording()))
    qa = qs[12].context
    assert sent[-1] == [{"role": "system", "content": rp.SYSTEM_PROMPT + rp.NORMAL_EXAMPLE},
                        {"role": "user", "content": f"question: {qa['Q']}\ngt: {qa['A']}\nanswer from VLM: SCORE 5 "}]
    score_vqa(qs[24], Prediction(answer="OBJECTS obj2"), _judge(backend=Recording()))
    assert json.loads(sent[-3][1]["content"]) == {"list": list(qs[24].context["gt_objects"]),
                                                  "sentence": "OBJECTS obj2"}
    assert sent[-1][1]["content"].endswith(
        "answer from VLM: OBJECTS obj2focus: the pedestrian that is to the front left of the ego vehicle"
        "<c102<CAM_FRONT,300.0,500.0><CAM_FRONT_LEFT,1500.0,520.0>>")
    assert sent[-1][0]["content"] == rp.LISTED_PROMPT + rp.LISTED_EXAMPLE
    assert prompts.system_for(7) == rp.SYSTEM_PROMPT + rp.SPEED_LIMIT_NOTE
    assert prompts.system_for(15) == rp.SYSTEM_PROMPT
    assert prompts.system_for(31).endswith(rp.EGO_LANES_NOTE) and prompts.system_for(30).endswith(rp.OTHER_LANES_NOTE)
    assert prompts.system_for(8, 0.2).endswith("low speed (0.20 m/s), it is reasonable for the VLM to omit braking, "
                                               "even if the ground truth indicates deceleration or stopping.")
    assert prompts.system_for(8, 0.5) == prompts.system_for(8, None) == rp.SYSTEM_PROMPT + rp.NORMAL_EXAMPLE


@pytest.mark.parametrize(("name", "sha"), [
    ("SYSTEM_PROMPT", "cc9adc47bff92286570b6a01032c9c18476b7327fd976132fb3ca8b9e15347ef"),
    ("NORMAL_EXAMPLE", "3f20be9ef68d2f16f39be71184137dda5490c9635be7d720fc7e057386227ba8"),
    ("LISTED_PROMPT", "1fa65e29bcff65404c918f346d7de07a1ae9bd59c00a3f760be6e806bc83e8ef"),
    ("LISTED_EXAMPLE", "9a8b076917e11a7834eb5671d1632fb496e5410e9414f7cd8c938c6eda225630"),
    ("IMPORTANT_OBJECT_PROMPT2", "4cae013cbde6c43c7e2298c117ef56b0734d3b2186f4ec734c7f581a075d74ff"),
    ("KEY_43_GT_PROMPT", "6698c8e4ced5d73bcf471556a255bafdef444d0949ad120dc986d79dbfa8d54b"),
    ("KEY_43_A_PROMPT", "943f5c1d1dc2d50eb0deb287a1156ad5ded24e16d3c0bf6279a17f8ed95c2c2d"),
])
def test_prompts_are_the_reference_text_verbatim(name: str, sha: str) -> None:
    import hashlib

    from pytest_uiground.benchmarks.bench2drive_vl import reference_prompts as rp

    assert hashlib.sha256(getattr(rp, name).encode("utf-8")).hexdigest() == sha


def test_q8_speed_is_the_ego_record_not_the_top_level_speed(tmp_path: Path) -> None:
    from parity import published_b2d as pub

    data = pub.write_dataset(tmp_path / "d", top_level_speed={("ParkedObstacle_Town12_Route1300_Weather0", 5): 0.1},
                             no_ego=[("ParkedObstacle_Town12_Route1300_Weather0", 10)])
    samples = {s.id: s for s in load({}, LoaderContext("b2d", tmp_path, tmp_path / "d"))}
    route = "ParkedObstacle_Town12_Route1300_Weather0"
    assert samples[f"{route}.00005.q8"].context["ego_speed"] == 5.0  # top-level 0.1 ignored
    assert samples["ParkedObstacle_Town12_Route1301_Weather1.00005.q8"].context["ego_speed"] == pytest.approx(0.2)
    bad = samples[f"{route}.00010.q8"].invalid or ""
    assert "00010.json.gz" in bad and "QA.planning[0]" in bad and "ego_vehicle" in bad
    (data.b2d_root / route / "anno" / "00005.json.gz").unlink()
    again = {s.id: s for s in load({}, LoaderContext("b2d", tmp_path, tmp_path / "d"))}
    assert again[f"{route}.00005.q8"].context["ego_speed"] == 4.0  # evaluator.py: brake_eval's default


def test_q42_is_scored_by_the_offline_simulation(tmp_path: Path) -> None:
    from parity import published_b2d as pub

    pub.write_dataset(tmp_path / "d")
    route = "ParkedObstacle_Town12_Route1300_Weather0"
    q42 = next(s for s in load({}, LoaderContext("b2d", tmp_path, tmp_path / "d")) if s.id == f"{route}.00005.q42")
    judge = _judge()

    def run(answer: str) -> float:
        return score_vqa(q42, Prediction(answer=answer, raw=answer), judge).value

    assert run(json.dumps(pub.gt_waypoints(5, 5.0))) == 100.0
    # 28 m straight ahead runs into the parked car (x = 30): collision 0.5 -> 0.6 * 0.5 + 0.4 = 70.
    assert run(json.dumps({f"{k * 0.5:.1f}s": [3.5 * k, 0.0] for k in range(1, 9)})) == 70.0
    assert run("```json\n" + json.dumps(pub.gt_waypoints(5, 5.0)) + "\n```") == 100.0
    assert run("<think>x</think>{}") == 0.0  # not JSON
    # Standing still for 4 s when the ego drove 20 m: efficiency 0 -> 60.
    assert run(json.dumps({"4.0s": [0.0, 0.0]})) == 60.0
    with pytest.raises(ValueError, match=r"00105.json.gz does not exist"):
        score_vqa(q42, Prediction(answer='{"10.0s": [1.0, 0.0]}', raw='{"10.0s": [1.0, 0.0]}'), judge)


def test_parse_errors_zero_is_the_reference_zero_per_call(tmp_path: Path) -> None:
    qs = _samples(tmp_path)

    class HalfBroken(Counting):
        def chat(self, messages, request_id):  # type: ignore[no-untyped-def]
            _, focus, about = messages[-1]["content"].partition("focus:")
            if focus and "pedestrian" in about:
                return "it is fine"
            return super().chat(messages, request_id)

    answer = Prediction(answer="OBJECTS obj1,obj2 OBJSCORE 90")
    with pytest.raises(JudgeParseError):
        score_vqa(qs[24], answer, _judge(backend=HalfBroken()))
    s = score_vqa(qs[24], answer, _judge("zero", HalfBroken()))
    # Only the pedestrian's call counts 0: (90 * 3 + 0 * 3) / 6 = 45, F1 1 (reference: 45.0).
    assert s.value == 45.0 and s.format_error and s.notes["judge_parse_error"] is True


def test_judge_reply_forms_the_reference_crashes_on_are_read(tmp_path: Path) -> None:
    from pytest_uiground.benchmarks.bench2drive_vl.scorer import reply_keys, reply_names, reply_score

    assert reply_score('{"score": "85"}') == 85.0  # the reference: TypeError at round()
    assert reply_score('```json\n{"reason": "ok", "score": 85}\n```') == 85.0  # the reference: 0 (strict JSON)
    assert reply_score('{"score": 130}') == 130.0  # not clamped, as the reference
    assert reply_names('Sure: {"list": ["a", "a", {"x": 1}]}') == ["a", "a", '{"x": 1}']
    assert reply_keys("['CHANGE_LANE_LEFT', 'KEEP']") == ["CHANGE_LANE_LEFT", "KEEP"]  # its own example form
    assert reply_keys('{"Direction_key": "TURN_LEFT", "speed_key": null}') == ["TURN_LEFT"]
    assert reply_keys("42") == []
    with pytest.raises(JudgeParseError):
        reply_keys("go straight and keep speed")


def test_replies_are_cached_and_repeats_are_new_requests(tmp_path: Path) -> None:
    qs = _samples(tmp_path)
    backend = Counting()
    judge = Judge(backend=backend, options=JudgeOptions(name="counting"), prompt_hash="h", cache_root=tmp_path / "c")
    pred = Prediction(answer="SCORE 55")
    assert score_vqa(qs[12], pred, judge).value == 55.0
    again = Judge(backend=backend, options=JudgeOptions(name="counting"), prompt_hash="h", cache_root=tmp_path / "c")
    assert score_vqa(qs[12], pred, again).value == 55.0
    assert len(backend.calls) == 1 and again.counters.cache_hits == 1
    score_vqa(qs[12], pred, again, repeat=1)
    assert len(backend.calls) == 2
    other_seed = Judge(backend=backend, options=JudgeOptions(name="counting", seed=1), prompt_hash="h",
                       cache_root=tmp_path / "c")
    score_vqa(qs[12], pred, other_seed)
    assert len(backend.calls) == 3  # another seed is another judge: not served from the cache


def test_unreachable_judge_fails_fast_after_the_first_failure(tmp_path: Path) -> None:
    qs = _samples(tmp_path)
    backend = Counting(down=True)
    judge = Judge(backend=backend, options=JudgeOptions(name="counting"), prompt_hash="h")
    for _ in range(3):
        with pytest.raises(JudgeUnreachable, match=r"unreachable .*first failure"):
            score_vqa(qs[12], Prediction(answer="SCORE 1"), judge)
    assert len(backend.calls) == 1


def test_repeat_subset_is_seeded_and_sized() -> None:
    ids = [f"s{i}" for i in range(50)]
    a = repeat_subset(ids, 10, seed=0)
    assert len(a) == 10 and a == repeat_subset(list(reversed(ids)), 10, seed=0)
    assert a != repeat_subset(ids, 10, seed=1)
    assert repeat_subset(ids, 0, seed=0) == frozenset()


def test_incomparable_names_both_judges() -> None:
    a = {"judge": "openai", "served_model": "Qwen/Qwen2.5-72B-Instruct", "settings": {"seed": 0}}
    assert incomparable(a, dict(a)) is None
    why = incomparable(a, {**a, "served_model": "gpt-4o"})
    assert why is not None and "Qwen2.5-72B" in why and "gpt-4o" in why and "--snapshot-update" in why


def test_openai_judge_is_pinned_and_reports_a_dead_server(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai", reason="the openai judge needs the [openai] extra")
    from pytest_uiground.judges import openai as judge_openai

    monkeypatch.setenv("JUDGE_KEY", "EMPTY")
    monkeypatch.setenv("UIGROUND_OPENAI_BACKOFF_S", "0.01")

    def script(body):  # type: ignore[no-untyped-def]
        return Reply.ok(scripted_judge.reply_for(prompt_of(body)))

    with ChatServer(script) as server:
        opts = JudgeOptions(name="openai", api_base=server.url, model="judge-72b", api_key_env="JUDGE_KEY", seed=7,
                            max_tokens=64, max_retries=1)
        backend = judge_openai.create(opts)
        judge = Judge(backend=backend, options=opts, prompt_hash="h")
        reply = judge.ask([{"role": "user", "content": "Answer to evaluate: SCORE 66"}], "s1")
        assert reply_score(reply) == 66.0
        body = server.bodies()[0]
        assert (body["temperature"], body["seed"], body["max_tokens"], body["model"]) == (0, 7, 64, "judge-72b")
        url = server.url
    backend.close()
    dead = judge_openai.create(JudgeOptions(name="openai", api_base=url, model="m", api_key_env="JUDGE_KEY",
                                            max_retries=1, request_timeout=2))
    with pytest.raises(JudgeUnreachable, match="could not connect"):
        dead.chat([{"role": "user", "content": "x"}], "s2")
    dead.close()


def test_openai_judge_needs_its_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai", reason="the openai judge needs the [openai] extra")
    from pytest_uiground.judges import openai as judge_openai
    from pytest_uiground.models.base import ModelLoadError

    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(ModelLoadError, match="--uiground-judge-api-base"):
        judge_openai.create(JudgeOptions(name="openai"))
    with pytest.raises(ModelLoadError, match="--uiground-judge-model"):
        judge_openai.create(JudgeOptions(name="openai", api_base="http://127.0.0.1:1/v1"))
    with pytest.raises(ModelLoadError, match="NO_SUCH_KEY"):
        judge_openai.create(JudgeOptions(name="openai", api_base="http://127.0.0.1:1/v1", model="m",
                                         api_key_env="NO_SUCH_KEY"))




@pytest.mark.slow
def test_hf_judge_runs_a_local_chat_model_greedily(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the hf judge needs the [hf] extra")
    pytest.importorskip("transformers", reason="the hf judge needs the [hf] extra")
    import tinymodels

    from pytest_uiground.judges import hf as judge_hf

    path = tinymodels.build_qwen2_lm(tmp_path / "judge-lm")
    opts = JudgeOptions(name="hf", model=str(path), max_tokens=12, device="cpu")
    backend = judge_hf.create(opts)
    messages = [{"role": "system", "content": "judge"}, {"role": "user", "content": "Answer to evaluate: yes"}]
    first = backend.chat(messages, "r1")
    assert isinstance(first, str) and first.strip()
    assert backend.chat(messages, "r2") == first  # greedy: the same reply every time
    assert backend.chat([messages[0], {"role": "user", "content": "something else entirely"}], "r3") != first
    fp = backend.fingerprint()
    assert fp["judge"] == "hf" and fp["model"] == str(path) and len(fp["config_sha256"]) == 16
    # A random tiny model does not answer in JSON: the scorer surfaces that, it does not score 0 silently.
    qs = _samples(tmp_path)
    judge = Judge(backend=backend, options=opts, prompt_hash="h")
    with pytest.raises(JudgeParseError):
        score_vqa(qs[12], Prediction(answer="SCORE 40"), judge)


def test_hf_judge_needs_a_model() -> None:
    from pytest_uiground.judges import hf as judge_hf
    from pytest_uiground.models.base import ModelLoadError

    with pytest.raises(ModelLoadError, match="--uiground-judge hf needs --uiground-judge-model"):
        judge_hf.create(JudgeOptions(name="hf", device="cpu"))


def test_bad_data_met_while_scoring_fails_only_that_sample(tmp_path: Path) -> None:
    """A Q42 answer reaching past the recorded annotations: the reference crashes its worker; here
    the sample gets an error naming the file (judges/pool.py catches what the scorer raises)."""
    from parity import published_b2d as pub

    from pytest_uiground.judges.pool import JudgedScorer

    pub.write_dataset(tmp_path / "d")
    q42 = next(s for s in load({}, LoaderContext("b2d", tmp_path, tmp_path / "d")) if s.id.endswith("00005.q42"))
    judged = JudgedScorer(_judge(), score_vqa).judge_one(q42, Prediction(answer="x", raw='{"10.0s": [1.0, 0.0]}'))
    assert judged.score is None and judged.error is not None
    assert "scoring failed" in judged.error and "00105.json.gz does not exist" in judged.error
