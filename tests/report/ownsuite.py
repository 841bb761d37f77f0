"""A suite of one's own screenshots, made the way a user makes one (issue 39): two generated PNGs, then
``init own --from shots`` (:mod:`pytest_uiground.screens.scaffold`) with no annotations, then lines as
the annotator saves them (pixel boxes, ``element_type`` on every element, a ``theme`` of the user's
own), run by pytester in a subprocess with the scripted model of ``tests/conftest.py``, strict
(``filterwarnings = error``) as the other test projects are."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import FAKE_MODELS
from PIL import Image, ImageDraw

from pytest_uiground.screens import format as fmt
from pytest_uiground.screens import scaffold

SIZE = (640, 400)
PER_SCREEN = 8


class OwnSuite:
    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pytester, self.monkeypatch, self.root = pytester, monkeypatch, pytester.path
        shots = self.root / "shots"
        shots.mkdir()
        for k in range(2):
            img = Image.new("RGB", SIZE, "white")
            draw = ImageDraw.Draw(img)
            for j in range(PER_SCREEN):
                draw.rectangle(self.box(k * PER_SCREEN + j), outline="black", width=2)
            img.save(shots / f"shot{k}.png")
        assert scaffold.main("own", shots, self.root) == 0
        self.suite = self.root / "suites" / "own"
        ini = self.root / "pytest.ini"  # written by init; the project is strict, as tests' Project is
        ini.write_text(ini.read_text() + "filterwarnings =\n    error\n")
        pytester.makepyfile(fakemodels=FAKE_MODELS)
        pytester.makeconftest("")

    @staticmethod
    def box(i: int) -> list[int]:
        x, y = 20 + 75 * (i % PER_SCREEN), 60 + 120 * (i // PER_SCREEN % 2)
        return [x, y, x + 50, y + 40]

    def line(self, i: int) -> dict[str, Any]:
        """Sample ``s<i>`` as the annotator saves it: odd ones icons, the first half of a screen dark."""
        return {"id": f"s{i}", "image": f"screens/shot{i // PER_SCREEN % 2}.png",
                "instruction": f"Open item {i} of the toolbar", "bbox": self.box(i), "task": "point",
                "element_type": "icon" if i % 2 else "text", "theme": "dark" if i % PER_SCREEN < 4 else "light"}

    def annotate(self, n: int) -> list[dict[str, Any]]:
        lines = [self.line(i) for i in range(n)]
        fmt.write(self.suite / fmt.DEFAULT_FILE, lines)
        return lines

    def run(self, *args: str, wrong: Sequence[str] = (), xdist: Sequence[str] = (),
            model: str = "fakemodels:create") -> pytest.RunResult:
        self.monkeypatch.setenv("UIGROUND_WRONG", ",".join(wrong))
        self.monkeypatch.setenv("UIGROUND_GARBLED", "")
        return self.pytester.runpytest_subprocess("suites/own", "--model", model, "-p", "no:cacheprovider",
                                                  "-p", "no:randomly", "-o", "console_output_style=classic",
                                                  *xdist, *args)

    def summary(self) -> dict[str, Any]:
        return dict(json.loads((self.root / "out" / "summary.json").read_text()))

    def report(self) -> Path:
        return self.root / "out" / "report.html"


def grown(own: OwnSuite, xdist: Sequence[str] = ()) -> tuple[pytest.RunResult, set[str], set[str]]:
    """The issue's case: a baseline of 12 samples with one wrong (``s1``), then 4 new samples, two of them
    wrong, and ``s1`` right again. Returns the run (report in ``out/``), the new ids and the wrong ones."""
    own.annotate(12)
    record = own.run("--snapshot-update", wrong=["s1"])
    assert record.ret == 0, record.stdout.str()[-3000:]
    new = {f"s{i}" for i in range(12, 16)}
    own.annotate(16)
    wrong = {"s12", "s13"}
    result = own.run("--uiground-report", "out", "--uiground-markdown", "out/summary.md", "--junitxml",
                     "out/junit.xml", wrong=sorted(wrong), xdist=xdist)
    return result, new, wrong
