"""``python -m pytest_uiground annotate`` without a browser: what TARGET resolves to, the errors
that name the fix, the server's refusals (token, host, paths), no external assets, the command
run for real (URL printed, Ctrl+C stops it), and ``--terminal`` still being the prompt review.
Issue 38: each malformed request answered with a 4xx (the server still up), a change from another
origin refused although it carries the token, no temporary file after a SIGTERM during a save."""

from __future__ import annotations

import http.client
import io
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from annotator_support import Running, detector, serve, shots  # noqa: F401 (fixtures by name)

from pytest_uiground.__main__ import main as cli_main
from pytest_uiground.screens import review as terminal
from pytest_uiground.screens.annotator import cli
from pytest_uiground.screens.annotator.server import CSP, Handler, proposal_title
from pytest_uiground.screens.annotator.store import Store


def request(running: Running, path: str, *, token: str | None = "ok", host: str | None = None,
            body: object = None) -> tuple[int, bytes, dict[str, str]]:
    """One request to the server; ``token="ok"`` sends the right one, None none at all."""
    conn = http.client.HTTPConnection("127.0.0.1", running.server.server_address[1], timeout=30)
    sep = "&" if "?" in path else "?"
    if token is not None:
        path += f"{sep}token={running.server.annotator.token if token == 'ok' else token}"
    headers = {"Host": host} if host else {}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    conn.request("POST" if body is not None else "GET", path, body=data, headers=headers)
    response = conn.getresponse()
    return response.status, response.read(), dict(response.getheaders())


def test_every_request_without_the_token_is_refused(shots: Path, serve: Callable[..., Running]) -> None:
    running = serve(shots / "annotations.jsonl")
    for path in ("/", "/page.js", "/api/state", "/api/image/0", "/api/revision"):
        assert request(running, path, token=None)[0] == 403, path
        assert request(running, path, token="wrong")[0] == 403, path
    status, body, _ = request(running, "/api/change", token=None, body={"base": "x", "ops": []})
    assert status == 403 and b"token is missing or wrong" in body
    # A page elsewhere reaching the port through its own host name (DNS rebinding) is refused too.
    assert request(running, "/api/state", host="evil.example:80")[0] == 403
    assert request(running, "/api/state")[0] == 200
    assert not running.file.exists()  # refused requests wrote nothing


def test_the_page_loads_nothing_from_elsewhere(shots: Path, serve: Callable[..., Running]) -> None:
    running = serve(shots / "annotations.jsonl")
    status, body, headers = request(running, "/")
    page = body.decode()
    assert status == 200 and headers["Content-Security-Policy"] == CSP
    assert "default-src 'none'" in CSP and "'unsafe-inline'" not in CSP
    refs = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert refs and all(not re.match(r"^[a-z]+://|^//", r) for r in refs), refs
    assert "<script>" not in page and "style=" not in page  # no inline script or style: the CSP forbids them
    for asset in ("/page.js", "/page.css"):
        status, body, _ = request(running, asset)
        assert status == 200 and b"http://" not in body and b"https://" not in body
    assert b".innerHTML" not in request(running, "/page.js")[1]  # user strings go through textContent


def test_images_are_served_by_index_only(shots: Path, serve: Callable[..., Running]) -> None:
    running = serve(shots / "annotations.jsonl")
    state = json.loads(request(running, "/api/state")[1])
    assert [(i["name"], i["width"], i["height"]) for i in state["images"]] == [("a.png", 400, 300),
                                                                              ("b.png", 400, 300)]
    status, body, headers = request(running, "/api/image/1")
    assert status == 200 and headers["Content-Type"] == "image/png" and body == (shots / "b.png").read_bytes()
    for bad in ("/api/image/2", "/api/image/..%2Fa.png", "/api/image/-1"):
        assert request(running, bad)[0] == 404, bad


def test_a_change_through_the_server_and_a_stale_one(shots: Path, serve: Callable[..., Running]) -> None:
    running = serve(shots / "annotations.jsonl")
    state = json.loads(request(running, "/api/state")[1])
    sample = {"id": "a-001", "image": "a.png", "instruction": "Open the menu", "bbox": [1, 2, 30, 40]}
    status, body, _ = request(running, "/api/change", body={"base": state["revision"],
                                                             "ops": [{"op": "insert", "index": 0, "sample": sample}]})
    assert status == 200 and json.loads(body)["state"]["samples"] == [
        {"index": 0, "data": sample, "box_text": "box [1, 2, 30, 40] px"}]  # the format's one box text
    status, body, _ = request(running, "/api/change", body={"base": state["revision"], "ops": [
        {"op": "done", "image": "a.png", "done": True}]})
    assert status == 409 and json.loads(body)["state"]["samples"][0]["data"] == sample
    assert running.lines() == [json.dumps(sample)]
    status, body, _ = request(running, "/api/change", body={"base": "x"})
    assert status == 400 and b"expected" in body


def test_proposals_come_from_the_detector_in_pixels(shots: Path, serve: Callable[..., Running], detector: str) -> None:
    running = serve(shots / "annotations.jsonl", detector=detector)
    doc = json.loads(request(running, "/api/proposals/0")[1])
    assert [(p["text"], p["box"], p["element_type"]) for p in doc["items"]] == [
        ("Login", [40, 40, 160, 80], "text"), ("Help", [40, 200, 100, 220], "text"),
        ("Email", [42, 122, 200, 148], "text")]
    assert doc["hidden"] == 1 and len({p["pid"] for p in doc["items"]}) == 3
    side = json.loads((shots / "annotations.review.json").read_text())
    assert [p["text"] for p in side["proposals"]["a.png"]["items"]] == ["Login", "Help", "Email"]


# -- TARGET -----------------------------------------------------------------------------------------
def test_target_resolves_to_the_annotations_file(tmp_path: Path, shots: Path) -> None:
    assert cli.resolve(shots, None) == (shots / "annotations.jsonl", shots)
    (shots / "annotations.jsonl").write_text("")
    assert cli.resolve(shots / "annotations.jsonl", None) == (shots / "annotations.jsonl", shots)
    suite = tmp_path / "suites" / "mine"
    (suite / "data").mkdir(parents=True)
    (suite / "suite.toml").write_text('[suite]\nname = "mine"\n[loader]\nname = "grounding"\n'
                                      '[loader.options]\nannotations = "data/labels.jsonl"\n')
    assert cli.resolve(suite, None) == (suite / "data" / "labels.jsonl", suite / "data")
    (suite / "suite.toml").write_text('[suite]\nname = "mine"\n[loader]\nname = "grounding"\n')
    assert cli.resolve(suite, None) == (suite / "annotations.jsonl", suite)
    # --out above the screenshots is fine; the images are then "shots/a.png".
    assert cli.resolve(shots, str(tmp_path / "all.jsonl")) == (tmp_path / "all.jsonl", shots)


@pytest.mark.parametrize(("args", "message"), [
    (["{shots}", "--out", "{shots}/curated.json"], "--out {shots}/curated.json: the page writes annotations.jsonl"),
    (["{shots}", "--out", "{shots}/deeper/a.jsonl"], "are not under {shots}/deeper"),
    (["{shots}/nowhere"], "TARGET {shots}/nowhere does not exist"),
    (["{shots}/a.png"], "is not an annotations .jsonl file"),
    (["{suite}"], "reads annotations 'annotations.json' (loader 'openadapt'); the page writes"),
    (["{empty}"], "no png/jpg/webp screenshots under"),
    (["{shots}", "--detector", "nonsense"], "expected 'ocr', 'omniparser[=WEIGHTS]' or 'module:function'"),
])
def test_usage_errors_name_the_value_and_the_fix(tmp_path: Path, shots: Path, capsys: pytest.CaptureFixture[str],
                                                 args: list[str], message: str) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "suite.toml").write_text('[loader]\nname = "openadapt"\n[loader.options]\nannotations = '
                                      '"annotations.json"\n')
    (tmp_path / "empty").mkdir()
    names = {"shots": str(shots), "suite": str(suite), "empty": str(tmp_path / "empty")}
    assert cli.main([a.format(**names) for a in args] + ["--no-browser"]) == 2
    assert message.format(**names) in capsys.readouterr().err


def test_the_command_prints_the_url_serves_and_stops_on_ctrl_c(shots: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "pytest_uiground", "annotate", str(shots), "--no-browser",
                             "--detector", "none"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        head = [proc.stdout.readline() for _ in range(3)]
        assert head[0].startswith(f"annotate: {shots / 'annotations.jsonl'} (0 sample(s), 2 screenshot(s)")
        url = re.search(r"open (http://127\.0\.0\.1:\d+/\?token=\S+)", head[1])
        assert url is not None, head
        with urllib.request.urlopen(url.group(1), timeout=30) as page:
            assert b"uiground annotate" in page.read()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "stopped;" in out and "holds every saved change" in out


# -- --terminal -------------------------------------------------------------------------------------
def test_terminal_flag_runs_the_prompt_review_writing_the_pages_format(tmp_path: Path, shots: Path, detector: str,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    answers = "a\nr\nr\n\na\nr\nr\n\n"  # a.png: accept Login; b.png: accept Login
    outputs = []
    for command in (lambda argv: terminal.main(argv), lambda argv: cli_main(["annotate", "--terminal", *argv])):
        out = tmp_path / f"ann{len(outputs)}.jsonl"
        monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
        assert command([str(shots), "--out", str(out), "--detector", detector]) == 0
        printed = capsys.readouterr().out.replace(str(out), "OUT")
        outputs.append((printed, out.read_text(encoding="utf-8")))
    assert outputs[0] == outputs[1]
    assert "a.png #1/3 'Login' box [40, 40, 160, 80] px type text" in outputs[0][0]
    # The browser annotator's own file: the page's store reads every line as a sample it can edit.
    assert [e.data for e in Store(tmp_path / "ann0.jsonl").read().entries] == [
        {"id": f"{n}-001", "image": f"shots/{n}.png", "instruction": "Login", "bbox": [40, 40, 160, 80],
         "element_type": "text", "task": "detect"} for n in ("a", "b")]


# -- malformed requests, foreign origins, signals (issue 38) ----------------------------------------
def raw(running: Running, head: str, body: bytes = b"", *, latin1: bytes = b"") -> tuple[int, bytes]:
    """Send exactly these bytes (a request http.client would not write) and read the status line
    and the body; a dropped connection fails the test."""
    port = running.server.server_address[1]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head.replace("TOKEN", running.server.annotator.token).replace("PORT", str(port))
                     .encode("latin-1").replace(b"LATIN1", latin1) + b"\r\n\r\n" + body)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert reply, f"the server dropped the connection on {head!r}"
    status_line, _, rest = reply.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


CHANGE = "POST /api/change?token=TOKEN HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nConnection: close"
DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(("head", "body", "status", "message"), [
    (CHANGE + "\r\nContent-Type: application/json\r\nContent-Length: abc", b"{}", 400,
     "Content-Length 'abc' is not a byte count"),
    (CHANGE + "\r\nContent-Type: application/json\r\nContent-Length: -5", b"{}", 400, "is not a byte count"),
    (CHANGE + "\r\nContent-Type: application/json\r\nContent-Length: 99999999999999999999", b"{}", 400,
     "is not a byte count"),
    (CHANGE + "\r\nContent-Type: application/json\r\nContent-Length: 999999999", b"{}", 413, "1 byte to 8 MiB"),
    (CHANGE + "\r\nContent-Type: application/json", b"", 411, "needs a Content-Length"),
    (CHANGE + "\r\nContent-Type: text/plain\r\nContent-Length: 2", b"{}", 415, "Content-Type: application/json"),
    (CHANGE + f"\r\nContent-Type: application/json\r\nContent-Length: {len(DEEP)}", DEEP, 400, "nests too deeply"),
    (CHANGE + "\r\nContent-Type: application/json\r\nContent-Length: 4", b"\xff\xfe{}", 400, "the body is not JSON"),
    (CHANGE + "\r\nContent-Type: application/json\r\nContent-Length: 60",
     b'{"base": "x", "ops": [{"op": "insert", "index": 0, "sample": {"image": "a.png", "bbox": [1, 2, 1' + b"0" * 400
     + b', 4]}}]}', 400, "expected [x1, y1, x2, y2] in pixels of the image (finite numbers)"),
    ("GET /api/image/" + "7" * 5000 + "?token=TOKEN HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nConnection: close", b"", 404,
     "no such image"),
    ("GET /api/proposals/LATIN1?token=TOKEN HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nConnection: close", b"", 404,
     "no such image"),
    ("GET /api/image/%C2%B2?token=TOKEN HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nConnection: close", b"", 404,
     "no such image"),
    ("PUT /api/change?token=TOKEN HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nConnection: close\r\nContent-Length: 0", b"",
     405, "method PUT is not served"),
    ("GET /api/state?token=LATIN1 HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nConnection: close", b"", 403,
     "token is missing or wrong"),
], ids=["length-abc", "length-negative", "length-20-digits", "length-huge", "no-length", "text-plain", "deep-json",
        "not-utf8", "400-digit-number", "index-5000-digits", "index-superscript-two", "index-utf8-superscript",
        "put", "token-latin1"])
def test_malformed_requests_get_a_4xx_and_the_server_goes_on(
        shots: Path, serve: Callable[..., Running], capfd: pytest.CaptureFixture[str],
        head: str, body: bytes, status: int, message: str) -> None:
    running = serve(shots / "annotations.jsonl", detector=None)
    if body.startswith(b'{"base"'):  # a real revision, so the sample is checked
        state = json.loads(request(running, "/api/state")[1])
        body = body.replace(b'"x"', json.dumps(state["revision"]).encode())
        head = re.sub(r"Content-Length: \d+", f"Content-Length: {len(body)}", head)
    got, text = raw(running, head, body, latin1=b"\xb2")
    assert got == status, text
    assert message.encode() in text
    assert request(running, "/api/state")[0] == 200  # the server is still up
    assert not running.file.exists()
    assert "Traceback" not in capfd.readouterr().err


def test_a_body_shorter_than_its_length_is_answered(shots: Path, serve: Callable[..., Running],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Handler, "timeout", 1)
    running = serve(shots / "annotations.jsonl")
    got, text = raw(running, CHANGE + "\r\nContent-Type: application/json\r\nContent-Length: 50", b"{}")
    assert got == 400 and b"the body ended" in text
    assert request(running, "/api/state")[0] == 200


def test_a_change_from_another_origin_is_refused_even_with_the_token(shots: Path,
                                                                      serve: Callable[..., Running]) -> None:
    running = serve(shots / "annotations.jsonl")
    state = json.loads(request(running, "/api/state")[1])
    change = json.dumps({"base": state["revision"], "ops": [{"op": "done", "image": "a.png", "done": True}]}).encode()
    port = running.server.server_address[1]

    def post(content_type: str, **headers: str) -> tuple[int, bytes]:
        extra = "".join(f"\r\n{k.replace('_', '-')}: {v}" for k, v in headers.items())
        return raw(running, CHANGE + f"\r\nContent-Type: {content_type}\r\nContent-Length: {len(change)}" + extra,
                   change)

    # A form a page elsewhere can post without a CORS preflight: text/plain, its own Origin.
    got, text = post("text/plain", Origin="http://evil.example", Sec_Fetch_Site="cross-site")
    assert got == 403 and b"Origin 'http://evil.example'" in text
    got, text = post("application/json", Origin="http://evil.example")
    assert got == 403 and b"only the annotate page" in text
    got, text = post("application/json", Origin="null")  # a sandboxed frame or a file:// page
    assert got == 403
    got, text = post("application/json", Origin=f"http://127.0.0.1:{port}", Sec_Fetch_Site="same-site")
    assert got == 403 and b"Sec-Fetch-Site 'same-site'" in text
    assert not (shots / "annotations.review.json").exists()  # nothing was written
    # The page's own fetch: same origin.
    got, _ = post("application/json", Origin=f"http://127.0.0.1:{port}", Sec_Fetch_Site="same-origin")
    assert got == 200
    assert json.loads((shots / "annotations.review.json").read_text())["images"] == {"a.png": {"done": True}}


SLOW_SAVE = """
import os, sys, time
real = os.fsync
def slow(fd):  # the save is caught with its temporary file on disk
    time.sleep(3)
    real(fd)
os.fsync = slow
from pytest_uiground.screens.annotator.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_sigterm_during_a_save_leaves_no_temporary_file(shots: Path) -> None:
    file = shots / "annotations.jsonl"
    stale = shots / ".annotations.jsonl.k2j4x_9a.tmp"  # left by an annotator killed outright earlier
    stale.write_text("half a file")
    other = shots / ".annotations.jsonl.keep"  # not of our naming: kept
    other.write_text("x")
    proc = subprocess.Popen([sys.executable, "-c", SLOW_SAVE, str(shots), "--no-browser", "--detector", "none"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        head = [proc.stdout.readline() for _ in range(4)]
        assert f"removed {stale}" in head[0]
        url = re.search(r"open http://127\.0\.0\.1:(\d+)/\?token=(\S+)", "".join(head))
        assert url is not None, head
        assert not stale.exists() and other.exists()
        port, token = int(url.group(1)), url.group(2)
        state = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state?token={token}",
                                                  timeout=30).read())
        sample = {"id": "a-001", "image": "a.png", "instruction": "Open the menu", "bbox": [1, 2, 30, 40]}
        body = json.dumps({"base": state["revision"], "ops": [{"op": "insert", "index": 0, "sample": sample}]})

        def save() -> None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                conn.request("POST", f"/api/change?token={token}", body=body,
                             headers={"Content-Type": "application/json"})
                conn.getresponse().read()
            except (OSError, http.client.HTTPException):  # IncompleteRead: the answer cut by the stop
                pass  # the process may stop before it answers; the file is what counts

        saver = threading.Thread(target=save)
        saver.start()
        store = Store(file)
        deadline = time.monotonic() + 30
        while not store.temp_files():
            assert time.monotonic() < deadline, "the save never staged its temporary file"
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        saver.join(30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "stopped (SIGTERM)" in out and "Traceback" not in err
    assert Store(file).temp_files() == [] and sorted(p.name for p in shots.glob(".*")) == [other.name]
    assert [json.loads(line) for line in file.read_text().splitlines()] == [sample]  # the save finished whole


@pytest.mark.parametrize(("text", "kind", "title", "written"), [
    ("\u25a1", "text", "icon", "icon"), ("\u65e5", "text", "icon", "icon"), ("NU", "text", "icon", "icon"),
    ("W", "text", "icon", "icon"), ("\u00bb", "text", "icon", "icon"), ("", "text", "icon", "icon"),
    ("OK", "text", "OK", "text"), ("12", "text", "12", "text"), ("Log in", "text", "Log in", "text"),
    ("Go", "button", "Go", "button"), ("gear", "icon", "icon: gear", "icon"), ("", "icon", "icon", "icon"),
])
def test_a_proposal_with_no_real_text_is_titled_icon(text: str, kind: str, title: str, written: str) -> None:
    assert proposal_title(text, kind) == (title, written)
