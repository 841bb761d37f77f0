"""Several ``--uiground-api-base`` servers of one model, through real loopback HTTP (``chat_server.py``).

The requests spread over every server, each with its own window; a server killed mid-run is left
for the others (no sample lost, none answered twice) and the summary names it; a server answering
as another model fails only the samples it answered.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("openai", reason="--model openai needs the [openai] extra (pip install 'pytest-uiground[openai]')")
from chat_server import ChatServer, Reply, prompt_of
from conftest import SUITE_TOML, Project

from pytest_uiground.models.base import ModelLoadError, ModelOptions
from pytest_uiground.models.openai import endpoints, settings, wire
from pytest_uiground.models.openai.client import OpenAIChatModel
from pytest_uiground.record.sample import Sample
from pytest_uiground.suite.loading import load_suite

KEY = "sk-uiground-SECRET-endpoints-1234"


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
                "OPENAI_BASE_URL", wire.MIN_PIXELS_ENV, wire.MAX_PIXELS_ENV, settings.BACKOFF_ENV,
                endpoints.COOLDOWN_ENV):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> list[Sample]:
    path = tmp_path_factory.mktemp("mini") / "suite.toml"
    path.write_text(SUITE_TOML.format(loader="synthetic", floor=0.0))
    return sorted(load_suite(path).samples, key=lambda s: s.id)


def right_answers(samples: list[Sample], *, delay: float = 0.05, as_model: str | None = None
                  ) -> Callable[[dict[str, Any]], Reply]:
    """Each sample's target centre (UGround's 0..1000), found by its instruction; optionally answered
    under another model name than the one asked for."""
    centres = {s.instruction: s.target.box.center for s in samples if s.target.box is not None}

    def handler(body: dict[str, Any]) -> Reply:
        m = re.search(r"Description: (.*)\n\nAnswer:", prompt_of(body))
        assert m
        c = centres[m.group(1)]
        text = f"({round(c.x * 1000)}, {round(c.y * 1000)})"
        if as_model is None:
            return Reply.ok(text, delay=delay)
        body_out = {"id": "c", "object": "chat.completion", "model": as_model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}]}
        return Reply(body=json.dumps(body_out).encode(), delay=delay)

    return handler


def dies_after(n: int, right: Callable[[dict[str, Any]], Reply]) -> Callable[[dict[str, Any]], Reply]:
    """Answers ``n`` requests, then dies on the next (dropping whatever it holds)."""
    arrivals = itertools.count()
    lock = threading.Lock()

    def handler(body: dict[str, Any]) -> Reply:
        with lock:
            k = next(arrivals)
        return right(body) if k < n else Reply.dying(delay=0.3)  # its answers are out before it dies

    return handler


@pytest.fixture
def model_for() -> Iterator[Callable[..., OpenAIChatModel]]:
    made: list[OpenAIChatModel] = []

    def make(servers: list[ChatServer], **kw: Any) -> OpenAIChatModel:
        args: dict[str, Any] = {"api_key": KEY, "served_model": "m", "parser": "uground", "request_timeout": 5.0,
                                "backoff_base_s": 0.002, "max_retries": 2, "concurrency": 2, **kw}
        model = OpenAIChatModel(api_base=",".join(s.url for s in servers), **args)
        made.append(model)
        return model

    yield make
    for m in made:
        m.close()


def test_requests_spread_over_every_server_each_within_its_window(
        model_for: Callable[..., OpenAIChatModel], samples: list[Sample]) -> None:
    with ChatServer(right_answers(samples)) as a, ChatServer(right_answers(samples)) as b, \
            ChatServer(right_answers(samples)) as c:
        model = model_for([a, b, c])
        preds = model.predict(samples)
    assert all(p.error is None and p.point is not None for p in preds)
    assert a.count + b.count + c.count == len(samples)
    assert min(a.count, b.count, c.count) >= 2, (a.count, b.count, c.count)
    assert max(a.max_in_flight, b.max_in_flight, c.max_in_flight) <= 2, "each server has its own window of 2"
    assert model.in_flight == 6
    assert {p.route["endpoint"] for p in preds} == {a.url, b.url, c.url}
    fingerprint = json.dumps(model.fingerprint())
    assert model.fingerprint()["endpoint_models"] == [["m"], ["m"], ["m"]]
    assert KEY not in fingerprint and str(a.port) not in fingerprint


def test_a_server_killed_mid_run_is_left_for_the_others(
        model_for: Callable[..., OpenAIChatModel], samples: list[Sample]) -> None:
    with ChatServer(right_answers(samples)) as a, ChatServer(dies_after(1, right_answers(samples))) as b, \
            ChatServer(right_answers(samples)) as c:
        model = model_for([a, b, c])
        preds = model.predict(samples)
    assert [p.error for p in preds] == [None] * len(samples), "no sample lost"
    assert b.answered == 1 and a.answered + b.answered + c.answered == len(samples), "none answered twice"
    moved = [p for p in preds if p.route.get("left")]
    assert moved and all(p.route["left"] == [b.url] and p.route["endpoint"] in (a.url, c.url) for p in moved)


def test_a_server_down_from_the_start_is_taken_down_after_three_failures_and_back_after_the_cooldown(
        model_for: Callable[..., OpenAIChatModel], samples: list[Sample]) -> None:
    gone = ChatServer().start()
    gone.stop()  # its port refuses connections
    with ChatServer(right_answers(samples)) as a:
        model = model_for([a, gone], cooldown_s=60.0)
        preds = model.predict(samples)
        (state_a, state_gone) = model.router.state()
        assert [p.error for p in preds] == [None] * len(samples)
        moved = [p for p in preds if p.route.get("left") == [gone.url]]
        assert endpoints.DOWN_AFTER <= len(moved) <= endpoints.DOWN_AFTER + 1, "at most one window in flight more"
        assert state_gone["down"] and state_gone["downs"] == 1 and not state_a["down"]
        assert a.count == len(samples)
        model.router.endpoints[1].down_until = 0.0  # the cool-down is over: it is tried again
        (again,) = model.predict(samples[:1])
        assert again.error is None and model.router.state()[1]["downs"] == 2, "one more failure: down again"


def test_a_server_answering_as_another_model_fails_only_its_samples(
        model_for: Callable[..., OpenAIChatModel], samples: list[Sample]) -> None:
    with ChatServer(right_answers(samples)) as a, ChatServer(right_answers(samples, as_model="other-7b")) as b, \
            ChatServer(right_answers(samples)) as c:
        model = model_for([a, b, c])
        preds = model.predict(samples)
    from_b = [p for p in preds if p.route["endpoint"] == b.url]
    assert from_b and len(from_b) == b.count
    assert all(p.error is not None and f"the server at {b.url} answered as model 'other-7b'" in p.error
               for p in from_b)
    assert all(p.error is None for p in preds if p.route["endpoint"] != b.url)
    assert model.fingerprint()["endpoint_models"] == [["m"], ["other-7b"], ["m"]]


def test_endpoints_are_given_repeated_or_comma_separated_and_each_once(project: Project) -> None:
    from pytest_uiground.models.openai.settings import check_options

    project.monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
    check_options(ModelOptions(name="openai", api_base="http://a:1/v1,http://b:2/v1", served_model="m",
                               parser="uground"))
    with pytest.raises(ModelLoadError, match=r"http://a:1/v1 is given twice"):
        check_options(ModelOptions(name="openai", api_base="http://a:1/v1,http://a:1/v1", served_model="m",
                                   parser="uground"))
    with pytest.raises(ModelLoadError, match=r"'ftp://b/v1' is not an http\(s\) URL"):
        check_options(ModelOptions(name="openai", api_base="http://a:1/v1 ftp://b/v1", served_model="m",
                                   parser="uground"))
    assert endpoints.split_bases("http://a/v1, http://b/v1\nhttp://c/v1") == ["http://a/v1", "http://b/v1",
                                                                             "http://c/v1"]


@pytest.mark.slow
def test_end_to_end_a_killed_server_is_named_in_the_summary_and_no_sample_is_lost(
        project: Project, samples: list[Sample], xdist: list[str]) -> None:
    project.monkeypatch.setenv("OPENAI_API_KEY", KEY)
    project.monkeypatch.setenv(settings.BACKOFF_ENV, "0.001")
    project.record(xdist=xdist)  # the fake model is right everywhere, as the servers are
    with ChatServer(right_answers(samples)) as a, ChatServer(dies_after(1, right_answers(samples))) as b, \
            ChatServer(right_answers(samples)) as c:
        result = project.pytester.runpytest_subprocess(
            "suites/mini", "--model", "openai", "--uiground-api-base", a.url, "--uiground-api-base",
            f"{b.url},{c.url}", "--uiground-served-model", "m", "--uiground-parser", "uground",
            "--uiground-concurrency", "2", "-p", "no:cacheprovider", "-p", "no:randomly", "--uiground-cache", "off",
            "--uiground-report", "out", "--benchmark-disable", *xdist)
        answered = a.answered + b.answered + c.answered
    assert result.ret == 0, result.stdout.str()
    records = [json.loads(line) for line in (project.root / "out" / "samples.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in records) == sorted(s.id for s in samples), "every sample once"
    assert all(r["error"] is None for r in records) and answered == len(samples)
    table = project.summary()["endpoints"]
    assert table[b.url]["went_down"] and not table[a.url]["went_down"] and not table[c.url]["went_down"]
    assert sum(e["samples"] for e in table.values()) == len(samples) and table[b.url]["samples"] == 1
    assert table[a.url]["p50_ms"] is not None
    result.stdout.fnmatch_lines([f"endpoints: *{b.url} 1 samples, 0 errors*WENT DOWN*"])
