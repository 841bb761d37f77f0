"""The annotator's store: changes made on a revision, lines it does not touch kept byte for byte,
review state in the sidecar only, and every refused change naming the key and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_uiground.screens.annotator.store import Conflict, Store, StoreError, check_image_path, sidecar_path

SIZES = {"a.png": (400, 300), "sub/b.png": (200, 100)}
# A hand-written file: spacing of its own, a metadata key, a line that is not JSON, a blank line.
ORIGINAL = ('{"image":"a.png",  "instruction": "Open the menu", "bbox": [1, 2, 30, 40], "app": "radio"}\n'
            'not json at all\n'
            '\n'
            '{"id": "keep", "image": "sub/b.png", "instruction": "Zoom", "polygon": [1, 1, 9, 1, 5, 8]}\n')


@pytest.fixture
def store(tmp_path: Path) -> Store:
    path = tmp_path / "annotations.jsonl"
    path.write_text(ORIGINAL, encoding="utf-8")
    return Store(path)


def test_reading_keeps_every_line_and_reports_the_bad_one(store: Store) -> None:
    snap = store.read()
    assert [e.data is not None for e in snap.entries] == [True, False, False, True]
    assert snap.problems == ["annotations.jsonl line 2 is not JSON (Expecting value: line 1 column 1 (char 0)); "
                             "kept as it is"]
    assert snap.entries[0].data == {"image": "a.png", "instruction": "Open the menu", "bbox": [1, 2, 30, 40],
                                    "app": "radio"}


def test_a_change_rewrites_only_its_line_and_moves_the_revision(store: Store) -> None:
    snap = store.read()
    old = snap.entries[3].data
    assert old is not None
    new = {**old, "instruction": "Zoom in on the map"}
    after = store.change(snap.revision, [{"op": "replace", "index": 3, "old": old, "sample": new}], SIZES)
    lines = store.path.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == ORIGINAL.splitlines()[:3]  # byte for byte, the bad and the blank line too
    assert json.loads(lines[3]) == new and list(json.loads(lines[3])) == ["id", "image", "instruction", "polygon"]
    assert after.revision != snap.revision and after.revision == store.revision()
    assert not sidecar_path(store.path).exists()  # no review change, no sidecar


def test_a_change_on_an_old_revision_is_refused_and_writes_nothing(store: Store) -> None:
    first = store.read().revision
    sample = {"id": "a-001", "image": "a.png", "instruction": "", "bbox": [5, 5, 50, 50]}
    store.change(first, [{"op": "insert", "index": 4, "sample": sample}], SIZES)
    before = store.path.read_bytes()
    with pytest.raises(Conflict):
        store.change(first, [{"op": "delete", "index": 0, "old": store.read().entries[0].data}], SIZES)
    assert store.path.read_bytes() == before
    # An edit in an editor moves the revision too.
    current = store.read().revision
    store.path.write_text(store.path.read_text() + '{"image": "a.png", "bbox": [0, 0, 1, 1]}\n')
    with pytest.raises(Conflict):
        store.change(current, [{"op": "done", "image": "a.png", "done": True}], SIZES)


def test_insert_then_its_inverse_restores_the_file_exactly(store: Store) -> None:
    snap = store.read()
    sample = {"id": "a-001", "image": "a.png", "instruction": "Close", "bbox": [5, 5, 50, 50], "task": "point"}
    mid = store.change(snap.revision, [{"op": "insert", "index": 4, "sample": sample},
                                       {"op": "review", "image": "a.png", "pid": "p1", "status": "accepted"}], SIZES)
    assert json.loads(store.path.read_text().splitlines()[4]) == sample
    side = json.loads(sidecar_path(store.path).read_text())
    assert side["images"] == {"a.png": {"proposals": {"p1": "accepted"}}}
    store.change(mid.revision, [{"op": "review", "image": "a.png", "pid": "p1", "status": None},
                                {"op": "delete", "index": 4, "old": sample}], SIZES)
    assert store.path.read_text(encoding="utf-8") == ORIGINAL
    assert json.loads(sidecar_path(store.path).read_text())["images"] == {"a.png": {"proposals": {}}}


def test_review_state_never_lands_on_a_sample_line(store: Store) -> None:
    snap = store.read()
    store.change(snap.revision, [{"op": "done", "image": "a.png", "done": True},
                                 {"op": "review", "image": "a.png", "pid": "x", "status": "rejected"}], SIZES)
    assert store.path.read_text(encoding="utf-8") == ORIGINAL
    assert json.loads(sidecar_path(store.path).read_text())["images"]["a.png"] == {
        "done": True, "proposals": {"x": "rejected"}}


def test_proposals_in_the_sidecar_do_not_move_the_revision(store: Store) -> None:
    before = store.revision()
    store.save_proposals("a.png", {"key": "k", "items": [{"pid": "p", "box": [1, 2, 3, 4]}]})
    assert store.revision() == before and store.read().proposals["a.png"]["key"] == "k"


@pytest.mark.parametrize(("op", "message"), [
    ({"op": "insert", "index": 9, "sample": {"image": "a.png"}}, "line index 9 is outside the file's 4 line(s)"),
    ({"op": "replace", "index": 0, "old": {"image": "other"}, "sample": {"image": "a.png"}},
     "line 1 is not the sample this change was made on"),
    ({"op": "insert", "index": 0, "sample": {"image": "../a.png"}}, "'image' '../a.png' contains '..'"),
    ({"op": "insert", "index": 0, "sample": {"image": "/tmp/a.png"}}, "'image' '/tmp/a.png' is absolute"),
    ({"op": "insert", "index": 0, "sample": {"image": " ", "bbox": [1, 1, 9, 9]}}, "'image' is \" \""),
    ({"op": "insert", "index": 0, "sample": {"image": "a\0.png", "bbox": [1, 1, 9, 9]}}, "a control character"),
    ({"op": "insert", "index": 0, "sample": {"image": "a.png", "task": "detect"}}, "has no 'bbox'"),
    ({"op": "insert", "index": 0, "sample": {"image": "a.png", "bbox": [10, 10, 5, 20]}},
     "box [10, 10, 5, 20] px is degenerate"),
    ({"op": "insert", "index": 0, "sample": {"image": "a.png", "bbox": [0, 0, 401, 20]}},
     "box [0, 0, 401, 20] px is not inside the 400x300 image a.png"),
    ({"op": "insert", "index": 0, "sample": {"image": "a.png", "bbox": [0, 0, "1", 20]}},
     "expected [x1, y1, x2, y2] in pixels of the image (finite numbers)"),
    ({"op": "insert", "index": 0, "sample": {"image": "a.png", "task": "click"}},
     "'task' is \"click\"; expected one of point, detect, refusal"),
    ({"op": "insert", "index": 0, "sample": {"image": "a.png", "bbox": [1, 1, 9, 9], "click": [1]}},
     "'click' is [1]; expected [x, y] in pixels of the image (finite numbers)"),
    ({"op": "insert", "index": 0, "sample": {"image": "a.png", "instruction": 3}}, "'instruction' is 3, not text"),
    ({"op": "insert", "index": 0, "sample": {"id": "keep", "image": "a.png", "bbox": [1, 1, 9, 9]}},
     "sample id 'keep' would be used twice"),
    ({"op": "review", "image": "a.png", "pid": "p", "status": "maybe"}, "review: expected an image"),
    ({"op": "rename"}, "unknown change 'rename'"),
])
def test_a_change_that_does_not_fit_is_refused_naming_it(store: Store, op: dict[str, object], message: str) -> None:
    with pytest.raises(StoreError) as info:
        store.change(store.read().revision, [op], SIZES)
    assert message in str(info.value)
    assert store.path.read_text(encoding="utf-8") == ORIGINAL


def test_image_paths() -> None:
    assert check_image_path("screens/home.png") == "screens/home.png"
    for bad in ("a\\b.png", "C:/x.png", "", "a/../b.png"):
        with pytest.raises(StoreError):
            check_image_path(bad)


def loader_ids(path: Path) -> list[str]:
    from pytest_uiground.screens import format as fmt
    from pytest_uiground.screens.samples import samples_of

    return [s.id for s in samples_of(path, fmt.read(path))]


def test_the_server_gives_a_created_sample_its_id_by_the_loaders_rule(tmp_path: Path) -> None:
    """One id rule (issue 39), the production path: the page sends a new sample without an id through the
    server (:meth:`Annotator.change`); the store gives it one, unique against every id a run reads (the
    hand-written line without an id reads as ``a-001``, so the new sample is ``a-002``), the answer names it,
    and the hand-written line's id does not move. Two tabs creating on one revision: the second is refused as a
    conflict and, sent again on the new revision (the page's rebase drops no id it never had), gets ``a-003``."""
    from pytest_uiground.screens.annotator.server import Annotator, ImageInfo

    path = tmp_path / "annotations.jsonl"
    path.write_text(ORIGINAL, encoding="utf-8")
    images = [ImageInfo(name, tmp_path / name, w, h) for name, (w, h) in SIZES.items()]
    annotator = Annotator(Store(path), images, None)
    before = loader_ids(path)
    assert before[0] == "a-001"  # the hand-written line: the rule's id for the first id-less line on a.png
    base = annotator.store.revision()
    drawn = {"image": "a.png", "instruction": "", "bbox": [50, 50, 90, 80], "task": "point"}
    status, doc = annotator.change({"base": base, "ops": [{"op": "insert", "index": 4, "sample": drawn}]})
    assert status == 200 and doc["created"] == [{"id": "a-002", **drawn}]
    assert doc["state"]["samples"][-1]["data"] == doc["created"][0]  # the state the page holds names it too
    after = loader_ids(path)
    assert after[:len(before)] == before and after[-1] == "a-002" and len(set(after)) == len(after)
    # The other tab made its sample on the old revision: refused, then re-sent on the current one.
    other = {**drawn, "bbox": [100, 100, 140, 130]}
    status, doc = annotator.change({"base": base, "ops": [{"op": "insert", "index": 4, "sample": other}]})
    assert status == 409 and doc["conflict"]
    status, doc = annotator.change({"base": doc["state"]["revision"],
                                    "ops": [{"op": "insert", "index": 5, "sample": other}]})
    assert status == 200 and doc["created"][0]["id"] == "a-003"
    assert loader_ids(path)[-2:] == ["a-002", "a-003"]
    # An insert that names its id (an undone delete) keeps it; the store mints only for samples without one.
    status, doc = annotator.change({"base": doc["state"]["revision"], "ops": [
        {"op": "insert", "index": 6, "sample": {"id": "kept", "image": "sub/b.png", "bbox": [1, 1, 9, 9]}},
        {"op": "insert", "index": 7, "sample": {"image": "sub/b.png", "bbox": [20, 20, 29, 29]}}]})
    assert status == 200 and [c["id"] for c in doc["created"]] == ["kept", "b-001"]


def test_the_importers_and_the_loader_mint_ids_by_the_same_rule(tmp_path: Path) -> None:
    """``format.new_id`` is the one rule: the store, the loader (a line without an id) and an import of records
    without ids give the same next id for the same file."""
    from pytest_uiground.screens import format as fmt
    from pytest_uiground.screens.importers import Records

    path = tmp_path / "annotations.jsonl"
    path.write_text(ORIGINAL + '{"id": "a-002", "image": "a.png", "instruction": "Go", "bbox": [5, 5, 9, 9]}\n',
                    encoding="utf-8")
    records = Records(fmt.read(path), path.name)
    records.add("record 1", {"image": "a.png", "instruction": "Play", "bbox": [60, 60, 90, 90]})
    store = Store(path)
    snap = store.change(store.read().revision, [{"op": "insert", "index": 5, "sample": {
        "image": "a.png", "instruction": "", "bbox": [60, 60, 90, 90]}}], SIZES)
    with path.open("a", encoding="utf-8") as f:
        f.write('{"image": "a.png", "instruction": "Stop", "bbox": [100, 60, 130, 90]}\n')
    assert records.lines[0]["id"] == snap.created[0]["id"] == "a-003"  # a-001: the hand line; a-002 is taken
    assert loader_ids(path)[-1] == "a-004" and fmt.new_id("a.png", set(loader_ids(path))) == "a-005"
    assert fmt.new_id("screens/Home screen.png", set()) == "Home_screen-001"
    assert fmt.new_id("__.png", set()) == "screen-001"


def test_a_missing_file_reads_empty_and_the_first_change_creates_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "new" / "annotations.jsonl")
    snap = store.read()
    assert snap.entries == [] and snap.problems == []
    store.change(snap.revision, [{"op": "insert", "index": 0, "sample": {"image": "a.png", "bbox": [1, 1, 2, 2]}}],
                 SIZES)
    assert store.path.read_text() == '{"id": "a-001", "image": "a.png", "bbox": [1, 1, 2, 2]}\n'


def test_what_the_store_saves_is_what_the_loader_reads_and_the_reverse(tmp_path: Path) -> None:
    """One reader (issue 39): every kind of line the page saves through the store loads as a sample (a draft
    without an instruction loads as the invalid sample "has no instruction yet"); a line written by hand with
    ``"id": 3`` loads as sample ``3`` and the store edits it."""
    from PIL import Image

    from pytest_uiground.screens import format as fmt
    from pytest_uiground.screens.samples import samples_of

    Image.new("RGB", (400, 300), "white").save(tmp_path / "a.png")
    path = tmp_path / "annotations.jsonl"
    path.write_text('{"id": 3, "image": "a.png", "instruction": "Open", "bbox": [1, 2, 30, 40]}\n', encoding="utf-8")
    store = Store(path)
    kinds = [
        {"id": "p-1", "image": "a.png", "instruction": "Close the menu", "bbox": [50, 50, 90, 80],
         "element_type": "icon", "task": "point"},
        {"id": "d-1", "image": "a.png", "instruction": "", "bbox": [100, 100, 150, 130], "task": "detect",
         "click": [120, 110]},
        {"id": "r-1", "image": "a.png", "instruction": "Open the settings", "task": "refusal"},
        {"id": "g-1", "image": "a.png", "instruction": "The dial", "polygon": [200, 200, 260, 200, 230, 250]},
        {"id": "u-1", "image": "a.png", "instruction": "Line\u2028two\u0085three", "bbox": [10, 200, 60, 240]},
        {"id": "draft-1", "image": "a.png", "instruction": "", "bbox": [300, 10, 340, 40]},
    ]
    snap = store.read()
    store.change(snap.revision, [{"op": "insert", "index": 1 + i, "sample": k} for i, k in enumerate(kinds)],
                 {"a.png": (400, 300)})
    samples = {s.id: s for s in samples_of(path, fmt.read(path))}
    assert set(samples) == {"3", "p-1", "d-1", "r-1", "g-1", "u-1", "draft-1"}
    assert all(samples[k].invalid is None for k in ("3", "p-1", "d-1", "r-1", "g-1", "u-1")), samples
    assert samples["u-1"].instruction == "Line\u2028two\u0085three" and samples["r-1"].target.refusal
    assert "has no instruction yet" in (samples["draft-1"].invalid or "")
    # The reverse: the hand-written integer id is edited like any other line.
    snap = store.read()
    first = snap.entries[0].data
    assert first is not None and first["id"] == 3
    store.change(snap.revision, [{"op": "replace", "index": 0, "old": first,
                                  "sample": {**first, "instruction": "Open the menu"}}], {"a.png": (400, 300)})
    assert {s.id: s.instruction for s in samples_of(path, fmt.read(path))}["3"] == "Open the menu"
    with pytest.raises(StoreError, match="sample id '3' would be used twice"):
        store.change(store.read().revision, [{"op": "insert", "index": 0,
                                               "sample": {"id": "3", "image": "a.png", "bbox": [1, 1, 5, 5]}}],
                     {"a.png": (400, 300)})


def test_instruction_alts_survive_an_edit_and_bad_ones_are_refused(tmp_path: Path) -> None:
    """The page does not edit ``instruction_alts`` (issue 43) but sends a line back whole: an edit of its box keeps
    them, an untouched line keeps its bytes, and a value the loader would refuse is refused here too."""
    path = tmp_path / "annotations.jsonl"
    keep = ('{"id": "b", "image": "a.png", "instruction": "Zoom", "instruction_alts": ["Vergrößern"], '
            '"bbox": [1, 1, 9, 9]}')
    path.write_text('{"id": "a", "image": "a.png", "instruction": "Open", "instruction_alts": ["Öffnen", "Show it"], '
                    '"bbox": [1, 2, 30, 40]}\n' + keep + "\n", encoding="utf-8")
    store = Store(path)
    snap = store.read()
    old = snap.entries[0].data
    assert old is not None
    store.change(snap.revision, [{"op": "replace", "index": 0, "old": old, "sample": {**old, "bbox": [2, 2, 31, 41]}}],
                 SIZES)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["instruction_alts"] == ["Öffnen", "Show it"] and lines[1] == keep
    snap = store.read()
    old = snap.entries[1].data
    assert old is not None
    with pytest.raises(StoreError, match=r"'instruction_alts' item 1 is \"\", not a non-empty string"):
        store.change(snap.revision, [{"op": "replace", "index": 1, "old": old,
                                      "sample": {**old, "instruction_alts": [""]}}], SIZES)
    assert path.read_text(encoding="utf-8").splitlines()[1] == keep
