"""pytest_uiground.models.offline.center: the image-centre baseline."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from pytest_uiground.models.base import ModelOptions
from pytest_uiground.models.offline.center import CenterModel, create
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageError, ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.scoring.rules import score


def _png(size: tuple[int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, "white").save(buf, format="PNG")
    return buf.getvalue()


def _sample(sid: str, box: Box, data: bytes) -> Sample:
    return Sample(sid, ImageRef.from_source(sid, lambda: data), "Click it", "point", Target(box=box))


def test_it_answers_the_centre_for_every_sample_whatever_the_screen() -> None:
    model = create(ModelOptions(name="center"))
    assert isinstance(model, CenterModel) and model.name == "center"
    middle = _sample("middle", Box(0.4, 0.4, 0.6, 0.6), _png((800, 600)))
    corner = _sample("corner", Box(0.0, 0.0, 0.1, 0.1), _png((33, 1000)))
    preds = model.predict([middle, corner])
    assert [p.point for p in preds] == [Point(0.5, 0.5), Point(0.5, 0.5)]
    assert all(not p.format_error and p.error is None for p in preds)
    assert [score(s, p).correct for s, p in zip([middle, corner], preds, strict=True)] == [True, False]


def test_a_corrupt_image_fails_like_with_a_real_model() -> None:
    broken = _sample("broken", Box(0.4, 0.4, 0.6, 0.6), _png((64, 64))[:40])
    with pytest.raises(ImageError, match="broken"):
        CenterModel().predict([broken])


def test_fingerprint_names_the_model_and_is_stable() -> None:
    assert CenterModel().fingerprint() == create(ModelOptions(name="center")).fingerprint()
    assert CenterModel().fingerprint()["model"] == "center"
