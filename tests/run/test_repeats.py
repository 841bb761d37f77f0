"""The repeats of ``--uiground-repeat`` and the re-asks of ``--uiground-confirm`` (pytest_uiground.run.repeats),
driven directly with a fake model and fake items: each round of a sample is asked in its own seeded batch, the
mates' answers serve their own round (about K-1 passes in all, not K-1 per sample), company fills a batch at
the end of the queue without being kept, and a confirmation asks the sample alone every time."""

from __future__ import annotations

from test_pipeline import fake_items, samples  # tests/ is on sys.path (its conftest.py)
from test_predictors import Fake

from pytest_uiground.run.repeats import Repeats, confirm


def test_each_round_is_its_own_batch_and_the_mates_answers_are_kept_for_their_round() -> None:
    suite = samples(12)
    items = fake_items({"a": suite})
    model = Fake()
    reps = Repeats(model, worker_id="master", batch_size=4, seed=3)
    answers = {s.id: reps.answers(items[i], s, 3, suite) for i, s in enumerate(suite)}
    assert all(len(a) == 2 and all(p.raw == sid for p in a) for sid, a in answers.items())
    asked = [sid for batch in model.calls for sid in batch]
    kept = {sid for sid in asked if asked.count(sid) >= 2}
    assert len(model.calls) < 2 * len(suite), "mates answer their own round: fewer calls than one per repeat"
    assert all(len(b) <= 4 for b in model.calls)
    assert kept == {s.id for s in suite}, "every sample asked in both rounds"
    firsts = [b for b in model.calls if suite[0].id in b]
    assert len(firsts) == 2 and firsts[0] != firsts[1], "two rounds, two different batches"
    assert reps.held == {}, "every held answer was taken by its test"


def test_company_fills_the_last_batch_and_is_not_kept() -> None:
    suite = samples(6)
    items = fake_items({"a": suite})
    model = Fake()
    reps = Repeats(model, worker_id="master", batch_size=4, seed=0)
    last = len(suite) - 1
    got = reps.answers(items[last], suite[last], 2, suite)
    assert [p.raw for p in got] == [suite[last].id]
    assert len(model.calls) == 1 and len(model.calls[0]) == 4, "nothing lies ahead: the batch is filled anyway"
    assert reps.held == {}, "company's answers are not kept for tests that already ran"


def test_a_confirmation_asks_the_sample_alone_each_time_until_one_is_right() -> None:
    """Sequential: alone each time, one call after another, stopping at the first right answer or after K."""
    s = samples(1)[0]
    model = Fake()
    preds, rights = confirm(model, s, 3, lambda p: False)
    assert [p.raw for p in preds] == [s.id] * 3 and model.calls == [[s.id]] * 3 and rights == [False] * 3
    for verdicts, asked in (([True], 1), ([False, True], 2), ([False, False, True], 3)):
        model, said = Fake(), iter(verdicts)
        preds, rights = confirm(model, s, 3, lambda p, said=said: next(said))
        assert rights == verdicts and len(preds) == asked and model.calls == [[s.id]] * asked
    model = Fake()
    assert confirm(model, s, 0, lambda p: False) == ([], []) and model.calls == [], "K = 0 asks nothing"
