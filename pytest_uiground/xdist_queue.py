"""Which sample tests this process will run next: the batch look-ahead.

Without xdist that is the session's item order. An xdist worker runs only what the
controller sends it, so it reads its own queue of item indices, a private structure
of pytest-xdist (``WorkerInteractor.torun`` / ``nextitem_index``); if that cannot be
read (xdist changed), it predicts one sample at a time rather than predicting
samples another worker will run. All xdist internals the plugin touches are here.
"""

from __future__ import annotations

from collections.abc import Container

import pytest

from .items import SAMPLE_ARG, suite_path_of
from .sample import Sample


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
    """Up to ``n`` samples of the same suite that this process will run after ``item``."""

    def __init__(self, worker_id: str) -> None:
        self.worker_id = worker_id
        self._order: dict[str, int] | None = None

    def upcoming(self, item: pytest.Item, n: int, skip: Container[str]) -> list[Sample]:
        if n <= 0:
            return []
        items = item.session.items
        if self._order is None:
            self._order = {it.nodeid: i for i, it in enumerate(items)}
        start = self._order.get(item.nodeid)
        if start is None:
            return []
        if self.worker_id == "master":
            upcoming: list[pytest.Item] = items[start + 1 :]
        else:
            queue = worker_queue(item.config)
            if queue is None:
                return []
            upcoming = [items[i] for i in queue if 0 <= i < len(items)]
        path = suite_path_of(item)
        found: list[Sample] = []
        for nxt in upcoming:
            callspec = getattr(nxt, "callspec", None)
            sample = callspec.params.get(SAMPLE_ARG) if callspec is not None else None
            if not isinstance(sample, Sample) or suite_path_of(nxt) != path:
                break
            if sample.invalid is None and sample.id not in skip:
                found.append(sample)
            if len(found) >= n:
                break
        return found
