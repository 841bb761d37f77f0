"""SIGTERM asks the run to stop after the test in progress, on the controller and on every xdist worker.

``timeout``, ``docker stop`` and a cancelled CI job send SIGTERM, to the main process or to the whole
process group (the xdist workers too). Raising KeyboardInterrupt from the handler, as this plugin did
before, lands wherever the main thread is (inside a report write, where pytest does not catch it)
and could leave a half-written report folder; a worker killed by the default action looks to
pytest-xdist like a crash to replace. Here the first signal only sets the flags pytest and
pytest-xdist check between tests (``session.shouldstop``; the xdist controller's own), so the stop
happens where they expect it: a worker finishes its test and reports that it stopped, the controller
concludes what finished, marked interrupted, writes the report and JUnit XML, and exits 2. A second
SIGTERM raises KeyboardInterrupt at once: the sender insists.
"""

from __future__ import annotations

import contextlib
import signal
from typing import Any

import pytest


class StopOnSigterm:
    """A plugin that installs the handler for the session and restores the previous one after it."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.session: pytest.Session | None = None
        self.signals = 0
        self.previous: Any = None
        with contextlib.suppress(ValueError):  # pytest.main() run from another thread: no handler there
            self.previous = signal.signal(signal.SIGTERM, self)

    def __call__(self, signum: int, frame: Any) -> None:
        self.signals += 1
        reason = f"signal {signum} (SIGTERM)"
        if self.signals > 1 or self.session is None:
            raise KeyboardInterrupt(reason)
        self.session.shouldstop = reason
        dsession = self.config.pluginmanager.get_plugin("dsession")  # pytest-xdist's controller loop
        if dsession is not None:
            dsession.shouldstop = reason

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def pytest_unconfigure(self) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)
            self.previous = None
