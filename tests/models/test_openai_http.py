"""pytest_uiground.models.openai.http: ChatPoster's retry policy against a loopback server.

The policy (stated in :mod:`pytest_uiground.models.openai.client`): 429 and 5xx, timeouts, dropped
connections and malformed bodies are retried up to ``max_retries`` times with seeded, jittered
exponential backoff (or the server's ``Retry-After``, capped); other HTTP errors are final; once a
server was unreachable through all retries, later requests fail at once until one gets an answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from random import Random
from typing import Any

import pytest

pytest.importorskip("openai", reason="--model openai needs the [openai] extra (pip install 'pytest-uiground[openai]')")
from chat_server import ChatServer, Reply

from pytest_uiground.models.openai.http import ChatPoster
from pytest_uiground.models.openai.settings import Secret

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "Point to the OK button"}]}).encode()
KEY = "sk-test-0123456789"


class Waits:
    """Stands in for ChatPoster.closing: records each backoff instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self._set = False

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        return self._set

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


@pytest.fixture
def posters() -> Iterator[list[ChatPoster]]:
    made: list[ChatPoster] = []
    yield made
    for p in made:
        p.close()


def _poster(made: list[ChatPoster], server: ChatServer, *, max_retries: int = 3, key: str = KEY,
            record_waits: bool = True, **kw: Any) -> ChatPoster:
    kw.setdefault("request_timeout", 10.0)
    poster = ChatPoster(api_base=server.url, secret=Secret(key), max_retries=max_retries,
                        api_key_env="MY_KEY", backoff_base_s=0.001, **kw)
    if record_waits:
        poster.closing = Waits()  # type: ignore[assignment]
    made.append(poster)
    return poster


def test_an_answer_comes_back_with_its_finish_reason(posters: list[ChatPoster]) -> None:
    with ChatServer([Reply.ok("(3, 4)", finish_reason="length")]) as server:
        got = _poster(posters, server).request("s1", BODY)
        assert (got.text, got.finish, got.error) == ("(3, 4)", "length", "")
        headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
        assert server.count == 1 and headers["authorization"] == f"Bearer {KEY}"
    assert posters[0].counters == {"requests": 1, "retries": 0, "errors": 0, "skipped_retries": 0}


def test_server_errors_and_malformed_bodies_are_retried(posters: list[ChatPoster]) -> None:
    script = [Reply.error(500), Reply.error(503), Reply.malformed(), Reply.ok("done")]
    with ChatServer(script) as server:
        poster = _poster(posters, server, max_retries=3)
        got = poster.request("s1", BODY)
        assert got.text == "done" and server.count == 4
    assert poster.counters["requests"] == 4 and poster.counters["retries"] == 3


def test_giving_up_says_how_many_attempts_and_why(posters: list[ChatPoster]) -> None:
    with ChatServer(handler=lambda body: Reply.error(502, "upstream down")) as server:
        poster = _poster(posters, server, max_retries=2)
        got = poster.request("s1", BODY)
        assert server.count == 3
    assert got.text is None and not got.unreachable
    assert got.error == (f"gave up after 3 attempts (2 retries, --uiground-max-retries 2): HTTP 502 from "
                         f"{server.url}: upstream down")
    with ChatServer([Reply.malformed()]) as server:
        got = _poster(posters, server, max_retries=0).request("s1", BODY)
    assert got.error.startswith("gave up after 1 attempt (0 retries, --uiground-max-retries 0): malformed response")


def test_backoff_is_exponential_with_seeded_jitter_per_sample(posters: list[ChatPoster]) -> None:
    with ChatServer(handler=lambda body: Reply.error(500)) as server:
        a = _poster(posters, server, max_retries=4, seed=7)
        a.backoff_base_s, a.backoff_cap_s = 1.0, 5.0
        a.request("s1", BODY)
        b = _poster(posters, server, max_retries=4, seed=7)
        b.backoff_base_s, b.backoff_cap_s = 1.0, 5.0
        b.request("s1", BODY)
        b.request("s2", BODY)
    waits_a, waits_b = a.closing.waits, b.closing.waits  # type: ignore[attr-defined]
    assert len(waits_a) == 4
    for k, wait in enumerate(waits_a):
        full = min(5.0, 2.0 ** k)
        assert full / 2 <= wait <= full  # jitter keeps between half and all of the step
    rng = Random("7:s1")
    assert waits_a == [min(5.0, 2.0 ** k) * (0.5 + rng.random() / 2) for k in range(4)]
    assert waits_b[:4] == waits_a  # same seed and sample: the same waits
    assert waits_b[4:] != waits_a  # another sample: other jitter


def test_retry_after_is_obeyed_up_to_its_cap(posters: list[ChatPoster]) -> None:
    script = [Reply.error(429, retry_after="2"), Reply.error(429, retry_after="3600"), Reply.ok("ok")]
    with ChatServer(script) as server:
        poster = _poster(posters, server, retry_after_cap_s=30.0)
        assert poster.request("s1", BODY).text == "ok"
    assert poster.closing.waits == [2.0, 30.0]  # type: ignore[attr-defined]


def test_the_timeout_bounds_the_whole_request_not_each_read(posters: list[ChatPoster]) -> None:
    """Issue 34 item 2: a body dribbled one byte every 0.2 s satisfies a 1 s per-read
    timeout forever (the reply is ~300 bytes: a minute); the request must end near 1 s."""
    with ChatServer([Reply.dribbling("(500, 500)", every=0.2)]) as server:
        poster = _poster(posters, server, max_retries=0, request_timeout=1.0)
        started = time.monotonic()
        got = poster.request("s1", BODY)
        elapsed = time.monotonic() - started
    assert got.text is None
    assert "within --uiground-request-timeout 1s" in got.error and "whole request" in got.error
    assert elapsed < 5.0, f"the request ran {elapsed:.1f}s with a 1 s timeout"


def test_client_errors_are_final_with_a_hint(posters: list[ChatPoster]) -> None:
    with ChatServer([Reply.error(404, "no such model"), Reply.error(401, "bad key")]) as server:
        poster = _poster(posters, server)
        missing, denied = poster.request("s1", BODY), poster.request("s2", BODY)
        assert server.count == 2  # neither retried
    assert missing.final and "HTTP 404" in missing.error and "it usually ends in /v1" in missing.error
    assert denied.final and "HTTP 401" in denied.error and "check the key in $MY_KEY" in denied.error
    assert poster.counters["retries"] == 0


def test_an_unreachable_server_is_not_retried_again_until_it_answers(posters: list[ChatPoster]) -> None:
    server = ChatServer().start()
    url = server.url
    server.stop()
    poster = ChatPoster(api_base=url, secret=Secret(KEY), request_timeout=5.0, max_retries=1, api_key_env="MY_KEY",
                        backoff_base_s=0.001)
    posters.append(poster)
    first = poster.request("s1", BODY)
    assert first.unreachable and "could not connect to" in first.error and "gave up after 2 attempts" in first.error
    before = poster.counters["requests"]
    t0 = time.monotonic()
    second = poster.request("s2", BODY)
    assert second.unreachable and "not retrying until a request gets an answer" in second.error
    assert poster.counters["requests"] == before + 1 and poster.counters["skipped_retries"] == 1
    assert time.monotonic() - t0 < 5


def test_a_deeply_nested_body_is_a_malformed_response(posters: list[ChatPoster]) -> None:
    """Issue 34 item 12: 100,000 ``[`` made json.loads raise RecursionError, which became the reason."""
    with ChatServer([Reply(body=b"[" * 100_000)]) as server:
        got = _poster(posters, server, max_retries=0).request("s1", BODY)
    assert "malformed response" in got.error and "nests JSON too deeply" in got.error
    assert "RecursionError" not in got.error


def test_closing_stops_retrying(posters: list[ChatPoster]) -> None:
    with ChatServer(handler=lambda body: Reply.error(500)) as server:
        poster = _poster(posters, server, max_retries=5)
        poster.closing.set()
        got = poster.request("s1", BODY)
        assert server.count == 1
    assert got.error.startswith("gave up after 1 attempt (0 retries")


def test_redact_masks_real_keys_only(posters: list[ChatPoster]) -> None:
    with ChatServer() as server:
        real = _poster(posters, server, key=KEY)
        placeholder = _poster(posters, server, key="EMPTY")
    assert real.redact(f"401: key {KEY} rejected") == "401: key [REDACTED] rejected"
    assert placeholder.redact("the EMPTY field") == "the EMPTY field"  # a placeholder, not a secret


def test_the_endpoint_in_messages_hides_credentials_and_queries() -> None:
    poster = ChatPoster(api_base="http://user:pw@127.0.0.1:8000/v1?api_key=x", secret=Secret(KEY),
                        request_timeout=1.0, max_retries=0, api_key_env="MY_KEY")
    assert poster.endpoint == "http://127.0.0.1:8000/v1"
    with pytest.raises(ValueError):
        ChatPoster(api_base="http://127.0.0.1:99999999/v1", secret=Secret(KEY), request_timeout=1.0, max_retries=0,
                   api_key_env="MY_KEY")
