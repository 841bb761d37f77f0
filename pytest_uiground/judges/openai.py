"""``--uiground-judge openai``: a judge behind any OpenAI-compatible chat endpoint.

It posts through the ``openai`` model adapter's transport
(:class:`~pytest_uiground.models.openai.http.ChatPoster`) directly, with no model adapter
around it: the same retry policy (429/5xx/timeouts with backoff and ``Retry-After``), the same
key handling (read only from ``--uiground-judge-api-key-env``, never printed) and the same fast
failure once the server is down. Requests are pinned: temperature 0, ``--uiground-judge-seed``,
``--uiground-judge-max-tokens``. Concurrency is the judge pool's (:mod:`pytest_uiground.judges.pool`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pytest_uiground.judges.base import JudgeCallError, JudgeOptions, JudgeUnreachable
from pytest_uiground.models.base import ModelLoadError

if TYPE_CHECKING:
    from pytest_uiground.models.openai.http import ChatPoster


class OpenAIJudge:
    name = "openai"

    def __init__(self, poster: ChatPoster, options: JudgeOptions) -> None:
        self.poster, self.options = poster, options
        self.generation = {"temperature": 0, "max_tokens": options.max_tokens, "seed": options.seed}

    def chat(self, messages: Sequence[Mapping[str, str]], request_id: str) -> str:
        """One text-only request with the transport's retries; ``request_id`` seeds the backoff jitter."""
        body = json.dumps({"model": self.options.model, **self.generation, "messages": list(messages)}).encode()
        attempt = self.poster.request(request_id, body)
        if attempt.text is None:
            error = self.poster.redact(attempt.error)
            if attempt.unreachable:
                raise JudgeUnreachable(error)
            raise JudgeCallError(error)
        return attempt.text

    def fingerprint(self) -> dict[str, Any]:
        return {"judge": self.name, "served_model": self.options.model}

    def close(self) -> None:
        self.poster.close()


def create(options: JudgeOptions) -> OpenAIJudge:
    """Validate the judge options and the key's variable; no request is made here."""
    import importlib.util

    from pytest_uiground.models.openai.http import ChatPoster
    from pytest_uiground.models.openai.settings import api_key_from_env, backoff_from_env
    from pytest_uiground.record.secrets import public_url

    base = options.api_base
    if not base:
        raise ModelLoadError("--uiground-judge openai needs --uiground-judge-api-base URL, e.g. http://judge-node:8000/v1")
    if urlsplit(base).scheme not in ("http", "https") or not urlsplit(base).hostname:
        raise ModelLoadError(f"--uiground-judge-api-base {public_url(base)!r} is not an http(s) URL; "
                             "e.g. http://judge-node:8000/v1")
    if not options.model:
        raise ModelLoadError("--uiground-judge openai needs --uiground-judge-model NAME: the model the server serves, "
                             "e.g. Qwen/Qwen2.5-72B-Instruct (GET <api-base>/models lists them)")
    var = options.api_key_env
    # A Secret (repr redacted); the SDK's frames, which hold the plain text, are cut from the
    # error below (``from None``) so that ``pytest -l`` cannot print them.
    key = api_key_from_env(var, who="--uiground-judge openai", option="--uiground-judge-api-key-env")
    if importlib.util.find_spec("openai") is None:
        raise ModelLoadError("--uiground-judge openai needs the openai package: pip install 'pytest-uiground[openai]'")
    try:
        poster = ChatPoster(api_base=base, secret=key, request_timeout=options.request_timeout,
                            max_retries=options.max_retries, api_key_env=var, backoff_base_s=backoff_from_env(),
                            seed=options.seed)
    except Exception as exc:
        message = key.redact(str(exc))
        raise ModelLoadError(f"--uiground-judge openai: could not create the client: {message}") from None
    return OpenAIJudge(poster, options)
