"""The judge: reply parsing, caching, pinning, the scorer's use of it, the OpenAI backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import scripted_judge
from chat_server import ChatServer, Reply, prompt_of

from pytest_uiground.benchmarks.bench2drive_vl.loader import load_frame
from pytest_uiground.benchmarks.bench2drive_vl.scorer import score_vqa
from pytest_uiground.image import ImageRef
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
from pytest_uiground.prediction import Prediction
from pytest_uiground.sample import Sample


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


def _samples(tmp_path: Path) -> dict[int, Sample]:
    from pytest_uiground.benchmarks.bench2drive_vl.fixture import frame_doc

    path = tmp_path / "00000.json"
    path.write_text(json.dumps(frame_doc()))
    return {int(s.meta["qid"]): s for s in load_frame(path, "Scn_1", ImageRef.from_path(tmp_path / "x.jpg"),
                                                       tmp_path / "none.json.gz")}


def test_scorer_applies_each_rule(tmp_path: Path) -> None:
    qs = _samples(tmp_path)
    backend = Counting()
    judge = Judge(backend=backend, options=JudgeOptions(name="counting"), prompt_hash="h")

    def run(qid: int, answer: str) -> float:
        return score_vqa(qs[qid], Prediction(answer=answer), judge).value

    assert run(12, "SCORE 40") == 40.0
    assert run(19, "OBJECTS obj1,obj2,obj3") == pytest.approx(100.0)
    # Q28: the pedestrian (dangerous, b 3) plus one extra at 1.5, judged 80: F1 0.8 x 80.
    s28 = score_vqa(qs[28], Prediction(answer="OBJECTS obj1,extra OBJSCORE 80"), judge)
    assert s28.value == pytest.approx(64.0)
    assert s28.notes["judge_calls"] == 2  # the object list, then one per matched object
    # Q50: ground truth KEEP, GO_STRAIGHT read off the answer text; no judge call for it.
    s50 = score_vqa(qs[50], Prediction(answer="KEYS ACCELERATE,FOLLOW_LANE"), judge)
    assert s50.value == pytest.approx(60.0)
    assert s50.notes["judge_calls"] == 1
    empty = score_vqa(qs[12], Prediction(answer="  "), judge)
    assert (empty.value, empty.format_error, empty.notes["judge_calls"]) == (0.0, True, 0)


def test_guidance_goes_to_q8_only_when_stopped_and_to_q7(tmp_path: Path) -> None:
    from pytest_uiground.benchmarks.bench2drive_vl import prompts

    assert prompts.BRAKING_GUIDANCE in prompts.score_prompt("q", "t", "a", 8, 0.2)[1]["content"]
    assert prompts.BRAKING_GUIDANCE not in prompts.score_prompt("q", "t", "a", 8, 3.0)[1]["content"]
    assert prompts.BRAKING_GUIDANCE not in prompts.score_prompt("q", "t", "a", 8, None)[1]["content"]
    assert prompts.SPEED_LIMIT_GUIDANCE in prompts.score_prompt("q", "t", "a", 7, None)[1]["content"]
    assert prompts.SPEED_LIMIT_GUIDANCE not in prompts.score_prompt("q", "t", "a", 15, None)[1]["content"]


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
