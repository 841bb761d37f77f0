"""pytest_uiground.models.hf.vision: the shared Hugging Face adapter base (HFVisionModel).

Most tests drive the base class with its loading hooks stubbed (no transformers needed):
generation settings and their sources, the lazy, load-once weights, cut-off detection and
parsing with the processor's input size. The last test runs the real hooks on a tiny offline
Qwen2-VL checkpoint built by ``tests/tinymodels.py`` (the session's ``tiny_models``) (skipped without the [hf] extra).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_uiground.models import families
from pytest_uiground.models.base import ModelLoadError, ModelOptions
from pytest_uiground.models.hf.vision import HFVisionModel
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target

PAD, EOS = 0, 2


class Rows:
    """A 2-D token batch, as far as HFVisionModel.truncated reads it."""

    def __init__(self, rows: list[list[int]]) -> None:
        self.rows = rows

    def tolist(self) -> list[list[int]]:
        return self.rows


class FakeWeights:
    def __init__(self, limit: int | None) -> None:
        self.generation_config = SimpleNamespace(max_new_tokens=limit, eos_token_id=[EOS, None])
        self.placed: list[str] = []

    def to(self, device: str) -> FakeWeights:
        self.placed.append(device)
        return self

    def eval(self) -> FakeWeights:
        return self


class Stubbed(HFVisionModel):
    """The base class with the processor, config and weights stubbed out."""

    name = "stubbed"

    def __init__(self, options: ModelOptions, weights: Any = None, family: str = "qwen-vl") -> None:
        self.family = family
        self.loads = 0
        self.weights = weights
        super().__init__(options)

    def load_processor(self) -> Any:
        return SimpleNamespace(tokenizer=SimpleNamespace(pad_token_id=PAD),
                               image_processor=SimpleNamespace(patch_size=14))

    def load_config(self) -> Any:
        return SimpleNamespace()

    def load_model(self) -> Any:
        self.loads += 1
        if isinstance(self.weights, Exception):
            raise self.weights
        return self.weights


def _opts(**kw: Any) -> ModelOptions:
    return ModelOptions(name="stubbed", path="org/some-model", **kw)


def _sample(task: str = "point") -> Sample:
    return Sample("s1", ImageRef.from_source("screen-1", lambda: b""), "Click Save", task,  # type: ignore[arg-type]
                  Target(box=Box(0.4, 0.2, 0.6, 0.3)))


def test_generation_uses_the_family_limit_unless_one_is_given() -> None:
    adapter = Stubbed(_opts())
    assert adapter.path == "org/some-model"  # a hub id is left for transformers to resolve
    assert adapter.dtype == "float32"  # official dtypes apply on a GPU only
    limit = families.get("qwen-vl").generation
    assert adapter.generation == {"do_sample": False, "num_beams": 1, "max_new_tokens": limit.max_new_tokens}
    assert adapter.sources() == {"dtype": "not on a GPU: float32", "max_new_tokens": limit.source,
                                 "generation": adapter.generation_source}
    given = Stubbed(_opts(max_new_tokens=7, dtype="bfloat16"))
    assert given.generation["max_new_tokens"] == 7 and given.dtype == "bfloat16"
    assert given.sources()["max_new_tokens"] == "--uiground-max-new-tokens"
    assert given.sources()["dtype"] == "--uiground-dtype"
    # a family whose official code sets no limit leaves it to the checkpoint
    assert "max_new_tokens" not in Stubbed(_opts(), family="tinyclick").generation


def test_weights_load_on_first_use_once_and_on_this_device() -> None:
    weights = FakeWeights(limit=None)
    adapter = Stubbed(_opts(), weights=weights)
    assert adapter.loads == 0 and adapter.deferred_load_s() is None  # building the adapter loads no weights
    assert adapter.model is weights and adapter.model is weights
    assert adapter.loads == 1 and weights.placed == ["cpu"]
    assert adapter.deferred_load_s() is not None and adapter.deferred_load_s() >= 0


def test_a_failed_load_fails_every_later_use_without_loading_again() -> None:
    adapter = Stubbed(_opts(), weights=RuntimeError("CUDA out of memory"))
    adapter.warm_up()  # must not raise: the error is kept for generate
    with pytest.raises(ModelLoadError) as first:
        adapter.model  # noqa: B018
    message = str(first.value)
    assert "CUDA out of memory" in message and "'org/some-model'" in message and "--model-path" in message
    with pytest.raises(ModelLoadError) as again:
        adapter.model  # noqa: B018
    assert again.value is first.value and adapter.loads == 1


def test_truncated_rows_used_every_token_without_an_end() -> None:
    adapter = Stubbed(_opts(max_new_tokens=3), weights=FakeWeights(limit=None))
    rows = Rows([[5, 6, 7], [5, EOS, PAD], [PAD, 5, 6], [5, 6, EOS]])
    assert adapter.truncated(rows) == [True, False, False, False]
    # no limit anywhere (the checkpoint's max_length): a row that never ended was cut off
    unlimited = Stubbed(_opts(), weights=FakeWeights(limit=None), family="tinyclick")
    assert unlimited.token_limit() is None
    assert unlimited.truncated(Rows([[PAD, 5], [5, EOS]])) == [True, False]
    assert Stubbed(_opts(), weights=FakeWeights(limit=9), family="tinyclick").token_limit() == 9


def test_outputs_are_parsed_with_the_size_the_model_saw() -> None:
    adapter = Stubbed(_opts(max_new_tokens=3), weights=FakeWeights(limit=None))
    pred = adapter.to_prediction(_sample(), (400, 200), '{"point_2d": [100, 25]}', (200, 100), truncated=False)
    assert pred.point == Point(0.5, 0.25) and not pred.format_error
    assert pred.raw == '{"point_2d": [100, 25]}'


def test_a_cut_off_unreadable_output_says_so_in_its_raw_text() -> None:
    adapter = Stubbed(_opts(max_new_tokens=3), weights=FakeWeights(limit=None))
    cut = adapter.to_prediction(_sample(), (400, 200), "Let me think", (200, 100), truncated=True)
    assert cut.format_error and cut.raw == "Let me think [cut off at --uiground-max-new-tokens 3 without an answer]"
    whole = adapter.to_prediction(_sample(), (400, 200), "Let me think", (200, 100), truncated=False)
    assert whole.format_error and whole.raw == "Let me think"
    unlimited = Stubbed(_opts(), weights=FakeWeights(limit=None), family="tinyclick")
    assert "the checkpoint's max_length" in unlimited.to_prediction(
        _sample(), (400, 200), "nothing", None, truncated=True).raw


def test_input_sizes_come_from_the_image_grid() -> None:
    adapter = Stubbed(_opts())
    grid = Rows([[1, 6, 10], [1, 4, 4]])  # (t, h, w) in patches
    assert adapter.input_sizes({"image_grid_thw": grid}, [None, None]) == [(140, 84), (56, 56)]
    assert adapter.input_sizes({}, [None, None, None]) == [None, None, None]


def test_the_cache_key_holds_what_decides_the_output() -> None:
    adapter = Stubbed(_opts())
    key = adapter.cache_key(_sample())
    assert key["sample"] == "s1" and key["image"] == "screen-1" and key["task"] == "point"
    assert key["prompt"] == adapter.prompt(_sample()) and "Click Save" in key["prompt"]
    assert key["generation"] == adapter.generation
    assert Stubbed(_opts(max_new_tokens=5)).cache_key(_sample()) != key


# -- the real hooks on a tiny checkpoint -------------------------------------------------------------------


@pytest.mark.slow
def test_the_real_hooks_on_a_tiny_checkpoint(tiny_models: dict[str, Path]) -> None:
    """``tiny_models`` (tests/conftest.py) builds the checkpoints once per session and skips without [hf]."""
    from PIL import Image

    tiny_qwen = tiny_models["qwen2_vl"]

    adapter = HFVisionModel(ModelOptions(name="hf", path=str(tiny_qwen), max_new_tokens=4))
    assert adapter.processor.tokenizer.padding_side == "left"  # right padding changes batched greedy outputs
    before = adapter.fingerprint()
    assert adapter._model is None  # the fingerprint reads config and processor, not the weights
    assert before["path"] == str(tiny_qwen) and before["device_type"] == "cpu" and before["dtype"] == "float32"
    assert any(name.endswith(".safetensors") for name, _size in before["weights"])
    screen = Image.new("RGB", (224, 168), "white")
    sample = Sample("s1", ImageRef.from_source("white", lambda: screen), "Click Save", "point",
                    Target(box=Box(0.4, 0.4, 0.6, 0.6)))
    prepared = adapter.prepare([sample, sample])
    assert prepared.image_sizes == [(224, 168), (224, 168)]
    assert all(size is not None and size[0] % 28 == 0 and size[1] % 28 == 0 for size in prepared.input_sizes)
    preds = adapter.generate(prepared)
    assert len(preds) == 2 and preds[0].raw.split(" [cut off")[0] == preds[1].raw.split(" [cut off")[0]
    assert adapter._model is not None and adapter.weights_load_s is not None
    assert adapter.fingerprint() == before  # loading the weights does not change the identity
    adapter.close()
    assert adapter._model is None
