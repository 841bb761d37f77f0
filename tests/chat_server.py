"""A loopback OpenAI-compatible chat-completions server for tests and benchmarks.

Why it exists: the ``openai`` adapter must be tested through real HTTP and the real
``openai`` client (retries, timeouts, dropped connections and malformed bodies all
look different on the wire than in a mock), yet tests may only talk to 127.0.0.1.
This server speaks just enough of the protocol (``POST /v1/chat/completions``,
``GET /v1/models``) and is built on the standard library only.

Each request gets a :class:`Reply`, taken from a script: a queue of scripted
behaviours (used up in arrival order) and/or a callable ``(request_json) -> Reply |
None``; whatever the script does not decide, the :func:`oracle` answers. Every
request is recorded (headers and JSON body) and the number of requests in flight is
tracked, so tests can check what the client sent and how many requests it overlapped.

Usage::

    with ChatServer([Reply.error(429, retry_after="0")]) as server:
        client = openai.OpenAI(base_url=server.url, api_key="k")
"""

from __future__ import annotations

import base64
import itertools
import json
import socket
import socketserver
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ChatServer", "Recorded", "Reply", "image_of", "oracle", "prompt_of"]


@dataclass(frozen=True)
class Reply:
    """One scripted behaviour: a normal answer, an HTTP error, a broken body, or death.

    ``delay`` is slept before answering (interrupted when the server stops, so a
    test never waits for a request the client has already abandoned).
    """

    text: str = ""
    status: int = 200
    delay: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)
    message: str = ""
    body: bytes | None = None
    die: bool = False
    finish_reason: str = "stop"
    dribble: float = 0.0
    """Seconds between bytes of the body (a server that answers one byte at a time)."""

    @classmethod
    def ok(cls, text: str, *, delay: float = 0.0, finish_reason: str = "stop") -> Reply:
        return cls(text=text, delay=delay, finish_reason=finish_reason)

    @classmethod
    def error(cls, status: int, message: str = "", *, retry_after: str | None = None, delay: float = 0.0) -> Reply:
        """An OpenAI-style error body; ``retry_after`` becomes the ``Retry-After`` header."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status=status, message=message or f"scripted error {status}", headers=headers, delay=delay)

    @classmethod
    def malformed(cls) -> Reply:
        """A 200 whose body is cut off mid-JSON (a proxy or a crashing server)."""
        return cls(body=b'{"id": "chatcmpl-x", "choices": [{"message": {"content": "(5')

    @classmethod
    def no_choices(cls) -> Reply:
        """A 200 with valid JSON but no choices."""
        return cls(body=json.dumps({"id": "chatcmpl-x", "object": "chat.completion", "choices": []}).encode())

    @classmethod
    def dribbling(cls, text: str, *, every: float) -> Reply:
        """A normal answer whose body is sent one byte every ``every`` seconds: each socket
        read gets a byte in time, so only a deadline on the whole request ends it."""
        return cls(text=text, dribble=every)

    @classmethod
    def dying(cls, *, delay: float = 0.0) -> Reply:
        """After ``delay``, shut the whole server down, dropping this request and every open connection."""
        return cls(die=True, delay=delay)


Script = Callable[[dict[str, Any]], "Reply | None"]


@dataclass
class Recorded:
    """A request as the server saw it (``body`` is None when recording is off)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    size: int
    at: float


# --- reading requests -------------------------------------------------------------------


def _user_content(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages") or [{"content": ""}]
    content = messages[-1]["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def prompt_of(body: Mapping[str, Any]) -> str:
    """The text part of the last user message."""
    return "".join(p.get("text", "") for p in _user_content(body) if p.get("type") == "text")


def data_url_of(body: Mapping[str, Any]) -> str:
    """The first image's URL (a ``data:`` URL for the adapter under test)."""
    for p in _user_content(body):
        if p.get("type") == "image_url":
            return str(p["image_url"]["url"])
    raise ValueError("the request has no image_url part")


def image_of(body: Mapping[str, Any]) -> bytes:
    """The first image's bytes, decoded from its base64 data URL."""
    head, _, data = data_url_of(body).partition(",")
    if not head.startswith("data:") or not head.endswith(";base64"):
        raise ValueError(f"not a base64 data URL: {head[:40]!r}")
    return base64.b64decode(data, validate=True)


# --- the oracle -------------------------------------------------------------------------

# Prompt markers → the family's answer form (see pytest_uiground.models.families). Absolute-pixel
# families get (14, 14): valid pixels of any model input (the smallest is 28 x 28).
_FAMILY_MARKERS: tuple[tuple[str, str], ...] = (
    ("You are a GUI agent", "Action: click(start_box='<|box_start|>(14,14)<|box_end|>')"),
    ("point_2d", '[{"point_2d": [14, 14], "label": "target"}]'),
    ("(x, y)", "(500, 500)"),
    ("what to do to execute the command?", "<loc_500><loc_500>"),
    ("Identify and point to", '<point x="50.0" y="50.0" alt="target">target</point>'),
    ("Evaluate this statement about the image", '<point x="50.0" y="50.0" alt="target">target</point>'),
    ("Point to ", '<point x="50.0" y="50.0" alt="target">target</point>'),
)


def oracle(body: Mapping[str, Any]) -> Reply:
    """A deterministic answer in the requested family's format, read off the prompt.

    Points go to the middle of the screen (relative families) or to pixel (14, 14)
    (absolute-pixel families); verdict prompts are answered PASSED, multiple choice A,
    free questions "yes". It never looks at the image: tests that need right answers
    script their own callable.
    """
    prompt = prompt_of(body)
    if "Answer with the option's letter" in prompt:
        return Reply.ok("A")
    if "Answer the question briefly" in prompt:
        return Reply.ok("yes")
    text = next((answer for marker, answer in _FAMILY_MARKERS if marker in prompt), "(500, 500)")
    if "'PASSED' or 'FAILED'" in prompt:
        text = f"Thought: the statement holds, PASSED.\n{text}" if text.startswith("Action:") else f"PASSED {text}"
    return Reply.ok(text)


# --- the server ---------------------------------------------------------------------------


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog of 5 makes the kernel drop bursts of connects
    owner: ChatServer

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (socket.getfqdn), which may ask a
        # DNS server; the tests must talk to 127.0.0.1 only.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "127.0.0.1", self.server_address[1]

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Dropped connections are part of the script (timeouts, death): stay quiet."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like a real inference server
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        # Without TCP_NODELAY the body (a second write after the headers) waits for the
        # client's delayed ACK, ~40 ms per request; real inference servers set it too.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.owner._track(self.connection, add=False)

    def _send(self, status: int, payload: bytes, headers: Mapping[str, str] = {}, dribble: float = 0.0) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if dribble <= 0:
            self.wfile.write(payload)
            self.wfile.flush()
            return
        self.wfile.flush()
        for i in range(len(payload)):
            if self.server.owner._stopping.wait(dribble):
                raise OSError("the server stopped mid-answer")
            self.wfile.write(payload[i:i + 1])
            self.wfile.flush()

    def _drop(self) -> None:
        """Close the connection without an answer (the client sees a protocol error)."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do_GET(self) -> None:
        owner = self.server.owner
        if owner.dead:
            return self._drop()
        if self.path.rstrip("/") == "/v1/models":
            data = {"object": "list", "data": [{"id": owner.model_name, "object": "model", "owned_by": "tests"}]}
            return self._send(200, json.dumps(data).encode())
        self._send(404, _error_body(404, f"no route {self.path}"))

    def do_POST(self) -> None:
        owner = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if owner.dead:
            return self._drop()
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self._send(404, _error_body(404, f"no route {self.path}"))
        try:
            body = json.loads(raw) if owner.parse_json else {}
        except ValueError:
            return self._send(400, _error_body(400, "request body is not JSON"))
        with owner._in_flight():
            reply = owner._reply_for(body, dict(self.headers.items()), self.path, len(raw))
            if reply.die:
                owner._stopping.wait(reply.delay)  # a delay lets earlier requests finish first
                owner._die()
                return self._drop()
            if owner._stopping.wait(reply.delay + owner.delay) or owner.dead:
                return self._drop()
            if reply.body is not None:
                payload = reply.body
            elif reply.status >= 400:
                payload = _error_body(reply.status, reply.message)
            else:
                payload = _completion(owner._next_id(), str(body.get("model", "")), reply.text, reply.finish_reason)
            try:
                self._send(reply.status, payload, reply.headers, reply.dribble)
            except OSError:  # the client gave up (timeout) before the answer
                return self._drop()
            if reply.status == 200:
                owner._answered()


def _error_body(status: int, message: str) -> bytes:
    return json.dumps(
        {"error": {"message": message, "type": "BadRequestError" if status < 500 else "InternalServerError",
                   "param": None, "code": status}}
    ).encode()


def _completion(n: int, model: str, text: str, finish_reason: str) -> bytes:
    return json.dumps(
        {
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()


class ChatServer:
    """A chat-completions server on 127.0.0.1 and an ephemeral port, in a background thread.

    ``script``: a queue of :class:`Reply` (used up in arrival order), a callable
    ``(request_json) -> Reply | None``, or both (``queue`` first, then ``handler``);
    anything left undecided goes to :func:`oracle`. ``delay`` is added to every reply
    (the benchmark's model time). ``record=False`` keeps only headers and sizes, for
    runs with many large images; ``parse_json=False`` does not even decode the bodies
    (scripts then see ``{}`` and the oracle answers "(500, 500)"), so a benchmark
    times the client rather than this server's JSON parsing.
    """

    def __init__(
        self,
        script: Iterable[Reply] | Script | None = None,
        *,
        handler: Script | None = None,
        delay: float = 0.0,
        record: bool = True,
        parse_json: bool = True,
        model_name: str = "m",
    ) -> None:
        self.queue: deque[Reply] = deque()
        if callable(script):
            handler = script
        elif script is not None:
            self.queue.extend(script)
        self.handler = handler
        self.delay = delay
        self.record = record
        self.parse_json = parse_json
        self.model_name = model_name
        self.requests: list[Recorded] = []
        self.max_in_flight = 0
        self.answered = 0
        self.dead = False
        self._in = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._stop_lock = threading.Lock()
        self._port = 0
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._port, "the server is not started"
        return self._port

    @property
    def url(self) -> str:
        """The API base to give the client (``--uiground-api-base``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ChatServer:
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd, self._port = httpd, int(httpd.server_address[1])
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="chat-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening, drop every open connection and wake delayed handlers. Idempotent."""
        self.dead = True
        self._stopping.set()
        with self._stop_lock:
            httpd, self._httpd = self._httpd, None
            if httpd is not None:
                httpd.shutdown()
                httpd.server_close()
            with self._lock:
                conns = list(self._connections)
            for conn in conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            if self._thread is not None:
                self._thread.join(timeout=5)
                self._thread = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what tests read ----------------------------------------------------------------
    @property
    def count(self) -> int:
        """Chat requests received (scripted, answered or dropped)."""
        with self._lock:
            return len(self.requests)

    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.body is not None]

    def prompts(self) -> list[str]:
        return [prompt_of(b) for b in self.bodies()]

    # -- internals used by the handler --------------------------------------------------
    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    @contextmanager
    def _in_flight(self) -> Iterator[None]:
        with self._lock:
            self._in += 1
            self.max_in_flight = max(self.max_in_flight, self._in)
        try:
            yield
        finally:
            with self._lock:
                self._in -= 1

    def _reply_for(self, body: dict[str, Any], headers: dict[str, str], path: str, size: int) -> Reply:
        with self._lock:
            self.requests.append(Recorded(path, headers, body if self.record else None, size, time.monotonic()))
            scripted = self.queue.popleft() if self.queue else None
        if scripted is not None:
            return scripted
        if self.handler is not None and (reply := self.handler(body)) is not None:
            return reply
        return oracle(body)

    def _next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def _answered(self) -> None:
        with self._lock:
            self.answered += 1

    def _die(self) -> None:
        # Stop from another thread: shutdown() waits for serve_forever, and the handler
        # that asked must be free to drop its own connection meanwhile.
        self.dead = True
        threading.Thread(target=self.stop, name="chat-server-die", daemon=True).start()
