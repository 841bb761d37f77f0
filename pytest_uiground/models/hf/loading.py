"""Where a Hugging Face model comes from and how it is loaded: path, dtype, remote code.

Shared by the vision adapters (:mod:`.vision`), Molmo/ELAM (:mod:`.molmo`) and the ``hf``
judge, which load differently but must agree on what ``--model-path``, ``--uiground-dtype``,
``--uiground-model-revision`` and ``--uiground-trust-remote-code`` mean. Kept apart from
:mod:`.vision` so that the judge need not import the adapter machinery.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pytest_uiground.models.base import ModelLoadError, ModelOptions

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


def resolve_dtype(spec: str | None, device: str, default: str = "auto") -> str:
    """The dtype to load the weights in.

    ``spec`` is ``--uiground-dtype`` (``None`` when not given): ``auto`` is bfloat16 on a GPU
    and float32 on the CPU (bf16 matmuls are slow there). Not given, the model's official
    ``default`` applies on a GPU, where the official code ran; elsewhere float32.
    """
    if spec is None:
        if not device.startswith("cuda"):
            return "float32"
        spec = default
    if spec != "auto":
        return spec
    return "bfloat16" if device.startswith("cuda") else "float32"


def sha(data: Any) -> str:
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
