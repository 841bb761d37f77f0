"""``merge`` in a strict project, judging rather than trusting the shards (issue 38, "Fail closed").

Every project here has ``filterwarnings = error`` in its ini (as this repository has), and records its
baseline with ``--snapshot-update`` before a merge is asked for a verdict. The merge runs in such a
project (also with ``-p no:cacheprovider --import-mode=importlib`` in ``addopts``); a score or a
stability typed into a shard's ``samples.jsonl`` is caught by the manifest's digest and, with the digest
recomputed, changes nothing (every record is scored again, every stability counted again from its
answers); ``--out`` is never a shard; an endpoint's password reaches no file and no line; SIGTERM ends
a merge as an interrupted run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import Project, strict_json

from pytest_uiground.record.secrets import public_url, scrub, scrub_args
from pytest_uiground.report.runs import read_records
from pytest_uiground.shard import manifest, replay

pytestmark = pytest.mark.slow

STRICT = "[pytest]\nfilterwarnings =\n    error\n"


def strict(project: Project, addopts: str = "") -> None:
    """The project's ini as a strict project has it: every warning an error (and ``addopts``)."""
    project.pytester.makeini(STRICT + (f"addopts = {addopts}\n" if addopts else ""))


def merge(project: Project, *args: str) -> pytest.RunResult:
    return project.pytester.run(sys.executable, "-m", "pytest_uiground", "merge", *args)


def shards(project: Project, xdist: list[str], *extra: str, wrong: list[str]) -> None:
    """The suite as two shards, ``s1`` and ``s2``, each with ``xdist``."""
    for i in (1, 2):
        run = project.run("--uiground-shard", f"{i}/2", "--uiground-report", f"s{i}", *extra, wrong=wrong, xdist=xdist)
        assert run.ret in (0, 1), run.stdout.str() + run.stderr.str()  # 1: a regressed sample fails in its shard
        assert (project.root / f"s{i}" / manifest.NAME).is_file()


def lines_of(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]


def rewrite(folder: Path, edit: Any, *, digest: bool) -> None:
    """Apply ``edit`` to every record of a shard's samples.jsonl; with ``digest``, as a tamperer who also
    recomputes the manifest's records_sha256."""
    records = [edit(r) or r for r in lines_of(folder)]
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    if digest:
        doc = json.loads((folder / manifest.NAME).read_text())
        doc["suites"]["mini"]["records_sha256"] = manifest.records_digest(read_records(folder))
        (folder / manifest.NAME).write_text(json.dumps(doc))


def timeless(value: Any) -> Any:
    """``value`` without what a clock decides (as tests/shard/test_merge.py reads it)."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in ("date", "latency_ms", "load_s", "packages")}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def outcomes(project: Project, folder: str) -> dict[str, str]:
    return {r["id"]: r["outcome"] for r in lines_of(project.root / folder)}


@pytest.mark.parametrize("addopts", ["", "-p no:cacheprovider --import-mode=importlib"], ids=["strict", "importlib"])
def test_merge_works_in_a_strict_project(project: Project, xdist: list[str], addopts: str) -> None:
    """Before, the merge ran pytest inside its own process, after importing the package: pytest's
    "Module already imported so cannot be rewritten" warning was an error there, exit 1, no summary."""
    strict(project, addopts)
    ids = project.ids()
    assert project.run("--snapshot-update").ret == 0
    shards(project, xdist, wrong=[ids[0]])
    merged = merge(project, "s1", "s2", "--out", "merged")
    text = merged.stdout.str() + merged.stderr.str()
    assert merged.ret == 1, text
    assert "PytestAssertRewriteWarning" not in text
    summary = strict_json((project.root / "merged" / "summary.json").read_text())
    assert summary["verdict"]["status"] == "FAIL" and summary["regressed"] == [ids[0]]


def test_merge_judges_never_trusts(project: Project, xdist: list[str]) -> None:
    """A score or a stability typed into a shard's records: with the manifest's digest left alone, one line
    naming the shard and the fix; with it recomputed, the merge scores and counts again from the answers,
    and gives the single run's FAIL (before: PASS, exit 0). A stability's recorded answers do count."""
    strict(project)
    ids = project.ids()
    assert project.run("--snapshot-update").ret == 0
    wrong = [ids[0], ids[5]]
    shards(project, xdist, "--uiground-confirm", "2", wrong=wrong)
    honest = merge(project, "s1", "s2", "--out", "honest")
    assert honest.ret == 1, honest.stdout.str() + honest.stderr.str()
    assert {i for i, o in outcomes(project, "honest").items() if o == "regression"} == set(wrong)
    where = {r["id"]: f"s{i}" for i in (1, 2) for r in lines_of(project.root / f"s{i}")}
    tampered = project.root / where[ids[0]]
    label = f"shard {where[ids[0]][1]}/2"

    def right(r: dict[str, Any]) -> None:
        if r["id"] in wrong:
            r["score"] = {"value": 100.0, "correct": True, "format_error": False}
            r["outcome"] = "pass"

    rewrite(tampered, right, digest=False)
    caught = merge(project, "s1", "s2", "--out", "caught")
    assert caught.ret == pytest.ExitCode.USAGE_ERROR
    caught.stderr.fnmatch_lines([f"merge: {label} (*): its samples.jsonl is not what the shard wrote for 'mini' "
                                 "(the records_sha256 of its shard.json differs)*rerun that shard"])
    assert not (project.root / "caught" / "summary.json").exists()

    rewrite(tampered, lambda r: None, digest=True)  # the tamperer recomputes the digest
    rescored = merge(project, "s1", "s2", "--out", "rescored")
    assert rescored.ret == 1, rescored.stdout.str()
    assert outcomes(project, "rescored")[ids[0]] == "regression"
    assert project.summary("rescored")["verdict"]["status"] == "FAIL"

    def stable(r: dict[str, Any]) -> None:
        if r["id"] == ids[0]:
            assert r["stability"]["how"] == "confirm" and len(r["stability"]["predictions"]) == 2
            r["stability"].update(right=2, of=2)  # the counts, not the answers
        elif r["id"] in wrong:
            r["stability"] = {"right": 3, "of": 3, "how": "confirm"}  # no answers at all

    rewrite(tampered, stable, digest=True)
    counted = merge(project, "s1", "s2", "--out", "counted")
    assert counted.ret == 1, counted.stdout.str()
    assert outcomes(project, "counted")[ids[0]] == "regression"
    merged = {r["id"]: r for r in lines_of(project.root / "counted")}
    assert (merged[ids[0]]["stability"]["right"], merged[ids[0]]["stability"]["of"]) == (0, 2)

    from pytest_uiground.suite.loading import load_suite

    centre = {s.id: list(s.target.box.center) for s in load_suite(project.root / "suites/mini/suite.toml").samples}

    def answered_right(r: dict[str, Any]) -> None:
        if r["id"] == ids[0]:
            for p in r["stability"]["predictions"]:
                p["point"] = centre[ids[0]]

    rewrite(tampered, answered_right, digest=True)
    answers = merge(project, "s1", "s2", "--out", "answers")
    assert outcomes(project, "answers")[ids[0]] == "unstable", answers.stdout.str()


def test_repeat_stability_counted_again_is_the_single_runs(project: Project) -> None:
    """With ``--uiground-repeat 3``, each record keeps its two extra answers; the merge counts every
    stability again from them and writes the single run's summary (times aside)."""
    strict(project)
    ids = project.ids()
    assert project.run("--snapshot-update", "--uiground-repeat", "3").ret == 0
    wrong = [ids[0], ids[5]]
    single = project.run("--uiground-repeat", "3", "--uiground-report", "single", wrong=wrong)
    shards(project, [], "--uiground-repeat", "3", wrong=wrong)
    merged = merge(project, "s1", "s2", "--out", "merged")
    assert merged.ret == single.ret == 1, merged.stdout.str() + merged.stderr.str()
    assert timeless(project.summary("merged")) == timeless(project.summary("single"))
    records = lines_of(project.root / "merged")
    assert all(r["stability"]["of"] == 3 and len(r["stability"]["predictions"]) == 2 for r in records)


def test_out_is_never_a_shard(project: Project) -> None:
    """``--out`` naming a shard's folder (before: the merge overwrote that shard), a folder inside one, or
    another shard's folder is one line naming it and the fix; the shard is left as it was."""
    strict(project)
    assert project.run("--snapshot-update").ret == 0
    shards(project, [], wrong=[])
    before = {p.name: p.read_bytes() for p in (project.root / "s1").iterdir() if p.is_file()}
    for out, what in (("s1", "is the folder of"), ("s1/merged", "is inside the folder of")):
        bad = merge(project, "s1", "s2", "--out", out)
        assert bad.ret == pytest.ExitCode.USAGE_ERROR
        bad.stderr.fnmatch_lines([f"merge: --out {out} {what} shard 1/2 (*s1): the merge would overwrite that shard; "
                                  "give a folder of its own, e.g. --out merged"])
    assert {p.name: p.read_bytes() for p in (project.root / "s1").iterdir() if p.is_file()} == before
    assert not (project.root / "s1" / "merged").exists()
    assert project.run("--uiground-shard", "1/2", "--uiground-report", "other").ret == 0
    taken = merge(project, "s1", "s2", "--out", "other")
    assert taken.ret == pytest.ExitCode.USAGE_ERROR
    taken.stderr.fnmatch_lines(["merge: --out other holds a shard.json: it is a shard's report folder*"])


def test_an_endpoint_password_is_in_no_output(project: Project, xdist: list[str]) -> None:
    """``--uiground-api-base http://u:PW@host/v1?key=K``: neither PW nor K in any file of the shards or the
    merge, nor in the merge's "running pytest ..." line (before: both in shard.json's args and that line)."""
    strict(project)
    assert project.run("--snapshot-update").ret == 0
    base = "http://ci:s3cretPW@127.0.0.1:9/v1?key=k3yQ"
    shards(project, xdist, "--uiground-api-base", base, wrong=[])
    merged = merge(project, "s1", "s2", "--out", "merged")
    assert merged.ret == 0, merged.stdout.str() + merged.stderr.str()
    merged.stdout.fnmatch_lines(["merge: 2 shards, 12 records; running pytest *--uiground-api-base "
                                 "http://127.0.0.1:9/v1 *"])
    shown = merged.stdout.str() + merged.stderr.str()
    written = [p for folder in ("s1", "s2", "merged") for p in (project.root / folder).rglob("*") if p.is_file()]
    assert any(p.name == manifest.NAME for p in written)
    for secret in ("s3cretPW", "k3yQ"):
        assert secret not in shown
        assert [p for p in written if secret.encode() in p.read_bytes()] == []


SLOW_TESTS = '''
import os, time

def pytest_runtest_call(item):
    time.sleep(float(os.environ.get("UIGROUND_TEST_SLEEP", "0")))
'''


@pytest.mark.parametrize(("when", "group"), [("start", False), ("mid-run", False), ("mid-run", True)],
                         ids=["as-the-run-starts", "mid-run", "mid-run-process-group"])
def test_sigterm_ends_a_merge_as_an_interrupted_run(project: Project, when: str, group: bool) -> None:
    """SIGTERM to the merge (``timeout``, a cancelled CI job), or to its whole process group, as its run
    starts or mid-run: exit 2 and an "interrupted" summary of exactly the records it wrote (none and no
    summary when it stopped before its first sample), as a single run.
    Before, a signal as the merged run started (pytest loading its plugins in the merge's process, before
    the run's handler was in place) killed the merge by the signal, with no summary."""
    strict(project)
    assert project.run("--snapshot-update").ret == 0
    shards(project, [], wrong=[])
    project.pytester.makeconftest(SLOW_TESTS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project.root), *sys.path]), "UIGROUND_TEST_SLEEP": "0.4"}
    proc = subprocess.Popen([sys.executable, "-m", "pytest_uiground", "merge", "s1", "s2", "--out", "merged"],
                            cwd=project.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    assert proc.stdout is not None
    log = project.root / "merged" / "samples.jsonl"
    head = b""
    if when == "start":
        while b"running pytest" not in head and proc.poll() is None:
            head += proc.stdout.readline()
        time.sleep(0.2)  # the merged run is starting: pytest loads its plugins
    else:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if log.is_file() and len(log.read_text().splitlines()) >= 3:
                break
            time.sleep(0.05)
    if group:
        os.killpg(proc.pid, signal.SIGTERM)
    else:
        proc.send_signal(signal.SIGTERM)
    out = head.decode() + proc.communicate(timeout=120)[0].decode()
    assert proc.returncode == 2, out
    assert "INTERNALERROR" not in out and "Traceback" not in out and "SIGTERM" in out
    done = len(log.read_text().splitlines()) if log.is_file() else 0
    assert done < len(project.ids())
    if when == "mid-run" or done:
        summary = strict_json((project.root / "merged" / "summary.json").read_text())
        assert summary["interrupted"] is True and summary["n_samples"] == done >= (3 if when == "mid-run" else 1)
    else:  # stopped before its first sample: as a single run, nothing to summarise
        assert not (project.root / "merged" / "summary.json").exists()


def test_one_scrubber() -> None:
    """Every URL in a text loses its user, password and query, as a normal run's endpoints do."""
    assert public_url("http://u:PW@host:8000/v1?key=K") == "http://host:8000/v1"
    assert scrub("running --uiground-api-base=https://u:PW@a.b/v1?k=K,http://c/v1 -k x") == \
        "running --uiground-api-base=https://a.b/v1,http://c/v1 -k x"
    assert scrub("http://u:PW@host:99999/v1") == "http://host:99999/v1"  # a malformed port still loses its password
    assert scrub_args(["-k", "a", "http://u:PW@h/v1"]) == ["-k", "a", "http://h/v1"]


def test_the_replay_plugin_outside_a_merge_names_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """``-p pytest_uiground.shard.replay`` without the shards the merge names (:data:`replay.ENV`) stops
    at start-up saying which command to run, before anything is read."""
    monkeypatch.delenv(replay.ENV, raising=False)
    with pytest.raises(pytest.UsageError, match=r"merge's own plugin; run python -m pytest_uiground merge"):
        replay.pytest_configure(cast(pytest.Config, None))
