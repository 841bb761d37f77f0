"""One advisory lock helper for every lock in the package (issue 42).

Why one: the package held hand-written ``fcntl`` locks that each got something wrong. The baseline
update lock imported ``fcntl`` unguarded (an ImportError on a platform without it) and took *any*
``flock`` failure for "another run holds it" (``ENOLCK`` on a network filesystem was reported as a
concurrent update); the report lock found its holder's pid by cutting it out of the update lock's
error message. Here the lock is one class:

* where the platform has ``fcntl`` (Linux, macOS), an exclusive ``flock`` on the file (or on a
  folder itself, which leaves no lock file beside what it guards). The kernel drops it when the
  process dies, so a killed run never blocks the next one;
* elsewhere (Windows), the ``filelock`` package's lock on the same path (a core dependency);
* only a lock held by someone else is :class:`Busy` (``EWOULDBLOCK``/``EAGAIN``/``EACCES``, or
  ``filelock.Timeout``); any other failure is the ``OSError`` it is, for the caller to name;
* a file lock holds its holder's pid, so a refusal can name the process to wait for; a lock file is
  removed on release (the folders it sits in keep only reviewable files), and a lock taken on a file
  that its previous holder unlinked meanwhile is taken again on the file now at the path, so two
  processes never both hold "the" lock.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any


def _load_fcntl() -> ModuleType | None:
    try:
        import fcntl
    except ImportError:  # Windows: the filelock package instead
        return None
    return fcntl


FCNTL: ModuleType | None = _load_fcntl()
"""``fcntl`` where the platform has it; None selects the ``filelock`` package (tests set it to None)."""

_HELD_ELSEWHERE = {errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES}
FOLDER_LOCK_NAME = ".uiground.lock"
"""The lock file inside a locked folder where a folder cannot be locked itself (no ``fcntl``)."""


@dataclass(frozen=True)
class Busy:
    """The lock is held by another process (or another open of it); ``holder`` is its pid as it wrote it, or ``?``."""

    holder: str


class FileLock:
    """An exclusive advisory lock on ``path``: a lock file, created when missing and removed on release; or,
    with ``folder``, the folder itself (never created or removed).

    ``acquire(wait=False)`` returns None when held now, :class:`Busy` when another holds it; ``wait=True``
    blocks until it is free. As a context manager it waits."""

    def __init__(self, path: Path, *, folder: bool = False) -> None:
        self.path, self.folder = path, folder
        self._fd: int | None = None
        self._portable: Any = None  # a filelock.FileLock while held without fcntl

    @property
    def held(self) -> bool:
        return self._fd is not None or self._portable is not None

    def acquire(self, *, wait: bool = False) -> Busy | None:
        if self.held:
            raise RuntimeError(f"the lock {self.path} is already held by this object")
        if FCNTL is None:
            return self._acquire_portable(wait)
        return self._acquire_folder(FCNTL, wait) if self.folder else self._acquire_file(FCNTL, wait)

    def _acquire_file(self, fcntl: ModuleType, wait: bool) -> Busy | None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                busy = _flock(fcntl, fd, wait)
                if busy:
                    return Busy(os.pread(fd, 64, 0).decode(errors="replace").strip() or "?")
                try:
                    same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
                except FileNotFoundError:
                    same = False
                if same:  # not a file the previous holder unlinked while we waited to lock it
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, str(os.getpid()).encode(), 0)
                    self._fd, fd = fd, -1
                    return None
            finally:
                if fd >= 0:
                    os.close(fd)

    def _acquire_folder(self, fcntl: ModuleType, wait: bool) -> Busy | None:
        fd = os.open(self.path, os.O_RDONLY)
        try:
            if _flock(fcntl, fd, wait):
                return Busy("?")
            self._fd, fd = fd, -1
            return None
        finally:
            if fd >= 0:
                os.close(fd)

    def _lock_file(self) -> Path:
        return self.path / FOLDER_LOCK_NAME if self.folder else self.path

    def _acquire_portable(self, wait: bool) -> Busy | None:
        import filelock

        path = self._lock_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(str(path))
        try:
            lock.acquire(timeout=-1 if wait else 0)
        except filelock.Timeout:
            try:
                holder = path.read_text(encoding="utf-8", errors="replace").strip()[:64]
            except OSError:
                holder = ""
            return Busy(holder or "?")
        self._portable = lock
        try:
            path.write_text(str(os.getpid()), encoding="utf-8")
        except OSError:
            pass  # a platform that refuses a second handle on a locked file: the refusal says "pid ?"
        return None

    def release(self) -> None:
        """Remove a lock file (not a locked folder), then unlock: removing first means a process that opened
        the old file meanwhile finds it unlinked once it gets the lock, and takes the new one instead."""
        if self._fd is not None:
            if not self.folder:
                self.path.unlink(missing_ok=True)
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None
        if self._portable is not None:
            try:
                self._lock_file().unlink(missing_ok=True)
            except OSError:
                pass  # a platform that cannot remove an open file: filelock removes or reuses it
            self._portable.release()
            self._portable = None

    def __enter__(self) -> FileLock:
        busy = self.acquire(wait=True)
        assert busy is None  # a waiting acquire returns only once held
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _flock(fcntl: ModuleType, fd: int, wait: bool) -> bool:
    """Lock ``fd``; True when another holds it (only with ``wait=False``). Other failures raise."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError as exc:
        if not wait and exc.errno in _HELD_ELSEWHERE:
            return True
        raise
    return False
