"""Command-line options, parsed into one typed object at start-up.

Bad values fail before any test runs, with the known choices in the message.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from pytest_uiground.judges.base import PARSE_ERROR_MODES, JudgeOptions
from pytest_uiground.models.base import ModelOptions

from . import registry

_DEVICE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")
DTYPES = ("auto", "bfloat16", "float16", "float32")
_DTYPE_ALIASES = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32", "float": "float32"}


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def device_spec(text: str) -> str:
    if not _DEVICE.match(text):
        raise argparse.ArgumentTypeError(f"unknown device {text!r}; use auto, cpu, mps, cuda or cuda:N")
    return text


def dtype_spec(text: str) -> str:
    value = _DTYPE_ALIASES.get(text, text)
    if value not in DTYPES:
        raise argparse.ArgumentTypeError(f"unknown dtype {text!r}; use {', '.join(DTYPES)} (or bf16, fp16, fp32)")
    return value


def cache_spec(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a directory or 'off'")
    return text


@dataclass(frozen=True)
class RunOptions:
    """Everything the command line sets, parsed once: the model's and the judge's settings
    as the objects their factories take, and the harness's own."""

    model: ModelOptions
    limit: int | None = None
    seed: int = 0
    report_dir: Path | None = None
    baselines_dir: Path = Path("baselines")
    data_path: Path | None = None
    updating: bool = False
    cache_dir: Path | None = None
    judge: JudgeOptions = field(default_factory=JudgeOptions)
    cropping: str = "none"
    cropping_depth: int = 3


def model_options(opts: RunOptions, worker_id: str) -> ModelOptions:
    """What a model factory gets: the model settings, for this worker."""
    return replace(opts.model, worker_id=worker_id)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("uiground", "GUI grounding suites (pytest-uiground)")
    group.addoption("--model", default="ocr", help="model to evaluate, by registered name (default: ocr)")
    group.addoption("--model-path", default=None, help="hub id or local directory of the model weights")
    group.addoption(
        "--device", default="auto", type=device_spec,
        help="auto (xdist worker gwN takes cuda:(N mod count), CPU without a GPU), cpu, cuda, cuda:N, mps",
    )
    group.addoption("--batch-size", default=1, type=positive_int, help="samples per model call in a worker")
    group.addoption(
        "--uiground-limit", default=None, type=positive_int, metavar="N",
        help="run a seeded, stratified subset of N samples per suite (a smoke run)",
    )
    group.addoption("--uiground-seed", default=0, type=int, help="seed for --uiground-limit (default 0)")
    group.addoption(
        "--uiground-report", default=None, metavar="DIR", help="write samples.jsonl and summary.json to DIR"
    )
    group.addoption(
        "--uiground-baselines", default=None, metavar="DIR",
        help="baseline root (default: <rootdir>/baselines); each suite uses DIR/<suite>/",
    )
    group.addoption(
        "--data-path", default=None, metavar="DIR",
        help="local dataset root for suites that need one (see each suite's README)",
    )
    group.addoption(
        "--dtype", default="auto", type=dtype_spec,
        help="weights dtype: auto (bfloat16 on GPU, float32 on CPU), bfloat16, float16, float32",
    )
    group.addoption("--max-new-tokens", default=256, type=positive_int, help="generation limit per sample")
    group.addoption(
        "--uiground-cache", default=None, type=cache_spec, metavar="DIR|off",
        help="prediction cache directory (default: inside the pytest cache dir), or 'off'",
    )
    group.addoption("--predictions", default=None, metavar="FILE.jsonl", help="--model replay: raw outputs to score")
    group.addoption("--replay-parser", default=None, metavar="NAME", help="--model replay: whose parser reads them")
    group.addoption("--api-base", default=None, metavar="URL", help="--model openai: e.g. http://gpu-node:8000/v1")
    group.addoption(
        "--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
        help="--model openai: environment variable holding the API key (never pass the key itself)",
    )
    group.addoption("--served-model", default=None, metavar="NAME", help="--model openai: the server's model name")
    group.addoption("--parser", default=None, metavar="NAME", help="--model openai: the family parser/prompt to use")
    group.addoption("--concurrency", default=8, type=positive_int, help="--model openai: requests in flight per worker")
    group.addoption("--request-timeout", default=120.0, type=float, help="--model openai: seconds per request")
    group.addoption("--max-retries", default=5, type=int, help="--model openai: retries on 429, 5xx and timeouts")
    group.addoption(
        "--cropping", default="none", choices=("none", "fixed", "screenseeker"),
        help="zoom strategy around the model's own answers: none, fixed (3x3 tiles), screenseeker (recursive)",
    )
    group.addoption("--cropping-depth", default=3, type=positive_int, help="--cropping screenseeker: zoom levels")
    group.addoption(
        "--judge", default=None, metavar="NAME",
        help="judge for free-text (vqa) suites: openai, a registered judge, or package.module:factory",
    )
    group.addoption("--judge-api-base", default=None, metavar="URL", help="--judge openai: e.g. http://judge:8000/v1")
    group.addoption("--judge-model", default=None, metavar="NAME", help="--judge openai: the served model name")
    group.addoption("--judge-api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                    help="--judge openai: environment variable holding the judge's API key")
    group.addoption("--judge-seed", default=0, type=int, help="the judge's fixed seed (temperature is always 0)")
    group.addoption("--judge-max-tokens", default=512, type=positive_int, help="the judge's reply limit")
    group.addoption("--judge-concurrency", default=8, type=positive_int, help="judge requests in flight per worker")
    group.addoption(
        "--judge-repeat", default=1, type=positive_int, metavar="K",
        help="ask the judge K times on a seeded subset (--judge-repeat-samples) and report the spread",
    )
    group.addoption("--judge-repeat-samples", default=20, type=positive_int, metavar="N",
                    help="size of the seeded --judge-repeat subset per suite (default 20)")
    group.addoption(
        "--judge-parse-errors", default="error", choices=PARSE_ERROR_MODES,
        help="an unparseable judge reply: 'error' (default: the sample errors, counted) or 'zero' (the "
             "reference's silent 0, still counted as a format error)",
    )


def parse(config: pytest.Config) -> RunOptions:
    model = config.getoption("--model")
    known = registry.known(registry.MODEL_GROUP)
    if model not in known and not registry.is_import_path(model):
        raise pytest.UsageError(
            f"--model: no model named {model!r}; known: {', '.join(sorted(known))} "
            "(or give a factory as package.module:function)"
        )
    model_path = config.getoption("--model-path")
    baselines = config.getoption("--uiground-baselines")
    report = config.getoption("--uiground-report")
    data_path = config.getoption("--data-path")
    root = config.rootpath
    return RunOptions(
        model=ModelOptions(
            name=model,
            path=model_path,
            device=config.getoption("--device"),
            batch_size=config.getoption("--batch-size"),
            dtype=config.getoption("--dtype"),
            max_new_tokens=config.getoption("--max-new-tokens"),
            predictions=config.getoption("--predictions"),
            replay_parser=config.getoption("--replay-parser"),
            api_base=config.getoption("--api-base"),
            api_key_env=config.getoption("--api-key-env"),
            served_model=config.getoption("--served-model"),
            parser=config.getoption("--parser"),
            concurrency=config.getoption("--concurrency"),
            request_timeout=config.getoption("--request-timeout"),
            max_retries=config.getoption("--max-retries"),
        ),
        limit=config.getoption("--uiground-limit"),
        seed=config.getoption("--uiground-seed"),
        report_dir=Path(report).resolve() if report else None,
        baselines_dir=Path(baselines).resolve() if baselines else root / "baselines",
        data_path=Path(data_path).resolve() if data_path else None,
        updating=bool(getattr(config.option, "update_snapshots", False)),
        cache_dir=_cache_dir(config),
        cropping=config.getoption("--cropping"),
        cropping_depth=config.getoption("--cropping-depth"),
        judge=JudgeOptions(
            name=config.getoption("--judge"),
            api_base=config.getoption("--judge-api-base"),
            model=config.getoption("--judge-model"),
            api_key_env=config.getoption("--judge-api-key-env"),
            seed=config.getoption("--judge-seed"),
            max_tokens=config.getoption("--judge-max-tokens"),
            concurrency=config.getoption("--judge-concurrency"),
            request_timeout=config.getoption("--request-timeout"),
            max_retries=config.getoption("--max-retries"),
            repeat=config.getoption("--judge-repeat"),
            repeat_samples=config.getoption("--judge-repeat-samples"),
            parse_errors=config.getoption("--judge-parse-errors"),
        ),
    )


def _cache_dir(config: pytest.Config) -> Path | None:
    """``--uiground-cache``: a directory, ``off``, or by default the pytest cache's."""
    value = config.getoption("--uiground-cache")
    if value == "off":
        return None
    if value:
        return Path(value).resolve()
    cache = getattr(config, "cache", None)
    return cache.mkdir("uiground-predictions") if cache is not None else None
