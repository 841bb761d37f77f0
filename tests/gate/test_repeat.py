"""``--uiground-repeat K`` and ``--uiground-confirm K`` (pytest_uiground.run.repeats, gate/noise.py) and the
baseline's answers (gate/baseline.py ``a``): a gate that measures a model's own noise, does not blame a
sample for it, and shows both answers of every flip.

The stand-in model answers right everywhere except on a seeded share of samples, where its answer depends
on the batch it is asked in (the ids of the batch and the sample's place in it), as a GPU model's does;
samples listed in ``NOISY_WRONG`` are always wrong, those in ``NOISY_BATCHED`` wrong only when asked in a
batch of more than one (right alone: what ``--uiground-confirm`` exists for)."""

from __future__ import annotations

import hashlib
import json

import pytest
from conftest import Project

from pytest_uiground.gate.noise import disagreement, measure
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.result import SampleResult, Stability
from pytest_uiground.record.score import Score

NOISY_MODEL = '''
import hashlib, os
from pytest_uiground.record.geometry import Point
from pytest_uiground.record.prediction import Prediction

SHARE = float(os.environ.get("NOISY_SHARE", "0"))


def unstable(sample_id):
    return hashlib.sha256(("u|" + sample_id).encode()).digest()[0] < 256 * SHARE


class Noisy:
    name = "noisy"

    def __init__(self, options):
        self.options = options

    def predict(self, samples):
        ids = [s.id for s in samples]
        wrong = set(filter(None, os.environ.get("NOISY_WRONG", "").split(",")))
        batched = set(filter(None, os.environ.get("NOISY_BATCHED", "").split(",")))
        out = []
        for i, s in enumerate(samples):
            box = s.target.box
            right = s.id not in wrong and not (s.id in batched and len(samples) > 1)
            if right and unstable(s.id):
                right = hashlib.sha256(f"{s.id}|{i}|{'|'.join(ids)}".encode()).digest()[0] % 2 == 0
            p = box.center if right else (Point(1.0, 1.0) if box.x0 < 0.01 else Point(0.0, 0.0))
            out.append(Prediction(point=p, raw=f"noisy {p}"))
        return out

    def fingerprint(self):
        return {"model": "noisy"}

    def cache_key(self, sample):  # cacheable: the repeats must not be answered from the cache
        return {"sample": sample.id}


def create(options):
    return Noisy(options)
'''

BIG = {"screens = 4": "screens = 50", "targets_per_screen = 3": "targets_per_screen = 6"}


def noisy_project(project: Project, share: float, *, big: bool = False) -> None:
    project.pytester.makepyfile(noisymodels=NOISY_MODEL)
    project.monkeypatch.setenv("NOISY_SHARE", str(share))
    if big:
        suite = project.root / "suites" / "mini" / "suite.toml"
        text = suite.read_text()
        for a, b in BIG.items():
            text = text.replace(a, b)
        suite.write_text(text)


def run(project: Project, *args: str, wrong: tuple[str, ...] = (), batched: tuple[str, ...] = (),
        xdist: list[str] | None = None) -> pytest.RunResult:
    project.monkeypatch.setenv("NOISY_WRONG", ",".join(wrong))
    project.monkeypatch.setenv("NOISY_BATCHED", ",".join(batched))
    return project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "noisymodels:create", "-p", "no:cacheprovider", "-p", "no:randomly",
        "-o", "console_output_style=classic", "--uiground-batch-size", "4", *(xdist or []), *args)


def unstable_ids(ids: list[str], share: float) -> list[str]:
    return [i for i in ids if hashlib.sha256(("u|" + i).encode()).digest()[0] < 256 * share]


def test_disagreement_is_the_share_of_answer_pairs_that_differ() -> None:
    assert disagreement(3, 3) == disagreement(0, 3) == 0.0
    assert disagreement(1, 2) == 1.0
    assert disagreement(1, 3) == disagreement(2, 3) == pytest.approx(2 / 3)  # 4 of the 6 ordered pairs
    assert disagreement(1, 1) == 0.0


def test_measure_reports_the_rate_its_interval_and_the_noisiest_slice() -> None:
    def rec(i: int, right: int, of: int, group: str) -> SampleResult:
        return SampleResult("s", f"s{i:03d}", "point", meta={"group": group}, score=Score(100.0, True),
                            outcome=Outcome.PASS, stability=Stability(right, of))

    results = [rec(i, 3, 3, "a") for i in range(90)] + [rec(90 + i, 1 + i % 2, 3, "b") for i in range(10)]
    noise = measure(results, ["group"], bound=5.0)
    assert noise is not None
    assert noise.flip_rate == pytest.approx(100 * 10 * (2 / 3) / 100)
    assert noise.interval[0] < noise.flip_rate < noise.interval[1]
    assert noise.by_slice[0] == ("group=b", 10, pytest.approx(100 * 2 / 3))
    assert len(noise.unstable) == 10 and noise.over, "6.67 % is above the 5 % bound"
    assert measure([rec(0, 1, 1, "a")], ["group"]) is None, "a plain run has no noise figure"


@pytest.mark.slow
def test_repeat_three_reports_a_flip_rate_whose_interval_holds_the_true_rate(project: Project) -> None:
    """About 300 synthetic samples, a fifth of them answered at random by batch: two runs disagree on each of
    those with probability 1/2, so the true run-to-run flip rate is half the unstable share; the rate
    measured with three answers per sample (each repeat in another seeded batch, the cache on and
    unused) has it inside its 95 % interval."""
    share = 0.2
    noisy_project(project, share, big=True)
    ids = project.ids()
    truth = 100 * 0.5 * len(unstable_ids(ids, share)) / len(ids)
    assert len(ids) > 250 and 5 < truth < 15
    result = run(project, "--uiground-repeat", "3", "--uiground-report", "out", "--uiground-cache", "cache")
    noise = project.summary()["noise"]
    lo, hi = noise["interval"]
    assert noise["repeats"] == 3 and noise["samples"] == len(ids)
    assert lo <= truth <= hi, (truth, noise)
    assert hi - lo < 10, "the interval says something"
    assert set(noise["unstable"]) <= set(unstable_ids(ids, share)), "only the noisy samples are unstable"
    records = [json.loads(line) for line in (project.root / "out" / "samples.jsonl").read_text().splitlines()]
    assert {r["stability"]["of"] for r in records} == {3}
    assert "stability over 3 answers per sample" in result.stdout.str()


@pytest.mark.slow
def test_a_sample_unstable_in_the_baseline_never_fails_alone(project: Project, xdist: list[str]) -> None:
    """Baseline recorded with three answers per sample: a sample it saw flip, wrong in a later plain run, is
    listed as unstable and the run passes; a stable sample made wrong still fails the run."""
    share = 0.1
    noisy_project(project, share, big=True)
    suite = project.root / "suites" / "mini" / "suite.toml"  # the per-sample rule alone: no tolerance checks
    suite.write_text(suite.read_text().replace("tolerance = 2.0", "tolerance = 100.0"))
    ids = project.ids()
    noisy = unstable_ids(ids, share)
    assert run(project, "--snapshot-update", "--uiground-repeat", "3", xdist=xdist).ret == 0
    entries = json.loads((project.root / "baselines" / "mini" / "samples.json").read_text())["samples"]
    unstable = [i for i, e in entries.items() if 0 < e["s"][0] < e["s"][1]]
    assert unstable and set(unstable) <= set(noisy), "only the noisy samples flip between repeats"
    assert all("point" in e["a"] and e["a"]["raw"].startswith("noisy") for e in entries.values()), \
        "each entry keeps the accepted answer"
    excused = next(i for i in unstable if entries[i]["right"])

    project.monkeypatch.setenv("NOISY_SHARE", "0")  # the reruns: only the samples named below change
    flip = run(project, "--uiground-report", "out", wrong=(excused,), xdist=xdist)
    out = flip.stdout.str()
    assert flip.ret == 0, out
    assert excused in project.summary()["unstable"] and excused not in project.summary()["regressed"]
    assert "unstable (right in the baseline, wrong now, but noise" in out
    stable = next(i for i in ids if i not in noisy and entries[i]["right"])
    broken = run(project, wrong=(stable, excused), xdist=xdist)
    assert broken.ret == 1 and "1 sample regressed" in broken.stdout.str()


@pytest.mark.slow
def test_confirm_keeps_a_real_regression_and_excuses_a_batch_flip(project: Project, xdist: list[str]) -> None:
    """One sample is wrong only when batched (right alone): re-asked alone it is right at once, so it is
    unstable after one call (the sequential rule), with its answer listed; one sample wrong every time is
    re-asked three times and stays a regression that fails the run. Every output shows where the baseline
    clicked beside where this run clicked, and what the confirmation cost."""
    noisy_project(project, 0.0)
    ids = project.ids()
    assert run(project, "--snapshot-update", xdist=xdist).ret == 0
    flaky, real = ids[0], ids[5]
    result = run(project, "--uiground-confirm", "3", "--uiground-report", "out", "--uiground-markdown", "md.md",
                 "-rx", batched=(flaky,), wrong=(real,), xdist=xdist)
    out = result.stdout.str()
    assert result.ret == 1, out
    summary = project.summary()
    assert summary["regressed"] == [real] and summary["unstable"] == [flaky], summary
    assert summary["verdict"]["unstable"] == 1 and summary["verdict"]["regressed"] == 1
    records = {json.loads(line)["id"]: json.loads(line)
               for line in (project.root / "out" / "samples.jsonl").read_text().splitlines()}
    stability = records[flaky]["stability"]
    assert {k: stability[k] for k in ("right", "of", "how")} == {"right": 1, "of": 1, "how": "confirm"}
    assert sorted(stability) == ["answers", "how", "of", "predictions", "right"]
    assert len(stability["answers"]) == len(stability["predictions"]) == 1, "the answers themselves, for a merge"
    assert records[real]["stability"]["right"] == 0 and records[real]["stability"]["of"] == 3
    assert records[real]["outcome"] == "regression"
    line = ("confirmation: 2 regressed samples re-asked alone (1 wrong every time: confirmed; 1 right once: "
            "unstable, no flip); 4 more calls")
    assert line in out and summary["verdict"]["confirm"] == line and summary["verdict"]["confirm_calls"] == 4
    assert records[real]["before"]["point"] != records[real]["prediction"]["point"], "both answers kept"
    assert "the baseline got point (" in out and "re-asked alone" in out
    md = (project.root / "md.md").read_text()
    assert f"{real}" in md and "the baseline got point (" in md and "Unstable (regressed but noise" in md
    page = (project.root / "out" / "report.html").read_text()
    assert "baseline&#x27;s answer" in page or "baseline's answer" in page, "the purple legend is on the page"
    assert '"before":{"point":[' in page, "the detail view gets the baseline's click"

    plain = run(project, batched=(flaky,), xdist=xdist)
    assert plain.ret == 1, "without --uiground-confirm the batch flip is a regression"


@pytest.mark.slow
def test_old_baselines_without_answers_still_load(project: Project) -> None:
    noisy_project(project, 0.0)
    assert run(project, "--snapshot-update").ret == 0
    path = project.root / "baselines" / "mini" / "samples.json"
    data = json.loads(path.read_text())
    for entry in data["samples"].values():
        entry.pop("a")
    path.write_text(json.dumps(data))
    ids = project.ids()
    result = run(project, wrong=(ids[1],))
    assert result.ret == 1 and "the baseline got" not in result.stdout.str()
    assert f"{ids[1]}:" in result.stdout.str()
    data["samples"][ids[2]]["a"] = [1, 2]
    path.write_text(json.dumps(data))
    damaged = run(project)
    assert damaged.ret == 1 and f"samples.{ids[2]}.a must be an answer object" in damaged.stdout.str()


def test_stability_record_round_trips() -> None:
    r = SampleResult("s", "x", "point", stability=Stability(2, 3, "confirm", ["point (1, 2) px right"]))
    back = SampleResult.from_json(json.loads(json.dumps(r.to_json())))
    assert back.stability == r.stability and back.stability is not None and back.stability.unstable
