"""The LLM judge: a pinned, cached chat model that scores free-text answers.

Judged suites (Bench2Drive-VL) cannot score by rule, so a chat model reads the
question, the ground truth and the answer and replies with JSON. That judge is part
of the measurement, so it is treated like one:

* **Pinned.** Temperature 0 and a fixed seed (``--uiground-judge-seed``) on every call; the
  judge's identity, settings and the hash of every prompt template form its
  fingerprint, which goes into the baseline's provenance. A baseline made with
  another judge is flagged as not comparable instead of being compared.
* **Cached.** Replies are cached like predictions (one JSON file per request, written
  atomically), keyed by the fingerprint and the exact messages, so a rerun or a
  resumed run asks nothing twice. Raw replies are cached, not parsed ones, so a
  parser fix needs no new requests. The cache is the predictions' own
  (:mod:`pytest_uiground.record.disk_cache`): a damaged entry is a warning, noted on its
  sample (``judge_cache``), and asked again.
* **Loud.** A reply that cannot be parsed is a counted error on its sample, never a
  silent zero (``--uiground-judge-parse-errors zero`` reproduces the reference's zero). An
  unreachable judge fails the first sample that needs it with a clear message, stops
  the run, and fails every later call at once: no run of thousands of zeros.

A judge backend is anything with ``chat(messages, request_id) -> str`` and
``fingerprint() -> dict``: the built-in ``openai`` backend (any OpenAI-compatible
endpoint, e.g. vLLM serving Qwen2.5-72B-Instruct), or a factory registered in the
``pytest_uiground.judges`` entry-point group or given as ``module:function``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pytest_uiground.record.disk_cache import DiskCache
from pytest_uiground.record.files import digest

PARSE_ERROR_MODES = ("error", "zero")
Messages = Sequence[Mapping[str, str]]


@dataclass(frozen=True)
class JudgeOptions:
    """``--uiground-judge*`` command-line settings."""

    name: str | None = None
    api_base: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    seed: int = 0
    max_tokens: int = 512
    concurrency: int = 8
    request_timeout: float = 120.0
    max_retries: int = 5
    repeat: int = 1
    repeat_samples: int = 20
    parse_errors: str = "error"
    worker_id: str = "master"
    device: str = "auto"  # for local judges (``hf``): the same rule as --uiground-device

    @property
    def settings(self) -> dict[str, Any]:
        """What pins the judge's output: part of the fingerprint and every cache key."""
        return {"temperature": 0, "seed": self.seed, "max_tokens": self.max_tokens}


class JudgeSetupError(Exception):
    """--uiground-judge is missing or wrong: every judged sample fails with this message."""


class JudgeUnreachable(Exception):
    """The judge cannot be reached (connection refused, DNS, retries exhausted)."""


class JudgeCallError(Exception):
    """One judge request failed for another reason (a 4xx, a malformed response)."""


class JudgeParseError(Exception):
    """The judge answered, but not in the JSON form the prompt asked for."""

    def __init__(self, problem: str, raw: str) -> None:
        super().__init__(problem)
        self.problem, self.raw = problem, raw


@runtime_checkable
class JudgeBackend(Protocol):
    name: str

    def chat(self, messages: Messages, request_id: str) -> str:
        """The reply text. Raise JudgeUnreachable or JudgeCallError on failure."""
        ...

    def fingerprint(self) -> dict[str, Any]:
        ...


JudgeFactory = Callable[[JudgeOptions], JudgeBackend]

_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.IGNORECASE)


def parse_reply(raw: str, field_name: str) -> dict[str, Any]:
    """The JSON object in a judge reply, which must hold ``field_name``.

    Tolerates a Markdown code fence and text around the object (judges add both);
    anything else raises :class:`JudgeParseError` naming what was wrong.
    """
    text = _FENCE.sub("", raw.strip())
    data: Any = None
    try:
        data = json.loads(text)
    except ValueError:
        start, end = text.find("{"), text.rfind("}")
        if start >= 0 and end > start:
            try:
                data = json.loads(text[start : end + 1])
            except ValueError:
                data = None
    if not isinstance(data, dict):
        raise JudgeParseError("the judge's reply is not a JSON object", raw)
    if field_name not in data:
        raise JudgeParseError(f"the judge's JSON has no {field_name!r} field", raw)
    return data


def reply_number(raw: str, field_name: str = "score") -> float:
    """``{field_name: n}`` → n as given (a number, or a number written as text, "85" or "85%")."""
    value = parse_reply(raw, field_name)[field_name]
    if isinstance(value, str):
        try:
            value = float(value.strip().rstrip("%"))
        except ValueError:
            raise JudgeParseError(f"the judge's {field_name} {value!r} is not a number", raw) from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise JudgeParseError(f"the judge's {field_name} {value!r} is not a number", raw)
    return float(value)


def reply_score(raw: str) -> float:
    """``{"score": 0..100}`` → the score, clamped to 0..100."""
    return max(0.0, min(100.0, reply_number(raw)))


def reply_list(raw: str, field_name: str) -> list[str]:
    """``{field_name: [...]}`` → the list of strings (a lone string is a list of one)."""
    value = parse_reply(raw, field_name)[field_name]
    if isinstance(value, str):
        value = [value] if value.strip() else []
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) for v in value):
        raise JudgeParseError(f"the judge's {field_name!r} is not a list of names: {value!r}", raw)
    return [str(v).strip() for v in value if str(v).strip()]


@dataclass
class JudgeCounters:
    requests: int = 0
    cache_hits: int = 0


def _reply(data: Any) -> str:
    if not isinstance(data, str):
        raise TypeError(f"the reply is a {type(data).__name__}, not text")
    return data


def reply_cache(root: Path, fingerprint: Mapping[str, Any]) -> DiskCache[str]:
    """Raw judge replies on disk: the shared disk cache (its layout, its damaged-entry policy)."""
    return DiskCache(root, fingerprint, what="judge reply", field="reply", encode=str, decode=_reply,
                     again="asking the judge again")


@dataclass
class Judge:
    """A backend plus pinning, caching and the unreachable circuit."""

    backend: JudgeBackend
    options: JudgeOptions
    prompt_hash: str
    cache_root: Path | None = None
    counters: JudgeCounters = field(default_factory=JudgeCounters)
    _dead: str | None = None
    _cache: DiskCache[str] | None = None
    _local: threading.local = field(default_factory=threading.local)  # this thread's damaged entries
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _inflight: dict[str, Future[str]] = field(default_factory=dict)

    def fingerprint(self) -> dict[str, Any]:
        return {**self.backend.fingerprint(), "settings": self.options.settings, "prompt_hash": self.prompt_hash}

    @property
    def dead(self) -> str | None:
        return self._dead

    def ask(self, messages: Messages, request_id: str, *, repeat: int = 0) -> str:
        """The reply to ``messages`` (from the cache when it was asked before).

        ``repeat`` > 0 asks again for judge-stability measurement: it has its own
        cache entry, so a repeat is a real second request the first time.
        """
        fp = self.fingerprint()
        key = digest({"fingerprint": fp, "messages": list(messages), "repeat": repeat})
        if self.cache_root is not None and self._cache is None:
            self._cache = reply_cache(self.cache_root, fp)
        if self._cache is not None:
            found = self._cache.get(key)
            if found.problem is not None:
                self._local.__dict__.setdefault("problems", []).append(found.problem)
            if found.value is not None:
                with self._lock:
                    self.counters.cache_hits += 1
                return found.value
        if self._dead is not None:
            raise JudgeUnreachable(self._dead)
        # The same request already in flight on another thread (the same question and answer
        # in another frame): wait for its reply instead of asking twice.
        with self._lock:
            waiting = self._inflight.get(key)
            if waiting is None:
                mine: Future[str] = Future()
                self._inflight[key] = mine
                self.counters.requests += 1
        if waiting is not None:
            return waiting.result()
        try:
            reply = self._request(messages, request_id)
            if self._cache is not None:
                self._cache.put(key, reply)
            mine.set_result(reply)
            return reply
        except BaseException as exc:
            mine.set_exception(exc)
            raise
        finally:
            with self._lock:
                self._inflight.pop(key, None)

    def cache_problems(self) -> list[str]:
        """The damaged cache entries this thread met since it last asked (then forgotten): the
        scorer of a sample puts them on that sample's record."""
        problems: list[str] = self._local.__dict__.pop("problems", [])
        return problems

    def _request(self, messages: Messages, request_id: str) -> str:
        try:
            return self.backend.chat(messages, request_id)
        except JudgeUnreachable as exc:
            with self._lock:
                if self._dead is None:
                    self._dead = (f"the judge ({describe(self.backend)}) is unreachable (first failure on "
                                  f"{request_id}): {exc}; check --uiground-judge-api-base and that the server is up")
            raise JudgeUnreachable(self._dead) from None


def describe(backend: JudgeBackend) -> str:
    fp = backend.fingerprint()
    return f"{backend.name} {fp.get('served_model') or fp.get('model') or ''}".strip()


def repeat_subset(sample_ids: Sequence[str], n: int, seed: int) -> frozenset[str]:
    """The seeded judge-stability subset: ``n`` of the suite's sample ids.

    Every xdist worker computes the same subset from the whole suite's ids.
    """
    if n <= 0:
        return frozenset()
    ranked = sorted(sample_ids, key=lambda s: digest({"seed": seed, "id": s}))
    return frozenset(ranked[:n])


def same_judge(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Whether two judge fingerprints (from provenance or a live judge) are the same judge."""
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def incomparable(baseline_judge: Mapping[str, Any] | None, current: Mapping[str, Any] | None) -> str | None:
    """Why a judged baseline cannot be compared with this run, or None when it can."""
    if current is None or same_judge(baseline_judge, current):
        return None
    return (f"the baseline was judged by {json.dumps(baseline_judge, sort_keys=True)} but this run's judge is "
            f"{json.dumps(current, sort_keys=True)}: scores from different judges are not comparable. Rerun with "
            "the baseline's judge, or record a new baseline with --snapshot-update")
