"""What ``--model openai`` and ``--uiground-judge openai`` are configured with: the key,
the options checked at start-up, the backoff.

Kept apart from the client so that start-up checks (``options.check_model``) and the
judge can validate settings without building a client, and so that the one place that
handles the API key (:class:`Secret`) is small enough to audit at a glance.
"""

from __future__ import annotations

import math
import os
from urllib.parse import urlsplit

from pytest_uiground.models import families
from pytest_uiground.models.base import ModelLoadError, ModelOptions
from pytest_uiground.record.secrets import public_url

BACKOFF_ENV = "UIGROUND_OPENAI_BACKOFF_S"
"""Overrides :data:`BACKOFF_BASE_S` (tests use a few milliseconds)."""

BACKOFF_BASE_S = 0.5


def backoff_from_env() -> float:
    text = os.environ.get(BACKOFF_ENV, "").strip()
    if not text:
        return BACKOFF_BASE_S
    try:
        value = float(text)
    except ValueError:
        raise ModelLoadError(f"{BACKOFF_ENV}={text!r} is not a number of seconds") from None
    if not (value >= 0 and math.isfinite(value)):
        raise ModelLoadError(f"{BACKOFF_ENV}={text!r} must be a non-negative number of seconds")
    return value


class Secret:
    """An API key that never shows itself: ``repr`` and ``str`` print ``[REDACTED]``, so a
    traceback with locals (``pytest -l``), a JUnit XML report or a log line cannot leak it.
    Only :meth:`reveal`, called inside the expression that hands it to the HTTP client, gives
    the text."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def redact(self, text: str) -> str:
        return text.replace(self._value, "[REDACTED]") if self._value else text

    def __repr__(self) -> str:
        return "Secret('[REDACTED]')"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


def api_key_from_env(var: str, *, who: str, option: str) -> Secret:
    """The API key from the environment variable ``var``: keys never travel on the command line."""
    if not var:
        raise ModelLoadError(f"{option} is empty: name the environment variable that holds the API key")
    if not os.environ.get(var, ""):
        raise ModelLoadError(
            f"{who} reads the API key from the environment variable {var}, which is not set or empty. "
            f"Set it before running (export {var}=...); a local vLLM or SGLang server started without "
            f"--api-key accepts any value: export {var}=EMPTY. Use {option} to name another variable; "
            "never pass the key itself on the command line"
        )
    return Secret(os.environ[var])


def check_options(options: ModelOptions) -> None:
    """The settings ``--model openai`` needs, checked once at start-up (``options.check_model``)
    and again by :func:`create`; the key's environment variable is checked too, so a missing
    key stops the run once instead of failing every sample."""
    known = ", ".join(families.names())
    if not options.api_base:
        raise ModelLoadError(
            "--model openai needs --uiground-api-base URL: the server's OpenAI-compatible base URL, "
            "e.g. --uiground-api-base http://gpu-node:8000/v1 for vLLM or SGLang"
        )
    bases = options.api_base.replace(",", " ").split()  # several endpoints: models/openai/endpoints.py
    for base in bases:
        if urlsplit(base).scheme not in ("http", "https") or not urlsplit(base).hostname:
            raise ModelLoadError(
                f"--uiground-api-base {public_url(base)!r} is not an http(s) URL; e.g. http://gpu-node:8000/v1")
    if len(set(bases)) < len(bases):
        twice = sorted({public_url(b) for b in bases if bases.count(b) > 1})
        raise ModelLoadError(f"--uiground-api-base {', '.join(twice)} is given twice; give each server once (its "
                             "window is --uiground-concurrency requests)")
    if not options.served_model:
        raise ModelLoadError(
            "--model openai needs --uiground-served-model NAME: the model name the server serves "
            "(vLLM: its --served-model-name or model path; GET <api-base>/models lists them)"
        )
    if not options.parser:
        raise ModelLoadError(
            "--model openai needs --uiground-parser NAME: the model family whose prompts and parser to use "
            f"(the server returns the model's raw text); known: {known}"
        )
    if not families.is_family(options.parser):
        raise ModelLoadError(f"--uiground-parser {options.parser!r} is unknown; known: {known}")
    if options.max_retries < 0:
        raise ModelLoadError(f"--uiground-max-retries {options.max_retries} must be 0 or more")
    if not options.request_timeout > 0:
        raise ModelLoadError(f"--uiground-request-timeout {options.request_timeout:g} must be a positive number "
                             "of seconds")
    if options.concurrency < 1:
        raise ModelLoadError(f"--uiground-concurrency {options.concurrency} must be 1 or more")
    api_key_from_env(options.api_key_env, who="--model openai", option="--uiground-api-key-env")
