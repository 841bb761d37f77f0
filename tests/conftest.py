"""Shared fixtures: a throw-away project with a small suite and a scripted model."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy  # noqa: F401  (see below)
import PIL.Image  # noqa: F401
import pytest

# C-extension modules are imported here, before any test: pytester restores ``sys.modules`` after an
# in-process run, and a C extension first imported inside one (numpy, through a suite's loader) would be
# dropped and then fail to load a second time in the same process ("cannot load module more than once").

# The tests never reach the Hugging Face Hub (test_hub.py stands a local cache in for it); set before any
# test imports huggingface_hub, and inherited by the pytest runs the tests start.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

@pytest.fixture(autouse=True)
def _runs_are_not_xdist_workers(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """When the project's own tests run under ``-n``, pytest-xdist marks this process with
    ``PYTEST_XDIST_*`` variables; a pytest run a test starts would inherit them and take itself for a
    worker (pytest-benchmark then turns itself off). The runs a test starts are never workers."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    # The runs a test starts load only the plugins a user of the suites has: the dev extra's
    # pytest-playwright, hypothesis, pytest-html and anyio are for this repository's own tests and cost
    # about 0.45 s of CPU in every started process (0.6 of 1.1 s left for an empty run). A test about
    # those plugins (test_options) takes PYTEST_ADDOPTS away again. Pytester clears the variable when
    # it starts, so it starts first.
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")
    kept = os.environ.get("PYTEST_ADDOPTS", "")
    monkeypatch.setenv("PYTEST_ADDOPTS", " ".join([*RUN_PLUGINS_OFF, kept]).strip())
    # And they keep compiled modules: with PYTHONDONTWRITEBYTECODE set (as on these machines), every
    # started process compiles the plugin's ~170 modules from source again.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)


# ``-p no:NAME`` for the dev extra's pytest plugins (their entry-point names), in every run a test starts.
RUN_PLUGINS_OFF = ("-p no:playwright", "-p no:hypothesispytest", "-p no:html", "-p no:html_fixtures",
                   "-p no:metadata", "-p no:anyio")


def header_only_png(path: Path, size: tuple[int, int]) -> Path:
    """A PNG with a valid header and an empty IDAT at ``path``: Pillow reads its size, decoding
    raises (what replay and the report must cope with: sizes from the header, pixels never needed)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(body, zlib.crc32(kind)))

    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", *size, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", b"") + chunk(b"IEND", b""))
    return path


SUITE_TOML = """
[suite]
name = "mini"
version = "1"

[loader]
name = "{loader}"

[loader.options]
seed = 3
screens = 4
targets_per_screen = 3

[[metrics]]
name = "grounding_accuracy"
tasks = ["point"]
slices = ["difficulty"]
floor = {floor}

[baseline]
tolerance = 2.0
slice_tolerance = 100.0

[latency]
benchmark_samples = 2
"""

# A model whose answers the test controls: right on every sample except the ids
# listed (comma separated) in the UIGROUND_WRONG environment variable, and an
# invalid output (format error) for ids in UIGROUND_GARBLED.
FAKE_MODELS = '''
import os
from pytest_uiground.record.geometry import Point
from pytest_uiground.record.prediction import Prediction


class Scripted:
    name = "scripted"

    def __init__(self, options):
        self.options = options
        self._log("load")

    def _log(self, what):
        log = os.environ.get("UIGROUND_LOADLOG")
        if log:
            with open(log, "a") as fh:
                fh.write(f"{what} {os.getpid()}\\n")

    def close(self):
        self._log("close")

    def predict(self, samples):
        wrong = set(filter(None, os.environ.get("UIGROUND_WRONG", "").split(",")))
        garbled = set(filter(None, os.environ.get("UIGROUND_GARBLED", "").split(",")))
        log = os.environ.get("UIGROUND_BATCHLOG")
        if log:
            with open(log, "a") as fh:
                fh.write(",".join(s.id for s in samples) + "\\n")
        crash = os.environ.get("UIGROUND_CRASH")
        if crash and crash in {s.id for s in samples}:
            os._exit(3)  # a hard crash: no teardown, no sessionfinish
        boom = set(filter(None, os.environ.get("UIGROUND_RAISE", "").split(",")))
        if boom & {s.id for s in samples}:
            raise MemoryError("CUDA out of memory (scripted)")
        out = []
        for s in samples:
            s.image.load()  # like a real model: a broken image raises here
            if s.id in garbled:
                out.append(Prediction(raw="<<garbage>>", format_error=True))
                continue
            box = s.target.box
            p = box.center if s.id not in wrong else (Point(1.0, 1.0) if box.x0 < 0.01 else Point(0.0, 0.0))
            out.append(Prediction(point=p, raw=f"scripted {p}"))
        return out

    def fingerprint(self):
        return {"model": "scripted"}


class Cached(Scripted):
    """The scripted model, with a cache key: its predictions go to the prediction cache."""

    def cache_key(self, sample):
        return {"sample": sample.id, "prompt": sample.instruction}


def create_cached(options):
    return Cached(options)


def create(options):
    return Scripted(options)
'''


class Project:
    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pytester = pytester
        self.monkeypatch = monkeypatch
        self.root = pytester.path
        (self.root / "suites" / "mini").mkdir(parents=True)
        self.write_suite()
        pytester.makepyfile(fakemodels=FAKE_MODELS)
        pytester.makeconftest("")
        # Strict, as this repository and many projects are (issue 38): a warning anywhere in a run is an error.
        pytester.makeini("[pytest]\nfilterwarnings =\n    error\n")

    def write_suite(self, loader: str = "synthetic", floor: float = 10.0) -> None:
        path = self.root / "suites" / "mini" / "suite.toml"
        path.write_text(SUITE_TOML.format(loader=loader, floor=floor))

    def ids(self) -> list[str]:
        from pytest_uiground.suite.loading import load_suite

        return sorted(s.id for s in load_suite(self.root / "suites" / "mini" / "suite.toml").samples)

    def run(self, *args: str, wrong: Sequence[str] = (), garbled: Sequence[str] = (),
            xdist: Sequence[str] = ()) -> pytest.RunResult:
        self.monkeypatch.setenv("UIGROUND_WRONG", ",".join(wrong))
        self.monkeypatch.setenv("UIGROUND_GARBLED", ",".join(garbled))
        return self.pytester.runpytest_subprocess(
            "suites/mini", "--model", "fakemodels:create", "-p", "no:cacheprovider", "-p", "no:randomly",
            "-o", "console_output_style=classic", *xdist, *args,
        )

    def record(self, *args: str, wrong: Sequence[str] = (), xdist: Sequence[str] = ()) -> None:
        """Record the suite's baseline (``--snapshot-update``): a suite without one fails closed (issue 38),
        so a test about something else that expects a passing run records one first."""
        result = self.run("--snapshot-update", *args, wrong=wrong, xdist=xdist)
        assert result.ret == 0, result.stdout.str()[-3000:]

    def importable(self) -> None:
        """Subprocess runs import the project's own modules (and read their ``*.dist-info`` entry
        points) from its root, in front of what PYTHONPATH already holds: replacing it would lose a
        plugin installed through PYTHONPATH (as on the lent GPU machine, ``perf/gpu_check.sh``)."""
        kept = os.environ.get("PYTHONPATH", "")
        self.monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(self.root), kept]) if kept else str(self.root))

    def baseline_files(self) -> dict[str, str]:
        base = self.root / "baselines"
        return {str(p.relative_to(base)): p.read_text() for p in sorted(base.rglob("*")) if p.is_file()}

    def summary(self, report: str = "out") -> dict:
        return json.loads((self.root / report / "summary.json").read_text())


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Project:
    return Project(pytester, monkeypatch)


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Tiny random Qwen2-VL, Qwen2.5-VL and Florence-2 models, built offline once per session."""
    for module in ("torch", "transformers", "torchvision"):  # the Qwen-VL processors need torchvision
        pytest.importorskip(module, reason="local models need the [hf] extra (pip install 'pytest-uiground[hf]')")
    import tinymodels

    root = tmp_path_factory.mktemp("tiny-models")
    return {name: build(root / name) for name, build in tinymodels.BUILDERS.items()}


@pytest.fixture(params=[[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def xdist(request: pytest.FixtureRequest) -> list[str]:
    return list(request.param)


def needs(extra: str) -> str:
    """The skip reason of a test that needs an extra: names it and its install line."""
    return f"needs the [{extra}] extra (pip install 'pytest-uiground[{extra}]')"


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


SLOW_MODEL = '''
import os, time
from fakemodels import Scripted

class Slow(Scripted):
    def predict(self, samples):
        time.sleep(float(os.environ.get("UIGROUND_SLEEP", "0")))
        return super().predict(samples)

def create(options):
    return Slow(options)
'''


def interrupted_run(project: Project, sig: signal.Signals, *args: str, group: bool = False,
                    env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """A slow run (0.4 s per batch) of the mini suite with a report in ``out/``, sent ``sig`` once three
    records are written: to its whole process group (``group``, what Ctrl-C does) or to the main
    process only (what ``timeout`` and ``docker stop`` do). Returns the process and its output."""
    project.pytester.makepyfile(slowmodel=SLOW_MODEL)
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project.root), *sys.path]),
                "UIGROUND_SLEEP": "0.4", **(env or {})}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "suites/mini", "--model", "slowmodel:create", "-p", "no:cacheprovider",
         "-p", "no:randomly", "--uiground-report", "out", "-W", "error", *args],
        cwd=project.root, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=group)
    log = project.root / "out" / "samples.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if log.is_file() and len(log.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    return proc, proc.communicate(timeout=120)[0].decode()


# -- helpers of the fault tests (baselines, reports, interrupts) -----------------------------------

# The project's conftest: a disk that fills up after UIGROUND_FSYNC_OK successful fsyncs (every
# output of the plugin is fsync'd before it counts as written, so this is where ENOSPC shows).
FAULTS_CONFTEST = '''
import errno, os

_real_fsync = os.fsync
_calls = [0]


def _fsync(fd):
    limit = os.environ.get("UIGROUND_FSYNC_OK")
    if limit:
        _calls[0] += 1
        if _calls[0] > int(limit):
            raise OSError(errno.ENOSPC, "No space left on device")
    return _real_fsync(fd)


os.fsync = _fsync
'''


def strict_json(text: str) -> Any:
    """JSON as the standard has it (Python's parser accepts NaN and Infinity; CI tools do not)."""
    def reject(name: str) -> None:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=reject)


def verdict(out: str) -> str:
    lines = [line for line in out.splitlines() if line.startswith("uiground verdict for mini:")]
    assert len(lines) == 1, out
    return lines[0]


def no_crash(out: str) -> None:
    assert "INTERNALERROR" not in out and "Traceback" not in out, out
