"""The robustness table: per perturbation, the same model's accuracy before and after, in every output.

Kept to this one module (the terminal, Markdown and ``report.html`` each call one function here, and
``summary.json`` carries :func:`to_json`'s object under ``robustness``) so that a later restructuring of the
report moves one call per output. The figures are :func:`pytest_uiground.perturb.robustness.measure`'s (the
writers compute them once per suite and hand them here: ``report.html`` imports nothing heavy for it); the
gate's own per-slice checks (``perturb=<spec>`` against the baseline) stay in the metric table beside them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_uiground.report.markup import esc

if TYPE_CHECKING:  # the rows are computed by the writers (perturb/robustness.py: of_outcome); this module draws
    from pytest_uiground.perturb.robustness import Row


def to_json(found: Sequence[Row]) -> dict[str, Any] | None:
    return {r.spec: r.to_json() for r in found} if found else None


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


HEAD = ("perturbation", "n", "before", "after", "drop", "broke/mended", "McNemar p", "consistent", "moved",
        "left out")


def _cells(r: Row) -> list[str]:
    return [r.spec, str(r.n), _pct(r.before), _pct(r.after), f"{r.drop:.1f}", f"{r.broke}/{r.mended}",
            f"{r.p_value:.3g}", _pct(r.consistency), _pct(r.moved), str(r.left_out)]


def terminal_lines(found: Sequence[Row]) -> list[str]:
    """``robustness (same model, unperturbed vs perturbed, same samples):`` and an aligned table."""
    if not found:
        return []
    table = [list(HEAD), *(_cells(r) for r in found)]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEAD))]
    lines = ["robustness (this model, unperturbed vs perturbed on the same samples; moved: point answers that map "
             "back into the original target):"]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table]
    return lines


def markdown_lines(found: Sequence[Row]) -> list[str]:
    if not found:
        return []
    out = ["<details><summary>robustness: accuracy under each perturbation (this model, same samples)</summary>", "",
           "| " + " | ".join(HEAD) + " |", "|" + " --- |" * len(HEAD)]
    out += ["| " + " | ".join(_cells(r)) + " |" for r in found]
    return [*out, "", "</details>", ""]


def _drop_style(drop: float | None) -> str:
    """A cell coloured by its drop: none white, 20 points or more full red (a gain is green)."""
    if drop is None:
        return ""
    if drop <= 0:
        return ' style="background:#e6f4ea"' if drop < 0 else ""
    alpha = min(1.0, drop / 20.0)
    return f' style="background:rgba(217,48,37,{alpha * 0.6:.2f})"'


def html_section(data: Mapping[str, Any] | None) -> str:
    """``report.html``'s table from ``summary.json``'s ``robustness`` object: perturbation × slice, each cell
    the accuracy after and its drop, coloured by the drop."""
    if not data:
        return ""
    labels = sorted({k for r in data.values() if isinstance(r, Mapping) for k in (r.get("slices") or {})})
    head = "".join(f"<th>{esc(h)}</th>" for h in ("perturbation", "n", "before", "after", "drop", "consistent",
                                                    "moved", "left out", *labels))
    body = []
    for spec, r in data.items():
        if not isinstance(r, Mapping):
            continue
        cells = [f"<td>{esc(spec)}</td>", f"<td>{esc(r.get('n'))}</td>", f"<td>{_pct(r.get('before'))}</td>",
                 f"<td>{_pct(r.get('after'))}</td>",
                 f"<td{_drop_style(r.get('drop'))}>{esc(_signed(r.get('drop')))}</td>",
                 f"<td>{_pct(r.get('consistency'))}</td>", f"<td>{_pct(r.get('moved_with_element'))}</td>",
                 f"<td>{esc(r.get('left_out'))}</td>"]
        slices = r.get("slices") or {}
        for label in labels:
            s = slices.get(label)
            cells.append(f"<td{_drop_style(s.get('drop'))}>{_pct(s.get('after'))} ({esc(_signed(s.get('drop')))})</td>"
                         if isinstance(s, Mapping) else "<td>-</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return ("<h2>Robustness</h2><p class=\"note\">This model's accuracy on the same samples unperturbed (before) and "
            "perturbed (after); cells by slice: after (drop), red by the drop. The gate's checks of each "
            "<code>perturb=</code> slice against the baseline are in the metric table.</p>"
            f"<table class=\"robustness\"><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


def _signed(v: object) -> str:
    return f"{v:+.1f}" if isinstance(v, (int, float)) and not isinstance(v, bool) else "-"
