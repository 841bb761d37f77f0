"""``--uiground-judge openai``: a judge behind any OpenAI-compatible chat endpoint.

It reuses the ``openai`` model adapter's client, so the judge gets the same retry
policy (429/5xx/timeouts with backoff and ``Retry-After``), the same key handling
(read only from ``--uiground-judge-api-key-env``, never printed) and the same fast failure
once the server is down. Requests are pinned: temperature 0, ``--uiground-judge-seed``,
``--uiground-judge-max-tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from pytest_uiground.judges.base import JudgeCallError, JudgeOptions, JudgeUnreachable
from pytest_uiground.models.base import ModelLoadError


class OpenAIJudge:
    name = "openai"

    def __init__(self, client: Any, options: JudgeOptions) -> None:
        self.client, self.options = client, options

    def chat(self, messages: Sequence[Mapping[str, str]], request_id: str) -> str:
        text, error, unreachable = self.client.chat_text(messages, request_id)
        if text is None:
            if unreachable:
                raise JudgeUnreachable(error)
            raise JudgeCallError(error)
        return str(text)

    def fingerprint(self) -> dict[str, Any]:
        return {"judge": self.name, "served_model": self.options.model}

    def close(self) -> None:
        self.client.close()


def create(options: JudgeOptions) -> OpenAIJudge:
    """Validate the judge options and the key's variable; no request is made here."""
    from pytest_uiground.models.openai_client import OpenAIChatModel
    from pytest_uiground.models.openai_options import api_key_from_env, backoff_from_env
    from pytest_uiground.models.openai_wire import public_url

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
    try:
        client = OpenAIChatModel(
            api_base=base, api_key=key, served_model=options.model, parser=None,
            max_new_tokens=options.max_tokens, concurrency=options.concurrency,
            request_timeout=options.request_timeout, max_retries=options.max_retries, api_key_env=var,
            seed=options.seed, backoff_base_s=backoff_from_env(),
        )
    except ModelLoadError:
        raise
    except Exception as exc:
        message = key.redact(str(exc))
        raise ModelLoadError(f"--uiground-judge openai: could not create the client: {message}") from None
    return OpenAIJudge(client, options)
