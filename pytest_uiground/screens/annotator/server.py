"""The annotator's local web server: the page, the screenshots, the detector's proposals, the changes.

Why the standard library's ``http.server`` (``ThreadingHTTPServer``): the page talks to one
person's browser on 127.0.0.1, a handful of requests a second, and the plugin must not grow a
web framework dependency for a side command; a thread per request lets the page fetch the next
screenshot while the detector runs. What a framework would add is done here in a few lines:

* **Only this person.** Bound to 127.0.0.1 on a random free port; a random token (``secrets``)
  is part of the URL and every request without it is refused (403), as is a ``Host`` header
  that is not this address (a web page elsewhere cannot reach the server by DNS rebinding).
* **No external assets.** The page, its script and its style are package data served from
  here; the Content-Security-Policy allows nothing else (no inline script, no other origin),
  so even a missed escape could not run a script. The page writes every user string with
  ``textContent``.
* **Proposals** come from ``screens/review.py:load_detector`` (``ocr`` by
  default, or ``module:function``), one image at a time on one background thread (the page
  asks for the image on screen first; the others follow in order) and are kept in the sidecar
  (:mod:`pytest_uiground.screens.annotator.store`), so a reload does not run the detector again.
* **Icons are called icons.** OCR reads an icon as "□", "日", "NU" or "W"; a proposal whose text is
  no real text (:func:`is_junk_text`) is titled ``icon`` (and accepted as one), and a detector's
  icon with a caption (OmniParser's) is titled ``icon: CAPTION``. The text read stays in ``text``.
* **Changes** go through :class:`~pytest_uiground.screens.annotator.store.Store`: a change made on an
  old revision is answered 409 with the current state, and the page says so. **Ids are the server's**: the
  page sends a new sample without one, the store gives it the format's one id rule's, and the answer's
  ``created`` lists the inserted samples as written (the page's undo deletes exactly that sample).
* **Only this page changes anything.** The token alone does not make a request the page's: a
  page elsewhere that learnt it (a shared screenshot of the URL) could still post a ``text/plain``
  form to 127.0.0.1. A change is refused (403) unless its ``Origin`` is this server and its
  ``Sec-Fetch-Site`` is ``same-origin`` (browsers send both on every ``fetch`` POST; a script
  without them still needs the token).
* **Malformed input is answered, never dropped.** A bad ``Content-Length``, an image index that
  is not a plain number (``²``, 5,000 digits), a body that is not JSON or nests too deep, a method
  the server does not serve: each gets a 4xx naming the problem, and the server goes on; an error
  of ours is a 500 with one line, never a traceback and a closed connection.
"""

from __future__ import annotations

import hmac
import json
import mimetypes
import secrets
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from pytest_uiground.record import jsontext
from pytest_uiground.record.files import hex_digest
from pytest_uiground.screens import format as fmt
from pytest_uiground.screens.annotator.store import Conflict, Snapshot, Store, StoreError, check_image_path

IMAGE_SUFFIXES: Final = fmt.IMAGE_SUFFIXES  # the format's one list: what the loader reads, the page shows
SKIP_DIRS: Final = frozenset({"__pycache__", "node_modules", "site-packages", "out"})
MAX_BODY: Final = 8 * 1024 * 1024
MAX_INDEX_DIGITS: Final = 9  # an image index is a plain decimal number; int() of 5,000 digits raises
STATIC: Final = {"/page.js": "text/javascript; charset=utf-8", "/page.css": "text/css; charset=utf-8"}
CSP: Final = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
              "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


@dataclass(frozen=True)
class ImageInfo:
    """A screenshot the page can show: its path relative to the annotations file, its size."""

    name: str
    path: Path
    width: int = 0
    height: int = 0
    error: str | None = None


def find_images(folder: Path, root: Path, referenced: Iterable[str]) -> list[ImageInfo]:
    """The screenshots under ``folder`` (hidden folders, caches and report folders skipped) and
    those the file's lines name, each with its size read from the header (not decoded)."""
    from PIL import Image

    names: set[str] = set()
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(root)
        if (path.suffix.lower() in IMAGE_SUFFIXES and path.is_file()
                and not any(p.startswith(".") or p in SKIP_DIRS for p in rel.parts[:-1])):
            names.add(rel.as_posix())
    for name in referenced:
        try:
            names.add(check_image_path(name))
        except StoreError:
            continue  # a bad path stays on its line; validation names it
    infos = []
    for name in sorted(names):
        path = root / name
        try:
            with Image.open(path) as img:
                width, height = img.size
            infos.append(ImageInfo(name, path, width, height))
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            reason = "missing" if not path.exists() else f"cannot be read ({type(exc).__name__}: {exc})"
            infos.append(ImageInfo(name, path, error=f"{name} {reason}"))
    return infos


SHORT_WORDS: Final = frozenset({
    "ok", "go", "no", "up", "on", "in", "to", "me", "my", "id", "tv", "am", "pm", "hi", "by", "of", "or", "us",
    "it", "is", "at", "be", "do", "if", "so", "we", "he", "uk", "eu", "ai", "pc", "cc", "bcc", "qr"})
"""Words of one or two letters a screen really shows (project wording): the others are OCR's reading of an icon."""


def is_junk_text(text: str) -> bool:
    """OCR text that is no real text: nothing, no letter or digit at all ("□", "»"), or one or two
    characters that are neither a number nor a known short word ("日", "NU", "W")."""
    t = text.strip()
    if not any(c.isalnum() for c in t):
        return True
    return len(t) <= 2 and not t.isdigit() and t.lower() not in SHORT_WORDS


def proposal_title(text: str, element_type: str) -> tuple[str, str]:
    """(the title the page shows, the element type an accept writes) of one proposal."""
    if element_type == "icon":
        return ("icon" if is_junk_text(text) else f"icon: {text.strip()}"), element_type
    if is_junk_text(text):
        return "icon", "icon"
    return text, element_type


def curation_tool() -> Any:
    """The terminal review's module (:mod:`pytest_uiground.screens.review`): its detectors (OCR, OmniParser,
    ``module:function``) propose the page's boxes, and ``--terminal`` is its prompt review. Imported on first
    use (the detectors' engines load with it), by a plain import: it lives in this package."""
    from pytest_uiground.screens import review

    return review


class Proposals:
    """The detector's proposals per image, computed on one background thread in image order,
    the image the page waits for first, and kept in the sidecar."""

    def __init__(self, store: Store, images: Sequence[ImageInfo], spec: str, min_score: float,
                 *, prefetch: bool = True) -> None:
        self.store, self.images, self.spec, self.min_score = store, images, spec, min_score
        self.detector = curation_tool().load_detector(spec)  # a bad --detector fails at start-up, not on the page
        self._done: dict[int, dict[str, Any]] = {}
        self._wanted: list[int] = []
        self._cond = threading.Condition()
        self._prefetch = prefetch
        self._closed = False
        cached = store.read().proposals
        for i, info in enumerate(images):
            record = cached.get(info.name)
            if isinstance(record, dict) and record.get("key") == self._key(info):
                self._done[i] = record
        self._thread = threading.Thread(target=self._work, name="uiground-proposals", daemon=True)
        self._thread.start()

    def _key(self, info: ImageInfo) -> str:
        data = info.path.read_bytes() if info.error is None else b""
        return f"{self.spec}|{self.min_score}|{hex_digest(data, short=True)}|titled"  # titles since issue 39

    def get(self, i: int, timeout: float = 300.0) -> dict[str, Any]:
        with self._cond:
            if i not in self._done:
                self._wanted.append(i)
                self._cond.notify_all()
                self._cond.wait_for(lambda: i in self._done, timeout=timeout)
            return self._done.get(i, {"error": f"the detector took more than {timeout:.0f} s on this image"})

    def _pick(self) -> int | None:
        """The image to compute next: the latest one the page asked for, else the first not done."""
        wanted = next((i for i in reversed(self._wanted) if i not in self._done), None)
        if wanted is not None or not self._prefetch:
            return wanted
        return next((i for i in range(len(self.images)) if i not in self._done), None)

    def close(self, timeout: float = 60.0) -> None:
        """Stop after the image being read (a detector's native thread must not be cut off at exit)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout)

    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._closed or self._pick() is not None)
                if self._closed:
                    return
                i = self._pick()
                self._wanted = [w for w in self._wanted if w != i]
            assert i is not None
            record = self._compute(self.images[i])
            with self._cond:
                self._done[i] = record
                self._cond.notify_all()

    def _compute(self, info: ImageInfo) -> dict[str, Any]:
        tool = curation_tool()
        AnnotateError, proposals_of, read_image = tool.AnnotateError, tool.proposals_of, tool.read_image

        if info.error is not None:
            return {"error": info.error, "items": []}
        img = read_image(info.path)
        if img is None:
            return {"error": f"{info.name} cannot be decoded", "items": []}
        try:
            found, hidden = proposals_of(self.detector, img, info.name, self.min_score)
        except AnnotateError as exc:
            return {"error": str(exc), "items": []}
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        for e in found:
            pid = hex_digest(f"{e.text}|{list(e.box)}", short=True)[:10]
            while pid in seen:
                pid = hex_digest(pid, short=True)[:10]
            seen.add(pid)
            title, kind = proposal_title(e.text or "", e.element_type)
            items.append({"pid": pid, "box": list(e.box), "text": e.text or "", "title": title, "element_type": kind})
        record = {"key": self._key(info), "items": items, "hidden": hidden}
        self.store.save_proposals(info.name, record)
        return record


class Annotator:
    """What the handler serves: the store, the images, the proposals and the page's token."""

    def __init__(self, store: Store, images: Sequence[ImageInfo], proposals: Proposals | None,
                 token: str | None = None) -> None:
        self.store, self.images, self.proposals = store, list(images), proposals
        self.token = token or secrets.token_urlsafe(24)
        self.sizes = {i.name: (i.width, i.height) for i in self.images if i.error is None}
        self.detector = proposals.spec if proposals else None

    def state(self, snap: Snapshot | None = None) -> dict[str, Any]:
        snap = snap or self.store.read()
        review = snap.review
        return {
            "revision": snap.revision, "file": str(self.store.path), "file_name": self.store.path.name,
            "sidecar": self.store.sidecar.name, "detector": self.detector, "entries": len(snap.entries),
            "problems": snap.problems,
            "images": [{"i": i, "name": info.name, "width": info.width, "height": info.height, "error": info.error,
                        "done": bool(review.get(info.name, {}).get("done")),
                        "marks": review.get(info.name, {}).get("proposals", {})}
                       for i, info in enumerate(self.images)],
            "samples": [{"index": n, "data": e.data, **shown(e.data)} for n, e in enumerate(snap.entries)
                        if e.data is not None],
        }

    def change(self, body: Any) -> tuple[int, dict[str, Any]]:
        if not isinstance(body, dict) or not isinstance(body.get("base"), str) or not isinstance(body.get("ops"), list):
            return 400, {"error": "expected {\"base\": REVISION, \"ops\": [...]}"}
        try:
            snap = self.store.change(body["base"], body["ops"], self.sizes)
        except Conflict:
            return 409, {"conflict": True, "state": self.state()}
        except StoreError as exc:
            return 400, {"error": str(exc)}
        return 200, {"state": self.state(snap), "created": snap.created}


def shown(data: dict[str, Any]) -> dict[str, str]:
    """How the page shows a sample's box and click: the format's one text (:func:`fmt.box_text`,
    :func:`fmt.click_text`), computed here so the page formats no box of its own; none for a line the
    format cannot read (the page shows its problem)."""
    try:
        ann = fmt.parse(fmt.Line(0, data), draft=True)
    except fmt.BadLine:
        return {}
    out = {} if ann.task == "refusal" and data.get("bbox") is None else {"box_text": fmt.box_text(ann.bbox)}
    if ann.click is not None:
        out["click_text"] = fmt.click_text(ann.click)
    return out


def with_box_text(record: dict[str, Any]) -> dict[str, Any]:
    """An image's proposals as the page gets them: each with its ``box_text`` (not kept in the sidecar's cache)."""
    items = record.get("items")
    if not isinstance(items, list):
        return record
    return {**record, "items": [{**i, "box_text": fmt.box_text(i["box"])} if isinstance(i, dict)
                                and isinstance(i.get("box"), list) else i for i in items]}


class BadRequest(Exception):
    """A request the handler answers with ``status`` and a one-line ``message`` (the fix named)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Handler(BaseHTTPRequestHandler):
    """Routes: ``/`` (the page), ``/page.js``, ``/page.css``, ``/api/state``, ``/api/revision``,
    ``/api/image/N``, ``/api/proposals/N`` (GET) and ``/api/change`` (POST); all need the token,
    and the POST comes from the page's own origin."""

    server: AnnotatorServer
    server_version = "uiground-annotate"
    sys_version = ""
    timeout = 30  # a client that announces a body and never sends it does not hold a thread forever

    def log_message(self, format: str, *args: Any) -> None:  # one person's page: no access log
        return

    def _allowed(self) -> tuple[str, dict[str, list[str]]]:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        token = self.headers.get("X-Token") or (query.get("token") or [""])[0]
        host = self.headers.get("Host", "")
        port = self.server.server_address[1]
        if host not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            raise BadRequest(403, "refused: this server answers only http://127.0.0.1 requests")
        if not hmac.compare_digest(token.encode("utf-8", "replace"), self.server.annotator.token.encode()):
            raise BadRequest(403, "refused: the URL's token is missing or wrong; open the URL the annotate command "
                                  "printed")
        return url.path, query

    def _same_origin(self) -> None:
        """A state-changing request must come from the page itself (see the module's docstring)."""
        port = self.server.server_address[1]
        origin = self.headers.get("Origin")
        if origin is not None and origin not in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
            raise BadRequest(403, f"refused: a change from Origin {origin[:80]!r}; only the annotate page "
                                  f"(http://127.0.0.1:{port}) may change the annotations")
        site = self.headers.get("Sec-Fetch-Site")
        if site is not None and site != "same-origin":
            raise BadRequest(403, f"refused: a change with Sec-Fetch-Site {site[:40]!r}; only the annotate page "
                                  "itself (same-origin) may change the annotations")

    def _answer(self, route: Any) -> None:
        """Run one route; a :class:`BadRequest` becomes its 4xx, anything else one 500 line."""
        try:
            route()
        except BadRequest as exc:  # the page reads {"error"} from its api/ calls
            if urlsplit(self.path).path.startswith("/api/"):
                self._json(exc.status, {"error": str(exc)})
            else:
                self._send(exc.status, f"{exc}\n".encode(), "text/plain; charset=utf-8")
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the client went away or stalled: nobody to answer
        except Exception as exc:  # an error of ours: one line here and on the page, the server goes on
            where = f"{self.command} {urlsplit(self.path).path[:80]}"
            message = f"annotate: internal error on {where}: {type(exc).__name__}: {exc}"
            print(message, file=sys.stderr, flush=True)
            self._send(500, f"{message}\n".encode(), "text/plain; charset=utf-8")

    def do_GET(self) -> None:
        self._answer(self._get)

    def do_POST(self) -> None:
        self._answer(self._post)

    def _refuse_method(self) -> None:
        def route() -> None:
            self._allowed()
            raise BadRequest(405, f"method {self.command} is not served: the page uses GET and POST /api/change")
        self._answer(route)

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _refuse_method

    def _get(self) -> None:
        path, _query = self._allowed()
        annotator = self.server.annotator
        if path in ("/", "/index.html"):
            page = _asset("page.html").replace("{{TOKEN}}", annotator.token)
            self._send(200, page.encode(), "text/html; charset=utf-8")
        elif path in STATIC:
            self._send(200, _asset(path[1:]).encode(), STATIC[path])
        elif path == "/api/state":
            self._json(200, annotator.state())
        elif path == "/api/revision":
            self._json(200, {"revision": annotator.store.revision()})
        elif path.startswith(("/api/image/", "/api/proposals/")):
            index = image_index(path.rsplit("/", 1)[-1], len(annotator.images))
            info = annotator.images[index]
            if path.startswith("/api/proposals/"):
                if annotator.proposals is None:
                    self._json(200, {"items": [], "error": "no detector (--detector none)"})
                else:
                    self._json(200, with_box_text(annotator.proposals.get(index)))
            elif info.error is not None:
                self._send(404, info.error.encode(), "text/plain; charset=utf-8")
            else:
                kind = mimetypes.guess_type(info.name)[0] or "application/octet-stream"
                self._send(200, info.path.read_bytes(), kind, cache="private, max-age=3600")
        else:
            self._send(404, b"not found\n", "text/plain")

    def _post(self) -> None:
        path, _query = self._allowed()
        if path != "/api/change":
            raise BadRequest(404, f"not found: POST {path[:80]}; changes go to /api/change")
        self._same_origin()
        body = json_body(self.headers.get("Content-Length"), self.headers.get("Content-Type", ""), self.rfile)
        self._json(*self.server.annotator.change(body))

    def _json(self, status: int, doc: Any) -> None:
        self._send(status, json.dumps(doc, ensure_ascii=False).encode(), "application/json; charset=utf-8")

    def _send(self, status: int, body: bytes, kind: str, cache: str = "no-store") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def image_index(raw: str, count: int) -> int:
    """The image index of ``/api/image/N``: plain ASCII digits (not ``²``, not 5,000 of them) below ``count``."""
    if not (raw.isascii() and raw.isdigit() and len(raw) <= MAX_INDEX_DIGITS) or int(raw) >= count:
        raise BadRequest(404, f"no such image: {raw[:20]!r}; images are numbered 0 to {count - 1}")
    return int(raw)


def json_body(length_header: str | None, content_type: str, stream: Any) -> Any:
    """The JSON body of a change, or :class:`BadRequest` naming what is wrong with it."""
    if "json" not in content_type:
        raise BadRequest(415, f"a change is a JSON body (Content-Type: application/json), got {content_type[:60]!r}")
    if length_header is None:
        raise BadRequest(411, "a change needs a Content-Length header (the JSON body's size in bytes)")
    text = length_header.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= MAX_INDEX_DIGITS + 1):
        raise BadRequest(400, f"Content-Length {length_header[:40]!r} is not a byte count")
    length = int(text)
    if not 0 < length <= MAX_BODY:
        raise BadRequest(413 if length else 400, f"Content-Length {length}: a change is a JSON body of 1 byte to "
                                                 f"{MAX_BODY // 2**20} MiB")
    try:
        data = stream.read(length)
    except TimeoutError:
        raise BadRequest(400, f"the body ended before its Content-Length ({length} bytes)") from None
    if len(data) < length:
        raise BadRequest(400, f"the body ended after {len(data)} of its Content-Length's {length} bytes")
    try:
        return jsontext.loads(data)
    except RecursionError:  # jsontext.TooDeep: nested past jsontext.MAX_DEPTH
        raise BadRequest(400, "the body nests too deeply to be a change") from None
    except ValueError as exc:  # UnicodeDecodeError included
        raise BadRequest(400, f"the body is not JSON: {exc}") from None


def _asset(name: str) -> str:
    return resources.files("pytest_uiground.screens.annotator").joinpath(name).read_text(encoding="utf-8")


class AnnotatorServer(ThreadingHTTPServer):
    """The HTTP server on 127.0.0.1 (``port`` 0: a free one) carrying its :class:`Annotator`."""

    daemon_threads = True

    def __init__(self, annotator: Annotator, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.annotator = annotator

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A tab closed while its request was answered is no error worth a traceback."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def server_close(self) -> None:
        super().server_close()
        if self.annotator.proposals is not None:
            self.annotator.proposals.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/?token={self.annotator.token}"

