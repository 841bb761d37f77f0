"""Options: one table declares every setting once, as a command-line flag and an ini key.

Every flag is prefixed ``--uiground-`` (dest ``uiground_*``) so the plugin coexists with
other plugins' options (pytest-playwright's ``--device``, say); the exceptions are the
model card's ``--model`` and ``--model-path``. Each is also an ini key of the same dest
(``[tool.pytest.ini_options] uiground_model = "uitars"``); the command line wins. Values
are parsed into one typed :class:`RunOptions` at start-up, so bad values fail before any
test runs, with the known choices in the message.

(About 400 lines: most of it is the one table itself, kept whole so that a flag, its ini key,
its type and its help are read and changed in one place; adapters declare their own settings
elsewhere, :func:`declared_options`.)
"""

from __future__ import annotations

import argparse
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground import registry
from pytest_uiground.judges.base import PARSE_ERROR_MODES, JudgeOptions
from pytest_uiground.models.base import ModelLoadError, ModelOptions

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
    keep_errored: bool = False  # --snapshot-update: keep the previous entries of errored samples
    force_update: bool = False  # --snapshot-update: write even when absolute floors fail
    baselines_explicit: bool = False  # --uiground-baselines was given: the folder must exist
    max_pixels: int = 89_478_485  # image headers above this are invalid samples (Pillow's own default)
    max_raw_chars: int = 100_000  # raw model output kept per record
    progress_s: float = 30.0
    latency_benchmark: bool = False
    markdown: Path | None = None


def model_options(opts: RunOptions, worker_id: str) -> ModelOptions:
    """What a model factory gets: the model settings, for this worker."""
    return replace(opts.model, worker_id=worker_id)


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def boolean(text: str) -> bool:
    low = text.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off", ""):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def choice(*allowed: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in allowed:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(allowed)}")
        return text

    return parse


@dataclass(frozen=True)
class Opt:
    """One setting: its flag, its type (a parser from text), its default and its help."""

    flag: str
    default: object
    help: str
    type: Callable[[str], object] | None = None
    metavar: str | None = None
    switch: bool = False  # a flag without a value (``store_const`` True); its ini key takes true/false

    @property
    def dest(self) -> str:
        name = self.flag.lstrip("-").replace("-", "_")
        return name if name.startswith("uiground_") else f"uiground_{name}"


PARSE_ERRORS_HELP = ("an unparseable judge reply: 'error' (default: the sample errors, counted) or 'zero' (the "
                     "reference's silent 0, still counted as a format error)")

OPTIONS: tuple[Opt, ...] = (
    Opt("--model", "ocr", "model to evaluate, by registered name or package.module:function (default: ocr)"),
    Opt("--model-path", None, "hub id or local directory of the model weights"),
    Opt("--uiground-device", "auto", "auto (xdist worker gwN takes cuda:(N mod count), CPU without a GPU), cpu, "
        "cuda, cuda:N, mps", device_spec),
    Opt("--uiground-batch-size", 1, "samples per model call in a worker", positive_int),
    Opt("--uiground-limit", None,
        "run a seeded, stratified subset of N samples per suite, on as few screens as it can (a smoke run)",
        positive_int, "N"),
    Opt("--uiground-seed", 0, "seed for --uiground-limit (default 0)", int),
    Opt("--uiground-report", None, "write samples.jsonl, summary.json and report.html to DIR", None, "DIR"),
    Opt("--uiground-baselines", None, "baseline root (default: <rootdir>/baselines); each suite uses DIR/<suite>/",
        None, "DIR"),
    Opt("--uiground-data-path", None, "local dataset root for suites that need one (see each suite's README)",
        None, "DIR"),
    # None = not given: each adapter then applies its model's official setting (README "Models").
    Opt("--uiground-dtype", None, "weights dtype: auto (bfloat16 on GPU, float32 on CPU), bfloat16, float16, "
        "float32 (default: the model's official dtype on GPU, float32 on CPU)", dtype_spec),
    Opt("--uiground-max-new-tokens", None, "generation limit per sample (default: the model's official limit)",
        positive_int),
    Opt("--uiground-cache", None, "prediction cache directory (default: inside the pytest cache dir), or 'off'",
        cache_spec, "DIR|off"),
    Opt("--uiground-predictions", None, "--model replay: raw outputs to score", None, "FILE.jsonl"),
    Opt("--uiground-replay-parser", None, "--model replay: whose parser reads them", None, "NAME"),
    Opt("--uiground-api-base", None, "--model openai: e.g. http://gpu-node:8000/v1", None, "URL"),
    Opt("--uiground-api-key-env", "OPENAI_API_KEY", "--model openai: environment variable holding the API key "
        "(never pass the key itself)", None, "VAR"),
    Opt("--uiground-served-model", None, "--model openai: the server's model name", None, "NAME"),
    Opt("--uiground-served-model-reply", None, "--model openai: the model name the server's replies may carry "
        "instead of --uiground-served-model (a proxy's dated alias); any other name fails the sample", None, "NAME"),
    Opt("--uiground-parser", None, "--model openai: the family parser/prompt to use", None, "NAME"),
    Opt("--uiground-concurrency", 8, "--model openai: requests in flight per worker", positive_int),
    Opt("--uiground-request-timeout", 120.0, "--model openai: seconds per request", positive_float),
    Opt("--uiground-max-retries", 5, "--model openai: retries on 429, 5xx and timeouts", non_negative_int),
    Opt("--uiground-cropping", "none", "zoom strategy around the model's own answers: none, fixed (3x3 tiles), "
        "screenseeker (recursive)", choice("none", "fixed", "screenseeker")),
    Opt("--uiground-cropping-depth", 3, "--uiground-cropping screenseeker: zoom levels", positive_int),
    Opt("--uiground-judge", None, "judge for free-text (vqa) suites: openai, a registered judge, or "
        "package.module:factory", None, "NAME"),
    Opt("--uiground-judge-api-base", None, "--uiground-judge openai: e.g. http://judge:8000/v1", None, "URL"),
    Opt("--uiground-judge-model", None, "--uiground-judge openai: the served model name", None, "NAME"),
    Opt("--uiground-judge-api-key-env", "OPENAI_API_KEY", "--uiground-judge openai: environment variable holding "
        "the judge's API key", None, "VAR"),
    Opt("--uiground-judge-seed", 0, "the judge's fixed seed (temperature is always 0)", int),
    Opt("--uiground-judge-max-tokens", 512, "the judge's reply limit", positive_int),
    Opt("--uiground-judge-concurrency", 8, "judge requests in flight per worker", positive_int),
    Opt("--uiground-judge-repeat", 1, "ask the judge K times on a seeded subset (--uiground-judge-repeat-samples) "
        "and report the spread", positive_int, "K"),
    Opt("--uiground-judge-repeat-samples", 20, "size of the seeded --uiground-judge-repeat subset per suite "
        "(default 20)", positive_int, "N"),
    Opt("--uiground-judge-parse-errors", "error", PARSE_ERRORS_HELP, choice(*PARSE_ERROR_MODES)),
    Opt("--uiground-keep-errored", False, "--snapshot-update: keep the previous baseline entries of samples that "
        "errored in this run (without it, an update from a run with sample errors is refused)", boolean,
        switch=True),
    Opt("--uiground-force-update", False, "--snapshot-update: write the baseline even though absolute floors "
        "fail", boolean, switch=True),
    Opt("--uiground-max-pixels", 89_478_485, "images whose header declares more pixels are invalid samples "
        "(default: Pillow's limit, about 89.5 MP)", positive_int, "N"),
    Opt("--uiground-max-raw-chars", 100_000, "raw model output kept per record; longer output is cut and the "
        "record notes the cut", positive_int, "N"),
    Opt("--uiground-model-revision", None, "hub revision (commit, tag or branch) of --model-path, passed to "
        "from_pretrained and recorded in the baseline", None, "REV"),
    Opt("--uiground-trust-remote-code", False, "allow a model's remote code without a pinned "
        "--uiground-model-revision", boolean, switch=True),
    Opt("--uiground-progress", 30.0, "seconds between progress lines (samples done / total, rate, ETA); 0 turns "
        "them off", non_negative_float, "SECONDS"),
    Opt("--uiground-latency-benchmark", False, "time the model serially with pytest-benchmark in test_latency "
        "(also on with any --benchmark-* option); otherwise test_latency skips", boolean, switch=True),
    Opt("--uiground-probe", False, "before the suites, send 13 generated calibration screens to the model and stop "
        "with a diagnosis when its answers are not in the frame its family reads (pytest_uiground.probe)", boolean,
        switch=True),
    Opt("--uiground-markdown", None, "write a Markdown summary for CI (verdict, metrics with deltas and intervals, "
        "regressed and fixed ids, artifact links) to FILE; $GITHUB_STEP_SUMMARY is used when set", None, "FILE"),
)


@cache
def declared_options() -> tuple[Opt, ...]:
    """Settings that model adapters declare for themselves, so that an adapter outside this package
    adds ``--myadapter-temperature`` without editing this module: each entry point of the
    ``pytest_uiground.model_options`` group names a sequence of :class:`Opt` (keep that module
    light: it is imported when pytest starts). Their values reach the adapter's factory in
    :attr:`ModelOptions.settings`, keyed by the flag's name (``myadapter_temperature``)."""
    builtin = {o.dest for o in OPTIONS}
    out: list[Opt] = []
    for name, target in sorted(registry.known(registry.MODEL_OPTIONS_GROUP).items()):
        declared = registry.import_object(target, what=f"model options {name!r} ->")
        for o in declared:
            if not isinstance(o, Opt) or not o.flag.startswith("--"):
                raise pytest.UsageError(f"model options {name!r} ({target}): {o!r} is not an Opt with a --flag")
            if o.dest in builtin or any(o.dest == d.dest for d in out):
                raise pytest.UsageError(f"model options {name!r} ({target}): {o.flag} is declared twice")
            out.append(o)
    return tuple(out)


def _by_dest() -> dict[str, Opt]:
    return {o.dest: o for o in (*OPTIONS, *declared_options())}


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("uiground", "GUI grounding suites (pytest-uiground)")
    for o in (*OPTIONS, *declared_options()):
        # default=None on the command line: "not given", so the ini key (then the default) applies.
        if o.switch:
            group.addoption(o.flag, dest=o.dest, default=None, action="store_const", const=True,
                            help=f"{o.help} [ini: {o.dest}]")
        else:
            group.addoption(o.flag, dest=o.dest, default=None, type=o.type, metavar=o.metavar,
                            help=f"{o.help} [ini: {o.dest}]")
        parser.addini(o.dest, help=o.help, default=None)


def value(config: pytest.Config, dest: str) -> object:
    """The setting: the command line's, else the ini file's (parsed and checked), else the default."""
    o = _by_dest()[dest]
    given = config.getoption(dest)
    if given is not None:
        return given
    ini = config.getini(dest)
    if ini is None or ini == "" or ini == []:
        return o.default
    text = str(ini).strip()
    if o.type is None:
        return text
    try:
        return o.type(text)
    except (argparse.ArgumentTypeError, ValueError) as exc:
        raise pytest.UsageError(f"ini option {dest} = {text!r}: {exc}") from None


def parse(config: pytest.Config) -> RunOptions:
    def get(name: str) -> Any:
        return value(config, f"uiground_{name}")

    model = str(get("model"))
    known = registry.known(registry.MODEL_GROUP)
    if model not in known and not registry.is_import_path(model):
        raise pytest.UsageError(
            f"--model: no model named {model!r}; known: {', '.join(sorted(known))} "
            "(or give a factory as package.module:function)"
        )
    root = config.rootpath
    baselines, report, data_path, markdown = get("baselines"), get("report"), get("data_path"), get("markdown")
    opts = RunOptions(
        model=ModelOptions(
            name=model, path=get("model_path"), device=get("device"), batch_size=get("batch_size"),
            dtype=get("dtype"), max_new_tokens=get("max_new_tokens"), predictions=get("predictions"),
            replay_parser=get("replay_parser"), api_base=get("api_base"), api_key_env=get("api_key_env"),
            served_model=get("served_model"), served_model_reply=get("served_model_reply"), parser=get("parser"),
            concurrency=get("concurrency"),
            request_timeout=get("request_timeout"), max_retries=get("max_retries"),
            revision=get("model_revision"), trust_remote_code=get("trust_remote_code"),
            settings={o.dest.removeprefix("uiground_"): value(config, o.dest) for o in declared_options()},
        ),
        limit=get("limit"),
        seed=get("seed"),
        report_dir=Path(report).resolve() if report else None,
        baselines_dir=Path(baselines).resolve() if baselines else root / "baselines",
        data_path=Path(data_path).resolve() if data_path else None,
        updating=bool(getattr(config.option, "update_snapshots", False)),
        cache_dir=_cache_dir(config, get("cache")),
        cropping=get("cropping"),
        cropping_depth=get("cropping_depth"),
        keep_errored=get("keep_errored"),
        force_update=get("force_update"),
        baselines_explicit=bool(baselines),
        max_pixels=get("max_pixels"),
        max_raw_chars=get("max_raw_chars"),
        progress_s=get("progress"),
        latency_benchmark=get("latency_benchmark") or _benchmark_asked(config),
        markdown=Path(markdown).resolve() if markdown else None,
        judge=JudgeOptions(
            name=get("judge"), api_base=get("judge_api_base"), model=get("judge_model"),
            api_key_env=get("judge_api_key_env"), seed=get("judge_seed"), max_tokens=get("judge_max_tokens"),
            concurrency=get("judge_concurrency"), request_timeout=get("request_timeout"),
            max_retries=get("max_retries"), repeat=get("judge_repeat"), repeat_samples=get("judge_repeat_samples"),
            parse_errors=get("judge_parse_errors"),
        ),
    )
    check_model(opts.model)
    return opts


def check_model(model: ModelOptions) -> None:
    """Model-specific settings, checked once at start-up rather than failing every sample.

    An unknown ``--uiground-parser`` is refused for any model; a registered model's module
    may define ``check_options(options: ModelOptions)`` raising ``ModelLoadError``
    (``openai``: API base, served model, parser, key; ``replay``: predictions file, parser).
    Then the module's ``EXTRA = (extra, modules)``: a missing module stops the run once,
    naming the ``pip install "pytest-uiground[extra]"`` line (:func:`missing_extra`).
    Models named as ``package.module:function`` are checked by their factory when loaded.
    """
    from pytest_uiground.models import families

    if model.parser is not None and not families.is_family(model.parser):
        raise pytest.UsageError(f"--uiground-parser {model.parser!r} is unknown; known: {', '.join(families.names())} "
                                "(or a family object named as package.module:ATTR)")
    target = registry.known(registry.MODEL_GROUP).get(model.name)
    if target is None:
        return
    module = importlib.import_module(target.partition(":")[0])
    check = getattr(module, "check_options", None)
    if callable(check):  # the settings first: fixing them needs no install
        try:
            check(model)
        except ModelLoadError as exc:
            raise pytest.UsageError(str(exc)) from None
    missing = missing_extra(module)
    if missing:
        raise pytest.UsageError(f"--model {model.name}: {missing}")


def missing_extra(module: Any) -> str | None:
    """What is missing when a model module's ``EXTRA = (extra, modules)`` is not installed, else None.

    Checked with ``find_spec`` (nothing is imported), so a core install learns once, at
    start-up, which extra to install instead of one ``ModuleNotFoundError`` per sample.
    """
    from pytest_uiground import extras

    extra = getattr(module, "EXTRA", None)
    return extras.missing(extra[0], extra[1]) if extra else None


def _benchmark_asked(config: pytest.Config) -> bool:
    """Any ``--benchmark-*`` option on the command line (other than the ones that turn it off)
    asks for the serial latency benchmark too."""
    off = ("--benchmark-disable", "--benchmark-skip")
    return any(str(a).startswith("--benchmark-") and not str(a).startswith(off)
               for a in config.invocation_params.args)


def _cache_dir(config: pytest.Config, value: object) -> Path | None:
    """``--uiground-cache``: a directory, ``off``, or by default the pytest cache's."""
    if value == "off":
        return None
    if value:
        return Path(str(value)).resolve()
    cache = getattr(config, "cache", None)
    return cache.mkdir("uiground-predictions") if cache is not None else None
