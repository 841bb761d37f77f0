"""GPU checks (marked ``gpu``; skipped without CUDA): placement per worker, bf16, batches."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import needs

torch = pytest.importorskip("torch", reason=needs("hf"))
pytest.importorskip("torchvision", reason=needs("hf"))
import tinymodels  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


@pytest.fixture(scope="module")
def qwen25(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tinymodels.build_qwen2_5_vl(tmp_path_factory.mktemp("gpu") / "qwen2_5_vl")


@pytest.mark.parametrize("worker", ["gw0", "gw1", "gw2", "gw3"])
def test_each_worker_gets_its_own_gpu_in_bf16(qwen25: Path, worker: str) -> None:
    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.hf.qwen import create_uitars

    model = create_uitars(ModelOptions(name="uitars", path=str(qwen25), device="auto", worker_id=worker))
    expected = f"cuda:{int(worker[2:]) % torch.cuda.device_count()}"
    param = next(model.model.parameters())
    assert str(param.device) == expected
    assert param.dtype == torch.bfloat16 and model.fingerprint()["dtype"] == "bfloat16"


def test_batched_generation_on_gpu(qwen25: Path) -> None:
    from PIL import Image

    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.hf.qwen import create_uitars
    from pytest_uiground.record.geometry import Box
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample, Target

    model = create_uitars(ModelOptions(name="uitars", path=str(qwen25), device="cuda:0", max_new_tokens=8))
    sizes = [(640, 480), (1920, 1080), (300, 900), (1024, 768)] * 2
    samples = [
        Sample(f"s{i}", ImageRef.from_source(f"img{i}", lambda s=s: Image.new("RGB", s, "gray")), "click OK",
               "point", Target(box=Box(0, 0, 1, 1)))
        for i, s in enumerate(sizes)
    ]
    preds = model.predict(samples)
    assert len(preds) == 8 and all(p.error is None for p in preds)
