"""ELAM-7B and Molmo-7B-D: Molmo v1 through the checkpoints' own remote code.

Molmo v1 is not a native transformers architecture. Its remote code runs on
transformers 4.48.2 (the version the ELAM card pins) and on 4.49–4.53 once the
removed ``GenerationMixin._extract_past_from_model_output`` is put back, which this
module does; it fails on 4.57 and 5.x in several places. So the version is checked
before anything is downloaded, and the error names the working versions and the
alternative (serve the model with vLLM, which supports Molmo natively, and score
its outputs with ``--model replay --uiground-replay-parser elam``).

Inference follows the card: ``processor.process`` per image, a batch of one,
``generate_from_batch`` with ``stop_strings="<|endoftext|>"``, points in percent. The
processor's work is :meth:`Molmo.prepare` (the harness runs it in a background thread
while earlier samples generate) and the device's :meth:`Molmo.generate`.
"""

from __future__ import annotations

import contextlib
import copy
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_uiground.models import families
from pytest_uiground.models.base import ModelAdapter, ModelLoadError, ModelOptions, to_prediction
from pytest_uiground.models.hf.device import resolve_device
from pytest_uiground.models.hf.loading import pretrained_kwargs, resolve_dtype, resolve_model_path, sha
from pytest_uiground.models.overrides import NONE, Overrides
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample

#: the extra these models need, and the modules it brings (checked at start-up: options.missing_extra)
EXTRA = ("molmo", ("torch", "transformers", "einops"))


WORKING_VERSIONS = "transformers 4.48.2 (as the ELAM card pins it) or 4.49-4.53"
INSTALL_HINT = 'pip install "pytest-uiground[molmo]"'


def check_transformers(version: str) -> bool:
    """True when the generation helper must be restored; raise when Molmo v1 cannot run.

    Accepts 4.48.2+ of the 4.48 line and 4.49–4.53; refuses everything else.
    """
    from packaging.version import Version

    v = Version(version)
    if Version("4.48.2") <= v < Version("4.49"):
        return False
    if Version("4.49") <= v < Version("4.54"):
        return True
    raise ModelLoadError(
        f"Molmo v1 / ELAM remote code does not run on transformers {version}: it needs {WORKING_VERSIONS}. "
        f"Install a working version in a separate environment ({INSTALL_HINT}), or serve the model with vLLM "
        "(`vllm serve sparks-solutions/ELAM-7B --trust-remote-code`) and score its outputs here with "
        "`--model replay --uiground-predictions outputs.jsonl --uiground-replay-parser elam`"
    )


def _extract_past_from_model_output(self: Any, outputs: Any, standardize_cache_format: bool = False) -> Any:
    """The helper transformers 4.49 removed and Molmo v1's remote code still calls."""
    past, name = None, "past_key_values"
    if "past_key_values" in outputs:
        past = outputs.past_key_values
    elif "mems" in outputs:
        past = outputs.mems
    elif "past_buckets_states" in outputs:
        past = outputs.past_buckets_states
    elif "cache_params" in outputs:
        past, name = outputs.cache_params, "cache_params"
    return name, past


def restore_generation_helper() -> None:
    from transformers.generation.utils import GenerationMixin

    if not hasattr(GenerationMixin, "_extract_past_from_model_output"):
        GenerationMixin._extract_past_from_model_output = _extract_past_from_model_output  # type: ignore[attr-defined]


@dataclass
class PreparedSample:
    """One sample ready for the device: the processor's CPU tensors and what parsing needs
    (the image's size, not the image)."""

    sample: Sample
    inputs: dict[str, Any]
    image_size: tuple[int, int]
    overrides: Overrides
    processor_ms: float


class Molmo(ModelAdapter):
    name = "molmo"
    family = "molmo"
    default_hub_id = "allenai/Molmo-7B-D-0924"
    overrides: Overrides = NONE

    def use_overrides(self, overrides: Overrides) -> None:
        self.overrides = overrides

    def __init__(self, options: ModelOptions) -> None:
        import transformers

        if check_transformers(transformers.__version__):
            restore_generation_helper()
        self.options = options
        self.path = resolve_model_path(options.path or self.default_hub_id)
        self.device = resolve_device(options.device, options.worker_id)
        # The card loads in bfloat16 and generates with GenerationConfig(max_new_tokens=2048,
        # stop_strings="<|endoftext|>") (greedy: GenerationConfig's default).
        self.dtype = resolve_dtype(options.dtype, self.device, "bfloat16")
        limit = options.max_new_tokens
        if limit is None:
            limit = families.get(self.family).generation.max_new_tokens
        self.generation = {"max_new_tokens": limit, "stop_strings": "<|endoftext|>", "do_sample": False}
        self.processor, self.model = self._load()
        self._prep_lock = threading.Lock()  # the harness may prepare in the background and predict here
        self._shared_lock = threading.Lock()  # taken only while no processor copy exists
        self._prep_copy: Any = None
        self._copy_failed = False

    def _load(self) -> tuple[Any, Any]:
        import torch
        from transformers import AutoModelForCausalLM, AutoProcessor

        try:
            kwargs = pretrained_kwargs(self.options, self.path, remote_code=True)
            processor = AutoProcessor.from_pretrained(self.path, **kwargs)  # type: ignore[no-untyped-call]
            model = AutoModelForCausalLM.from_pretrained(self.path, torch_dtype=getattr(torch, self.dtype), **kwargs)
        except (OSError, ValueError) as exc:
            raise ModelLoadError(f"{self.name}: could not load {self.path!r} ({exc})") from exc
        model.to(self.device).eval()  # type: ignore[arg-type]
        return processor, model

    def prompt(self, sample: Sample) -> str:
        return self.overrides.prompt(sample, self.family)

    # -- the Model protocol: preparation (CPU) apart from generation (device) ------------------
    prepares = True

    def prepare(self, samples: Sequence[Sample]) -> list[PreparedSample]:
        """The CPU half of :meth:`predict`: decode, the suite's preprocessing and the card's
        ``processor.process`` (crops, patches, prompt tokens), one sample at a time as the card
        runs them. Runs in the harness's background thread while the previous samples generate,
        with its own processor copy: ``generate_from_batch`` reads the tokenizer all through
        generation (``stop_strings``), and a tokenizer is not safe to use from two threads."""
        overrides = self.overrides  # the suite's, fixed for these samples
        out = []
        with self._prep_lock:
            processor = self._prep_processor()
            with self._shared_lock if processor is self.processor else contextlib.nullcontext():
                for s in samples:
                    image = overrides.image(s.image.load())
                    t0 = time.perf_counter()
                    inputs = processor.process(images=[image], text=self.prompt(s))
                    out.append(PreparedSample(s, dict(inputs), image.size, overrides,
                                              (time.perf_counter() - t0) * 1000))
        return out

    def generate(self, prepared: Sequence[PreparedSample]) -> list[Prediction]:
        """The device half: each prepared sample to the device, ``generate_from_batch`` as the
        card calls it, decode, parse."""
        preds = []
        for p in prepared:
            t0 = time.perf_counter()
            with self._shared_lock if self._prep_copy is None else contextlib.nullcontext():
                text = self._generate(p.inputs)
            parsed = p.overrides.parse(self.family, text, p.sample.task, families.ParseContext(image_size=p.image_size))
            preds.append(to_prediction(parsed, text,
                                               latency_ms=p.processor_ms + (time.perf_counter() - t0) * 1000))
        return preds

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        return self.generate(self.prepare(samples))

    def _generate(self, inputs: dict[str, Any]) -> str:
        import torch
        from transformers import GenerationConfig

        batch = {}
        for k, v in inputs.items():
            v = v.to(self.device)
            batch[k] = (v.to(getattr(torch, self.dtype)) if v.dtype == torch.float32 else v).unsqueeze(0)
        with torch.inference_mode():
            out = self.model.generate_from_batch(batch, GenerationConfig(**self.generation),  # type: ignore[no-untyped-call]
                                                 tokenizer=self.processor.tokenizer)
        return str(self.processor.tokenizer.decode(out[0, batch["input_ids"].size(1):], skip_special_tokens=True))

    def _prep_processor(self) -> Any:
        """The background thread's processor: a copy, or (a remote processor that cannot be
        copied) the shared one, with preparation and generation then taking turns."""
        if self._prep_copy is None and not self._copy_failed:
            try:
                self._prep_copy = copy.deepcopy(self.processor)
            except Exception:
                self._copy_failed = True
        return self._prep_copy if self._prep_copy is not None else self.processor

    def cache_key(self, sample: Sample) -> dict[str, Any]:
        return {"sample": sample.id, "image": sample.image.key, "task": sample.task, "prompt": self.prompt(sample),
                "generation": self.generation}

    def fingerprint(self) -> dict[str, Any]:
        import transformers

        return {"model": self.name, "path": self.path, "config_sha256": sha(self.model.config.to_dict()),
                "revision": getattr(self.model.config, "_commit_hash", None), "dtype": self.dtype,
                "transformers": transformers.__version__, "generation": self.generation,
                "sources": {"dtype": "--uiground-dtype" if self.options.dtype is not None else
                            "ELAM card: torch_dtype='bfloat16' (float32 off a GPU)",
                            "max_new_tokens": "--uiground-max-new-tokens" if self.options.max_new_tokens is not None
                            else families.get(self.family).generation.source}}


class Elam(Molmo):
    name = "elam"
    family = "elam"
    default_hub_id = "sparks-solutions/ELAM-7B"


def create_molmo(options: ModelOptions) -> Molmo:
    return Molmo(options)


def create_elam(options: ModelOptions) -> Elam:
    return Elam(options)
