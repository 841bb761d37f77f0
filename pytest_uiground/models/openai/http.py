"""HTTP for OpenAI-compatible servers: one POST per attempt, the retry policy, a lazy SDK client.

Split from :mod:`.client` (whose docstring states the retry policy) so that the
model class there holds what is sent and in which order, and this class how it is
sent: the SDK client, built on the first request (importing ``openai`` costs ~0.7 s
that a rerun answered from the prediction cache never needs), the key (only inside a
:class:`~.settings.Secret`), backoff with seeded jitter, ``Retry-After`` and the
"server unreachable" state shared by all requests of a model.

``--uiground-request-timeout`` bounds the whole attempt, not each socket read: the SDK's
(httpx's) timeout restarts on every byte received, so a server dribbling its answer one
byte per second never tripped it (issue 34, item 2: a 3 s timeout still waiting at 90 s).
Each attempt therefore runs in its own daemon thread and the caller waits for it at most
``request_timeout`` seconds; a late attempt is abandoned (its answer, if any, is dropped)
and reported as a timeout, which is retried like any other.
"""

from __future__ import annotations

import inspect
import random
import threading
from typing import TYPE_CHECKING, Any

from pytest_uiground.models.base import ModelLoadError
from pytest_uiground.models.openai.settings import BACKOFF_BASE_S, Secret
from pytest_uiground.models.openai.wire import parse_retry_after, read_completion
from pytest_uiground.record.secrets import public_url

if TYPE_CHECKING:
    import openai

BACKOFF_CAP_S = 20.0
MAX_RETRY_AFTER_S = 60.0
"""A server asking for a longer pause is waited on for this long, then asked again."""
SERVER_MESSAGE_LIMIT = 500
REDACT_MIN_KEY_LENGTH = 8


class Attempt:
    """What one HTTP attempt came to: a text, a reason to retry, or a final error."""

    __slots__ = ("error", "final", "finish", "model", "retry_after", "text", "unreachable")

    def __init__(self, *, text: str | None = None, finish: str | None = None, error: str = "",
                 final: bool = False, retry_after: float | None = None, unreachable: bool = False,
                 model: str | None = None) -> None:
        self.model = model  # the "model" field of the reply: the name the server answered as
        self.text, self.finish, self.error, self.final = text, finish, error, final
        self.retry_after, self.unreachable = retry_after, unreachable


class ChatPoster:
    """POSTs chat bodies to one server with retries; thread-safe (one instance serves every
    request thread of a model)."""

    def __init__(self, *, api_base: str, secret: Secret, request_timeout: float, max_retries: int,
                 api_key_env: str, backoff_base_s: float = BACKOFF_BASE_S, backoff_cap_s: float = BACKOFF_CAP_S,
                 retry_after_cap_s: float = MAX_RETRY_AFTER_S, seed: int = 0,
                 client: openai.OpenAI | None = None) -> None:
        self.endpoint = public_url(api_base)  # raises ValueError on a malformed address (a bad port)
        self.request_timeout, self.max_retries, self.api_key_env = request_timeout, max_retries, api_key_env
        self.backoff_base_s, self.backoff_cap_s = backoff_base_s, backoff_cap_s
        self.retry_after_cap_s, self.seed = retry_after_cap_s, seed
        self._secret = secret
        self._api_base = api_base
        self._client: openai.OpenAI | None = client  # built by _sdk() on the first request
        self._raw_body_arg = ""
        self._lock = threading.Lock()
        self._unreachable = threading.Event()
        self.closing = threading.Event()
        self.counters: dict[str, int] = {"requests": 0, "retries": 0, "errors": 0, "skipped_retries": 0}

    def count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.counters[key] += n

    def redact(self, text: str) -> str:
        """Mask the key if a server echoes it (a proxy's 401 message, say).

        Short values are placeholders for servers without auth (``EMPTY``), not secrets;
        masking them would corrupt model outputs that happen to contain the word.
        """
        if len(self._secret.reveal()) < REDACT_MIN_KEY_LENGTH:
            return text
        return self._secret.redact(text)

    def close(self) -> None:
        self.closing.set()
        if self._client is not None:
            self._client.close()

    def _sdk(self) -> tuple[openai.OpenAI, str]:
        """The SDK client and the name of its raw-body argument, built on the first request.

        Importing ``openai`` takes about 0.7 s (its hundreds of pydantic types), which a
        rerun answered wholly from the prediction cache never needs: ``perf/bench_rerun.py``
        measured it as most of such a rerun's sample-test time.
        """
        with self._lock:
            if self._client is None:
                self._client = self._new_client()
            if not self._raw_body_arg:
                # openai >= 3 takes a raw body as ``content=`` (and warns on bytes in ``body=``);
                # 1.x only has ``body=``.
                params = inspect.signature(self._client.post).parameters
                self._raw_body_arg = "content" if "content" in params else "body"
            return self._client, self._raw_body_arg

    def _new_client(self) -> openai.OpenAI:
        import openai

        try:
            return openai.OpenAI(base_url=self._api_base, api_key=self._secret.reveal(),
                                 timeout=self.request_timeout, max_retries=0)
        except Exception as exc:  # the SDK's own validation; its frames hold the key, so they are cut
            message = self._secret.redact(str(exc))
        raise ModelLoadError(f"could not create the client for {self.endpoint}: {message}")

    def request(self, sample_id: str, body: bytes, *, leave_unreachable: bool = False) -> Attempt:
        """One chat request with the retry policy of :mod:`.client`; never raises for HTTP trouble.
        ``leave_unreachable``: a connection failure is returned at once (another endpoint takes the
        request, :mod:`.endpoints`) instead of retried here."""
        rng = random.Random(f"{self.seed}:{sample_id}")
        attempts = 0
        while True:
            attempts += 1
            self.count("requests")
            result = self._attempt(body)
            if result.text is not None or result.final or (result.unreachable and leave_unreachable):
                return result
            if result.unreachable and self._unreachable.is_set():
                self.count("skipped_retries")
                return Attempt(error=f"{result.error} (the server has been unreachable since earlier samples "
                                      "exhausted their retries; not retrying until a request gets an answer)",
                                unreachable=True)
            if attempts > self.max_retries or self.closing.is_set():
                if result.unreachable:
                    self._unreachable.set()
                retries = attempts - 1
                return Attempt(error=f"gave up after {attempts} attempt{'s' * (attempts > 1)} ({retries} "
                                      f"retr{'ies' if retries != 1 else 'y'}, --uiground-max-retries "
                                      f"{self.max_retries}): "
                                      f"{result.error}", unreachable=result.unreachable)
            if result.retry_after is not None:
                wait = min(result.retry_after, self.retry_after_cap_s)
            else:
                wait = min(self.backoff_cap_s, self.backoff_base_s * 2 ** (attempts - 1)) * (0.5 + rng.random() / 2)
            self.count("retries")
            self.closing.wait(wait)

    def _attempt(self, body: bytes) -> Attempt:
        """One POST, over within ``request_timeout`` seconds whatever the server does.

        The POST runs in a daemon thread because a blocking socket read cannot be
        interrupted from Python; the SDK's own timeout still ends that read within
        ``request_timeout`` of the server's last byte, so an abandoned thread lives
        only as long as the server keeps sending (and :meth:`close` drops its connection).
        """
        box: list[Attempt | BaseException] = []

        def post() -> None:
            try:
                box.append(self._post(body))
            except BaseException as exc:  # re-raised in the caller's thread, as before the thread existed
                box.append(exc)

        worker = threading.Thread(target=post, name="uiground-openai-post", daemon=True)
        worker.start()
        worker.join(self.request_timeout)
        if box:
            if isinstance(box[0], BaseException):
                raise box[0]
            return box[0]
        return Attempt(error=f"no complete answer from {self.endpoint} within --uiground-request-timeout "
                              f"{self.request_timeout:g}s (the whole request is bounded, not each read; "
                              "raise --uiground-request-timeout if the model needs longer)")

    def _post(self, body: bytes) -> Attempt:
        """One POST through the SDK's documented low-level ``post`` (pre-serialized body, raw bytes back);
        status errors, timeouts and connection errors arrive as the SDK's usual exceptions."""
        import openai

        try:
            client, body_arg = self._sdk()
            raw_body: dict[str, Any] = {body_arg: body}
            content = client.post("/chat/completions", cast_to=bytes, **raw_body)
        except openai.APIStatusError as exc:
            self._unreachable.clear()
            status = exc.status_code
            error = f"HTTP {status} from {self.endpoint}: {self._server_message(exc)}"
            if status == 429 or status >= 500:
                return Attempt(error=error, retry_after=parse_retry_after(exc.response.headers))
            if status == 404:
                error += (" (check --uiground-api-base: it usually ends in /v1; and --uiground-served-model: GET "
                          "/v1/models lists names)")
            elif status in (401, 403):
                error += f" (check the key in ${self.api_key_env})"
            return Attempt(error=error, final=True)
        except openai.APITimeoutError:
            return Attempt(error=f"no answer from {self.endpoint} within --uiground-request-timeout "
                                  f"{self.request_timeout:g}s")
        except openai.APIConnectionError as exc:
            cause = f" ({type(exc.__cause__).__name__}: {exc.__cause__})" if exc.__cause__ is not None else ""
            return Attempt(error=f"could not connect to {self.endpoint}{cause}", unreachable=True)
        self._unreachable.clear()
        got = read_completion(content)
        if isinstance(got, str):
            return Attempt(error=f"malformed response from {self.endpoint}: {got}")
        return Attempt(text=got[0], finish=got[1], model=got[2])

    @staticmethod
    def _server_message(exc: openai.APIStatusError) -> str:
        body = exc.body
        if isinstance(body, dict) and body.get("message"):
            text = str(body["message"])
        elif isinstance(body, str) and body.strip():
            text = body.strip()
        else:
            text = exc.message
        return text if len(text) <= SERVER_MESSAGE_LIMIT else text[:SERVER_MESSAGE_LIMIT] + "..."
