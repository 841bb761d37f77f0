"""The sample-id alphabet is declared once (record/sample.ID_CHARS): the check that refuses an id
and the helper that makes a published record's id safe read the same characters, so a loader
can never build an id that the check then refuses."""

from __future__ import annotations

import string

import pytest

from pytest_uiground.record.sample import ID_CHARS, check_sample_ids, safe_id


class _Id:
    def __init__(self, id: str) -> None:
        self.id = id


def test_the_alphabet_is_letters_digits_and_five_marks() -> None:
    allowed = {c for c in map(chr, range(128)) if safe_id(c) == c}
    assert allowed == set(string.ascii_letters + string.digits + "_.:+-")
    assert ID_CHARS == r"A-Za-z0-9_.:+\-"


@pytest.mark.parametrize(("raw", "safe"), [
    ("route 12/frame#3", "route_12_frame_3"), ("é-ok:1+2.x", "_-ok:1+2.x"), ("a\nb", "a_b"), ("", ""),
])
def test_safe_id_replaces_every_other_character(raw: str, safe: str) -> None:
    assert safe_id(raw) == safe


def test_a_safe_id_that_starts_with_a_letter_passes_the_check() -> None:
    check_sample_ids([_Id("x" + safe_id("weird id/ü\t!"))], source="s")  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"ids must match \^\[A-Za-z0-9\]\[A-Za-z0-9_\.:\+\\-\]\*\$"):
        check_sample_ids([_Id("bad id")], source="s")  # type: ignore[list-item]


def test_sample_ids_are_checked_with_fullmatch() -> None:
    """Sample ids are checked against the whole id pattern: "trail\\n" is refused (a '$' alone matches
    before a final newline)."""
    from pytest_uiground.record.geometry import Box
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample, Target, check_sample_ids

    def sample(sid: str) -> Sample:
        return Sample(sid, ImageRef.from_source("k", lambda: b""), "x", "point", Target(box=Box(0, 0, 1, 1)))

    check_sample_ids([sample("trail")], source="t")
    with pytest.raises(ValueError, match=r"sample id 'trail\\n' is not usable"):
        check_sample_ids([sample("trail\n")], source="t")
