"""Which sample tests this process will run next: the batch look-ahead.

Without xdist that is the session's item order. An xdist worker runs only what the
controller sends it, so it reads its own queue of item indices, a private structure
of pytest-xdist (``WorkerInteractor.torun`` / ``nextitem_index``); if that cannot be
read (xdist changed), it predicts one sample at a time rather than predicting
samples another worker will run. All xdist internals the plugin touches are here.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from pathlib import Path

import pytest

from pytest_uiground.record.sample import Sample
from pytest_uiground.suite.items import SAMPLE_ARG, suite_path_of


def worker_queue(config: pytest.Config) -> list[int] | None:
    """The item indices this xdist worker will run next, in order, or None if unknown."""
    for plugin in config.pluginmanager.get_plugins():
        torun = getattr(plugin, "torun", None)
        if torun is None or not hasattr(plugin, "nextitem_index") or not hasattr(torun, "lock"):
            continue
        try:
            with torun.lock() as queued:
                pending = list(queued)
        except Exception:  # an xdist version with another queue: no look-ahead
            return None
        head = [plugin.nextitem_index]
        return [i for i in head + pending if isinstance(i, int)]
    return None


class Lookahead:
    """The samples of one suite that this process will run after a given test.

    Every item's sample and suite file are read once (the first call), so a call costs
    what it looks at, not the length of the session: the worker asks on every sample
    test, and a 50,000-sample suite must not make that quadratic. A caller that walks
    ahead step by step (the request window of :class:`.predictors.Streaming`) passes back the position
    where its previous call stopped (``horizon``) instead of walking again over what it
    has already handed to the model.
    """

    def __init__(self, worker_id: str) -> None:
        self.worker_id = worker_id
        self._order: dict[str, int] | None = None
        self._entries: list[tuple[Sample | None, Path | None]] = []

    def _position(self, item: pytest.Item) -> int | None:
        if self._order is None:
            items = item.session.items
            self._order = {it.nodeid: i for i, it in enumerate(items)}
            self._entries = [_entry(it) for it in items]
        return self._order.get(item.nodeid)

    def _positions(self, item: pytest.Item, start: int, horizon: int | None) -> Sequence[int]:
        """Positions of the items this process runs after ``start`` (after ``horizon`` where
        that is still to come), in order; empty when unknown."""
        count = len(self._entries)
        if self.worker_id == "master":
            first = horizon if horizon is not None and horizon > start else start
            return range(first + 1, count)
        queue = worker_queue(item.config)
        if queue is None:
            return []
        queue = [i for i in queue if 0 <= i < count]
        if horizon is not None and horizon in queue:
            return queue[queue.index(horizon) + 1:]
        return queue

    def upcoming(self, item: pytest.Item, n: int, skip: Container[str] = ()) -> list[Sample]:
        """Up to ``n`` samples of ``item``'s suite that this process runs after ``item``,
        leaving out invalid samples and the ids in ``skip``."""
        return self.after(item, n, skip)[0]

    def after(self, item: pytest.Item, n: int, skip: Container[str] = (),
              horizon: int | None = None) -> tuple[list[Sample], int | None]:
        """:meth:`upcoming`, continuing after ``horizon`` (a position an earlier call returned)
        while that still lies ahead; also returns the position of the last item looked at
        (``horizon`` again when nothing was)."""
        if n <= 0:
            return [], horizon
        start = self._position(item)
        if start is None:
            return [], horizon
        path = self._entries[start][1]
        if horizon is not None and not (0 <= horizon < len(self._entries) and self._entries[horizon][1] == path):
            horizon = None  # another suite's (items of several suites interleaved): start after the item
        found: list[Sample] = []
        last = horizon
        for pos in self._positions(item, start, horizon):
            sample, suite = self._entries[pos]
            if sample is None or suite != path:
                break
            last = pos
            if sample.invalid is None and sample.id not in skip:
                found.append(sample)
                if len(found) >= n:
                    break
        return found, last


def _entry(item: pytest.Item) -> tuple[Sample | None, Path | None]:
    """An item's sample and suite file (None, None for items that are not sample tests)."""
    callspec = getattr(item, "callspec", None)
    sample = callspec.params.get(SAMPLE_ARG) if callspec is not None else None
    if not isinstance(sample, Sample):
        return None, None
    return sample, suite_path_of(item)
