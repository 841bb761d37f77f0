"""pytest_uiground.record.files: stable digests and the one atomic write (cache entries, baselines, reports)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_uiground.record.files import atomic_write_text, digest, stage_text, write_entry


def test_digest_ignores_key_order_and_tells_data_apart() -> None:
    a = digest({"sample": "s1", "prompt": "Click OK", "nested": {"x": 1, "y": 2}})
    b = digest({"nested": {"y": 2, "x": 1}, "prompt": "Click OK", "sample": "s1"})
    assert a == b
    assert len(a) == 64 and int(a, 16) >= 0  # a sha256 hex digest
    assert digest({"sample": "s2", "prompt": "Click OK", "nested": {"x": 1, "y": 2}}) != a
    assert digest({"n": 1}) != digest({"n": "1"})  # JSON types matter


def test_digest_takes_non_json_values_as_their_text() -> None:
    assert digest({"path": Path("a/b")}) == digest({"path": "a/b"})


def test_write_entry_creates_folders_and_replaces_whole_entries(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "entry.json"
    write_entry(path, {"raw": "(1, 2)", "v": 1})
    assert json.loads(path.read_text(encoding="utf-8")) == {"raw": "(1, 2)", "v": 1}
    write_entry(path, {"raw": "(3, 4)"})
    assert json.loads(path.read_text(encoding="utf-8")) == {"raw": "(3, 4)"}
    assert [p.name for p in path.parent.iterdir()] == ["entry.json"]  # no temp file left behind


def test_a_failed_write_keeps_the_old_entry_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "entry.json"
    write_entry(path, {"ok": True})
    with pytest.raises(TypeError):
        write_entry(path, {"bad": object()})  # not JSON-able: fails half way through the dump
    assert json.loads(path.read_text(encoding="utf-8")) == {"ok": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.json"]


def test_cache_entries_and_baselines_share_one_write_readable_by_others(tmp_path: Path) -> None:
    """One implementation: a cache entry gets the same 0644 mode as a baseline (mkstemp's 0600 would
    hide a shared cache from the other users of the machine)."""
    write_entry(tmp_path / "entry.json", {"a": 1})
    atomic_write_text(tmp_path / "samples.json", "{}")
    assert {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()} == {"entry.json": 0o644,
                                                                               "samples.json": 0o644}


def test_a_failed_rename_keeps_the_target_and_removes_the_staged_file(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.mkdir()  # a folder where the file should go: os.replace fails
    with pytest.raises(OSError):
        atomic_write_text(target, "<html>")
    assert target.is_dir() and sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_staged_text_waits_beside_its_target_until_renamed(tmp_path: Path) -> None:
    staged = stage_text(tmp_path / "sub" / "samples.json", "{}", durable=False)
    assert staged.parent == tmp_path / "sub" and staged.name.startswith(".samples.json.")
    assert staged.read_text(encoding="utf-8") == "{}" and not (tmp_path / "sub" / "samples.json").exists()


def test_one_short_digest_with_the_values_already_recorded_in_baselines() -> None:
    """Five places cut sha256 hex digests to 16 characters; they share :func:`hex_digest` now, and
    each still yields the value the hand-written version did (fingerprints in committed baselines,
    judge prompt hashes and cache folders must not move)."""
    import hashlib
    from types import SimpleNamespace

    from pytest_uiground.benchmarks.bench2drive_vl import prompts
    from pytest_uiground.record.files import SHORT_DIGEST, hex_digest, ids_digest
    from pytest_uiground.suite.loading import LoadedSuite

    assert hex_digest("abc") == hashlib.sha256(b"abc").hexdigest()
    assert hex_digest(b"abc", short=True) == hex_digest("abc")[:SHORT_DIGEST] == "ba7816bf8f01cfea"
    assert digest({"a": 1}, short=True) == digest({"a": 1})[:16]
    ids = ["s2", "s1", "s3"]
    assert ids_digest(ids) == hashlib.sha256(b"s1\ns2\ns3").hexdigest()[:16] == ids_digest(sorted(ids))
    suite = SimpleNamespace(config=SimpleNamespace(loader_options={"n": 3, "seed": 0}),
                            samples=[SimpleNamespace(id=i) for i in ids])
    old = hashlib.sha256(repr(sorted({"n": 3, "seed": 0}.items())).encode())
    for i in ids:
        old.update(i.encode() + b"\0")
    assert LoadedSuite.fingerprint.fget(suite) == old.hexdigest()[:16]  # type: ignore[attr-defined]
    assert prompts.PROMPT_HASH == "1b2f2b62d880942e"  # as computed before the helper was shared
