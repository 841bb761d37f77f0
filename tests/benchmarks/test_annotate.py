"""``python -m pytest_uiground annotate --terminal``: scripted review of an injected deterministic
detector's proposals (accept, reject, edit, type, skip, add), the written ``annotations.jsonl`` read back
by the ``grounding`` loader (issue 39: the page's format, no longer OpenAdapt's JSON), failure modes of
scripted answers, ``--resume``, and one run of the real OCR detector on a drawn screenshot."""

from __future__ import annotations

import io
import sys
from pathlib import Path

# numpy, Pillow and RapidOCR are imported at module level: pytester restores sys.modules
# after each test, and their extension modules should not be imported twice in one process.
import numpy  # noqa: F401
import pytest
import rapidocr_onnxruntime  # noqa: F401
from PIL import Image, ImageDraw, ImageFont

from pytest_uiground.__main__ import main as cli_main
from pytest_uiground.benchmarks.grounding.loader import load as grounding_load
from pytest_uiground.models.offline import ocr as ocr_module
from pytest_uiground.models.offline.ocr import OcrGrounder
from pytest_uiground.record.geometry import Box, iou
from pytest_uiground.record.sample import Sample
from pytest_uiground.screens import format as fmt
from pytest_uiground.screens import review as annotate
from pytest_uiground.suite.loading import LoaderContext

W, H = 400, 300
DETECTOR_MODULE = "uiground_fake_detector"
# Four proposals per image, in pixels of a 400x300 screenshot; "noise" scores under 0.5.
DETECTOR_SOURCE = '''
from pytest_uiground.record.geometry import Box
from pytest_uiground.models.offline.ocr import OcrItem

PIXELS = [("Login", 0.99, (40, 40, 160, 80)), ("Help", 0.9, (40, 200, 100, 220)),
          ("noise", 0.2, (0, 0, 10, 10)), ("Emal", 0.95, (42, 122, 200, 148))]


def detect(img):
    w, h = img.size
    return [OcrItem(t, s, Box(x0 / w, y0 / h, x1 / w, y1 / h)) for t, s, (x0, y0, x1, y1) in PIXELS]


def broken(img):
    raise RuntimeError("model fell over")
'''


@pytest.fixture
def detector(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``module:function`` of the deterministic detector, importable for this test only."""
    folder = tmp_path / "detector"
    folder.mkdir()
    (folder / f"{DETECTOR_MODULE}.py").write_text(DETECTOR_SOURCE)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, DETECTOR_MODULE, raising=False)
    return f"{DETECTOR_MODULE}:detect"


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = tmp_path / "shots"
    folder.mkdir()
    for name in ("a.png", "b.png"):
        Image.new("RGB", (W, H), "white").save(folder / name)
    (folder / "notes.txt").write_text("not an image")
    return folder


def run(tmp_path: Path, shots: Path, detector: str, answers: str, *extra: str) -> int:
    script = tmp_path / "answers.txt"
    script.write_text(answers)
    return annotate.main([str(shots), "--out", str(tmp_path / "ann.jsonl"), "--answers", str(script),
                          "--detector", detector, *extra])


def loaded(tmp_path: Path, name: str = "ann.jsonl") -> dict[str, Sample]:
    """The written file as the ``grounding`` loader (a suite's) reads it."""
    samples = grounding_load({"annotations": name, "warnings": False}, LoaderContext("t", tmp_path))
    return {s.id: s for s in samples}


def px(x0: float, y0: float, x1: float, y1: float) -> tuple[float, float, float, float]:
    return (x0 / W, y0 / H, x1 / W, y1 / H)


# a.png: type+accept Login, reject Help, edit+accept "Emal", add an icon; b.png: accept, skip, nothing added.
REVIEW = "\n".join([
    "t button", "a",  # Login
    "r",  # Help
    "e 40 120 240 150 Email address", "a",  # Emal → fixed box and text
    "300 30 324 54 icon search", "",  # a missed icon, then done
    "accept",  # b: Login
    "s",  # skip Help and Emal
    "",  # nothing to add
]) + "\n"


def test_review_writes_annotations_jsonl_that_the_grounding_loader_reads(
        tmp_path: Path, shots: Path, detector: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, shots, detector, REVIEW) == 0
    printed = capsys.readouterr().out
    assert "a.png (400x300): 3 proposal(s), 1 below --min-score 0.5 hidden" in printed
    assert "a.png #1/3 'Login' box [40, 40, 160, 80] px type text" in printed  # the format's box text
    assert "a.png #1/3 'Login' box [40, 40, 160, 80] px type button" in printed  # shown again after [t]ype
    assert "a.png #3/3 'Email address' box [40, 120, 240, 150] px type text" in printed  # again after [e]dit

    # Pixel x1, y1, x2, y2 lines, images relative to the file, ids by the one rule (format.new_id).
    lines = [line.raw for line in fmt.read(tmp_path / "ann.jsonl")]
    assert lines[0] == {"id": "a-001", "image": "shots/a.png", "instruction": "Login", "bbox": [40, 40, 160, 80],
                        "element_type": "button", "task": "detect"}
    got = loaded(tmp_path)
    assert list(got) == ["a-001", "a-002", "a-003", "b-001"]
    expected = {
        "a-001": (px(40, 40, 160, 80), "button", "Login", "gt100"),
        "a-002": (px(40, 120, 240, 150), "text", "Email address", "gt100"),
        "a-003": (px(300, 30, 324, 54), "icon", "search", "lt32"),
        "b-001": (px(40, 40, 160, 80), "text", "Login", "gt100"),
    }
    for sid, (box, kind, text, size) in expected.items():
        s = got[sid]
        assert s.invalid is None and s.task == "detect"
        assert tuple(s.target.box or ()) == pytest.approx(box)
        assert s.instruction == text
        assert (s.meta["element_type"], s.meta["size"]) == (kind, size)
        assert s.image.path is not None and s.image.path.resolve() == (shots / f"{sid[0]}.png").resolve()


def test_a_box_pasted_as_printed_is_read_as_typed(tmp_path: Path, shots: Path, detector: str) -> None:
    answers = "e box [40, 120, 240, 150] px Email\na\nr\nr\n[300, 30, 324, 54] icon search\n\nq\n"
    assert run(tmp_path, shots, detector, answers) == 0
    lines = [line.raw for line in fmt.read(tmp_path / "ann.jsonl")]
    assert [(d["bbox"], d["instruction"]) for d in lines] == [([40, 120, 240, 150], "Email"),
                                                             ([300, 30, 324, 54], "search")]


def test_running_out_of_answers_names_the_image_and_keeps_finished_ones(
        tmp_path: Path, shots: Path, detector: str, capsys: pytest.CaptureFixture[str]) -> None:
    answers = "a\nr\nr\n\n" + "a\n"  # a.png done; b.png stops at its second proposal
    assert run(tmp_path, shots, detector, answers) == 1
    err = capsys.readouterr().err
    assert "ran out of answers in" in err and "after 5 line(s)" in err
    assert "image 'b.png' proposal #2 ('Help') was waiting" in err
    assert list(loaded(tmp_path)) == ["a-001"]  # a.png was saved before the failure


@pytest.mark.parametrize(("answers", "message"), [
    ("e 10 20 5 40\n", "line 1: box [10, 20, 5, 40] px has no area: need x1 < x2 and y1 < y2"),
    ("a\nr\nr\n0 0 500 40 button Wide\n", "line 4: box [0, 0, 500, 40] px is not inside the 400x300 image"),
    ("x\n", "line 1: 'x' is not one of [a]ccept, [r]eject"),
    ("t two words\n", "line 1: element type 'two words' is not one word"),
    ("a\nr\nr\n1 2 3 4\n", "line 4: expected x1 y1 x2 y2 TYPE [TEXT] (pixels), got '1 2 3 4'"),
])
def test_a_bad_scripted_answer_is_an_error_naming_its_line(
        tmp_path: Path, shots: Path, detector: str, capsys: pytest.CaptureFixture[str],
        answers: str, message: str) -> None:
    assert run(tmp_path, shots, detector, answers) == 1
    err = capsys.readouterr().err
    assert message in err and "answers.txt" in err and "a.png" in err


def test_interactive_answers_are_asked_again_and_end_of_input_quits(
        tmp_path: Path, shots: Path, detector: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("x\na\nr\ne 1 1 0 0\nr\n5 5 50 50 icon\n\na\n"))
    assert annotate.main([str(shots), "--detector", detector]) == 0  # --out: DIR/annotations.jsonl
    printed = capsys.readouterr().out
    assert printed.count("try again") == 2
    assert "quit: 1 image(s) saved" in printed and "b.png was not saved" in printed
    lines = [line.raw for line in fmt.read(shots / fmt.DEFAULT_FILE)]
    assert [(d["id"], d.get("instruction"), d["element_type"]) for d in lines] == [("a-001", "Login", "text"),
                                                                                   ("a-002", None, "icon")]


def test_scripted_answers_from_stdin(tmp_path: Path, shots: Path, detector: str, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("a\nx\n"))
    assert annotate.main([str(shots), "--out", str(tmp_path / "o.jsonl"), "--answers", "-", "--detector",
                          detector]) == 1
    assert "stdin line 2: 'x' is not one of" in capsys.readouterr().err  # scripted: not asked again


def test_quit_keeps_finished_images_and_resume_goes_on(
        tmp_path: Path, shots: Path, detector: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, shots, detector, "a\nr\nr\n\nq\n") == 0
    assert list(loaded(tmp_path)) == ["a-001"]
    (tmp_path / "ann.jsonl").write_text((tmp_path / "ann.jsonl").read_text() + "# a note of mine\n")
    # Without --resume an existing file is never overwritten.
    assert run(tmp_path, shots, detector, "") == 2
    assert "already exists; pass --resume" in capsys.readouterr().err
    # --resume asks only about b.png (a.png's answers would be the wrong count).
    assert run(tmp_path, shots, detector, "r\na\nr\n\n", "--resume") == 0
    assert "--resume: 1 image(s) already in" in capsys.readouterr().out
    assert list(loaded(tmp_path)) == ["a-001", "b-001"]
    assert loaded(tmp_path)["b-001"].instruction == "Help"
    assert "# a note of mine\n{" in (tmp_path / "ann.jsonl").read_text()  # the file's lines kept as they were
    assert run(tmp_path, shots, detector, "", "--resume") == 0
    assert "nothing to do" in capsys.readouterr().out


def test_usage_errors_name_the_value(tmp_path: Path, shots: Path, detector: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, shots, "no_such_module_xyz:detect", "") == 2
    assert "--detector 'no_such_module_xyz:detect' cannot be imported" in capsys.readouterr().err
    assert run(tmp_path, shots, "nonsense", "") == 2
    assert "expected 'ocr', 'omniparser[=WEIGHTS]' or 'module:function'" in capsys.readouterr().err
    assert run(tmp_path, shots, detector.replace(":detect", ":broken"), "") == 1
    assert "detector failed on a.png: RuntimeError: model fell over" in capsys.readouterr().err
    assert run(tmp_path, tmp_path / "nowhere", detector, "") == 2
    assert "is not a folder of screenshots" in capsys.readouterr().err
    assert annotate.main([str(shots), "--out", str(tmp_path / "ann.json"), "--detector", detector]) == 2
    assert f"--out {tmp_path / 'ann.json'}: the review writes annotations.jsonl" in capsys.readouterr().err
    (shots / "deeper").mkdir()
    assert annotate.main([str(shots), "--out", str(shots / "deeper" / "a.jsonl"), "--detector", detector]) == 2
    assert f"is not under {shots / 'deeper'}, the folder of --out" in capsys.readouterr().err


def test_dispatched_by_python_m_pytest_uiground(tmp_path: Path, shots: Path, detector: str) -> None:
    (tmp_path / "answers.txt").write_text("r\nr\nr\nr\n\n" * 2)
    out = tmp_path / "ann.jsonl"
    status = cli_main(["annotate", str(shots), "--out", str(out), "--answers", str(tmp_path / "answers.txt"),
                       "--detector", detector, "--min-score", "0"])  # "noise" shown too: four proposals
    assert status == 0
    assert out.read_text() == ""  # every proposal rejected: no line (--resume asks about these images again)


# -- the real OCR detector -------------------------------------------------------------------------
@pytest.mark.slow
def test_real_ocr_proposal_contains_the_drawn_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "shots"
    folder.mkdir()
    img = Image.new("RGB", (640, 240), "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=40)
    draw.text((60, 80), "Submit Order", fill="black", font=font)
    drawn = draw.textbbox((60, 80), "Submit Order", font=font)
    img.save(folder / "form.png")
    # Count the proposals to accept them all; the command then gets this same grounder, whose
    # per-image cache answers its read (one OCR engine and one inference instead of two).
    grounder = OcrGrounder()
    n = sum(item.score >= 0.5 for item in grounder.read(img))
    assert n >= 1
    monkeypatch.setattr(ocr_module, "OcrGrounder", lambda options: grounder)
    (tmp_path / "answers.txt").write_text("a\n" * n + "\n")
    assert annotate.main([str(folder), "--out", str(tmp_path / "ann.jsonl"),
                          "--answers", str(tmp_path / "answers.txt")]) == 0
    samples = list(loaded(tmp_path).values())
    assert len(samples) == n
    text_box = Box(drawn[0] / 640, drawn[1] / 240, drawn[2] / 640, drawn[3] / 240)
    best = max(samples, key=lambda s: iou(s.target.box or Box(0, 0, 0, 0), text_box))
    assert best.target.box is not None and best.target.box.contains(text_box.center)
    assert iou(best.target.box, text_box) > 0.5
    assert best.meta["element_type"] == "text" and "submit" in best.instruction.lower()


def test_zero_size_proposal_on_the_image_edge_stays_inside_the_image() -> None:
    from pytest_uiground.screens.review import to_pixels

    assert to_pixels((1.0, 0.5, 1.0, 0.6), (100, 100), "x") == (99, 50, 100, 60)
    assert to_pixels((0.0, 1.0, 0.1, 1.0), (100, 100), "x") == (0, 99, 10, 100)
