"""Shared machinery for Hugging Face vision-language adapters.

One class does what every native ``transformers`` family needs: resolve
``--model-path`` (a hub id or a local directory, honouring ``HF_HUB_OFFLINE`` and the
local cache), place the model on this worker's device with the right dtype, build a
left-padded batch, generate with each model's official settings (greedy unless its
official code says otherwise; dtype and answer length per model unless given on the
command line), decode only the new tokens, notice generations cut off by the limit,
and parse each output with the family's parser using the input size the processor
really used. Families override only the hooks
that differ (prompt wrapping, input sizes, decoding).

The processor and config are read when the adapter is built; the weights on the first
``generate`` (:attr:`HFVisionModel.model`), so a rerun answered from the prediction cache
never loads them. torch and transformers are imported inside methods: importing this
module is cheap.
"""

from __future__ import annotations

import copy
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pytest_uiground.models import families
from pytest_uiground.models.base import ModelAdapter, ModelLoadError, ModelOptions, to_prediction
from pytest_uiground.models.families.parts import split_at_image
from pytest_uiground.models.hf.device import resolve_device
from pytest_uiground.models.hf.loading import WEIGHT_SUFFIXES, pretrained_kwargs, resolve_dtype, resolve_model_path, sha
from pytest_uiground.models.overrides import NONE, Overrides
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample


@dataclass
class PreparedBatch:
    """A batch ready for the device: the processor's CPU tensors and what parsing needs.

    Only image sizes are kept, not the decoded images, so a prepared batch waiting in the
    harness's queue holds the tensors and nothing else."""

    samples: list[Sample]
    inputs: Any
    image_sizes: list[tuple[int, int]]
    input_sizes: list[tuple[int, int] | None]
    overrides: Overrides
    processor_ms: float = 0.0


class HFVisionModel(ModelAdapter):
    """A native transformers image-text-to-text model behind the Model protocol."""

    name = "hf"
    family = "qwen-vl"
    default_hub_id = ""
    trust_remote_code = False
    overrides: Overrides = NONE
    default_dtype = "auto"
    """The dtype of the model's official inference code, used on a GPU without ``--uiground-dtype``."""
    dtype_source = "project: the checkpoint's own precision (bfloat16)"
    generation_defaults: ClassVar[dict[str, Any]] = {"do_sample": False, "num_beams": 1}
    """Explicit ``generate`` settings; the checkpoint's generation_config supplies every other one."""
    generation_source = "project: greedy decoding"

    def use_overrides(self, overrides: Overrides) -> None:
        """The running suite's prompt/preprocess/parser overrides for this model."""
        self.overrides = overrides

    def __init__(self, options: ModelOptions) -> None:
        self.options = options
        self.path = resolve_model_path(options.path or self.default_hub_id)
        self.device = resolve_device(options.device, options.worker_id)
        self.dtype = resolve_dtype(options.dtype, self.device, self.default_dtype)
        self.processor, self.config = self.load_processor(), self.load_config()
        self._model: Any = None
        self._model_lock = threading.Lock()
        self._load_error: ModelLoadError | None = None
        self.weights_load_s: float | None = None
        self.family = self.choose_family()
        self.generation = self.generation_settings(options.max_new_tokens)
        self._fingerprint: dict[str, Any] | None = None
        self._prepare_lock = threading.Lock()
        self._prep_copy: Any = None

    def generation_settings(self, max_new_tokens: int | None) -> dict[str, Any]:
        """What ``generate`` is given: the class's explicit settings and the family's official
        answer length (the family's ``generation``) unless ``--uiground-max-new-tokens`` is set."""
        limit = max_new_tokens if max_new_tokens is not None else families.get(self.family).generation.max_new_tokens
        settings = dict(self.generation_defaults)
        if limit is not None:
            settings["max_new_tokens"] = limit
        return settings

    def sources(self) -> dict[str, str]:
        """Where each applied setting comes from (recorded in the fingerprint)."""
        given = self.options
        return {
            "dtype": "--uiground-dtype" if given.dtype is not None else (
                self.dtype_source if self.device.startswith("cuda") else "not on a GPU: float32"),
            "max_new_tokens": "--uiground-max-new-tokens" if given.max_new_tokens is not None
            else families.get(self.family).generation.source,
            "generation": self.generation_source,
        }

    # -- loading -------------------------------------------------------------
    # The processor and the config are read when the adapter is built (a wrong --model-path
    # fails at start-up, and the fingerprint needs them); the weights on the first
    # ``generate``. A rerun answered wholly from the prediction cache never loads them: for
    # a 7B checkpoint that is most of such a rerun's time.

    @property
    def model(self) -> Any:
        """The model with its weights on this worker's device, loaded on first use (once;
        a load that failed fails every later use with the same error, without retrying)."""
        if self._model is None:
            with self._model_lock:
                if self._load_error is not None:
                    raise self._load_error
                if self._model is None:
                    t0 = time.perf_counter()
                    try:
                        model = self.load_model()
                    except ModelLoadError as exc:
                        self._load_error = exc
                        raise
                    except Exception as exc:  # a corrupt weights file, out of memory: not retried per sample
                        self._load_error = self._failed_load(exc)
                        raise self._load_error from exc
                    model.to(self.device).eval()
                    self.weights_load_s = time.perf_counter() - t0
                    self._model = model
        return self._model

    def deferred_load_s(self) -> float | None:
        return self.weights_load_s

    def warm_up(self) -> None:
        """Load the weights while the harness prepares the first batch (a 7B checkpoint takes
        longer to load than a batch takes to prepare, so that preparation costs nothing)."""
        try:
            self.model  # noqa: B018 - the property loads the weights
        except ModelLoadError:
            pass  # kept: generate raises it again, on each sample

    def _failed_load(self, exc: Exception) -> ModelLoadError:
        return ModelLoadError(
            f"{self.name}: could not load {self.path!r} ({exc}). Pass --model-path with a hub id or a local "
            "directory; with HF_HUB_OFFLINE=1 a hub id must already be in the local Hugging Face cache")

    def _kwargs(self) -> dict[str, Any]:
        return pretrained_kwargs(self.options, self.path, remote_code=self.trust_remote_code)

    def load_processor(self) -> Any:
        from transformers import AutoProcessor

        try:
            processor = AutoProcessor.from_pretrained(self.path, **self._kwargs())  # type: ignore[no-untyped-call]
        except (OSError, ValueError) as exc:
            raise self._failed_load(exc) from exc
        tokenizer = getattr(processor, "tokenizer", None)
        if tokenizer is not None:
            tokenizer.padding_side = "left"  # right padding changes greedy outputs of a batch
        return processor

    def load_config(self) -> Any:
        """The checkpoint's config, read apart from the weights (never the loaded model's
        own, which loading adjusts): the fingerprint is the same before and after loading."""
        from transformers import AutoConfig

        try:
            return AutoConfig.from_pretrained(self.path, **self._kwargs())
        except (OSError, ValueError) as exc:
            raise self._failed_load(exc) from exc

    def load_model(self) -> Any:
        """The weights (placed on the device by :attr:`model`)."""
        import torch
        from transformers import AutoModelForImageTextToText

        try:
            return AutoModelForImageTextToText.from_pretrained(self.path, dtype=getattr(torch, self.dtype),
                                                               **self._kwargs())
        except (OSError, ValueError) as exc:
            raise self._failed_load(exc) from exc

    def checkpoint_generation_config(self) -> Any:
        """What ``generate`` merges in from the checkpoint, read without the weights the way
        ``from_pretrained`` reads it: generation_config.json, else derived from the config."""
        from transformers import GenerationConfig

        try:
            # the revision only: GenerationConfig keeps any other keyword as a setting of its own
            return GenerationConfig.from_pretrained(self.path, revision=self.options.revision or "main")
        except OSError:
            return GenerationConfig.from_model_config(self.config)

    def choose_family(self) -> str:
        return self.family

    # -- hooks families override --------------------------------------------
    def prompt(self, sample: Sample) -> str:
        return self.overrides.prompt(sample, self.family)

    def framing(self, sample: Sample, overrides: Overrides | None = None) -> tuple[str | None, bool]:
        """The family's system text and image placement (:meth:`Overrides.framing`)."""
        return (overrides or self.overrides).framing(sample, self.family)

    def client_resize(self, image: Any) -> Any:
        """The family's own resize before the processor, where its official code resizes first
        (GTA1, Holo1.5, MAI-UI, GUI-Owl-1.5); the image as it is otherwise."""
        family = families.get(self.family)
        if not family.client_resize or family.resize is None:
            return image
        size = family.resize.apply(image.size)
        if size == image.size:
            return image
        from PIL import Image

        lanczos = family.resize.resample == "lanczos"
        return image.resize(size, resample=Image.Resampling.LANCZOS if lanczos else Image.Resampling.BICUBIC)

    def encode(self, texts: Sequence[str], images: Sequence[Any], processor: Any = None,
               framing: Sequence[tuple[str | None, bool]] | None = None) -> Any:
        processor = processor or self.processor
        chats = []
        for i, t in enumerate(texts):
            system, image_first = framing[i] if framing is not None else (None, True)
            if system is not None:  # GTA1 states the size of the image it is shown
                w, h = images[i].size
                system = system.replace("{width}", str(w)).replace("{height}", str(h))
            parts = [{"type": "image"}, {"type": "text", "text": t}]
            parts = parts if image_first else parts[::-1]
            if (lead := split_at_image(t)) is not None:  # text, image, text (a prompt with a lead)
                parts = [{"type": "text", "text": lead[0]}, {"type": "image"}, {"type": "text", "text": lead[1]}]
            messages = [{"role": "user", "content": parts}]
            if system is not None:
                messages.insert(0, {"role": "system", "content": system})
            chats.append(processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
        return processor(text=chats, images=list(images), padding=True, return_tensors="pt")

    def input_sizes(self, inputs: Any, images: Sequence[Any]) -> list[tuple[int, int] | None]:
        """The (width, height) each image had when the model saw it, where parsing needs it."""
        grid = inputs.get("image_grid_thw") if hasattr(inputs, "get") else None
        if grid is None:
            return [None] * len(images)
        patch = int(getattr(self.processor.image_processor, "patch_size", 14))
        return [(int(w) * patch, int(h) * patch) for _, h, w in grid.tolist()]

    def new_tokens(self, output: Any, inputs: Any) -> Any:
        return output[:, inputs["input_ids"].shape[1]:]

    def decode(self, tokens: Any) -> list[str]:
        return [t.strip() for t in self.processor.batch_decode(tokens, skip_special_tokens=True)]

    # -- the Model protocol ----------------------------------------------------
    prepares = True

    def prepare(self, samples: Sequence[Sample]) -> PreparedBatch:
        """The CPU half of :meth:`predict`: decode, preprocess, prompt, processor (resize,
        patches, chat template, tokenizer). Runs in the harness's background thread while
        the previous batch generates, so it uses its own processor copy (a tokenizer is
        not safe to use from two threads at once) and holds a lock (the harness may call
        :meth:`predict` on its own thread too)."""
        overrides = self.overrides  # the suite's, fixed for this batch
        with self._prepare_lock:
            decoded: dict[Any, Any] = {}  # several instructions on one screen: decoded (and preprocessed) once
            for s in samples:
                if s.image not in decoded:
                    decoded[s.image] = self.client_resize(overrides.image(s.image.load()))
            images = [decoded[s.image] for s in samples]
            texts = [self.prompt(s) for s in samples]
            framing = [self.framing(s, overrides) for s in samples]
            t0 = time.perf_counter()
            inputs = self.encode(texts, images, processor=self._prep_processor(), framing=framing)
            sizes = self.input_sizes(inputs, images)
        return PreparedBatch(list(samples), inputs, [img.size for img in images], sizes, overrides,
                             (time.perf_counter() - t0) * 1000)

    def generate(self, prepared: PreparedBatch) -> list[Prediction]:
        """The device half of :meth:`predict`: copy to the device, ``generate``, decode, parse."""
        import torch

        t0 = time.perf_counter()
        inputs = prepared.inputs.to(self.device)
        if "pixel_values" in inputs and inputs["pixel_values"].is_floating_point():
            inputs["pixel_values"] = inputs["pixel_values"].to(getattr(torch, self.dtype))
        pad = self.processor.tokenizer.pad_token_id
        with torch.inference_mode(), warnings.catch_warnings():
            if "max_new_tokens" not in self.generation:  # the official call leaves the limit to the checkpoint
                warnings.filterwarnings("ignore", message="Using the model-agnostic default `max_length`")
            output = self.model.generate(**inputs, **self.generation, pad_token_id=pad)
        new = self.new_tokens(output, inputs)
        outputs = self.decode(new)
        truncated = self.truncated(new)
        self.last_generate_ms = prepared.processor_ms + (time.perf_counter() - t0) * 1000
        return [self.to_prediction(s, size, text, input_size, cut, prepared.overrides)
                for s, size, text, input_size, cut in zip(prepared.samples, prepared.image_sizes, outputs,
                                                          prepared.input_sizes, truncated, strict=True)]

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        return self.generate(self.prepare(samples))

    def _prep_processor(self) -> Any:
        if self._prep_copy is None:
            self._prep_copy = copy.deepcopy(self.processor)
        return self._prep_copy

    def token_limit(self) -> int | None:
        """How many new tokens ``generate`` may produce (given, else the checkpoint's setting)."""
        limit = self.generation.get("max_new_tokens", self.model.generation_config.max_new_tokens)
        return int(limit) if limit is not None else None

    def truncated(self, new: Any) -> list[bool]:
        """Rows that used every allowed token without emitting an end-of-sequence token."""
        limit = self.token_limit()
        eos = self.model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        pad = self.processor.tokenizer.pad_token_id
        out = []
        for row in new.tolist():
            real = [t for t in row if t != pad]
            # without a known limit (the checkpoint's max_length, counted differently across
            # transformers versions) a row that never ended was cut off
            out.append((limit is None or len(real) >= limit) and not (eos_ids & set(real)))
        return out

    def to_prediction(self, sample: Sample, image: Any, text: str, size: tuple[int, int] | None,
                      truncated: bool, overrides: Overrides | None = None) -> Prediction:
        """``image``: the image the model saw, or its (width, height)."""
        image_size = image if isinstance(image, tuple) else image.size
        ctx = families.ParseContext(image_size=image_size, model_input_size=size)
        parsed = (overrides or self.overrides).parse(self.family, text, sample.task, ctx)
        raw = text
        if parsed.format_error and truncated:
            limit = self.token_limit()
            where = f"--uiground-max-new-tokens {limit}" if limit is not None else "the checkpoint's max_length"
            raw = f"{text} [cut off at {where} without an answer]"
        return to_prediction(parsed, raw)

    def cache_key(self, sample: Sample) -> dict[str, Any]:
        key: dict[str, Any] = {"sample": sample.id, "image": sample.image.key, "task": sample.task,
               "prompt": self.prompt(sample), "generation": self.generation}
        system, image_first = self.framing(sample)
        if system is not None or not image_first:  # only where there is one: older cache keys stay valid
            key["system"], key["image_first"] = system, image_first
        return key

    def fingerprint(self) -> dict[str, Any]:
        if self._fingerprint is None:
            self._fingerprint = self._make_fingerprint()
        return self._fingerprint

    def _make_fingerprint(self) -> dict[str, Any]:
        import transformers

        config = self.config
        image_processor = getattr(self.processor, "image_processor", None)
        ip = image_processor.to_dict() if image_processor is not None else {}
        return {
            "model": self.name,
            "family": self.family,
            "path": self.path,
            "revision": getattr(config, "_commit_hash", None),
            **({"requested_revision": self.options.revision} if self.options.revision else {}),
            "config_sha256": sha(config.to_dict()),
            "weights": self._weight_files(),
            "processor": {"sha256": sha(ip), **{k: ip[k] for k in ("min_pixels", "max_pixels", "size") if k in ip}},
            "dtype": self.dtype,
            "device_type": self.device.split(":")[0],
            "transformers": transformers.__version__,
            "generation": self.generation,
            # what generate merges in from the checkpoint (repetition penalty, beams, ...)
            "generation_config": {k: v for k, v in self.checkpoint_generation_config().to_diff_dict().items()
                                  if k != "transformers_version"},
            "sources": self.sources(),
        }

    def _weight_files(self) -> list[list[Any]]:
        root = Path(self.path)
        if not root.is_dir():
            try:
                from huggingface_hub import snapshot_download

                root = Path(snapshot_download(self.path, local_files_only=True))
            except Exception:  # the fingerprint is best effort for hub ids
                return []
        return sorted([p.name, p.stat().st_size] for p in root.iterdir() if p.suffix in WEIGHT_SUFFIXES)

    def close(self) -> None:
        self._model = None
        self._prep_copy = None
