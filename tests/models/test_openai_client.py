"""``--model openai`` against a real loopback HTTP server, through the real ``openai`` client.

Unit-level tests build the model directly; end-to-end tests run pytest in a
subprocess on the synthetic ``mini`` suite. All traffic goes to 127.0.0.1 (see
``chat_server.py``); delays are tenths of a second and retries back off for
milliseconds, so the whole file stays well under a minute.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai", reason="--model openai needs the [openai] extra (pip install 'pytest-uiground[openai]')")
from chat_server import ChatServer, Reply, image_of, prompt_of
from conftest import SUITE_TOML, Project, needs
from PIL import Image

from pytest_uiground.models import families
from pytest_uiground.models.base import ModelLoadError, ModelOptions
from pytest_uiground.models.openai import client, settings, wire
from pytest_uiground.models.openai.client import OpenAIChatModel, create
from pytest_uiground.models.openai.wire import ResizeRule, smart_resize
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite.loading import load_suite

KEY = "sk-uiground-SECRET-7f3a91c2"

@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy may route the loopback traffic elsewhere; no ambient setting may leak in."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
                "OPENAI_BASE_URL", "OPENAI_CUSTOM_HEADERS", wire.MIN_PIXELS_ENV,
                wire.MAX_PIXELS_ENV, settings.BACKOFF_ENV):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> list[Sample]:
    path = tmp_path_factory.mktemp("mini") / "suite.toml"
    path.write_text(SUITE_TOML.format(loader="synthetic", floor=0.0))
    return sorted(load_suite(path).samples, key=lambda s: s.id)


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as srv:
        yield srv


@pytest.fixture
def make_model() -> Iterator[Callable[..., OpenAIChatModel]]:
    """Models for a server, closed at teardown; backoff in milliseconds."""
    made: list[OpenAIChatModel] = []

    def make(srv: ChatServer, **kw: Any) -> OpenAIChatModel:
        args: dict[str, Any] = {"api_key": KEY, "served_model": "m", "parser": "uground", "request_timeout": 5.0,
                                "backoff_base_s": 0.002, "max_retries": 3, **kw}
        model = OpenAIChatModel(api_base=srv.url, **args)
        made.append(model)
        return model

    yield make
    for m in made:
        m.close()


def instruction_of(prompt: str) -> str:
    m = re.search(r"Description: (.*)\n\nAnswer:", prompt)
    assert m, prompt
    return m.group(1)


def answering_targets(samples: list[Sample], delay: float = 0.0) -> Callable[[dict[str, Any]], Reply]:
    """A handler that answers each sample's target centre (UGround's 0..1000), found by its instruction."""
    centres = {s.instruction: s.target.box.center for s in samples if s.target.box is not None}
    assert len(centres) == len(samples), "instructions must be unique to look answers up"

    def handler(body: dict[str, Any]) -> Reply:
        c = centres[instruction_of(prompt_of(body))]
        return Reply.ok(f"({round(c.x * 1000)}, {round(c.y * 1000)})", delay=delay)

    return handler


def png_sample(sid: str, img: Image.Image, instruction: str = "click the OK button") -> tuple[Sample, bytes]:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    data = buf.getvalue()
    sample = Sample(sid, ImageRef.from_source(f"bytes:{sid}", lambda: data), instruction, "point",
                    Target(box=Box(0.4, 0.4, 0.6, 0.6)))
    return sample, data


# --- smart_resize ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hw", "limits", "expected"),
    [
        # 1080/28 = 38.57 → 39*28 = 1092; 1920/28 = 68.57 → 69*28 = 1932; 2.1 MP is within the limits
        ((1080, 1920), {}, (1092, 1932)),
        # 600/28 = 21.43 → 588; 800/28 = 28.57 → 812
        ((600, 800), {}, (588, 812)),
        # 5992 x 8008 = 48 MP > 12.8 MP: beta = sqrt(48e6 / 12845056) = 1.9331;
        # 6000/1.9331/28 = 110.85 → 110*28 = 3080; 8000/1.9331/28 = 147.8 → 147*28 = 4116
        ((6000, 8000), {}, (3080, 4116)),
        # UI-TARS-style max_pixels 1280*28*28 = 1003520: beta = sqrt(2073600 / 1003520) = 1.4375;
        # 1080/1.4375/28 = 26.8 → 728; 1920/1.4375/28 = 47.7 → 1316
        ((1080, 1920), {"max_pixels": 1280 * 28 * 28}, (728, 1316)),
        # 20x20 rounds to 28x28 = 784 < 3136: beta = sqrt(3136/400) = 2.8; 20*2.8/28 = 2 → 56
        ((20, 20), {}, (56, 56)),
        # 100/28 = 3.57 → 112; 10000/28 = 357.1 → 9996 (aspect 100 is allowed)
        ((100, 10000), {}, (112, 9996)),
        # round() halves go to even, as in transformers: 42/28 = 1.5 → 2 → 56; 70/28 = 2.5 → 2 → 56
        ((42, 70), {"min_pixels": 28 * 28}, (56, 56)),
    ],
)
def test_smart_resize_matches_hand_computed_values(
    hw: tuple[int, int], limits: dict[str, int], expected: tuple[int, int]
) -> None:
    assert smart_resize(*hw, **limits) == expected


def test_smart_resize_refuses_extreme_aspect_ratios() -> None:
    with pytest.raises(ValueError, match="aspect ratio must be smaller than 200"):
        smart_resize(10, 2010)


def test_resize_assumption_comes_from_env_and_is_in_the_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    rule = wire.resize_rule_from_env()
    assert (rule.min_pixels, rule.max_pixels) == (4 * 28 * 28, 16384 * 28 * 28)
    monkeypatch.setenv(wire.MAX_PIXELS_ENV, str(1280 * 28 * 28))
    rule = wire.resize_rule_from_env()
    assert rule.max_pixels == 1280 * 28 * 28 and wire.MAX_PIXELS_ENV in rule.source
    assert rule.input_size((1920, 1080)) == (1316, 728)
    monkeypatch.setenv(wire.MIN_PIXELS_ENV, "lots")
    with pytest.raises(ModelLoadError, match=wire.MIN_PIXELS_ENV):
        wire.resize_rule_from_env()


# --- requests --------------------------------------------------------------------------------


def test_request_carries_image_prompt_settings_and_the_key_only_in_its_header(
    server: ChatServer, make_model: Callable[..., OpenAIChatModel], samples: list[Sample]
) -> None:
    model = make_model(server, max_new_tokens=64)
    batch = [samples[0], samples[3]]
    preds = model.predict(batch)
    assert [p.error for p in preds] == [None, None]
    assert all(p.point is not None and p.raw == "(500, 500)" for p in preds)
    assert server.count == 2
    by_prompt = {prompt_of(b): b for b in server.bodies()}
    for s in batch:
        body = by_prompt[families.get("uground").user_text(s)]
        assert (body["model"], body["temperature"], body["seed"], body["max_tokens"]) == ("m", 0, 0, 64)
        content = body["messages"][0]["content"]
        assert [p["type"] for p in content] == ["image_url", "text"]
        assert content[0]["image_url"]["url"].startswith("data:image/png;base64,")
        sent = Image.open(io.BytesIO(image_of(body)))
        assert sent.format == "PNG" and sent.convert("RGB").tobytes() == s.image.load().tobytes()
    for rec in server.requests:
        assert rec.headers["authorization"] == f"Bearer {KEY}"
        others = {k: v for k, v in rec.headers.items() if k.lower() != "authorization"}
        assert KEY not in json.dumps(others) and KEY not in rec.path and KEY not in json.dumps(rec.body)
    exposed = json.dumps([model.fingerprint(), model.cache_key(samples[0]), repr(model), [p.to_json() for p in preds]])
    assert KEY not in exposed
    assert str(server.port) not in json.dumps([model.fingerprint(), model.cache_key(samples[0])])
    assert model.endpoint == server.url
    assert set(model.cache_key(samples[0])) == {"sample", "image", "task", "prompt", "served_model", "parser",
                                                "generation"}
    assert model.fingerprint()["generation"] == {"temperature": 0, "max_tokens": 64, "seed": 0}


def test_the_hand_spliced_body_is_the_json_it_stands_for(
    server: ChatServer, make_model: Callable[..., OpenAIChatModel]
) -> None:
    model = make_model(server, max_new_tokens=7)
    image = wire.EncodedImage(b"data:image/png;base64,iVBORw0KGgo+/=", (1, 1))
    prompt = 'Click "Ok"\n\tthen \\ the Ünïcode ✓ button'
    assert json.loads(model.build_body(prompt, image)) == {
        "model": "m", "temperature": 0, "max_tokens": 7, "seed": 0,
        "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": image.data_url.decode()}}, {"type": "text", "text": prompt}]}],
    }


def test_rgb_png_bytes_go_out_unchanged_other_pngs_as_rgb(
    server: ChatServer, make_model: Callable[..., OpenAIChatModel]
) -> None:
    rgb, rgb_bytes = png_sample("rgb", Image.new("RGB", (64, 48), (10, 200, 30)))
    rgba, _ = png_sample("rgba", Image.new("RGBA", (64, 48), (10, 200, 30, 100)), "click the Cancel button")
    preds = make_model(server).predict([rgb, rgba])
    assert [p.error for p in preds] == [None, None]
    sent = {prompt_of(b): image_of(b) for b in server.bodies()}
    assert sent[families.get("uground").user_text(rgb)] == rgb_bytes
    assert Image.open(io.BytesIO(sent[families.get("uground").user_text(rgba)])).mode == "RGB"


def test_a_broken_image_fails_its_sample_without_a_request(
    server: ChatServer, make_model: Callable[..., OpenAIChatModel], samples: list[Sample]
) -> None:
    broken = Sample("broken", ImageRef.from_source("broken", lambda: b"not an image"), "x", "point",
                    Target(box=Box(0, 0, 1, 1)))
    preds = make_model(server).predict([broken, samples[0]])
    assert preds[0].error is not None and "could not be decoded" in preds[0].error
    assert preds[1].error is None and server.count == 1


# --- faults and retries -------------------------------------------------------------------


@pytest.mark.parametrize(("retry_after", "cap", "low", "high"), [("0.3", 60.0, 0.3, 1.5), ("100", 0.2, 0.2, 1.5)],
                         ids=["honoured", "capped"])
def test_429_is_retried_after_retry_after(
    make_model: Callable[..., OpenAIChatModel], samples: list[Sample],
    retry_after: str, cap: float, low: float, high: float,
) -> None:
    with ChatServer([Reply.error(429, "slow down", retry_after=retry_after)]) as srv:
        # A backoff of 30 s would be visible: Retry-After (capped) must replace it.
        model = make_model(srv, backoff_base_s=30.0, retry_after_cap_s=cap)
        t0 = time.perf_counter()
        [pred] = model.predict([samples[0]])
        elapsed = time.perf_counter() - t0
    assert pred.error is None and pred.raw == "(500, 500)"
    assert srv.count == 2 and model.counters["retries"] == 1
    assert low <= elapsed < high
    assert pred.latency_ms >= low * 1000  # the sample's latency includes its retries


def test_5xx_are_retried_with_backoff(make_model: Callable[..., OpenAIChatModel], samples: list[Sample]) -> None:
    with ChatServer([Reply.error(500, "boom"), Reply.error(503, "loading")]) as srv:
        model = make_model(srv)
        [pred] = model.predict([samples[0]])
    assert pred.error is None and srv.count == 3 and model.counters["retries"] == 2


def test_a_timeout_is_retried(make_model: Callable[..., OpenAIChatModel], samples: list[Sample]) -> None:
    with ChatServer([Reply.ok("(1, 1)", delay=3.0)]) as srv:
        model = make_model(srv, request_timeout=0.3)
        [pred] = model.predict([samples[0]])
    assert pred.error is None and pred.raw == "(500, 500)", "the late answer was abandoned"
    assert srv.count == 2 and model.counters["retries"] == 1
    assert pred.latency_ms >= 300


def test_malformed_responses_are_retried_like_5xx(
    make_model: Callable[..., OpenAIChatModel], samples: list[Sample]
) -> None:
    with ChatServer([Reply.malformed(), Reply.no_choices()]) as srv:
        model = make_model(srv)
        [pred] = model.predict([samples[0]])
    assert pred.error is None and srv.count == 3 and model.counters["retries"] == 2
    with ChatServer(lambda body: Reply.malformed()) as srv:
        [pred] = make_model(srv, max_retries=1).predict([samples[0]])
    assert pred.error is not None and srv.count == 2
    assert "gave up after 2 attempts" in pred.error and "malformed response" in pred.error


def test_exhausted_retries_fail_only_that_sample(
    make_model: Callable[..., OpenAIChatModel], samples: list[Sample]
) -> None:
    doomed = families.get("uground").user_text(samples[1])
    with ChatServer(lambda body: Reply.error(502, "bad gateway") if prompt_of(body) == doomed else None) as srv:
        preds = make_model(srv, max_retries=2).predict(samples[:3])
    assert [p.error is None for p in preds] == [True, False, True]
    assert "gave up after 3 attempts" in str(preds[1].error) and "HTTP 502" in str(preds[1].error)
    assert "bad gateway" in str(preds[1].error)
    assert srv.prompts().count(doomed) == 3


def test_a_400_fails_that_sample_with_the_servers_message_and_no_retry(
    make_model: Callable[..., OpenAIChatModel], samples: list[Sample]
) -> None:
    doomed = families.get("uground").user_text(samples[2])
    message = "image too large: 9000000 pixels exceed the limit of 8000000"
    with ChatServer(lambda body: Reply.error(400, message) if prompt_of(body) == doomed else None) as srv:
        model = make_model(srv)
        preds = model.predict(samples[:4])
    assert [p.error is None for p in preds] == [True, True, False, True]
    assert message in str(preds[2].error) and "HTTP 400" in str(preds[2].error)
    assert srv.prompts().count(doomed) == 1 and model.counters["retries"] == 0


def test_a_key_echoed_by_the_server_is_masked(
    make_model: Callable[..., OpenAIChatModel], samples: list[Sample]
) -> None:
    with ChatServer(lambda body: Reply.error(401, f"Incorrect API key provided: {KEY}")) as srv:
        [pred] = make_model(srv).predict([samples[0]])
    assert pred.error is not None and KEY not in pred.error
    assert "HTTP 401" in pred.error and "[REDACTED]" in pred.error and "$OPENAI_API_KEY" in pred.error
    assert srv.count == 1, "a 401 is not retried"


def test_a_dead_server_errors_every_sample_quickly(
    make_model: Callable[..., OpenAIChatModel], samples: list[Sample]
) -> None:
    srv = ChatServer().start()
    srv.stop()
    model = make_model(srv, max_retries=3, concurrency=4)
    t0 = time.perf_counter()
    preds = model.predict(samples)
    assert time.perf_counter() - t0 < 10
    assert all(p.error is not None and "could not connect to http://127.0.0.1" in p.error for p in preds)
    # the first samples exhaust their retries; later ones are not retried while the server is down
    assert model.counters["skipped_retries"] >= 1
    assert model.counters["requests"] < len(samples) * 4


def test_truncated_output_says_so(make_model: Callable[..., OpenAIChatModel], samples: list[Sample]) -> None:
    with ChatServer([Reply.ok("The element is at", finish_reason="length")]) as srv:
        [pred] = make_model(srv, max_new_tokens=4).predict([samples[0]])
    assert pred.format_error and "cut off at --uiground-max-new-tokens 4" in pred.raw


# --- concurrency and order ------------------------------------------------------------------


def test_concurrency_fills_the_server_and_keeps_sample_order(
    make_model: Callable[..., OpenAIChatModel], samples: list[Sample]
) -> None:
    with ChatServer(answering_targets(samples, delay=0.3)) as srv:
        model = make_model(srv, concurrency=8)
        assert model.preferred_batch_size == 8
        preds = model.predict(samples)
    assert srv.max_in_flight == 8
    for s, p in zip(samples, preds, strict=True):
        assert p.error is None and p.point is not None and s.target.box is not None
        assert p.point.x == pytest.approx(s.target.box.center.x, abs=1e-3)
        assert p.point.y == pytest.approx(s.target.box.center.y, abs=1e-3)


def test_submit_streams_with_at_most_concurrency_in_flight(
    make_model: Callable[..., OpenAIChatModel], samples: list[Sample]
) -> None:
    with ChatServer(answering_targets(samples, delay=0.2)) as srv:
        model = make_model(srv, concurrency=3)
        assert model.in_flight == 3
        futures = [model.submit(s) for s in samples]
        preds = [f.result(timeout=30) for f in futures]
    assert srv.max_in_flight == 3
    for s, p in zip(samples, preds, strict=True):
        assert p.error is None and p.point is not None and s.target.box is not None
        assert p.point.x == pytest.approx(s.target.box.center.x, abs=1e-3)


def test_an_image_shared_by_concurrent_requests_is_encoded_once(
    make_model: Callable[..., OpenAIChatModel], monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded: list[str] = []
    real = wire.encode_image

    def counting(ref: ImageRef, preprocess: Any = None) -> wire.EncodedImage:
        encoded.append(ref.key)
        time.sleep(0.1)  # the other requests arrive while this one encodes
        return real(ref, preprocess)

    monkeypatch.setattr(client, "encode_image", counting)
    screen = Image.new("RGB", (320, 200), "white")
    ref = ImageRef.from_source("one-screen", lambda: screen.copy())
    shared = [Sample(f"q{i}", ref, f"click item {i}", "point", Target(box=Box(0.1, 0.1, 0.2, 0.2)))
              for i in range(6)]
    with ChatServer() as srv:
        model = make_model(srv, concurrency=6)
        preds = [f.result(timeout=30) for f in [model.submit(s) for s in shared]]
        sent = {image_of(b) for b in srv.bodies()}
    assert [p.error for p in preds] == [None] * 6
    assert encoded == ["one-screen"]
    assert len(sent) == 1 and Image.open(io.BytesIO(sent.pop())).tobytes() == screen.tobytes()


def test_one_screenshot_under_two_names_is_encoded_once(
    make_model: Callable[..., OpenAIChatModel], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The encoded images are kept by content: a dataset that ships one screen under two file
    names sends one encoding; a file replaced by another screen is encoded anew."""
    encoded: list[str] = []
    real = wire.encode_image

    def counting(ref: ImageRef, preprocess: Any = None) -> wire.EncodedImage:
        encoded.append(ref.key)
        return real(ref, preprocess)

    monkeypatch.setattr(client, "encode_image", counting)
    a, b, c = tmp_path / "a.png", tmp_path / "b.png", tmp_path / "c.png"
    Image.new("RGB", (64, 48), "white").save(a)
    b.write_bytes(a.read_bytes())
    Image.new("RGB", (64, 48), "black").save(c)
    shared = [Sample(f"q{i}", ImageRef.from_path(p), "click", "point", Target(box=Box(0.1, 0.1, 0.2, 0.2)))
              for i, p in enumerate([a, b, c, a])]
    with ChatServer() as srv:
        model = make_model(srv, concurrency=1)
        preds = model.predict(shared)
        assert [p.error for p in preds] == [None] * 4
        assert encoded == [str(a), str(c)]
        Image.new("RGB", (64, 40), "red").save(a)  # another screen under the old name
        assert model.predict(shared[:1])[0].error is None
        sent = image_of(srv.bodies()[-1])
    assert encoded == [str(a), str(c), str(a)]
    assert Image.open(io.BytesIO(sent)).size == (64, 40)


def test_a_missing_image_file_is_named_with_the_fix(
    make_model: Callable[..., OpenAIChatModel], tmp_path: Path
) -> None:
    """Keying encoded images by content must not turn a missing file into a bare OSError."""
    sample = Sample("gone", ImageRef.from_path(tmp_path / "gone.png"), "click", "point",
                    Target(box=Box(0.1, 0.1, 0.2, 0.2)))
    with ChatServer() as srv:
        (pred,) = make_model(srv).predict([sample])
        assert srv.count == 0
    assert pred.error is not None and "does not exist" in pred.error and "--uiground-data-path" in pred.error


def test_a_decoded_image_travels_as_a_lossless_png() -> None:
    import numpy as np

    from pytest_uiground.models.openai.png import encode_png_fast

    pixels = np.random.default_rng(0).integers(0, 256, (37, 53, 3), dtype=np.uint8)
    img = Image.fromarray(pixels)
    out = wire.encode_image(ImageRef.from_source("gen", lambda: img))
    assert out.size == (53, 37)
    png = encode_png_fast(img)
    assert wire.png_rgb8_size(png) == (53, 37)
    assert (np.asarray(Image.open(io.BytesIO(png))) == pixels).all()


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "P"])
def test_the_fast_png_is_lossless_with_either_compressor(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """ISA-L (the openai extra) and the standard library's zlib write the same pixels;
    an image in another mode is sent as its RGB conversion, as ``ImageRef.load()`` gives it."""
    import zlib

    import numpy as np

    from pytest_uiground.models.openai import png as png_mod

    rng = np.random.default_rng(1)
    base = Image.fromarray(rng.integers(0, 256, (41, 67, 3), dtype=np.uint8))
    img = base.convert(mode) if mode != "P" else base.quantize(64)
    want = np.asarray(img.convert("RGB"))
    pngs = [png_mod.encode_png_fast(img)]
    monkeypatch.setattr(png_mod, "_compressor", lambda: zlib.compressobj(1))
    pngs.append(png_mod.encode_png_fast(img))
    monkeypatch.setattr(png_mod, "STRIP_ROWS", 16)  # strips that do not divide the height
    for png in pngs:
        assert wire.png_rgb8_size(png) == (67, 41)
        assert (np.asarray(Image.open(io.BytesIO(png))) == want).all()


def test_rows_are_read_straight_from_the_image_or_through_a_crop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast strip reader (Pillow's raw encoder over the strip) and its fallback (a crop,
    where the encoder is missing) give the same rows, so the same PNG."""
    import numpy as np

    from pytest_uiground.models.openai import png as png_mod

    img = Image.fromarray(np.random.default_rng(2).integers(0, 256, (70, 33, 3), dtype=np.uint8))
    direct = png_mod._strip_reader(img)
    assert direct(5, 64) == img.crop((0, 5, 33, 69)).tobytes() and direct(69, 1) == img.crop((0, 69, 33, 70)).tobytes()
    png = png_mod.encode_png_fast(img)
    monkeypatch.setattr(png_mod, "_raw_encoder_factory", lambda: None)
    assert direct.__name__ == "direct" and png_mod._strip_reader(img).__name__ == "cropped"
    assert png_mod.encode_png_fast(img) == png


def test_isal_is_the_compressor_where_installed() -> None:
    """The openai extra installs ``isal``: a fast encoding is what it is there for."""
    pytest.importorskip("isal", reason=needs("openai"))
    from pytest_uiground.models.openai import png as png_mod

    assert type(png_mod._compressor()).__module__.startswith("isal")


def test_the_sdk_is_imported_only_for_a_request(tmp_path: Path) -> None:
    """A rerun answered from the prediction cache asks for cache keys and the fingerprint
    only; importing ``openai`` (~0.7 s) waits for the first real request."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from PIL import Image\n"
        "from pytest_uiground.record.image import ImageRef\n"
        "from pytest_uiground.models.openai.client import OpenAIChatModel\n"
        "from pytest_uiground.record.geometry import Box\n"
        "from pytest_uiground.record.sample import Sample, Target\n"
        "m = OpenAIChatModel(api_base='http://127.0.0.1:9/v1', api_key='k', served_model='m', parser='uground')\n"
        "img = ImageRef.from_source('a', lambda: Image.new('RGB', (8, 8)))\n"
        "s = Sample('a', img, 'click', 'point', Target(box=Box(0, 0, 1, 1)))\n"
        "m.cache_key(s); m.fingerprint(); m.close()\n"
        "print('openai' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_a_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "openai" else real(name, *a))
    with pytest.raises(ModelLoadError, match=r"pip install 'pytest-uiground\[openai\]'"):
        OpenAIChatModel(api_base="http://127.0.0.1:9/v1", api_key=KEY, served_model="m", parser="uground")


def test_a_client_the_sdk_refuses_fails_each_sample_without_the_key(
    monkeypatch: pytest.MonkeyPatch, samples: list[Sample],
) -> None:
    """The SDK validates its arguments when the client is built, on the first request:
    that error becomes each sample's error (the run goes on to report it), key redacted."""
    import openai

    def refuse(**kw: Any) -> Any:
        raise ValueError(f"bad header value {kw['api_key']}")

    monkeypatch.setattr(openai, "OpenAI", refuse)
    model = OpenAIChatModel(api_base="http://127.0.0.1:9/v1", api_key=KEY, served_model="m", parser="uground",
                            max_retries=0)
    try:
        preds = model.predict(samples[:2])
    finally:
        model.close()
    for pred in preds:
        assert pred.error is not None and "could not create the client for http://127.0.0.1:9/v1" in pred.error
        assert KEY not in pred.error and "bad header value" in pred.error


def _halve(image: Image.Image) -> Image.Image:
    return image.resize((image.width // 2, image.height // 2))


def _read_tap(text: str, task: str, ctx: Any) -> Any:
    from pytest_uiground.models.families import Parsed
    from pytest_uiground.record.geometry import Point

    x, y = (float(v) for v in text.removeprefix("tap ").split(","))
    return Parsed(point=Point(x / ctx.image_size[0], y / ctx.image_size[1]))


def test_a_suites_overrides_reach_the_server_and_the_parser(make_model: Callable[..., OpenAIChatModel]) -> None:
    """``[models.<family>]`` prompts, preprocessing and parser apply to ``--model openai`` as
    to the native adapter: the suite's prompt is sent, the preprocessed image is sent, and
    the answer is read by the suite's parser (in the preprocessed image's pixels)."""
    from pytest_uiground.models.overrides import Overrides

    sample, _ = png_sample("ov", Image.new("RGB", (400, 200), "white"), "the OK button")
    seen: list[tuple[str, tuple[int, int]]] = []

    def handler(body: dict[str, Any]) -> Reply:
        seen.append((prompt_of(body), Image.open(io.BytesIO(image_of(body))).size))
        return Reply.ok("tap 100,50")

    with ChatServer(handler) as srv:
        model = make_model(srv)
        assert model.overrides_table == "uground"  # the family's table, as for the native adapter
        plain_key = model.cache_key(sample)
        model.use_overrides(Overrides(prompts={"point": "Tap {instruction}"}, parser=f"{__name__}:_read_tap",
                                      preprocess=f"{__name__}:_halve"))
        [pred] = model.predict([sample])
    assert seen == [("Tap the OK button", (200, 100))]
    assert pred.error is None and pred.point is not None
    assert (pred.point.x, pred.point.y) == (pytest.approx(0.5), pytest.approx(0.5))
    assert model.cache_key(sample)["prompt"] == "Tap the OK button" != plain_key["prompt"]


def test_a_request_keeps_the_overrides_it_was_submitted_with(make_model: Callable[..., OpenAIChatModel]) -> None:
    """The worker submits ahead: a request of the previous suite still in flight when the
    next suite's overrides arrive is sent and read with its own suite's."""
    from pytest_uiground.models.overrides import Overrides

    blocker, _ = png_sample("blocker", Image.new("RGB", (64, 64), "black"), "the blocker")
    sample, _ = png_sample("keep", Image.new("RGB", (64, 64), "white"), "the OK button")
    release = threading.Event()
    prompts_seen: list[str] = []

    def handler(body: dict[str, Any]) -> Reply:
        release.wait(5)
        prompts_seen.append(prompt_of(body))
        return Reply.ok("(500, 500)")

    with ChatServer(handler) as srv:
        model = make_model(srv, concurrency=1)  # the one slot is held: ``sample`` waits in the queue
        model.use_overrides(Overrides(prompts={"point": "first suite: {instruction}"}))
        futures = [model.submit(blocker), model.submit(sample)]
        model.use_overrides(Overrides(prompts={"point": "second suite: {instruction}"}))
        release.set()
        assert all(f.result(10).error is None for f in futures)
    assert sorted(prompts_seen) == ["first suite: the OK button", "first suite: the blocker"]


# --- absolute-pixel parsers -------------------------------------------------------------------


@pytest.mark.parametrize(("max_pixels", "input_size"), [(None, (1932, 1092)), (1280 * 28 * 28, (1316, 728))])
def test_pixel_parsers_read_the_smart_resized_size(
    monkeypatch: pytest.MonkeyPatch, make_model: Callable[..., OpenAIChatModel],
    max_pixels: int | None, input_size: tuple[int, int],
) -> None:
    sample, _ = png_sample("big", Image.new("RGB", (1920, 1080), "white"))
    w, h = input_size
    with ChatServer(lambda body: Reply.ok(f"Action: click(start_box='({w // 2},{h // 2})')")) as srv:
        rule = ResizeRule(max_pixels=max_pixels) if max_pixels else None
        model = make_model(srv, parser="uitars", resize=rule)
        [pred] = model.predict([sample])
    assert pred.error is None and pred.point is not None
    assert (pred.point.x, pred.point.y) == (pytest.approx(0.5), pytest.approx(0.5))
    resize = model.fingerprint()["resize"]
    assert resize["rule"] == "qwen2.5-vl smart_resize" and resize["max_pixels"] == (max_pixels or 16384 * 28 * 28)
    assert "must match the server" in resize["assumption"]


# --- loading -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"api_base": None}, "--model openai needs --uiground-api-base URL"),
        ({"api_base": "gpu-node:8000"}, "is not an http(s) URL"),
        ({"served_model": None}, "--model openai needs --uiground-served-model NAME"),
        ({"parser": None}, "--model openai needs --uiground-parser NAME"),
        ({"parser": "gpt"}, "--uiground-parser 'gpt' is unknown; known: elam, molmo"),
        ({"max_retries": -1}, "--uiground-max-retries -1 must be 0 or more"),
        ({"api_key_env": "NO_SUCH_KEY_VAR"}, "environment variable NO_SUCH_KEY_VAR, which is not set"),
    ],
)
def test_create_names_the_missing_option(
    monkeypatch: pytest.MonkeyPatch, server: ChatServer, changes: dict[str, Any], message: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    opts = {"name": "openai", "api_base": server.url, "served_model": "m", "parser": "uground", **changes}
    with pytest.raises(ModelLoadError, match=re.escape(message)):
        create(ModelOptions(**opts))
    assert server.count == 0


def test_a_missing_key_fails_at_load_and_says_how_to_set_it(
    monkeypatch: pytest.MonkeyPatch, server: ChatServer
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelLoadError) as info:
        create(ModelOptions(name="openai", api_base=server.url, served_model="m", parser="uground"))
    assert "OPENAI_API_KEY" in str(info.value) and "export OPENAI_API_KEY=EMPTY" in str(info.value)
    monkeypatch.setenv("MY_SERVER_KEY", KEY)
    model = create(ModelOptions(name="openai", api_base=server.url, served_model="m", parser="uground",
                                api_key_env="MY_SERVER_KEY"))
    try:
        assert model.fingerprint()["model"] == "openai" and KEY not in json.dumps(model.fingerprint())
    finally:
        model.close()
    assert server.count == 0


# --- end to end ----------------------------------------------------------------------------------


def run_openai(project: Project, url: str, *args: str) -> pytest.RunResult:
    return project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "openai", "--uiground-api-base", url, "--uiground-served-model", "m",
        "--uiground-parser", "uground",
        "-p", "no:cacheprovider", "-p", "no:randomly", "--uiground-cache", "cache", "--uiground-report", "out",
        "--benchmark-disable", *args,
    )


def files_under(*dirs: Path) -> Iterator[Path]:
    for d in dirs:
        yield from (p for p in d.rglob("*") if p.is_file())


def cache_entries(project: Project) -> list[Path]:
    return sorted((project.root / "cache").rglob("*.json"))


@pytest.mark.slow
def test_end_to_end_concurrent_run_is_cached_and_never_shows_the_key(
    project: Project, samples: list[Sample]
) -> None:
    project.record()
    project.monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ChatServer(answering_targets(samples, delay=0.3)) as srv:
        first = run_openai(project, srv.url, "--uiground-concurrency", "8")
        assert first.ret == 0, first.stdout.str()
        assert srv.count == 12 and srv.max_in_flight == 8
        second = run_openai(project, srv.url, "--uiground-concurrency", "8")
        assert second.ret == 0 and srv.count == 12, "the rerun comes from the cache"
    summary = project.summary()
    assert summary["metrics"]["grounding_accuracy"]["value"] == pytest.approx(100.0)
    assert len(cache_entries(project)) == 12
    texts = [first.stdout.str(), first.stderr.str(), second.stdout.str(), second.stderr.str()]
    texts += [p.read_text(errors="replace") for p in files_under(project.root / "out", project.root / "cache")]
    assert texts and not [t for t in texts if KEY in t]
    assert str(srv.port) not in json.dumps(summary.get("model_fingerprint"))


@pytest.mark.slow
def test_end_to_end_a_400_fails_one_sample(project: Project, samples: list[Sample]) -> None:
    project.monkeypatch.setenv("OPENAI_API_KEY", KEY)
    doomed = samples[4]
    prompt = families.get("uground").user_text(doomed)
    right = answering_targets(samples)

    def handler(body: dict[str, Any]) -> Reply:
        return Reply.error(400, "image too large") if prompt_of(body) == prompt else right(body)

    with ChatServer(handler) as srv:
        result = run_openai(project, srv.url)
    assert result.ret == 1
    result.stdout.fnmatch_lines([f"*{doomed.id}*HTTP 400*image too large*"])
    assert project.summary()["errors"] == [doomed.id]
    assert len(cache_entries(project)) == 11 and srv.count == 12


@pytest.mark.slow
def test_end_to_end_server_dies_mid_run_and_the_rerun_resumes(project: Project, samples: list[Sample]) -> None:
    project.record()
    project.monkeypatch.setenv("OPENAI_API_KEY", KEY)
    project.monkeypatch.setenv(settings.BACKOFF_ENV, "0.001")
    arrivals = itertools.count()
    lock = threading.Lock()
    right = answering_targets(samples)

    def dies_after_five(body: dict[str, Any]) -> Reply:
        with lock:
            n = next(arrivals)
        if n < 5:
            return right(body)
        if n == 5:
            return Reply.dying(delay=0.2)  # the five answers are out before it dies
        return Reply.ok("(500, 500)", delay=10.0)  # never answered: dropped when the server dies

    with ChatServer(dies_after_five) as first_server:
        first = run_openai(project, first_server.url, "--uiground-max-retries", "1")
    assert first.ret == 1 and first_server.answered == 5
    first.stdout.fnmatch_lines(["*the model failed: *could not connect to http://127.0.0.1*"])
    summary = project.summary()
    assert len(summary["errors"]) == 7
    assert summary["metrics"]["grounding_accuracy"]["errors"] == 7
    assert len(cache_entries(project)) == 5
    with ChatServer(right) as second_server:  # a new port: the cache must still match
        second = run_openai(project, second_server.url)
    assert second.ret == 0, second.stdout.str()
    assert second_server.count == 7, "only the unfinished samples are requested again"
    assert len(cache_entries(project)) == 12


@pytest.mark.slow
def test_end_to_end_missing_key_fails_before_any_request(project: Project, server: ChatServer) -> None:
    project.monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = run_openai(project, server.url)
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # once, at start-up
    result.stderr.fnmatch_lines(["*environment variable OPENAI_API_KEY*export OPENAI_API_KEY=EMPTY*"])
    assert server.count == 0


@pytest.mark.slow
def test_end_to_end_missing_api_base_is_named(project: Project) -> None:
    project.monkeypatch.setenv("OPENAI_API_KEY", KEY)
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "openai", "--uiground-served-model", "m", "--uiground-parser", "uground", "-p",
        "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--model openai needs --uiground-api-base URL*"])


@pytest.mark.slow
def test_served_model_identity_is_checked_and_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server answering as another model than --uiground-served-model fails those samples naming
    --uiground-served-model-reply, and the fingerprint records the names the server answered as."""
    pytest.importorskip("openai")
    from chat_server import ChatServer, Reply

    from pytest_uiground.models.openai.client import OpenAIChatModel
    from pytest_uiground.record.geometry import Box
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample, Target

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    from PIL import Image

    Image.new("RGB", (40, 30)).save(tmp_path / "s.png")
    sample = Sample("s1", ImageRef.from_path(tmp_path / "s.png"), "the button", "point", Target(box=Box(0, 0, 1, 1)))

    def answering_as(name: str) -> Reply:
        body = {"id": "c", "object": "chat.completion", "model": name,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "(500, 500)"},
                             "finish_reason": "stop"}]}
        return Reply(body=json.dumps(body).encode())

    for reply_model, ok in ((None, False), ("m-2026-01-01", True)):
        with ChatServer(lambda body: answering_as("m-2026-01-01")) as srv:
            model = OpenAIChatModel(api_base=srv.url, api_key="k" * 12, served_model="m", parser="uground",
                                    request_timeout=5.0, max_retries=0, reply_model=reply_model)
            try:
                (pred,) = model.predict([sample])
                fingerprint = model.fingerprint()
            finally:
                model.close()
        assert fingerprint["answered_as"] == ["m-2026-01-01"]
        if ok:
            assert pred.error is None and pred.point is not None
        else:
            assert pred.error is not None and "answered as model 'm-2026-01-01'" in pred.error
            assert "--uiground-served-model-reply" in pred.error
