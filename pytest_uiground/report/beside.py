"""``compare DIR LOG``: a published per-sample log beside a ``--uiground-report`` run, without the dataset.

Why: ``--uiground-against`` puts a published run beside a run as it runs, scoring their answers with
the suite's scorer; a run already made should not need its model and dataset again to ask "where
does my checkpoint lose to theirs". Compare has no boxes to score with, so their side is the log's
own verdict (``correctness``, ``is_correct``: :mod:`pytest_uiground.record.published`), this run's
side its records' outcome (``samples.jsonl``); the suites reproduce those authors' verdicts sample by
sample (``tests/parity/test_paper_*.py``), and ``--uiground-against`` lists any sample where they
differ. The logs keep no ids: a record is matched by the screenshot's file name and the instruction,
both read from the run's ``report.html`` (``samples.jsonl`` keeps neither); a page written before it
named each sample's file has only the linked screenshots' names, and where none is known the
instruction alone matches, when exactly one record has it.
The paired table, flips and McNemar are :class:`~pytest_uiground.gate.against.Against`'s.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

from pytest_uiground.gate.against import Against, pair
from pytest_uiground.record.published import Published, SampleKey, match
from pytest_uiground.report.browse import page_data
from pytest_uiground.report.runs import CompareError, Run

#: The ``parser`` shown for a log judged by its authors.
VERDICTS = "its authors' own verdicts"


def page_keys(page: Path) -> dict[str, SampleKey]:
    """Each sample's instruction and screenshot file name (the entry's ``image``; on older pages the linked
    screen's file, None where the page drew it in)."""
    try:
        doc = page_data(page)
        samples, screens = doc.get("samples") or [], doc.get("screens") or []
    except (OSError, ValueError, AttributeError) as exc:
        raise CompareError(f"{page}: cannot be read for the samples' instructions ({exc})") from None
    out = {}
    for s in samples:
        if not isinstance(s, dict) or not isinstance(s.get("id"), str):
            continue
        name = s.get("image") if isinstance(s.get("image"), str) else None
        index = s.get("screen")
        if name is None and isinstance(index, int) and 0 <= index < len(screens) and isinstance(screens[index], dict) \
                and screens[index].get("linked") and isinstance(src := screens[index].get("src"), str):
            name = urllib.parse.unquote(src).rsplit("/", 1)[-1]
        instruction = s.get("instruction")
        out[s["id"]] = SampleKey(s["id"], name, instruction if isinstance(instruction, str) else None)
    return out


def beside(run: Run, suite: str, page: Path, log: Published) -> Against:
    """The run's samples of ``suite`` (their outcome) beside the log's matched records (their verdict)."""
    records = run.suite_records(suite)
    if not records:
        raise CompareError(f"{run.path}: no samples.jsonl for suite {suite!r}; a published run is compared sample "
                           "by sample: keep the run's report folder whole")
    keys = page_keys(page)
    found, left = match(log.answers, [keys[r.id] for r in records if r.id in keys])
    ours = {r.id: None if r.error is not None else r.right for r in records}
    theirs = {sid: a.verdict for sid, a in found.items()}
    return pair(str(log.path), VERDICTS, ours, theirs, sorted(r.id for r in records), layout=log.layout,
                unmatched=len(left))
