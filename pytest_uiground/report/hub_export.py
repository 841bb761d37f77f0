"""``python -m pytest_uiground export hub REPORT_DIR --out .eval_results/``: a run's figures in the Hub's format.

Why this exists: the Hugging Face Hub builds each benchmark's leaderboard from ``.eval_results/*.yaml``
files in model repositories (``huggingface/hub-docs`` ``docs/hub/eval-results.md``, "Model Evaluation
Results"): a YAML list of results, each ``dataset: {id, task_id, revision?}`` (required: the Hub
dataset id and the task id of its ``eval.yaml``), ``value`` (required), and optional ``date``
(ISO-8601), ``source: {url, name?, user?}`` (``url`` required when ``source`` is given),
``notes`` (the setup). Without this command a user retypes the figure and loses where it came from.

What is written: one file per suite and metric (the Hub's convention: one file per variant of a
benchmark), ``<suite>.yaml`` for the suite's first metric (its headline) and
``<suite>_<metric>.yaml`` for each other one (the refusal policy's other denominator, a benchmark's
other averages), with ``notes`` naming the metric. ``dataset.id`` and ``task_id`` come from the
suite's ``[suite] hub_dataset`` / ``hub_task`` (recorded in the run's provenance; ``task_id``
defaults to ``default``, the docs' value for a single task); ``dataset.revision`` from a pinned
dataset revision; ``value`` is the project's 0..100 figure as the run printed it; ``date`` the run's;
the provenance (package version, model and its fingerprint, dataset fingerprint, samples, refusal
policy, verdict) goes in ``notes``, and ``source`` when ``--source-url`` says where the run's report
lives. A suite without a Hub dataset (the synthetic suite, your own screens) is skipped with a line
naming it and the fix; a metric with no value is skipped likewise. The YAML is written by hand
(JSON scalars, which YAML reads as the same values): no YAML library is needed to write it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_uiground.report import summary as summary_mod

DOCS = "huggingface/hub-docs docs/hub/eval-results.md (Model Evaluation Results)"


@dataclass(frozen=True)
class Entry:
    """One ``.eval_results`` file: its name and its one result."""

    name: str
    result: dict[str, Any]


def _stem(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "suite"


def notes_of(s: summary_mod.SuiteSummary, metric: str, first: bool) -> str:
    p = s.provenance
    packages = p.get("packages")
    version = packages.get("pytest-uiground") if isinstance(packages, Mapping) else None
    parts = [f"pytest-uiground{' ' + str(version) if version else ''} suite {s.suite}"
             f"{' v' + str(p['suite_version']) if p.get('suite_version') else ''}",
             f"metric {metric}" + ("" if first else " (a variant of the headline figure)"),
             f"model {p.get('model') or s.model}"
             + (f" ({p['model_path']})" if p.get("model_path") else "")
             + (f", fingerprint {p['model_fingerprint']}" if p.get("model_fingerprint") else ""),
             f"dataset fingerprint {p.get('dataset_fingerprint')}", f"{s.metrics[metric].n} samples"]
    if p.get("refusals"):
        parts.append(f"refusals {p['refusals']}")
    if s.verdict is not None:
        parts.append(f"gate verdict {'PASS' if s.verdict.passed else 'FAIL'}")
    return "; ".join(parts)


def entries(summaries: Mapping[str, summary_mod.SuiteSummary], source_url: str | None = None,
            source_name: str | None = None) -> tuple[list[Entry], list[str]]:
    """The files to write, and one line per suite or metric left out (and why)."""
    out: list[Entry] = []
    skipped: list[str] = []
    for name, s in summaries.items():
        dataset = s.provenance.get("hub_dataset")
        if not isinstance(dataset, str) or not dataset:
            skipped.append(f"{name}: no Hub dataset in its provenance; add hub_dataset = \"owner/name\" to [suite] in "
                           "its suite.toml (a published benchmark's id) and rerun, or leave it out")
            continue
        task = s.provenance.get("hub_task") or "default"
        for i, (metric, m) in enumerate(s.metrics.items()):
            if m.value is None:
                skipped.append(f"{name}: metric {metric} has no value (no sample counted)")
                continue
            result: dict[str, Any] = {"dataset": {"id": dataset, "task_id": str(task)}}
            if s.provenance.get("dataset_revision"):
                result["dataset"]["revision"] = str(s.provenance["dataset_revision"])
            result["value"] = m.value
            if s.provenance.get("date"):
                result["date"] = str(s.provenance["date"])
            if source_url:
                result["source"] = {"url": source_url, "name": source_name or f"pytest-uiground report ({name})"}
            result["notes"] = notes_of(s, metric, i == 0)
            stem = _stem(name) if i == 0 else f"{_stem(name)}_{_stem(metric)}"
            out.append(Entry(f"{stem}.yaml", result))
    return out, skipped


def _scalar(value: Any) -> str:
    """A YAML scalar: JSON's text of it (a JSON string or number is the same YAML value)."""
    return json.dumps(value, ensure_ascii=False)


def to_yaml(results: Sequence[Mapping[str, Any]]) -> str:
    """The Hub's file: a YAML list of result mappings (two levels of nesting at most)."""
    lines: list[str] = []
    for result in results:
        first = True
        for key, value in result.items():
            lead = "- " if first else "  "
            first = False
            if isinstance(value, Mapping):
                lines.append(f"{lead}{key}:")
                lines += [f"    {k}: {_scalar(v)}" for k, v in value.items()]
            else:
                lines.append(f"{lead}{key}: {_scalar(value)}")
    return "\n".join(lines) + "\n"


def write(report: Path, out: Path, source_url: str | None = None, source_name: str | None = None
          ) -> tuple[list[Path], list[str]]:
    path = report / "summary.json" if report.is_dir() else report
    if not path.is_file():
        raise FileNotFoundError(f"{report}: no summary.json; pass the folder a run wrote with --uiground-report DIR")
    made, skipped = entries(summary_mod.read(path), source_url, source_name)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for e in made:
        target = out / e.name
        target.write_text(to_yaml([e.result]), encoding="utf-8")
        written.append(target)
    return written, skipped


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_uiground export",
                                     description="Write a run's figures in another tool's format.")
    sub = parser.add_subparsers(dest="format", required=True)
    hub = sub.add_parser("hub", help=f"the Hugging Face Hub's .eval_results/*.yaml ({DOCS})")
    hub.add_argument("report", type=Path, help="a --uiground-report folder (or its summary.json)")
    hub.add_argument("--out", type=Path, default=Path(".eval_results"), help="where to write (default .eval_results)")
    hub.add_argument("--source-url", default=None,
                     help="where the run's report or traces are published (the result's source.url)")
    hub.add_argument("--source-name", default=None, help="the source's display name")
    args = parser.parse_args(list(argv))
    try:
        written, skipped = write(args.report, args.out, args.source_url, args.source_name)
    except (OSError, ValueError) as exc:
        print(f"export hub: {exc}", file=sys.stderr)
        return 2
    for line in skipped:
        print(f"skipped {line}", file=sys.stderr)
    for p in written:
        print(f"wrote {p}")
    if not written:
        print("export hub: nothing written (no suite with a Hub dataset)", file=sys.stderr)
        return 1
    return 0
