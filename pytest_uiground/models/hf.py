"""Shared machinery for Hugging Face vision-language adapters.

One class does what every native ``transformers`` family needs: resolve
``--model-path`` (a hub id or a local directory, honouring ``HF_HUB_OFFLINE`` and the
local cache), place the model on this worker's device with the right dtype, build a
left-padded batch, generate greedily, decode only the new tokens, notice generations
cut off by ``--uiground-max-new-tokens``, and parse each output with the family's parser
using the input size the processor really used. Families override only the hooks
that differ (prompt wrapping, input sizes, decoding).

torch and transformers are imported inside methods: importing this module is cheap.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_uiground.prediction import Prediction
from pytest_uiground.sample import Sample

from . import parsers, prompts
from .base import ModelAdapter, ModelLoadError, ModelOptions
from .device import resolve_device
from .overrides import NONE, Overrides

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")


def resolve_model_path(spec: str) -> str:
    """A local model directory, or a hub id left for transformers to resolve.

    Anything that exists on disk, or looks like a path (``/``, ``.``, ``~``), must be
    a directory with a ``config.json``; otherwise the spec is a hub id.
    """
    path = Path(spec).expanduser()
    if path.exists() or spec.startswith(("/", ".", "~")):
        if not path.is_dir():
            raise ModelLoadError(f"--model-path {spec!r} does not exist (or is not a directory)")
        if not (path / "config.json").is_file():
            raise ModelLoadError(
                f"--model-path {spec!r} is not a model directory: it has no config.json "
                "(point it at the folder that holds config.json and the weights)"
            )
        return str(path.resolve())
    return spec


def resolve_dtype(spec: str, device: str) -> str:
    """``auto`` is bfloat16 on a GPU and float32 on the CPU (bf16 matmuls are slow there)."""
    if spec != "auto":
        return spec
    return "bfloat16" if device.startswith("cuda") else "float32"


def _sha(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def pretrained_kwargs(options: ModelOptions, path: str, *, remote_code: bool) -> dict[str, Any]:
    """``from_pretrained`` arguments: the pinned ``--uiground-model-revision`` and whether remote
    code may run. A hub model's remote code is code from the network run in this process:
    it needs a pinned revision (so what runs is what was reviewed) or the explicit
    ``--uiground-trust-remote-code``. A local folder's code is the user's own files."""
    if remote_code and not options.revision and not options.trust_remote_code and not Path(path).is_dir():
        raise ModelLoadError(
            f"{path!r} runs remote code from the hub (trust_remote_code): pin it with --uiground-model-revision "
            "COMMIT so the code that runs is the code you reviewed, or pass --uiground-trust-remote-code to "
            "accept whatever the hub serves today")
    out: dict[str, Any] = {"trust_remote_code": remote_code}
    if options.revision:
        out["revision"] = options.revision
    return out


class HFVisionModel(ModelAdapter):
    """A native transformers image-text-to-text model behind the Model protocol."""

    name = "hf"
    family = "qwen-vl"
    default_hub_id = ""
    trust_remote_code = False
    overrides: Overrides = NONE

    def use_overrides(self, overrides: Overrides) -> None:
        """The running suite's prompt/preprocess/parser overrides for this model."""
        self.overrides = overrides

    def __init__(self, options: ModelOptions) -> None:
        self.options = options
        self.path = resolve_model_path(options.path or self.default_hub_id)
        self.device = resolve_device(options.device, options.worker_id)
        self.dtype = resolve_dtype(options.dtype, self.device)
        self.generation: dict[str, Any] = {
            "max_new_tokens": options.max_new_tokens, "do_sample": False, "num_beams": 1,
        }
        self.processor, self.model = self.load()
        self.family = self.choose_family()
        self._fingerprint: dict[str, Any] | None = None

    # -- loading -------------------------------------------------------------
    def load(self) -> tuple[Any, Any]:
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        try:
            kwargs = pretrained_kwargs(self.options, self.path, remote_code=self.trust_remote_code)
            processor = AutoProcessor.from_pretrained(self.path, **kwargs)  # type: ignore[no-untyped-call]
            model = AutoModelForImageTextToText.from_pretrained(self.path, dtype=getattr(torch, self.dtype), **kwargs)
        except (OSError, ValueError) as exc:
            raise ModelLoadError(
                f"{self.name}: could not load {self.path!r} ({exc}). Pass --model-path with a hub id or a local "
                "directory; with HF_HUB_OFFLINE=1 a hub id must already be in the local Hugging Face cache"
            ) from exc
        tokenizer = getattr(processor, "tokenizer", None)
        if tokenizer is not None:
            tokenizer.padding_side = "left"  # right padding changes greedy outputs of a batch
        model.to(self.device).eval()  # type: ignore[arg-type]
        return processor, model

    def choose_family(self) -> str:
        return self.family

    # -- hooks families override --------------------------------------------
    def prompt(self, sample: Sample) -> str:
        return self.overrides.prompt(sample, lambda s: prompts.prompt_for(self.family, s))

    def encode(self, texts: Sequence[str], images: Sequence[Any]) -> Any:
        chats = [
            self.processor.apply_chat_template(
                [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": t}]}],
                tokenize=False, add_generation_prompt=True,
            )
            for t in texts
        ]
        return self.processor(text=chats, images=list(images), padding=True, return_tensors="pt")

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
    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        import torch

        images = [self.overrides.image(s.image.load()) for s in samples]
        texts = [self.prompt(s) for s in samples]
        t0 = time.perf_counter()
        inputs = self.encode(texts, images).to(self.device)
        if "pixel_values" in inputs and inputs["pixel_values"].is_floating_point():
            inputs["pixel_values"] = inputs["pixel_values"].to(getattr(torch, self.dtype))
        pad = self.processor.tokenizer.pad_token_id
        with torch.inference_mode():
            output = self.model.generate(**inputs, **self.generation, pad_token_id=pad)
        new = self.new_tokens(output, inputs)
        outputs = self.decode(new)
        sizes = self.input_sizes(inputs, images)
        truncated = self.truncated(new)
        self.last_generate_ms = (time.perf_counter() - t0) * 1000
        return [self.to_prediction(s, img, text, size, cut)
                for s, img, text, size, cut in zip(samples, images, outputs, sizes, truncated, strict=True)]

    def truncated(self, new: Any) -> list[bool]:
        """Rows that used every allowed token without emitting an end-of-sequence token."""
        eos = self.model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        pad = self.processor.tokenizer.pad_token_id
        out = []
        for row in new.tolist():
            real = [t for t in row if t != pad]
            out.append(len(real) >= self.generation["max_new_tokens"] and not (eos_ids & set(real)))
        return out

    def to_prediction(self, sample: Sample, image: Any, text: str, size: tuple[int, int] | None,
                      truncated: bool) -> Prediction:
        ctx = parsers.ParseContext(image_size=image.size, model_input_size=size)
        parsed = self.overrides.parse(self.family, text, sample.task, ctx)
        raw = text
        if parsed.format_error and truncated:
            raw = f"{text} [cut off at --uiground-max-new-tokens {self.generation['max_new_tokens']} without an answer]"
        return parsers.to_prediction(parsed, raw)

    def cache_key(self, sample: Sample) -> dict[str, Any]:
        return {"sample": sample.id, "image": sample.image.key, "task": sample.task,
                "prompt": self.prompt(sample), "generation": self.generation}

    def fingerprint(self) -> dict[str, Any]:
        if self._fingerprint is None:
            self._fingerprint = self._make_fingerprint()
        return self._fingerprint

    def _make_fingerprint(self) -> dict[str, Any]:
        import transformers

        config = self.model.config
        image_processor = getattr(self.processor, "image_processor", None)
        ip = image_processor.to_dict() if image_processor is not None else {}
        return {
            "model": self.name,
            "family": self.family,
            "path": self.path,
            "revision": getattr(config, "_commit_hash", None),
            **({"requested_revision": self.options.revision} if self.options.revision else {}),
            "config_sha256": _sha(config.to_dict()),
            "weights": self._weight_files(),
            "processor": {"sha256": _sha(ip), **{k: ip[k] for k in ("min_pixels", "max_pixels", "size") if k in ip}},
            "dtype": self.dtype,
            "device_type": self.device.split(":")[0],
            "transformers": transformers.__version__,
            "generation": self.generation,
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
        self.model = None
