"""Adding a model family is one module plus one registry line: proven with a family written here.

The ``tap`` family lives in the test directory (a prompt and a parser, nothing else), is named
once by ``module:ATTR`` and once by an entry point of a package installed only in the test
directory, and runs through ``--model replay`` and ``--model openai`` against a loopback server,
each with and without ``-n 2``. Its refusal and its format errors reach ``samples.jsonl`` with the
parser's own reason.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from chat_server import ChatServer, Reply
from conftest import Project

from pytest_uiground.suite.loading import load_suite

pytestmark = pytest.mark.slow

TAP_FAMILY = '''
"""A family written by a user: answers "TAP x y" in 0..1, "NONE" when the element is not there."""
import re

from pytest_uiground.models.families import Coords, Family, Generation, Prompt
from pytest_uiground.record.geometry import Point

_TAP = re.compile(r"TAP (-?[0-9.]+) (-?[0-9.]+)")


def read(text, ctx):
    if text.strip() == "NONE":
        return Coords(refused=True, note="NONE: not on the screen")
    m = _TAP.search(text)
    if m is None:
        return Coords(error="no 'TAP x y' in the answer")
    return Coords(point=Point(float(m.group(1)), float(m.group(2))))


FAMILY = Family(
    name="tap",
    frame="norm1",
    prompts={"point": Prompt(system="You tap things.", user="Tap: {instruction}", source="this test")},
    read=read,
    generation=Generation(16, "this test"),
    refusal="NONE",
)
'''


def _install(project: Project) -> None:
    """The family module, and a package that registers it under the entry-point group."""
    project.pytester.makepyfile(tapfamily=TAP_FAMILY)
    dist = project.root / "tapfamily-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tapfamily\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[pytest_uiground.families]\ntap = tapfamily:FAMILY\n")
    project.importable()


def _answers(project: Project) -> dict[str, str]:
    """Sample id → answer: right for most, one wrong, one refusal, one unreadable."""
    samples = sorted(load_suite(project.root / "suites" / "mini" / "suite.toml").samples, key=lambda s: s.id)
    out = {}
    for i, s in enumerate(samples):
        c = s.target.box.center  # type: ignore[union-attr]
        out[s.id] = {0: "NONE", 1: "I would rather not say", 2: "TAP 1.5 -0.2"}.get(i, f"TAP {c.x:.4f} {c.y:.4f}")
    return out


def _check(project: Project, answers: dict[str, str], result: pytest.RunResult) -> None:
    assert result.ret == 0, result.stdout.str()
    records = {r["id"]: r for r in map(json.loads, (project.root / "out" / "samples.jsonl").read_text().splitlines())}
    ids = sorted(answers)
    refused, unreadable, beyond = (records[ids[i]] for i in range(3))
    assert refused["prediction"]["refused"] and refused["prediction"]["point"] is None
    assert not refused["prediction"]["format_error"] and "refused" in json.dumps(refused["score"])
    assert unreadable["prediction"]["format_error"]
    assert "no 'TAP x y' in the answer" in json.dumps(unreadable["score"])  # the parser's reason, not just "no point"
    assert beyond["prediction"]["point"] == pytest.approx([1.5, -0.2]) and not beyond["prediction"]["format_error"]
    metric = project.summary()["metrics"]["grounding_accuracy"]
    assert metric["value"] == pytest.approx(100 * (len(ids) - 3) / len(ids), abs=1e-3)
    assert metric["format_errors"] == 1


def test_a_family_registered_by_an_entry_point_replays(project: Project, xdist: list[str]) -> None:
    name = "tap"
    _install(project)
    answers = _answers(project)
    preds = project.root / "outputs.jsonl"
    preds.write_text("\n".join(json.dumps({"sample_id": k, "output": v}) for k, v in answers.items()) + "\n")
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "replay", "--uiground-predictions", str(preds), "--uiground-replay-parser", name,
        "-p", "no:cacheprovider", "-p", "no:randomly", "--uiground-report", "out", "--benchmark-disable",
        "--snapshot-update", *xdist)
    _check(project, answers, result)


def test_a_family_named_by_module_attr_runs_against_a_server(project: Project, xdist: list[str]) -> None:
    name = "tapfamily:FAMILY"
    _install(project)
    answers = _answers(project)
    by_instruction = {s.instruction: answers[s.id]
                      for s in load_suite(project.root / "suites" / "mini" / "suite.toml").samples}
    seen: list[dict[str, Any]] = []

    def answer(body: dict[str, Any]) -> Reply:
        seen.append(body)
        text = "".join(p.get("text", "") for p in body["messages"][-1]["content"])
        instruction = re.sub(r"^Tap: ", "", text)
        return Reply.ok(by_instruction.get(instruction, "?"))

    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        project.monkeypatch.delenv(var, raising=False)
    project.monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    project.monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with ChatServer(answer) as server:
        result = project.pytester.runpytest_subprocess(
            "suites/mini", "--model", "openai", "--uiground-api-base", server.url, "--uiground-served-model", "m",
            "--uiground-parser", name, "-p", "no:cacheprovider", "-p", "no:randomly", "--uiground-report", "out",
            "--benchmark-disable", "--snapshot-update", *xdist)
    _check(project, answers, result)
    assert seen and all(b["messages"][0] == {"role": "system", "content": "You tap things."} for b in seen)
    assert all(b["max_tokens"] == 16 for b in seen)  # the family's generation default
