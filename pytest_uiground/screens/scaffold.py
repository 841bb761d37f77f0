"""``python -m pytest_uiground init NAME --from DIR``: a grounding suite of your own screenshots.

Why: a team's first suite is a folder of its product's screenshots, with or without annotations.
Before this, the route from that folder to a suite went through reading a loader's source, writing a
loader of one's own and a ``pythonpath`` setting no page mentioned (issue 30). This writes
``suites/NAME/`` with everything inside it (so the suite moves, is committed and runs in CI as one
folder, and no path in it contains ``..``):

* ``screens/``: the screenshots, copied (sub-folders kept);
* ``annotations.jsonl``: the folder's own ``annotations.jsonl``/``.csv`` (image paths rewritten to
  ``screens/...``), or an OpenAdapt ``annotations.json`` converted (:mod:`.importers`), or an empty file
  for the annotator to fill;
* ``suite.toml``: the ``grounding`` loader, a metric per task the lines have, the slices every sample
  has (with more than one value; ``element_type`` and ``size`` for a folder not annotated yet, since the
  annotator writes ``element_type`` on every element), ``tolerance = "auto"`` (the size-aware tolerance,
  docs/own-screens.md) and ``min_slice`` so that tiny slices are reported but not gated alone;
* ``README.md``: what the suite is and the commands that run it.

The project's gate workflow, model file and ``.gitignore`` are written by the plain ``init`` (this
module calls it for them), and the next three commands are printed. Nothing that exists is overwritten.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from pytest_uiground.record.files import atomic_write_text
from pytest_uiground.screens import format as fmt
from pytest_uiground.screens import importers, slicing
from pytest_uiground.suite import init as core_init

SCREENS: Final = "screens"


class ScaffoldError(Exception):
    """The folder cannot become a suite; the message names the path and the fix."""


def _images(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in fmt.IMAGE_SUFFIXES
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def _annotations_in(folder: Path) -> Path | None:
    for name in (fmt.DEFAULT_FILE, "annotations.csv", "annotations.json"):
        if (folder / name).is_file():
            return folder / name
    return None


def lines_for(source: Path | None, screens: Path, suite_dir: Path) -> list[dict[str, Any]]:
    """The annotation lines, with each ``image`` pointing at its copy under ``screens/``. A line JSON cannot
    write (a NaN or an infinite pixel) is refused naming it, like an image path outside the folder."""
    if source is None:
        return []
    if source.suffix == ".json":
        lines, copies = importers.convert("openadapt", source, suite_dir / fmt.DEFAULT_FILE, images_dir=screens)
        # The importer would copy the screenshots into images/; they are already under screens/.
        folder = source.parent.resolve()
        moved = {dest.relative_to(suite_dir.resolve()).as_posix(): f"{SCREENS}/{src.relative_to(folder).as_posix()}"
                 for dest, src in copies.items()}
        return [{**line, "image": moved.get(line["image"], line["image"])} for line in lines]
    out = []
    for line in fmt.read(source):
        if line.raw is None:
            raise ScaffoldError(f"{source}:{line.number}: {line.problem}; fix that line first")
        try:
            fmt.check_image_path(line.raw.get("image"))
            fmt.dumps([line.raw])
        except fmt.BadLine as exc:
            raise ScaffoldError(f"{source}:{line.number}: {exc}") from None
        except ValueError as exc:  # json.dumps(allow_nan=False): NaN or Infinity, which JSON has no words for
            raise ScaffoldError(f"{source}:{line.number}: {exc} ({fmt.show(line.raw)[:80]}); write pixels as "
                                "finite numbers") from None
        out.append({**line.raw, "image": f"{SCREENS}/{line.raw['image']}"})
    return out


def suite_toml(name: str, lines: Sequence[dict[str, Any]]) -> str:
    """suite.toml for these lines: metrics for the tasks present (point when there are none yet), the slices
    that exist on every line with 2..12 values, and the size-aware tolerance."""
    tasks = {str(line.get("task", "point")) for line in lines} or {"point"}
    # A key every line has, with a few values shared by several samples (one value per sample is an id).
    slices = list(slicing.slice_keys(lines))
    if not lines:
        # Nothing annotated yet (the usual start: screenshots only, then the annotator): the annotator writes
        # element_type on every element it saves (a proposal's kind, "icon" for a drawn box), so the first
        # thing such a suite is asked, icons against text, is answered without editing this file (issue 39).
        slices.append("element_type")
    slices.append("size")  # the loader gives every sample with a box its size bucket
    listed = ", ".join(f'"{s}"' for s in slices)
    why = ["# slices: each value of these keys gets its own row in every report. Add any metadata key your",
           "# annotations carry with a few values (\"app\", \"theme\"...); a key no sample has is an error that",
           "# names it."]
    n = len(lines)
    out = [f"# Your own screenshots: {n} samples when written (python -m pytest_uiground init --from).",
           "# The format of annotations.jsonl (pixels, one element per line): docs/own-screens.md.", "",
           "[suite]", f'name = "{name}"', 'version = "1"',
           f'description = "Grounding on our own screens ({name})."', "",
           "[loader]", 'name = "grounding"', "", "[loader.options]", f'annotations = "{fmt.DEFAULT_FILE}"', ""]
    if tasks & {"point", "refusal"}:
        out += ["# The share of instructions whose element the model's point lands on (a refusal where it is",
                "# absent). No floor yet: the committed baseline gates; add `floor = ` once you know what is",
                "# acceptable (a floor holds even when the baseline is re-recorded).",
                "[[metrics]]", 'name = "grounding_accuracy"', 'tasks = ["point"]', *why, f"slices = [{listed}]", ""]
    if "detect" in tasks:
        out += ["# Detection at the clicked location: IoU >= 0.5 for a box, the point inside for a grounder.",
                "[[metrics]]", 'name = "detection_rate"', 'tasks = ["detect"]', 'score = "detected"',
                *why, f"slices = [{listed}]", ""]
    out += ["[baseline]",
            "# auto: one flip's worth of points, at least 2 (23 samples: 4.35): a single sample changing its",
            "# answer is not a regression of the suite by itself; docs/own-screens.md says what to choose.",
            'tolerance = "auto"', 'slice_tolerance = "auto"',
            "# Slices with fewer samples are reported but not gated alone (their samples still count above).",
            "min_slice = 10", ""]
    return "\n".join(out)


def readme(name: str, n: int, source: Path) -> str:
    return (f"# {name}\n\nGrounding on our own screenshots: {n} annotated samples when the suite was written from "
            f"`{source.name}/`.\n\n- `screens/`: the screenshots (commit them with Git LFS: `git lfs track "
            f"\"suites/{name}/screens/**\"`)\n- `annotations.jsonl`: one element per line, boxes in pixels "
            "`[x1, y1, x2, y2]`\n\n```text\npython -m pytest_uiground annotate suites/" + name
            + "          # add or fix samples in the browser\n"
            f"python -m pytest_uiground validate suites/{name}          # check them\n"
            f"pytest suites/{name} --model ocr --snapshot-update        # record the baseline\n"
            f"pytest suites/{name} --snapshot-update --uiground-only-new  # baseline only added samples\n```\n")


def scaffold(name: str, source: Path, project: Path) -> list[str]:
    """Write ``suites/NAME`` from ``source``; what was done, line by line. Raises :class:`ScaffoldError`."""
    if not source.is_dir():
        raise ScaffoldError(f"--from {source}: not a folder; pass the folder holding the screenshots")
    if not fmt.clean_id(name) == name or "/" in name:
        raise ScaffoldError(f"suite name {name!r}: use letters, digits, '_', '-' and '.' (it names a folder and "
                            "the baseline)")
    suite_dir = project / "suites" / name
    if suite_dir.exists() or (project / "baselines" / name).exists():
        raise ScaffoldError(f"{suite_dir} (or baselines/{name}) exists; choose another NAME, or remove it")
    images = _images(source)
    if not images:
        raise ScaffoldError(f"--from {source}: no screenshots ({', '.join(fmt.IMAGE_SUFFIXES)}) in it or below it")
    annotations = _annotations_in(source)
    screens = suite_dir / SCREENS
    done: list[str] = []
    try:
        for img in images:
            dest = screens / img.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(img, dest)
        done.append(f"copied {len(images)} screenshots into {screens}")
        lines = lines_for(annotations, screens, suite_dir)
        missing = sorted({str(line["image"]) for line in lines} - {f"{SCREENS}/{p.relative_to(source).as_posix()}"
                                                                    for p in images})
        if missing and annotations is not None and annotations.suffix != ".json":
            raise ScaffoldError(f"{annotations}: images {missing[:3]} are not in {source}; annotation paths are "
                                "relative to the annotation file's folder")
        fmt.write(suite_dir / fmt.DEFAULT_FILE, lines)
        done.append(f"wrote {suite_dir / fmt.DEFAULT_FILE} ({len(lines)} samples"
                    + (f", from {annotations.name})" if annotations else "; annotate to add them)"))
        atomic_write_text(suite_dir / "suite.toml", suite_toml(name, lines))
        atomic_write_text(suite_dir / "README.md", readme(name, len(lines), source))
        done.append(f"wrote {suite_dir / 'suite.toml'} and README.md")
    except BaseException:  # a failed init leaves no half suite behind (an OSError, a KeyboardInterrupt too)
        shutil.rmtree(suite_dir, ignore_errors=True)
        raise
    return done


def next_commands(name: str, annotated: bool) -> list[str]:
    first = (f"python -m pytest_uiground validate suites/{name}" if annotated
             else f"python -m pytest_uiground annotate suites/{name}")
    second = (f"pytest suites/{name} --model ocr --snapshot-update" if annotated
              else f"python -m pytest_uiground validate suites/{name}")
    third = (f"git add suites/{name} baselines/{name} && git commit -m 'suite {name}'" if annotated
             else f"pytest suites/{name} --model ocr --snapshot-update")
    return [first, second, third]


def main(name: str, source: Path, project: Path) -> int:
    """``init NAME --from DIR [--dir PROJECT]`` (handed to :func:`pytest_uiground.suite.init.main` by
    ``python -m pytest_uiground``)."""
    try:
        done = scaffold(name, source, project)
    except (ScaffoldError, importers.ImportFailed, fmt.FormatError) as exc:
        print(f"init: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"init: could not write {exc.filename or project}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print("\n".join(done))
    core_init.project_files(project, [f"suites/{name}"])
    annotated = bool(fmt.read(project / "suites" / name / fmt.DEFAULT_FILE))
    print("next:\n" + "\n".join(f"  {c}" for c in next_commands(name, annotated)))
    return 0
