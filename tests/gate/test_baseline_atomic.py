"""A baseline read while ``--snapshot-update`` rewrites it is one whole generation, never half new and
half old (issue 34, item 8: 167 of 6,369 reads mixed, and a plain run failed with "the baseline's two
halves disagree"). A writer thread rewrites the pair in a loop, each generation numbered in both halves,
while this thread reads it in a loop; every read must carry one number in samples.json and in every
snapshot, and no read may find the suite new or damaged."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from pytest_uiground.gate import baseline as baseline_mod
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.score import Score

READS = 2000
GENERATIONS = 30  # at least this many rewrites during the reads (each fsyncs its files: slower than a read)
SECONDS = 10.0  # the loop's bound on a loaded machine; alone, it takes about a second


def _pair(root: Path, gen: int) -> None:
    rs = [SampleResult(suite="s", id=f"id{i}", task="point", meta={}, score=Score(100.0, True)) for i in range(20)]
    snaps = {f"m{k}": {"metric": f"m{k}", "slice": None, "value": float(gen % 100), "n": 20, "samples": str(gen)}
             for k in range(3)}
    baseline_mod.write(root, "s", rs, {"generation": gen}, snapshots=snaps)


def test_a_read_during_updates_is_one_generation(tmp_path: Path) -> None:
    _pair(tmp_path, 0)
    stop = threading.Event()
    written = [0]
    errors: list[BaseException] = []

    def rewrite() -> None:
        try:
            while not stop.is_set():
                written[0] += 1
                _pair(tmp_path, written[0])
        except BaseException as exc:  # reported by the reading thread
            errors.append(exc)

    writer = threading.Thread(target=rewrite, daemon=True)
    writer.start()
    mixed, other, reads, seen = 0, [], 0, set()
    deadline = time.monotonic() + SECONDS
    try:
        while (reads < READS or written[0] < GENERATIONS) and time.monotonic() < deadline:
            base = baseline_mod.load(tmp_path, "s")
            reads += 1
            if base is None or base.damaged or base.snapshots is None:
                other.append(base.damaged if base is not None else "read as a new suite")
                continue
            gens = {base.provenance.get("generation")} | {s["samples"] for s in base.snapshots.values()}
            gens = {str(g) for g in gens}
            seen |= gens
            mixed += len(gens) != 1 or len(base.snapshots) != 3
    finally:
        stop.set()
        writer.join(timeout=10)
    assert not errors, errors
    assert reads >= min(READS, 200), f"only {reads} reads in {SECONDS} s"
    assert written[0] >= GENERATIONS and len(seen) > GENERATIONS // 2, f"only {written[0]} rewrites in {SECONDS} s"
    assert mixed == 0 and not other, f"{mixed} mixed and {len(other)} failed reads of {reads}: {other[:3]}"


def test_an_update_keeps_the_reviewed_layout_and_the_reviewers_files(tmp_path: Path) -> None:
    """The swap leaves the files at their committed paths (nothing added beside the suite, no staging
    folder left), keeps a file a reviewer put in the folder, and a folder written by an earlier version
    (files renamed in place) loads unchanged."""
    _pair(tmp_path, 1)
    (tmp_path / "s" / "README.md").write_text("why this baseline")
    before = baseline_mod.load(tmp_path, "s")
    _pair(tmp_path, 2)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "s", "s/README.md", "s/samples.json", "s/snapshots", "s/snapshots/test_aggregate[m0].json",
        "s/snapshots/test_aggregate[m1].json", "s/snapshots/test_aggregate[m2].json"]
    after = baseline_mod.load(tmp_path, "s")
    assert before is not None and after is not None and after.damaged is None
    assert (before.provenance["generation"], after.provenance["generation"]) == (1, 2)
    for suite in ("detection", "synthetic"):  # the committed ones, as reviewed in git
        committed = baseline_mod.load(Path(__file__).parents[2] / "baselines", suite)
        assert committed is not None and committed.damaged is None and committed.entries and committed.snapshots


def test_a_folder_missing_mid_update_is_waited_for_and_an_interrupted_swap_is_damage(tmp_path: Path) -> None:
    """Between the two renames the suite's folder is missing: a reader must not take the suite for new.
    If the update never finishes the swap (killed between the renames), the previous baseline sits in
    ``.s.old``: the read is damaged, naming the fix, so a drop cannot pass as "no baseline yet"; a staged
    ``.s.new`` alone (killed before the swap) is no baseline."""
    _pair(tmp_path, 1)
    staged, old = baseline_mod.staging_dirs(tmp_path, "s")
    (tmp_path / "s").rename(old)
    timer = threading.Timer(0.05, lambda: old.rename(tmp_path / "s"))  # the second rename, a moment later
    timer.start()
    waited = baseline_mod.load(tmp_path, "s")
    timer.join()
    assert waited is not None and waited.damaged is None and waited.provenance["generation"] == 1
    (tmp_path / "s").rename(old)
    stuck = baseline_mod.load(tmp_path, "s")
    assert stuck is not None and stuck.damaged is not None
    assert "rename .s.old back to s" in stuck.damaged and "--snapshot-update" in stuck.damaged
    _pair(tmp_path, 2)  # an update after it replaces what was left
    assert not old.exists() and not staged.exists()
    assert baseline_mod.load(tmp_path, "s").provenance["generation"] == 2  # type: ignore[union-attr]
    (tmp_path / "s").rename(staged)
    assert baseline_mod.load(tmp_path, "s") is None
