"""The one lock helper (issue 42): a lock held elsewhere is refused naming its holder's pid, any other failure
to lock is the error it is (never "another run holds it"), the lock file goes on release, and where the
platform has no ``fcntl`` the ``filelock`` package gives the same behaviour. ``flock`` locks conflict between
two opens of a file in one process, so these run in-process; the refusals through real runs are in
tests/gate/test_gate_lifecycle.py and tests/report/test_report_writing.py."""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path

import pytest

from pytest_uiground.gate import baseline as baseline_mod
from pytest_uiground.record import locks


@pytest.fixture(params=["fcntl", "filelock"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs on both backends: fcntl's flock, and the filelock package (what Windows gets)."""
    if request.param == "filelock":
        monkeypatch.setattr(locks, "FCNTL", None)
    return str(request.param)


def test_a_held_lock_is_refused_naming_its_holder(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "sub" / "x.lock"
    first, second = locks.FileLock(path), locks.FileLock(path)
    assert first.acquire() is None and path.is_file()
    assert second.acquire() == locks.Busy(str(os.getpid()))
    first.release()
    assert not path.exists(), "the lock file is removed on release"
    assert second.acquire() is None
    second.release()


def test_a_waiting_acquire_gets_the_lock_once_it_is_released(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "x.lock"
    first = locks.FileLock(path)
    assert first.acquire() is None
    got: list[float] = []

    def wait() -> None:
        with locks.FileLock(path):
            got.append(time.monotonic())

    thread = threading.Thread(target=wait)
    thread.start()
    time.sleep(0.3)
    assert not got, "the waiter got a held lock"
    released = time.monotonic()
    first.release()
    thread.join(10)
    assert got and got[0] >= released


def test_a_folder_is_locked_without_leaving_a_file(tmp_path: Path, backend: str) -> None:
    folder = tmp_path / "annotations"
    folder.mkdir()
    with locks.FileLock(folder, folder=True):
        assert locks.FileLock(folder, folder=True).acquire() is not None
    assert list(folder.iterdir()) == []
    assert locks.FileLock(folder, folder=True).acquire() is None


def test_a_failure_to_lock_is_not_taken_for_another_update(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """flock failing with ENOLCK (a filesystem without locks) used to read as "another --snapshot-update is
    writing baselines"; now the refusal names the real cause and no other process."""
    import fcntl

    def no_locks(fd: int, op: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    why = baseline_mod.UpdateLock(tmp_path).acquire()
    assert why is not None and "No locks available" in why and "another --snapshot-update" not in why
    assert "--uiground-baselines" in why
    with pytest.raises(OSError, match="No locks available"):
        baseline_mod.ReportLock(tmp_path / "out").acquire()


def test_the_report_lock_names_its_holder_without_parsing_another_message(tmp_path: Path, backend: str) -> None:
    held = baseline_mod.ReportLock(tmp_path)
    assert held.acquire() is None
    try:
        why = baseline_mod.ReportLock(tmp_path).acquire()
        assert why == (f"another pytest run is writing the report folder {str(tmp_path)!r} (pid {os.getpid()}, "
                       f"lock {tmp_path / baseline_mod.ReportLock.NAME}); wait for it to finish, or give this run "
                       "another --uiground-report folder")
        busy = baseline_mod.UpdateLock(tmp_path / "b")
        assert busy.acquire() is None
        try:
            assert f"(pid {os.getpid()}, " in str(baseline_mod.UpdateLock(tmp_path / "b").acquire())
        finally:
            busy.release()
    finally:
        held.release()
    assert not (tmp_path / baseline_mod.ReportLock.NAME).exists()


def test_every_lock_in_the_package_is_the_helper() -> None:
    """No module but the helper touches fcntl (an unguarded import fails where the platform has none)."""
    root = Path(locks.__file__).parents[1]
    users = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if "fcntl" in p.read_text(encoding="utf-8"))
    assert users == [str(Path("record") / "locks.py")]
