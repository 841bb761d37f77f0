"""TinyClick (Florence-2): ``<loc_N>`` bins, its own lower-cased command prompt.

Florence-2 is an encoder-decoder: ``generate`` returns only decoder tokens, the
location tokens are special tokens that must survive decoding, and batches are padded
on the right (BART's learned positions count pad tokens). Its boxes are
relative to the original image (the 768×768 resize is undone by the bins), so no
input size is needed for parsing.

The published TinyClick checkpoint ships Florence-2 *remote code* (its config has an
``auto_map``); transformers 5's native Florence-2 rejects such configs. When a
config has an ``auto_map`` this adapter loads it with ``trust_remote_code`` through
``AutoModelForCausalLM`` as TinyClick's card does, which works on the transformers
releases that remote code supports (4.x); native checkpoints load natively.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from pytest_uiground.models.base import ModelLoadError, ModelOptions
from pytest_uiground.models.hf.loading import pretrained_kwargs
from pytest_uiground.models.hf.vision import HFVisionModel

#: the extra these models need, and the modules it brings (checked at start-up: options.missing_extra)
EXTRA = ("hf", ("torch", "transformers"))


class TinyClick(HFVisionModel):
    """TinyClick as SamsungLabs/TinyClick ``main.py`` runs it.

    float32 (``from_pretrained`` without a dtype) and ``model.generate(**inputs)`` with no
    settings, so the checkpoint's generation_config (beam search) decides everything;
    only ``--uiground-max-new-tokens``, when given, is passed. The decoder output is
    decoded with its special tokens (``batch_decode(..., skip_special_tokens=False)``) and
    read by TinyClick's ``postprocess`` rule (:mod:`pytest_uiground.models.families.tinyclick`).
    """

    name = "tinyclick"
    family = "tinyclick"
    default_hub_id = "Samsung/TinyClick"
    default_dtype = "float32"
    dtype_source = "SamsungLabs/TinyClick main.py: from_pretrained without torch_dtype (float32)"
    generation_defaults: ClassVar[dict[str, Any]] = {}
    generation_source = "SamsungLabs/TinyClick main.py: model.generate(**inputs), the checkpoint's generation_config"

    def _remote(self) -> bool:
        """A checkpoint in Florence-2's remote-code format (``auto_map``), as TinyClick ships."""
        config = Path(self.path) / "config.json"
        return config.is_file() and "auto_map" in json.loads(config.read_text())

    def _remote_kwargs(self) -> dict[str, Any]:
        return pretrained_kwargs(self.options, self.path, remote_code=True)

    def _remote_failed(self, exc: Exception) -> ModelLoadError:
        return ModelLoadError(
            f"tinyclick: {self.path!r} uses Florence-2 remote code, which failed to load here ({exc}). "
            "It runs on transformers 4.x with trust_remote_code; on transformers 5 use a checkpoint "
            "converted to the native Florence-2 format")

    def load_processor(self) -> Any:
        if self._remote():
            from transformers import AutoProcessor

            try:
                processor = AutoProcessor.from_pretrained(self.path, **self._remote_kwargs())  # type: ignore[no-untyped-call]
            except ModelLoadError:
                raise
            except Exception as exc:
                raise self._remote_failed(exc) from exc
        else:
            processor = super().load_processor()
        # BART's learned positions count pad tokens: left padding changes the outputs of
        # the shorter prompts in a batch, right padding keeps them equal to batch-1.
        processor.tokenizer.padding_side = "right"
        return processor

    def load_config(self) -> Any:
        if not self._remote():
            return super().load_config()
        from transformers import AutoConfig

        try:
            return AutoConfig.from_pretrained(self.path, **self._remote_kwargs())
        except ModelLoadError:
            raise
        except Exception as exc:
            raise self._remote_failed(exc) from exc

    def load_model(self) -> Any:
        if not self._remote():
            return super().load_model()
        import torch
        from transformers import AutoModelForCausalLM

        try:
            return AutoModelForCausalLM.from_pretrained(self.path, dtype=getattr(torch, self.dtype),
                                                        **self._remote_kwargs())
        except ModelLoadError:
            raise
        except Exception as exc:
            raise self._remote_failed(exc) from exc

    def encode(self, texts: Sequence[str], images: Sequence[Any], processor: Any = None,
               framing: Any = None) -> Any:  # TinyClick has no system text and one placement
        return (processor or self.processor)(text=list(texts), images=list(images), padding=True,
                                             return_tensors="pt")

    def input_sizes(self, inputs: Any, images: Sequence[Any]) -> list[tuple[int, int] | None]:
        return [None] * len(images)

    def new_tokens(self, output: Any, inputs: Any) -> Any:
        # encoder-decoder: the output is the decoder sequence, which starts with the
        # decoder start token (</s>, also the end token, so it must not be counted)
        return output[:, 1:]

    def decode(self, tokens: Any) -> list[str]:
        """The new tokens as TinyClick decodes them (special tokens kept: ``<s>``, ``<loc_N>``,
        ``</s>``); only the ``<pad>`` that batching adds after a shorter row is removed."""
        texts = self.processor.batch_decode(tokens, skip_special_tokens=False)
        return [t.replace("<pad>", "") for t in texts]


def create_tinyclick(options: ModelOptions) -> TinyClick:
    return TinyClick(options)
