"""Asking a sample more than once: ``--uiground-repeat K`` and ``--uiground-confirm K``.

Why: a model served on a GPU answers some samples differently from one run to the next (the batch a
sample is asked in changes the kernels; a server adds its own sampling), so one right-to-wrong flip
is not evidence by itself. Two ways to measure that noise, both without the prediction cache (a cached
answer would make every repeat agree):

* **Repeat** (``--uiground-repeat K``): every sample is asked K-1 more times, each time in another
  batch: the sample with up to ``batch size - 1`` mates drawn (seeded) from the samples this process
  runs next, in a shuffled order, so the composition and the position differ from the main pass and
  from each other repeat. The mates' answers are kept for their own repeat of that round, so the
  extra cost stays about K-1 passes, not K-1 passes per sample. Where this process has too few
  samples ahead (the end of the suite, or an xdist worker that knows only a few of its next tests),
  the batch is filled with other samples of the suite, whose answers are only company: asked alone
  every time, a batch-dependent model would look stable. A served model gets a separate request for
  every repeat (its ``predict`` sends one per sample).
* **Confirm** (``--uiground-confirm K``): a regressed sample is asked again alone (batch 1, a fresh
  request), one answer at a time, until one is right (it is unstable) or K were wrong (a confirmed
  regression), and a fixed one until one is wrong or as many were right as the baseline's repeats need:
  the sequential rule of :mod:`pytest_uiground.record.outcome`.

The answers are scored with the suite's own scorer by the caller (a confirmation is handed the scorer, as
it must know each answer before asking the next); here they are only asked.
Cf. lm-evaluation-harness issue #1645 ("Different batch sizes give different results") and vLLM's
batch-invariant mode, which exist for the same reason.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import pytest

from pytest_uiground.models.base import Model
from pytest_uiground.record.outcome import confirmation_done
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.run.lookahead import Lookahead
from pytest_uiground.run.pipeline import predict_isolated

POOL = 4
"""Mates are drawn from the next ``POOL x batch size`` samples this process runs (a wider pool mixes
more, a narrower one keeps the held answers few)."""


class Repeats:
    """The extra answers of one process, held by (sample id, round) until the sample's test takes them."""

    def __init__(self, model: Model, *, worker_id: str, batch_size: int, seed: int) -> None:
        self.model = model
        self.size = max(1, batch_size, model.preferred_batch_size)
        self.look = Lookahead(worker_id)
        self.seed = seed
        self.held: dict[tuple[str, int], Prediction] = {}

    def answers(self, item: pytest.Item, sample: Sample, k: int, suite: Sequence[Sample] = ()) -> list[Prediction]:
        """``k - 1`` more answers for ``sample``: round ``r`` in its own seeded batch (module docstring);
        ``suite``: the suite's samples, company for a batch when too few lie ahead."""
        out: list[Prediction] = []
        for r in range(1, k):
            if (sample.id, r) not in self.held:
                self._ask_round(item, sample, r, suite)
            out.append(self.held.pop((sample.id, r)))
        return out

    def _ask_round(self, item: pytest.Item, sample: Sample, r: int, suite: Sequence[Sample]) -> None:
        rng = random.Random(f"{self.seed}|{sample.id}|{r}")
        mates: list[Sample] = []
        keep: set[str] = {sample.id}
        if self.size > 1:
            done = {sid for sid, rr in self.held if rr == r}
            pool = self.look.upcoming(item, POOL * self.size, done)
            mates = rng.sample(pool, min(self.size - 1, len(pool)))
            keep |= {m.id for m in mates}
            want = self.size - 1 - len(mates)
            taken = set(keep)
            for i in (rng.randrange(len(suite)) for _ in range(4 * want if suite else 0)):  # a few draws, not a scan
                if want <= 0:
                    break
                s = suite[i]
                if s.invalid is None and s.id not in taken:
                    taken.add(s.id)
                    mates.append(s)
                    want -= 1
        batch = [sample, *mates]
        rng.shuffle(batch)
        for s, pred in zip(batch, predict_isolated(self.model, batch), strict=True):
            if s.id in keep:
                self.held[(s.id, r)] = pred

    def close(self) -> None:
        self.held.clear()


def confirm(model: Model, sample: Sample, k: int, right: Callable[[Prediction], bool], stop_on: bool = True
            ) -> tuple[list[Prediction], list[bool]]:
    """Up to ``k`` answers for ``sample``, each asked alone (batch 1, a fresh request, no cache), one at a
    time until one is ``stop_on`` by ``right`` (the suite's scorer: right for a regression, wrong for a fix)
    or ``k`` were asked; the answers and whether each was right."""
    preds: list[Prediction] = []
    rights: list[bool] = []
    while not confirmation_done(rights, k, stop_on):
        pred = predict_isolated(model, [sample])[0]
        preds.append(pred)
        rights.append(right(pred))
    return preds, rights
