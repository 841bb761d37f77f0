"""Values from outside checked where they enter the records: a model's non-finite point, a truncated
image, an animated GIF's file handle.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Project, strict_json

pytestmark = pytest.mark.slow


NAN_MODEL = '''
import os
from fakemodels import Scripted
from pytest_uiground.record.geometry import Point
from pytest_uiground.record.prediction import Prediction

class NaNs(Scripted):
    def predict(self, samples):
        out = super().predict(samples)
        bad = set(os.environ["UIGROUND_NAN"].split(","))
        return [Prediction(point=Point(float("nan"), float("inf")), raw="") if s.id in bad else p
                for s, p in zip(samples, out)]

def create(options):
    return NaNs(options)
'''


def test_non_finite_prediction_is_a_format_error_and_outputs_are_standard_json(project: Project) -> None:
    """A NaN or infinite point from a model is a format error on its sample, and samples.jsonl and
    report.html stay standard JSON (no NaN or Infinity written)."""
    project.pytester.makepyfile(nanmodel=NAN_MODEL)
    ids = project.ids()
    project.monkeypatch.setenv("UIGROUND_NAN", ",".join(ids[:2]))
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "nanmodel:create", "-p", "no:cacheprovider", "--uiground-report", "out")
    out = result.stdout.str()
    assert "format errors: 2;" in out
    records = [strict_json(line) for line in (project.root / "out" / "samples.jsonl").read_text().splitlines()]
    bad = {r["id"]: r for r in records if r["id"] in ids[:2]}
    assert len(bad) == 2 and all(r["prediction"]["format_error"] and r["prediction"]["point"] is None
                                 for r in bad.values())
    assert "nan" in bad[ids[0]]["prediction"]["raw"]
    strict_json((project.root / "out" / "summary.json").read_text())
    assert "could not be rendered" not in out and (project.root / "out" / "report.html").is_file()


def test_truncated_png_is_refused_before_it_is_sent(tmp_path: Path) -> None:
    """A truncated PNG fails its decode check before it is encoded for a server, so it is never sent or
    scored."""
    from PIL import Image

    from pytest_uiground.models.openai.wire import encode_image
    from pytest_uiground.record.image import ImageError, ImageRef

    path = tmp_path / "screen.png"
    Image.effect_noise((64, 48), 64).convert("RGB").save(path)  # noise: the pixel data spans the file
    whole = path.read_bytes()
    assert encode_image(ImageRef.from_path(path)).size == (64, 48)
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ImageError, match="could not be decoded"):
        encode_image(ImageRef.from_path(path))


def test_animated_gif_leaks_no_file_handle(tmp_path: Path) -> None:
    """Reading an animated GIF closes its file: no ResourceWarning, which filterwarnings = error would turn
    into exit 1."""
    import gc
    import warnings

    from PIL import Image

    from pytest_uiground.record.image import ImageRef

    path = tmp_path / "anim.gif"
    frames = [Image.new("P", (32, 24), i) for i in range(3)]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=50, loop=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        img = ImageRef.from_path(path).load()
        assert img.mode == "RGB" and img.size == (32, 24)
        del img
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)], [str(w.message) for w in caught]
