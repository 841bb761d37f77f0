"""``--uiground-judge hf``: a local transformers chat model as the judge.

For teams without a judge server: any causal LM with a chat template (e.g.
``Qwen/Qwen2.5-7B-Instruct``), given by ``--uiground-judge-model`` (hub id or local folder),
loaded on this worker's device (``--uiground-device``), decoded greedily (the transformers
equivalent of temperature 0; the seed is set anyway) up to ``--uiground-judge-max-tokens``.
Requests are served one at a time (a lock): the judging thread pool overlaps requests
for a server, not for one local model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_uiground import extras
from pytest_uiground.judges.base import JudgeOptions
from pytest_uiground.models.base import ModelLoadError
from pytest_uiground.models.hf.device import resolve_device
from pytest_uiground.models.hf.loading import resolve_dtype, resolve_model_path
from pytest_uiground.record.files import hex_digest


class HFChatJudge:
    name = "hf"

    def __init__(self, options: JudgeOptions, device: str) -> None:
        if not options.model:
            raise ModelLoadError("--uiground-judge hf needs --uiground-judge-model: a hub id or a local folder "
                                 "of a chat model, "
                                 "e.g. --uiground-judge-model Qwen/Qwen2.5-7B-Instruct")
        missing = extras.missing("hf", ("torch", "transformers"))
        if missing:
            raise ModelLoadError(f"--uiground-judge hf {missing}")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.options, self.device = options, device
        self.path = resolve_model_path(options.model)
        self.dtype = resolve_dtype("auto", device)
        try:
            self.tokenizer: Any = AutoTokenizer.from_pretrained(self.path)
            self.model: Any = AutoModelForCausalLM.from_pretrained(self.path, dtype=getattr(torch, self.dtype))
        except OSError as exc:
            raise ModelLoadError(f"--uiground-judge-model {options.model!r} could not be loaded: {exc}") from exc
        if not getattr(self.tokenizer, "chat_template", None):
            raise ModelLoadError(f"--uiground-judge-model {options.model!r} has no chat template: use an "
                                 "instruction-tuned "
                                 "(chat) model")
        self.model.to(device).eval()  # type: ignore[arg-type]
        self._lock = threading.Lock()
        self._torch = torch

    def chat(self, messages: Sequence[Mapping[str, str]], request_id: str) -> str:
        torch = self._torch
        text = self.tokenizer.apply_chat_template([dict(m) for m in messages], add_generation_prompt=True,
                                                  tokenize=False)
        inputs = self.tokenizer(text, return_tensors="pt").to(self.device)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        with self._lock, torch.inference_mode():
            torch.manual_seed(self.options.seed)
            out = self.model.generate(**inputs, do_sample=False, max_new_tokens=self.options.max_tokens,
                                      pad_token_id=pad)
        new = out[0, inputs["input_ids"].shape[1]:]
        return str(self.tokenizer.decode(new, skip_special_tokens=True))

    def fingerprint(self) -> dict[str, Any]:
        config = json.dumps(self.model.config.to_dict(), sort_keys=True, default=str)
        return {"judge": self.name, "model": self.options.model,
                "config_sha256": hex_digest(config, short=True), "dtype": self.dtype}


def create(options: JudgeOptions) -> HFChatJudge:
    return HFChatJudge(options, resolve_device(options.device, options.worker_id))
