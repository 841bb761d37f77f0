"""The --uiground-predictions file of ``--model replay`` is read once at start-up: damage is one usage
error naming the line.
"""

from __future__ import annotations

import json

import pytest
from conftest import Project

pytestmark = pytest.mark.slow


def test_predictions_file_damage_fails_once_at_start_up(project: Project, xdist: list[str]) -> None:
    """A damaged --uiground-predictions file is one usage error at start-up naming the line, not the same
    failure on every test; a whole file then runs with no sample errors."""
    ids = project.ids()
    good = [json.dumps({"sample_id": i, "output": "(500, 500)"}) for i in ids]
    preds = project.root / "preds.jsonl"
    args = ["--model", "replay", "--uiground-replay-parser", "uground", "--uiground-predictions", str(preds)]
    preds.write_text("\n".join([*good[:3], '{"sample_id": "x", "output": ', *good[3:]]) + "\n")
    result = project.pytester.runpytest_subprocess("suites/mini", "-p", "no:cacheprovider", *args, *xdist)
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert err.count(f"{preds}:4: not a replay record") == 1
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()
    preds.write_bytes(b"\xef\xbb\xbf" + ("\n".join(good) + "\n").encode())  # a BOM (PowerShell, Notepad)
    accepted = project.pytester.runpytest_subprocess("suites/mini", "-p", "no:cacheprovider", *args, *xdist)
    out = accepted.stdout.str()
    assert "sample errors: 0" in out and "missing: no record" not in out
