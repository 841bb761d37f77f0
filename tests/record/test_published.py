"""Published per-sample logs read in place: each layout told from the file, every record read or an error.

The files are small ones written here in the published layouts (``eval_screenspot_pro.py``'s ``details``, as
one JSON object and as JSON lines; Gelato's ``sample_results``), gzipped or not; the real logs are read by
``tests/gate/test_against.py``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground.record import published
from pytest_uiground.record.published import Answer, PublishedError, SampleKey, layout_of, match, read


def ss_record(img: str, instruction: str, pred: list[float] | None, correctness: str, raw: Any = "x") -> dict[str, Any]:
    return {"img_path": f"./data/ScreenSpot-Pro/images/{img}", "group": "Dev", "platform": "windows",
            "application": "vscode", "prompt_to_evaluate": instruction, "gt_type": "positive", "ui_type": "text",
            "pred": pred, "raw_response": raw, "bbox": [1, 2, 3, 4], "correctness": correctness}


def gelato_record(img: str, instruction: str, response: str, click: list[float] | None, right: bool
                  ) -> dict[str, Any]:
    return {"img_filename": img, "instruction": instruction, "response": response, "is_correct": right,
            "predicted_click": click, "error_msg": None, "bbox": [0, 0, 10, 10], "original_resolution": [1920, 1080],
            "resized_resolution": [1920, 1088]}


SS = [ss_record("vscode_windows/a.png", "Open", [10.5, 20.0], "correct"),
      ss_record("vscode_windows/b.png", "Close", None, "wrong_format", raw="<|object_ref_start|>"),
      ss_record("vscode_windows/b.png", "Close", [3.0, 4.0], "wrong", raw={"Click BBox ID": "16"})]
GELATO = [gelato_record("A.png", "Filter", "(745, 315)", [1430.4, 340.2], True),
          gelato_record("A.png", "Hidden", "refusal", None, False),
          gelato_record("B.png", "Save", "no idea", None, False)]


def write(path: Path, text: str, gz: bool = False) -> Path:
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_each_layout_is_told_from_the_file(tmp_path: Path, gz: bool) -> None:
    files = {
        published.SCREENSPOT_SCRIPT: write(tmp_path / "ss.json", json.dumps({"details": SS, "metrics": {}}), gz),
        "lines": write(tmp_path / "omni.jsonl", "".join(json.dumps(r) + "\n" for r in SS), gz),
        published.GELATO_EVAL: write(tmp_path / "gel.json", json.dumps({"accuracy": 0.3, "sample_results": GELATO}),
                                     gz),
        published.REPLAY: write(tmp_path / "r.jsonl", '{"sample_id": "a", "output": "(1, 2)"}\n', gz),
    }
    assert {k: layout_of(p) for k, p in files.items()} == {
        published.SCREENSPOT_SCRIPT: published.SCREENSPOT_SCRIPT, "lines": published.SCREENSPOT_SCRIPT,
        published.GELATO_EVAL: published.GELATO_EVAL, published.REPLAY: published.REPLAY}
    ss = read(files[published.SCREENSPOT_SCRIPT])
    assert ss == read(files["lines"]).__class__(files[published.SCREENSPOT_SCRIPT], ss.layout, ss.answers, ss.sha256)
    assert [a.verdict for a in ss.answers] == [True, False, False]
    assert [a.point for a in ss.answers] == [(10.5, 20.0), None, (3.0, 4.0)]
    assert ss.answers[2].raw == '{"Click BBox ID": "16"}' and ss.answers[0].image_name == "a.png"
    gel = read(files[published.GELATO_EVAL]).answers
    assert [(a.point, a.refused, a.verdict) for a in gel] == [((1430.4, 340.2), False, True), (None, True, False),
                                                              (None, False, False)]
    with pytest.raises(PublishedError, match="replay JSON lines, read by the replay reader"):
        read(files[published.REPLAY])


@pytest.mark.parametrize(("text", "found"), [
    ('{"results": []}', "a JSON object has the keys 'results'"),
    ("[1, 2]", "one JSON list"),
    ('{"id": 1, "answer": "x"}\n{"id": 2}\n', "JSON lines whose first record has the keys 'id', 'answer'"),
    ("hello\n", "line 1 is not JSON"),
    ("", "no records"),
])
def test_an_unknown_layout_names_the_layouts_and_the_fix(tmp_path: Path, text: str, found: str) -> None:
    path = write(tmp_path / "theirs.json", text)
    with pytest.raises(PublishedError) as err:
        layout_of(path)
    msg = str(err.value)
    assert str(path) in msg and found in msg
    assert all(name in msg for name in published.LAYOUTS) and 'Convert it to replay JSON lines' in msg


@pytest.mark.parametrize(("record", "said"), [
    ({k: v for k, v in SS[0].items() if k != "raw_response"}, "record 2: no 'raw_response' field"),
    (dict(SS[0], correctness="maybe"), "record 2: 'correctness' is 'maybe', not correct"),
    (dict(SS[0], pred=[1, "2"]), "record 2: 'pred' is [1, '2'], not a point"),
    (dict(SS[0], prompt_to_evaluate=3), "record 2: 'prompt_to_evaluate' is 3, not str"),
])
def test_a_bad_record_is_an_error_naming_it(tmp_path: Path, record: dict[str, Any], said: str) -> None:
    path = write(tmp_path / "ss.json", json.dumps({"details": [SS[0], record]}))
    with pytest.raises(PublishedError, match=said.replace("[", r"\[").replace("]", r"\]")):
        read(path)
    bad_gz = write(tmp_path / "broken.json.gz", "")
    bad_gz.write_bytes(gzip.compress(b'{"details": []}')[:-6])
    with pytest.raises(PublishedError, match="damaged gzip"):
        read(bad_gz)


def test_records_match_by_screenshot_and_instruction_in_order() -> None:
    answers = [Answer(1, "a", "x/s1.png", "Open  menu"), Answer(2, "b", "y/s1.png", "Open menu"),
               Answer(3, "c", "s2.png", "Save"), Answer(4, "d", "s3.png", "Only once"), Answer(5, "e", "s9.png", "X")]
    keys = [SampleKey("k1", "s1.png", "Open menu"), SampleKey("k2", "s1.png", "Open menu"),
            SampleKey("k3", "s1.png", "Open menu"), SampleKey("k4", "s2.png", "Close"),
            SampleKey("k5", None, "Only once"), SampleKey("k6", None, "Open menu"), SampleKey("k7", "s2.png", None)]
    found, left = match(answers, keys)
    # the k-th record of a pair to the k-th sample; whitespace inside an instruction is not a difference
    assert {k: a.raw for k, a in found.items()} == {"k1": "a", "k2": "b", "k5": "d"}
    assert [a.raw for a in left] == ["c", "e"]  # an instruction alone matches only when one record has it


def test_a_report_page_names_each_samples_screenshot_and_instruction(tmp_path: Path) -> None:
    """``compare`` matches a log through the run's page: the entry's ``image``; on an older page the linked
    screen's file; a screen drawn into the page names none."""
    from pytest_uiground.report.beside import page_keys
    from pytest_uiground.report.browse import data_json

    doc = {"screens": [{"src": "../data/images/a%20b.png", "linked": True}, {"src": "data:image/png;base64,AA"}],
           "samples": [{"id": "s1", "instruction": "Open", "image": "x.png", "screen": 1},
                       {"id": "s2", "instruction": "Save", "screen": 0},
                       {"id": "s3", "instruction": "Close", "screen": 1}, {"id": 4}]}
    page = tmp_path / "report.html"
    page.write_text(f'<html><script type="application/json" id="uig-data">{data_json(doc)}</script></html>')
    assert page_keys(page) == {"s1": SampleKey("s1", "x.png", "Open"), "s2": SampleKey("s2", "a b.png", "Save"),
                               "s3": SampleKey("s3", None, "Close")}
