"""Options: one table declares every setting once, as a command-line flag and an ini key.

Every flag is prefixed ``--uiground-`` (dest ``uiground_*``) so the plugin coexists with
other plugins' options (pytest-playwright's ``--device``, say); the exceptions are the
model card's ``--model`` and ``--model-path``. Each is also an ini key of the same dest
(``[tool.pytest.ini_options] uiground_model = "uitars"``); the command line wins. Values
are parsed into one typed :class:`RunOptions` at start-up, so bad values fail before any
test runs, with the known choices in the message.

A row names the field its value lands in (``Opt.field``, e.g. ``"model.device"``) and, where
the parsed text is not yet the field's value, a converter (``Opt.convert``): adding a setting
is one row plus its field, and :func:`parse` loops over the table. Numbers are read by one
parser, :func:`number`, per kind and bound.

(About 400 lines: most of it is the one table itself, kept whole so that a flag, its ini key,
its type and its help are read and changed in one place; adapters declare their own settings
elsewhere, :func:`declared_options`.)
"""

from __future__ import annotations

import argparse
import importlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pytest_uiground import registry
from pytest_uiground.judges.base import PARSE_ERROR_MODES, JudgeOptions
from pytest_uiground.models.base import ModelLoadError, ModelOptions

_N = TypeVar("_N", int, float)

_DEVICE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")
DTYPES = ("auto", "bfloat16", "float16", "float32")
_DTYPE_ALIASES = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32", "float": "float32"}


def number(kind: type[_N], *, at_least: _N | None = None, above: _N | None = None) -> Callable[[str], _N]:
    """The one parser of numeric settings: ``kind`` (``int`` or ``float``), optionally bounded below.

    Every numeric row of :data:`OPTIONS` is built here, so the rule (finite, in range) and the
    message are written once. The message states what was expected, what was given and the fix;
    the option itself is named by whoever calls the parser (argparse: ``argument --flag: ...``;
    :func:`value`: ``ini option dest = '...': ...``).
    """
    what = "a whole number" if kind is int else "a number"
    bound = f" >= {at_least:g}" if at_least is not None else f" > {above:g}" if above is not None else ""
    example = f"{at_least if at_least is not None else 1 if above is not None else 0:g}"

    def parse(text: str) -> _N:
        problem = f"expected {what}{bound}, got {text!r}; give e.g. {example}"
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(problem) from None
        # float('nan') compares false with everything and float('inf') is no setting: both refused.
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(problem)
        if (at_least is not None and not value >= at_least) or (above is not None and not value > above):
            raise argparse.ArgumentTypeError(problem)
        return value

    parse.__name__ = f"{kind.__name__}{bound.replace(' ', '')}"  # argparse's fallback names the type
    return parse


whole_number = number(int)
positive_int = number(int, at_least=1)
non_negative_int = number(int, at_least=0)
positive_float = number(float, above=0.0)
non_negative_float = number(float, at_least=0.0)


def device_spec(text: str) -> str:
    if not _DEVICE.match(text):
        raise argparse.ArgumentTypeError(f"unknown device {text!r}; use auto, cpu, mps, cuda or cuda:N")
    return text


def dtype_spec(text: str) -> str:
    value = _DTYPE_ALIASES.get(text, text)
    if value not in DTYPES:
        raise argparse.ArgumentTypeError(f"unknown dtype {text!r}; use {', '.join(DTYPES)} (or bf16, fp16, fp32)")
    return value


def shard_spec(text: str) -> tuple[int, int]:
    """``--uiground-shard I/N``: this machine's part, 1 <= I <= N."""
    index, _, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i = n = 0
    if not 1 <= i <= n:
        raise argparse.ArgumentTypeError(f"expected I/N with 1 <= I <= N (this machine's part of N), got {text!r}; "
                                         "give e.g. 1/4")
    return i, n


def perturb_specs(text: str) -> tuple[str, ...]:
    """``--uiground-perturb scale:0.75,invert,jpeg:30``: each spec checked, as canonical specs."""
    from pytest_uiground.perturb.transforms import PerturbSpecError, parse_list

    try:
        specs = tuple(p.spec for p in parse_list(text))
    except PerturbSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if not specs:
        raise argparse.ArgumentTypeError(f"expected perturbations such as scale:0.75,invert, got {text!r}")
    return specs


def _specs_or_none(given: tuple[str, ...] | None, _config: pytest.Config) -> tuple[str, ...]:
    return given or ()


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
    only_new: bool = False  # run only the samples absent from the baseline (with --snapshot-update: add them)
    baselines_explicit: bool = False  # --uiground-baselines was given: the folder must exist
    model_target: str | None = None  # --model resolved to its factory (module:function), once per run
    max_pixels: int = 89_478_485  # image headers above this are invalid samples (Pillow's own default)
    max_raw_chars: int = 100_000  # raw model output kept per record
    progress_s: float = 30.0
    latency_benchmark: bool = False
    markdown: Path | None = None
    regressions: str | None = None  # None: each suite's [baseline] regressions
    refusals: str | None = None  # None: each suite's [scorer] refusals (suites with refusal samples only)
    significant_level: float | None = None  # None: each suite's [baseline] significant_level
    repeat: int = 1  # --uiground-repeat: answers per sample (stability), 1 = the plain run
    confirm: int | None = None  # --uiground-confirm: re-asks of a regressed sample alone; None: the suite's
    max_flip_rate: float | None = None  # --uiground-max-flip-rate: bound on the repeats' flip rate (percent)
    require_power: bool = False  # --uiground-require-power: a check that cannot see a drop of its tolerance fails
    shard: tuple[int, int] | None = None  # --uiground-shard I/N: (I, N), 1-based
    against: Path | None = None  # --uiground-against: a published run's answers, put beside this run per sample
    against_parser: str | None = None  # --uiground-against-parser: the family that reads them
    perturb: tuple[str, ...] = ()  # --uiground-perturb: the robustness variants asked besides the suite's [perturb]


def model_options(opts: RunOptions, worker_id: str) -> ModelOptions:
    """What a model factory gets: the model settings, for this worker."""
    return replace(opts.model, worker_id=worker_id)


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
    # Where the value lands in :class:`RunOptions`: a field (``"limit"``) or a field of its model or
    # judge record (``"model.device"``, ``"judge.seed"``); None for settings read on their own
    # (:func:`value`) or, for adapters' rows, collected into ``ModelOptions.settings``.
    field: str | None = None
    # From the parsed value to the field's (a path resolved, a default from the config); None: as is.
    convert: Callable[[Any, pytest.Config], Any] | None = None
    # The dest whose value applies when this setting is given nowhere (its default is then unused).
    fallback: str | None = None
    many: bool = False  # the flag may be given more than once (``action="append"``): its value is a list

    @property
    def dest(self) -> str:
        name = self.flag.lstrip("-").replace("-", "_")
        return name if name.startswith("uiground_") else f"uiground_{name}"


# Converters (``Opt.convert``): from the parsed setting to its RunOptions field.


def _model_name(name: object, config: pytest.Config) -> str:
    return str(name)


def model_target(model: str) -> str:
    """``--model`` resolved once per run (issue 42: it was looked up three times): a registered name's
    ``module:function`` target, or the factory path given; anything else stops the run, naming the known."""
    if registry.is_import_path(model):
        return model
    known = registry.known(registry.MODEL_GROUP)
    if model not in known:
        raise pytest.UsageError(
            f"--model: no model named {model!r}; known: {', '.join(sorted(known))} "
            "(or give a factory as package.module:function)"
        )
    return known[model]


def _resolved(path: object, config: pytest.Config) -> Path | None:
    """A path given relative to where pytest was started, made absolute now: xdist workers and
    the report's links may run elsewhere."""
    return Path(str(path)).resolve() if path else None


def _baselines_dir(path: object, config: pytest.Config) -> Path:
    """``--uiground-baselines``, else ``<project>/baselines`` found from the suites being run, never from
    pytest's rootdir (which an option's value can move: :mod:`pytest_uiground.suite.project`). A folder
    outside the suites' git repository stops the run."""
    from pytest_uiground.suite import project

    where = config.invocation_params.dir
    folder = (Path(str(path)).resolve() if path
              else project.baselines_root(config.args, where, config.rootpath))
    outside = project.outside_repository(folder, config.args, where)
    if outside:
        raise pytest.UsageError(outside)
    return folder


def _cache_dir(value: object, config: pytest.Config) -> Path | None:
    """``--uiground-cache``: a directory, ``off``, or by default the pytest cache's."""
    if value == "off":
        return None
    if value:
        return Path(str(value)).resolve()
    cache = getattr(config, "cache", None)
    return cache.mkdir("uiground-predictions") if cache is not None else None


def _or_benchmark_asked(on: object, config: pytest.Config) -> bool:
    """Any ``--benchmark-*`` option on the command line (other than the ones that turn it off)
    asks for the serial latency benchmark too."""
    off = ("--benchmark-disable", "--benchmark-skip")
    return bool(on) or any(str(a).startswith("--benchmark-") and not str(a).startswith(off)
                           for a in config.invocation_params.args)


def _endpoints(value: object, config: pytest.Config) -> str | None:
    """``--uiground-api-base``, given once, repeated or comma-separated (on the command line or in the ini
    key, one per line too): the endpoints, comma-separated, in the order given."""
    if not value:
        return None
    parts = value if isinstance(value, list) else [str(value)]
    bases = [b for part in parts for b in str(part).replace(",", " ").split()]
    return ",".join(bases) or None


def _level(value: object, config: pytest.Config) -> float | None:
    """``--uiground-significant-level``: a level above 0 and below 0.5 (a one-sided test's level of 0.5
    or more would fail on a coin flip)."""
    if value is None:
        return None
    level = float(str(value))
    if not level < 0.5:
        raise pytest.UsageError(f"--uiground-significant-level: expected a number between 0 and 0.5, got {level:g}; "
                                "give e.g. 0.05")
    return level


PARSE_ERRORS_HELP = ("an unparseable judge reply: 'error' (default: the sample errors, counted) or 'zero' (the "
                     "reference's silent 0, still counted as a format error)")

OPTIONS: tuple[Opt, ...] = (
    Opt("--model", "ocr", "model to evaluate, by registered name or package.module:function (default: ocr)",
        field="model.name", convert=_model_name),
    Opt("--model-path", None, "hub id or local directory of the model weights", field="model.path"),
    Opt("--uiground-device", "auto", "auto (xdist worker gwN takes cuda:(N mod count), CPU without a GPU), cpu, "
        "cuda, cuda:N, mps", device_spec, field="model.device"),
    Opt("--uiground-batch-size", 1, "samples per model call in a worker", positive_int, field="model.batch_size"),
    Opt("--uiground-limit", None,
        "run a seeded, stratified subset of N samples per suite, on as few screens as it can (a smoke run)",
        positive_int, "N", field="limit"),
    Opt("--uiground-seed", 0, "seed for --uiground-limit (default 0)", whole_number, field="seed"),
    Opt("--uiground-shard", None, "run part I of N of each suite (screens kept together, balanced by count; the same "
        "on every machine), for python -m pytest_uiground merge; needs --uiground-report", shard_spec, "I/N",
        field="shard"),
    Opt("--uiground-perturb", None, "also run each point sample under these perturbations (comma-separated: "
        "scale:F, zoom:F, translate:DX,DY, letterbox:WxH, pad:WxH, perspective:E, invert, grayscale, contrast:F, "
        "brightness:F, jpeg:Q, blur:S; alt:N or alt: the suite's own instruction_alts), each its own test <id>@<spec> "
        "and slice perturb=<spec> (docs/robustness.md)",
        perturb_specs, "SPECS", field="perturb", convert=_specs_or_none),
    Opt("--uiground-report", None, "write samples.jsonl, summary.json and report.html to DIR", None, "DIR",
        field="report_dir", convert=_resolved),
    Opt("--uiground-baselines", None, "baseline root (default: <project>/baselines, found from the suites' paths, "
        "never from the rootdir); each suite uses DIR/<suite>/",
        None, "DIR", field="baselines_dir", convert=_baselines_dir),
    Opt("--uiground-data-path", None, "local dataset root for suites that need one (see each suite's README)",
        None, "DIR", field="data_path", convert=_resolved),
    # None = not given: each adapter then applies its model's official setting (README "Models").
    Opt("--uiground-dtype", None, "weights dtype: auto (bfloat16 on GPU, float32 on CPU), bfloat16, float16, "
        "float32 (default: the model's official dtype on GPU, float32 on CPU)", dtype_spec, field="model.dtype"),
    Opt("--uiground-max-new-tokens", None, "generation limit per sample (default: the model's official limit)",
        positive_int, field="model.max_new_tokens"),
    Opt("--uiground-cache", None, "prediction cache directory (default: inside the pytest cache dir), or 'off'",
        cache_spec, "DIR|off", field="cache_dir", convert=_cache_dir),
    Opt("--uiground-predictions", None, "--model replay: raw outputs to score", None, "FILE.jsonl",
        field="model.predictions"),
    Opt("--uiground-replay-parser", None, "--model replay: whose parser reads them", None, "NAME",
        field="model.replay_parser"),
    Opt("--uiground-against", None, "a published run's answers (replay JSON lines, as --uiground-predictions; "
        "or a published log as its authors wrote it: eval_screenspot_pro.py's, Gelato's; gzipped or not) to "
        "put beside this run sample by sample: both right, only this run, only theirs, McNemar; the baseline and "
        "the verdict are not touched", None, "FILE", field="against", convert=_resolved),
    Opt("--uiground-against-parser", None, "--uiground-against: the family whose reader reads those answers "
        "(replay answers: default --uiground-replay-parser; a published log: its authors' own reading of each "
        "answer unless this is given)", None, "NAME", field="against_parser"),
    Opt("--uiground-api-base", None, "--model openai: e.g. http://gpu-node:8000/v1; repeat it (or separate with "
        "commas) for several servers of the model: least outstanding requests, a window per server, a server that "
        "stops answering is left for the others", None, "URL", field="model.api_base", convert=_endpoints,
        many=True),
    Opt("--uiground-api-key-env", "OPENAI_API_KEY", "--model openai: environment variable holding the API key "
        "(never pass the key itself)", None, "VAR", field="model.api_key_env"),
    Opt("--uiground-served-model", None, "--model openai: the server's model name", None, "NAME",
        field="model.served_model"),
    Opt("--uiground-served-model-reply", None, "--model openai: the model name the server's replies may carry "
        "instead of --uiground-served-model (a proxy's dated alias); any other name fails the sample", None, "NAME",
        field="model.served_model_reply"),
    Opt("--uiground-parser", None, "--model openai: the family parser/prompt to use", None, "NAME",
        field="model.parser"),
    Opt("--uiground-concurrency", 8, "--model openai: requests in flight per worker", positive_int,
        field="model.concurrency"),
    Opt("--uiground-request-timeout", 120.0, "--model openai: seconds per request", positive_float,
        field="model.request_timeout"),
    Opt("--uiground-max-retries", 5, "--model openai: retries on 429, 5xx and timeouts", non_negative_int,
        field="model.max_retries"),
    Opt("--uiground-omniparser-llm", "none", "--model omniparser: who picks the element of a point task: none (the "
        "instruction matched against element texts) or openai (the authors' ScreenSpot-Pro prompt to the "
        "--uiground-api-base server)", choice("none", "openai"), field="model.omniparser_llm"),
    Opt("--uiground-cropping", "none", "zoom strategy around the model's own answers: none, fixed (3x3 tiles), "
        "screenseeker (recursive)", choice("none", "fixed", "screenseeker"), field="cropping"),
    Opt("--uiground-cropping-depth", 3, "--uiground-cropping screenseeker: zoom levels", positive_int,
        field="cropping_depth"),
    Opt("--uiground-judge", None, "judge for free-text (vqa) suites: openai, a registered judge, or "
        "package.module:factory", None, "NAME", field="judge.name"),
    Opt("--uiground-judge-api-base", None, "--uiground-judge openai: e.g. http://judge:8000/v1", None, "URL",
        field="judge.api_base"),
    Opt("--uiground-judge-model", None, "--uiground-judge openai: the served model name", None, "NAME",
        field="judge.model"),
    Opt("--uiground-judge-api-key-env", "OPENAI_API_KEY", "--uiground-judge openai: environment variable holding "
        "the judge's API key", None, "VAR", field="judge.api_key_env"),
    Opt("--uiground-judge-seed", 0, "the judge's fixed seed (temperature is always 0)", whole_number,
        field="judge.seed"),
    Opt("--uiground-judge-max-tokens", 512, "the judge's reply limit", positive_int, field="judge.max_tokens"),
    Opt("--uiground-judge-concurrency", 8, "judge requests in flight per worker", positive_int,
        field="judge.concurrency"),
    # The judge's server is often not the model's (a hosted judge, a local model): its own limits,
    # defaulting to the model's so that a run that sets neither behaves as before.
    Opt("--uiground-judge-request-timeout", None, "--uiground-judge openai: seconds per judge request (default: "
        "--uiground-request-timeout's value)", positive_float, "SECONDS", field="judge.request_timeout",
        fallback="uiground_request_timeout"),
    Opt("--uiground-judge-max-retries", None, "--uiground-judge openai: retries on 429, 5xx and timeouts (default: "
        "--uiground-max-retries's value)", non_negative_int, "N", field="judge.max_retries",
        fallback="uiground_max_retries"),
    Opt("--uiground-judge-repeat", 1, "ask the judge K times on a seeded subset (--uiground-judge-repeat-samples) "
        "and report the spread", positive_int, "K", field="judge.repeat"),
    Opt("--uiground-judge-repeat-samples", 20, "size of the seeded --uiground-judge-repeat subset per suite "
        "(default 20)", positive_int, "N", field="judge.repeat_samples"),
    Opt("--uiground-judge-parse-errors", "error", PARSE_ERRORS_HELP, choice(*PARSE_ERROR_MODES),
        field="judge.parse_errors"),
    Opt("--uiground-regressions", None, "how regressed samples fail the run: 'each' (every one; for deterministic "
        "and replayed models) or 'significant' (only when regressions outnumber fixes significantly, exact "
        "one-sided McNemar; for GPU and served models, whose answers flip on noise); default: each suite's "
        "[baseline] regressions, else each", choice("each", "significant"), "RULE", field="regressions"),
    Opt("--uiground-refusals", None, "samples whose right answer is a refusal (OSWorld-G's 54): 'count' them in "
        "the denominator (the official rule; 564) or 'exclude' them (510, as some papers do); default: each "
        "suite's [scorer] refusals. The other figure is reported beside it as a second metric",
        choice("count", "exclude"), "POLICY", field="refusals"),
    Opt("--uiground-significant-level", None, "--uiground-regressions significant: the test's level (default: "
        "each suite's [baseline] significant_level, else 0.05)", number(float, above=0.0), "ALPHA",
        field="significant_level", convert=_level),
    Opt("--uiground-repeat", 1, "ask the model K times per sample (each repeat in another batch and order, never "
        "from the cache) and record each sample's stability (right k of K) and the run-to-run flip rate; on "
        "--snapshot-update the baseline keeps it, and a sample unstable in the baseline never fails alone",
        positive_int, "K", field="repeat"),
    Opt("--uiground-confirm", None, "plain reruns: re-ask each regressed sample alone (batch 1, a fresh request, "
        "no cache), one answer at a time, until one is right (it is unstable: never failing alone, left out of "
        "the flip test) or K were wrong (a confirmed regression); a sample right 1 time in 2 is confirmed 1 "
        "time in 2^(K+1). Default: each suite's [baseline] confirm, else 0 (none); with --uiground-repeat the "
        "repeats judge instead", non_negative_int, "K", field="confirm"),
    Opt("--uiground-max-flip-rate", None, "with --uiground-repeat: fail the suite when its run-to-run flip rate "
        "(percent of samples two runs answer differently) is above this", number(float, at_least=0.0), "PCT",
        field="max_flip_rate"),
    Opt("--uiground-require-power", False, "fail a check (the suite or a gated slice) whose smallest drop detected "
        "95 times in 100 is larger than its tolerance (also [baseline] require_power in suite.toml); without it "
        "the shortfall is reported, not failed", boolean, switch=True, field="require_power"),
    Opt("--uiground-keep-errored", False, "--snapshot-update: keep the previous baseline entries of samples that "
        "errored in this run (without it, an update from a run with sample errors is refused)", boolean,
        switch=True, field="keep_errored"),
    Opt("--uiground-only-new", False, "run only the samples absent from the committed baseline; with "
        "--snapshot-update, add their entries and keep every other entry as it is (a suite that grew)", boolean,
        switch=True, field="only_new"),
    Opt("--uiground-force-update", False, "--snapshot-update: write the baseline even though absolute floors "
        "fail", boolean, switch=True, field="force_update"),
    Opt("--uiground-max-pixels", 89_478_485, "images whose header declares more pixels are invalid samples "
        "(default: Pillow's limit, about 89.5 MP)", positive_int, "N", field="max_pixels"),
    Opt("--uiground-max-raw-chars", 100_000, "raw model output kept per record; longer output is cut and the "
        "record notes the cut", positive_int, "N", field="max_raw_chars"),
    Opt("--uiground-model-revision", None, "hub revision (commit, tag or branch) of --model-path, passed to "
        "from_pretrained and recorded in the baseline", None, "REV", field="model.revision"),
    Opt("--uiground-trust-remote-code", False, "allow a model's remote code without a pinned "
        "--uiground-model-revision", boolean, switch=True, field="model.trust_remote_code"),
    Opt("--uiground-progress", 30.0, "seconds between progress lines (samples done / total, rate, ETA); 0 turns "
        "them off", non_negative_float, "SECONDS", field="progress_s"),
    Opt("--uiground-latency-benchmark", False, "time the model serially with pytest-benchmark in test_latency "
        "(also on with any --benchmark-* option); otherwise test_latency skips", boolean, switch=True,
        field="latency_benchmark", convert=_or_benchmark_asked),
    Opt("--uiground-probe", False, "before the suites, send 13 generated calibration screens to the model and stop "
        "with a diagnosis when its answers are not in the frame its family reads (pytest_uiground.probe)", boolean,
        switch=True),
    Opt("--uiground-markdown", None, "write a Markdown summary for CI (verdict, metrics with deltas and intervals, "
        "regressed and fixed ids, artifact links) to FILE; $GITHUB_STEP_SUMMARY is used when set", None, "FILE",
        field="markdown", convert=_resolved),
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
        elif o.many:
            group.addoption(o.flag, dest=o.dest, default=None, action="append", type=o.type, metavar=o.metavar,
                            help=f"{o.help} [ini: {o.dest}]")
        else:
            group.addoption(o.flag, dest=o.dest, default=None, type=o.type, metavar=o.metavar,
                            help=f"{o.help} [ini: {o.dest}]")
        parser.addini(o.dest, help=o.help, default=None)


def value(config: pytest.Config, dest: str, *, fallback: bool = True) -> object:
    """The setting: the command line's, else the ini file's (parsed and checked), else the default;
    with ``fallback=False``, None when it is given nowhere and has a fallback (:attr:`Opt.fallback`)."""
    o = _by_dest()[dest]
    given = config.getoption(dest)
    if given is not None:
        return given
    ini = config.getini(dest)
    if ini is None or ini == "" or ini == []:
        if o.fallback is not None:
            return value(config, o.fallback) if fallback else None
        return o.default
    text = str(ini).strip()
    if o.type is None:
        return text
    try:
        return o.type(text)
    except (argparse.ArgumentTypeError, ValueError) as exc:
        raise pytest.UsageError(f"ini option {dest} = {text!r}: {exc}") from None


def parse(config: pytest.Config) -> RunOptions:
    """Every row of :data:`OPTIONS` with a ``field``, into that field: a new setting is one row
    (and its field), not an edit here. Adapters' rows go to ``ModelOptions.settings``."""
    records: dict[str, dict[str, Any]] = {"": {}, "model": {}, "judge": {}}
    for o in OPTIONS:
        if o.field is None:
            continue
        given = value(config, o.dest, fallback=False)
        if given is None and o.fallback is not None:
            given = value(config, o.fallback)
        record, _, name = o.field.rpartition(".")
        records[record][name] = o.convert(given, config) if o.convert else given
    settings = {o.dest.removeprefix("uiground_"): value(config, o.dest) for o in declared_options()}
    opts = RunOptions(
        model=ModelOptions(**records["model"], settings=settings),
        judge=JudgeOptions(**records["judge"]),
        updating=bool(getattr(config.option, "update_snapshots", False)),  # syrupy's --snapshot-update
        baselines_explicit=bool(value(config, "uiground_baselines")),
        **records[""],
    )
    opts = replace(opts, model_target=model_target(opts.model.name))
    check_model(opts.model, opts.model_target)
    check_against(opts)
    return opts


def check_against(opts: RunOptions) -> None:
    """``--uiground-against-parser`` is a family. The file itself is read by the controller at start-up, which
    asks for a family where the file holds answers only (:func:`pytest_uiground.run.against.check`)."""
    if opts.against is None:
        return
    from pytest_uiground.models import families

    parser = opts.against_parser  # the replay parser it defaults to is checked with --model replay
    if parser is not None and not families.is_family(parser):
        raise pytest.UsageError(f"--uiground-against-parser {parser!r} is unknown; known: "
                                f"{', '.join(families.names())}")


def check_model(model: ModelOptions, target: str | None = None) -> None:
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
    if target is None:
        target = registry.known(registry.MODEL_GROUP).get(model.name)
    if target is None or registry.is_import_path(model.name):
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
