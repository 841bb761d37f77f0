"""``--uiground-confirm K`` through whole runs (issue 40): the sequential re-asks of a regression and of a fix,
asked alone past the prediction cache, kept on the sample's record, counted in every output, and its
``[baseline] confirm`` key; with and without ``-n 2``.

The scripted model (tests/conftest.py, its cached variant) answers wrong exactly on the ids listed in
``UIGROUND_WRONG`` and logs every batch it is asked, so which calls a confirmation made can be read back."""

from __future__ import annotations

import json

import pytest
from conftest import Project


def run(project: Project, *args: str, wrong: tuple[str, ...] = (), xdist: list[str], log: str = "") -> pytest.RunResult:
    project.monkeypatch.setenv("UIGROUND_WRONG", ",".join(wrong))
    project.monkeypatch.setenv("UIGROUND_BATCHLOG", str(project.root / log) if log else "")
    return project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "fakemodels:create_cached", "--uiground-cache", "cache", "-p", "no:cacheprovider",
        "-p", "no:randomly", "-o", "console_output_style=classic", "--uiground-batch-size", "4", *xdist, *args)


def batches(project: Project, log: str) -> list[list[str]]:
    return [line.split(",") for line in (project.root / log).read_text().splitlines()]


def test_confirm_reasks_a_regression_and_a_fix_alone_past_the_cache(project: Project, xdist: list[str]) -> None:
    """Baseline of 3 answers per sample, ``fixed`` wrong in all of them. A rerun where ``broke`` is wrong and
    ``fixed`` right, under ``--uiground-confirm 2`` and the rule 'significant' (where fixes weigh in):
    ``broke`` is re-asked twice alone and stays a regression (wrong 3 times; one regression against one fix
    is no evidence: PASS); ``fixed`` is re-asked min(2, 3 - 1) = 2 times alone and stays a fix. Run again
    with every first answer from the cache: the re-asks still go to the model, and only they do. Under
    'each' only the regression is re-asked, and fails the run."""
    ids = project.ids()
    broke, fixed = ids[1], ids[4]
    made = run(project, "--snapshot-update", "--uiground-repeat", "3", "--uiground-cache", "off", wrong=(fixed,),
               xdist=xdist)
    assert made.ret == 0, made.stdout.str()[-3000:]
    entry = json.loads((project.root / "baselines" / "mini" / "samples.json").read_text())["samples"][fixed]
    assert entry["s"] == [0, 3], entry

    first = run(project, "--uiground-confirm", "2", "--uiground-report", "out", "--uiground-markdown", "md.md",
                "--uiground-regressions", "significant", wrong=(broke,), xdist=xdist, log="first.log")
    out = first.stdout.str()
    assert first.ret == 0, out
    line = ("confirmation: 1 regressed sample re-asked alone (1 wrong every time: confirmed; 0 right once: "
            "unstable, no flip), 1 fixed sample (1 right every time; 0 wrong once: no flip); 4 more calls")
    assert line in out, out[-3000:]
    assert "right 0 of 2 re-asked alone" in out, "the regression's re-asks are listed with it"
    summary = project.summary()
    assert summary["regressed"] == [broke] and summary["fixed"] == [fixed]
    assert (summary["verdict"]["confirm"], summary["verdict"]["confirmed"], summary["verdict"]["confirm_calls"]) \
        == (line, 2, 4)
    assert line in (project.root / "md.md").read_text()
    records = {r["id"]: r for r in map(json.loads, (project.root / "out" / "samples.jsonl").read_text().splitlines())}
    for sid, right in ((broke, 0), (fixed, 2)):
        st = records[sid]["stability"]
        assert (st["right"], st["of"], st["how"]) == (right, 2, "confirm"), st
        assert len(st["predictions"]) == len(st["answers"]) == 2, "the re-asks themselves, for a merge"
    assert all(records[i].get("stability") is None for i in ids if i not in (broke, fixed)), "nobody else asked"
    alone = [b for b in batches(project, "first.log") if len(b) == 1 and b[0] in (broke, fixed)]
    assert sorted(b[0] for b in alone) == sorted([broke, broke, fixed, fixed]), batches(project, "first.log")

    again = run(project, "--uiground-confirm", "2", "--uiground-report", "again", "--uiground-regressions",
                "significant", wrong=(broke,), xdist=xdist, log="again.log")
    assert again.ret == 0 and f"{len(ids)} predictions from the cache" in again.stdout.str(), again.stdout.str()
    assert sorted(b[0] for b in batches(project, "again.log")) == sorted([broke, broke, fixed, fixed]), \
        "first answers from the cache, re-asks always fresh"
    assert line in again.stdout.str()
    each = run(project, "--uiground-confirm", "2", wrong=(broke,), xdist=xdist, log="each.log")
    assert each.ret == 1 and "1 sample regressed" in each.stdout.str(), each.stdout.str()[-3000:]
    assert batches(project, "each.log") == [[broke], [broke]], "under 'each' a fix decides nothing"


def test_the_suite_key_sets_k_and_the_command_line_wins(project: Project, xdist: list[str]) -> None:
    """``[baseline] confirm = 1`` re-asks a regression once; ``--uiground-confirm 0`` turns it off for one run;
    a bad value is refused with one line naming the file, the key, the value and the fix."""
    ids = project.ids()
    assert run(project, "--snapshot-update", "--uiground-cache", "off", xdist=xdist).ret == 0
    suite = project.root / "suites" / "mini" / "suite.toml"
    suite.write_text(suite.read_text().replace("[baseline]\n", "[baseline]\nconfirm = 1\n"))
    keyed = run(project, "--uiground-cache", "off", wrong=(ids[2],), xdist=xdist, log="keyed.log")
    assert keyed.ret == 1 and "confirmation: 1 regressed sample re-asked alone" in keyed.stdout.str()
    assert [ids[2]] in batches(project, "keyed.log")
    off = run(project, "--uiground-confirm", "0", "--uiground-cache", "off", wrong=(ids[2],), xdist=xdist)
    assert off.ret == 1 and "confirmation:" not in off.stdout.str()
    suite.write_text(suite.read_text().replace("confirm = 1", "confirm = -1"))
    bad = run(project, xdist=xdist)
    assert bad.ret != 0
    text = bad.stdout.str() + bad.stderr.str()
    assert "baseline.confirm" in text and "-1" in text and "2 is a good start" in text, text[-2000:]
