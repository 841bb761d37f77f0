"""Several servers of one model behind one client: ``--uiground-api-base`` given more than once.

A 72B model, or every suite on every checkpoint, needs more than one vLLM server; the field's
harnesses take a comma-separated list of API bases and spread requests over them (ClawGUI-Eval's
``API_BASE`` split on commas beside ``vllm_serve.sh`` starting N instances). Here each request goes to
the endpoint with the fewest requests outstanding (ties: the one that has served fewest, then the
first given), each endpoint with its own window of ``--uiground-concurrency`` requests in flight, so a
slow server holds only its own window. A connection failure (the server is gone, not an HTTP answer)
moves the request to another endpoint at once, without the backoff a single server gets; after
:data:`DOWN_AFTER` connection failures in a row an endpoint is down for :data:`COOLDOWN_S` seconds
(``UIGROUND_OPENAI_COOLDOWN_S``), then tried again (one more failure puts it down again). A request that
has failed on every endpoint gets the ordinary retry policy (:mod:`.http`) on the best one left.

HTTP answers (429, 5xx, a 400) are the server's and stay with it: they are retried there, as for a
single server. Which endpoint answered, the name it answered as and the endpoints a request left
are kept on the prediction (``Prediction.route``), so ``summary.json`` counts samples, errors and
latencies per endpoint from the records alone, and a merge of shards counts the same.

Data parallelism inside one vLLM server (``--data-parallel-size``) needs none of this: that server
is one endpoint and spreads requests itself.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_uiground.models.base import ModelLoadError
from pytest_uiground.models.openai.http import Attempt, ChatPoster

DOWN_AFTER = 3
"""Connection failures in a row that take an endpoint down."""

COOLDOWN_S = 30.0
COOLDOWN_ENV = "UIGROUND_OPENAI_COOLDOWN_S"


def cooldown_from_env() -> float:
    text = os.environ.get(COOLDOWN_ENV, "").strip()
    if not text:
        return COOLDOWN_S
    try:
        value = float(text)
    except ValueError:
        raise ModelLoadError(f"{COOLDOWN_ENV}={text!r} is not a number of seconds") from None
    if not value >= 0:
        raise ModelLoadError(f"{COOLDOWN_ENV}={text!r} must be a non-negative number of seconds")
    return value


def split_bases(api_base: str) -> list[str]:
    """``--uiground-api-base`` as its endpoints: given more than once, or separated by commas or spaces."""
    return [b for b in api_base.replace(",", " ").split() if b]


@dataclass
class Endpoint:
    poster: ChatPoster
    index: int
    outstanding: int = 0
    served: int = 0
    failures: int = 0  # connection failures in a row
    down_until: float = 0.0
    downs: int = 0  # times it went down
    answered_as: set[str] = field(default_factory=set)

    @property
    def url(self) -> str:
        return self.poster.endpoint

    def up(self, now: float) -> bool:
        return now >= self.down_until


class Router:
    """The endpoints of one model and the choice of one per request; thread-safe."""

    def __init__(self, posters: Sequence[ChatPoster], *, window: int, cooldown_s: float = COOLDOWN_S,
                 down_after: int = DOWN_AFTER) -> None:
        self.endpoints = [Endpoint(p, i) for i, p in enumerate(posters)]
        self.window, self.cooldown_s, self.down_after = window, cooldown_s, down_after
        self._cond = threading.Condition()

    @property
    def several(self) -> bool:
        return len(self.endpoints) > 1

    def request(self, sample_id: str, body: bytes) -> tuple[Attempt, Endpoint, tuple[str, ...]]:
        """The sample's request on the best endpoint, moved on a connection failure; the attempt, the
        endpoint that gave it and the endpoints the request left."""
        if not self.several:
            only = self.endpoints[0]
            return only.poster.request(sample_id, body), only, ()
        left: list[Endpoint] = []
        while True:
            patient = len(left) >= len(self.endpoints)  # failed everywhere: the ordinary retry policy now
            ep = self._acquire(() if patient else left)
            if ep is None:  # every endpoint it has not tried is down
                last = left[-1]
                return (Attempt(error=f"every endpoint is down ({', '.join(e.url for e in self.endpoints)}); "
                                      f"last: could not connect to {last.url}", unreachable=True),
                        last, tuple(e.url for e in left))
            attempt = Attempt(error="interrupted")
            try:
                attempt = ep.poster.request(sample_id, body, leave_unreachable=not patient)
            finally:
                self._release(ep, attempt)
            if attempt.unreachable and not patient:
                left.append(ep)
                continue
            return attempt, ep, tuple(e.url for e in left)

    def _acquire(self, avoid: Sequence[Endpoint]) -> Endpoint | None:
        with self._cond:
            while True:
                now = time.monotonic()
                ready = [e for e in self.endpoints if e.up(now) and e not in avoid]
                if not ready:
                    return None
                free = [e for e in ready if e.outstanding < self.window]
                if free:
                    ep = min(free, key=lambda e: (e.outstanding, e.served, e.index))
                    ep.outstanding += 1
                    return ep
                self._cond.wait(timeout=1.0)  # a slot frees, or an endpoint comes back

    def _release(self, ep: Endpoint, attempt: Attempt) -> None:
        with self._cond:
            ep.outstanding -= 1
            if attempt.unreachable:
                ep.failures += 1
                if ep.failures >= self.down_after and ep.up(time.monotonic()):
                    ep.down_until = time.monotonic() + self.cooldown_s
                    ep.downs += 1
            else:  # it answered (an HTTP error is an answer too): up
                ep.failures, ep.down_until = 0, 0.0
                ep.served += attempt.text is not None
                if attempt.model is not None:
                    ep.answered_as.add(attempt.model)
            self._cond.notify_all()

    def identities(self) -> list[list[str]]:
        """The names each endpoint answered as, in the order the endpoints were given."""
        with self._cond:
            return [sorted(e.answered_as) for e in self.endpoints]

    def state(self) -> list[dict[str, object]]:
        """Per endpoint: served, times down, whether down now (the terminal and tests read it)."""
        with self._cond:
            now = time.monotonic()
            return [{"endpoint": e.url, "served": e.served, "downs": e.downs, "down": not e.up(now),
                     "answered_as": sorted(e.answered_as)} for e in self.endpoints]
