"""Worker side of judged suites: score answers with the judge, in parallel, safely.

The runner predicts a batch of samples at once; :class:`JudgedScorer` then sends the
batch's answers to the judge on a small thread pool (``--uiground-judge-concurrency``), so a
remote judge's latency overlaps instead of adding up. Each sample's test waits only
for its own score. What a judge failure costs is decided here:

* unparseable reply → the sample's error by default (counted as
  ``judge_parse_error``); with ``--uiground-judge-parse-errors zero`` a 0 scored as a format
  error, as the reference does;
* unreachable judge → the sample's error, and the session is told to stop;
* samples in the seeded ``--uiground-judge-repeat`` subset are scored K times; the spread is
  kept in the sample's score notes for the summary.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pytest_uiground.judges.base import Judge, JudgeCallError, JudgeParseError, JudgeUnreachable
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import Score

RAW_LIMIT = 300


@dataclass
class Judged:
    """A judged sample: its score, or the error that took its place."""

    score: Score | None
    error: str | None = None
    unreachable: bool = False
    notes: dict[str, Any] = field(default_factory=dict)


ScoreFn = Callable[[Sample, Prediction, Judge, int], Score]


class JudgedScorer:
    def __init__(self, judge: Judge, score_fn: ScoreFn, *, parse_errors: str = "error", repeat: int = 1,
                 repeat_ids: frozenset[str] = frozenset()) -> None:
        self.judge, self.parse_errors, self.repeat = judge, parse_errors, repeat
        self.repeat_ids = repeat_ids
        self.score_fn = score_fn
        self._pool: ThreadPoolExecutor | None = None
        self._pending: dict[str, Future[Judged]] = {}

    def submit(self, sample: Sample, pred: Prediction) -> None:
        """Start judging ``sample`` in the background (a no-op when already started)."""
        if sample.id in self._pending or pred.error is not None:
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max(1, self.judge.options.concurrency), thread_name_prefix="uiground-judge")
        self._pending[sample.id] = self._pool.submit(self.judge_one, sample, pred)

    def result(self, sample: Sample, pred: Prediction) -> Judged:
        future = self._pending.pop(sample.id, None)
        return future.result() if future is not None else self.judge_one(sample, pred)

    def judge_one(self, sample: Sample, pred: Prediction) -> Judged:
        first = self._attempt(sample, pred, 0)
        if first.score is None or sample.id not in self.repeat_ids or self.repeat <= 1:
            return first
        values = [first.score.value]
        for r in range(1, self.repeat):
            again = self._attempt(sample, pred, r)
            if again.score is None:
                first.score.notes["judge_repeat_error"] = again.error
                break
            values.append(again.score.value)
        first.score.notes["judge_repeats"] = values
        first.score.notes["judge_spread"] = max(values) - min(values)
        return first

    def _attempt(self, sample: Sample, pred: Prediction, repeat: int) -> Judged:
        """One judging of the sample; a damaged judge-cache entry met on the way is noted on it."""
        judged = self._score(sample, pred, repeat)
        damaged = self.judge.cache_problems()
        if damaged:
            (judged.score.notes if judged.score is not None else judged.notes)["judge_cache"] = damaged
        return judged

    def _score(self, sample: Sample, pred: Prediction, repeat: int) -> Judged:
        try:
            return Judged(self.score_fn(sample, pred, self.judge, repeat))
        except JudgeUnreachable as exc:
            return Judged(None, str(exc), unreachable=True)
        except JudgeCallError as exc:
            return Judged(None, f"the judge request failed: {exc}")
        except JudgeParseError as exc:
            raw = exc.raw if len(exc.raw) <= RAW_LIMIT else exc.raw[:RAW_LIMIT] + "..."
            notes = {"judge_parse_error": True, "judge_problem": exc.problem, "judge_reply": raw}
            if self.parse_errors == "zero":
                return Judged(Score(0.0, None, True, notes=notes))
            return Judged(None, f"the judge's reply could not be parsed ({exc.problem}); reply: {raw!r}. "
                                "Scored 0 and counted; --uiground-judge-parse-errors zero scores it 0 silently, as the "
                                "reference does", notes=notes)
        except Exception as exc:  # bad data the scorer reads while scoring (e.g. a missing annotation file)
            return Judged(None, f"scoring failed: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Stop the pool; the backend is shared between suites and closed by its owner."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
