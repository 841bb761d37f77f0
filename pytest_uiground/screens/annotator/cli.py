"""``python -m pytest_uiground annotate TARGET``: annotate screenshots in the browser (or, with
``--terminal``, the prompt review of ``screens/review.py``).

Why a page: grounding samples are boxes on pictures and instructions in a user's words; typing
pixel boxes read off another viewer, one OCR proposal at a time with no way back, loses both
time and work. TARGET is a suite folder (its ``[loader.options] annotations``, else
``annotations.jsonl`` in it), a folder of screenshots (``annotations.jsonl`` in it) or an
``annotations.jsonl`` file; ``--out FILE.jsonl`` puts the file elsewhere, at or above the
screenshots (a sample's ``image`` never contains ``..``). The command prints the page's URL
(127.0.0.1, a random port, a secret token) and opens it (``--no-browser``: only print it); every
change on the page is already saved when it shows as saved, so Ctrl+C is the way to stop.
SIGTERM and SIGHUP (a service manager, a closed terminal) stop it the same way: the save in
progress finishes, and no temporary file is left beside the annotations (:meth:`Store.close`).

``--terminal`` (or ``--answers FILE``, which implies it) runs the prompt review instead (for SSH
sessions and scripts); it writes the same ``annotations.jsonl`` format (issue 39), one ``detect``
line per kept element, which this page then opens.
"""

from __future__ import annotations

import argparse
import signal
import sys
import webbrowser
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from pytest_uiground.screens.annotator.server import Annotator, AnnotatorServer, Proposals, curation_tool, find_images
from pytest_uiground.screens.annotator.store import Store

DEFAULT_FILE = "annotations.jsonl"


class UsageError(Exception):
    """A TARGET or option the page cannot be served for; the message names it and the fix."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m pytest_uiground annotate",
        description="Annotate screenshots in the browser: detector proposals to accept, reject, move or resize, "
                    "missed elements to draw, instructions to type; every change saved to annotations.jsonl.")
    p.add_argument("target", metavar="TARGET", help="a suite folder, a folder of screenshots or an annotations.jsonl")
    p.add_argument("--out", metavar="FILE", help="the annotations file (default: TARGET's annotations.jsonl), at or "
                   "above the screenshots")
    p.add_argument("--detector", default="ocr", help="proposals: 'ocr' (default), 'none', or module:function")
    p.add_argument("--min-score", type=float, default=0.5, help="hide proposals scored below this (default 0.5)")
    p.add_argument("--no-browser", action="store_true", help="only print the page's URL")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--terminal", action="store_true", help="review in the terminal instead (prompts, one question "
                   "per proposal; for SSH sessions); writes the same annotations.jsonl")
    p.add_argument("--answers", metavar="FILE", help="--terminal with one answer per line from FILE ('-' = stdin)")
    p.add_argument("--resume", action="store_true", help="--terminal: add to an existing --out (the page always "
                   "continues its file)")
    return p


def resolve(target: Path, out: str | None) -> tuple[Path, Path]:
    """(the annotations file, the folder whose screenshots are shown) for TARGET and ``--out``."""
    if target.is_file():
        if target.suffix != ".jsonl":
            raise UsageError(f"TARGET {target} is not an annotations .jsonl file; give a suite folder, a folder of "
                             "screenshots or an annotations.jsonl (an OpenAdapt .json file: python -m "
                             "pytest_uiground import openadapt FILE first)")
        file, folder = target, target.parent
    elif target.is_dir():
        file = target / _suite_file(target)
        folder = file.parent  # a suite's file may sit in a subfolder with its screenshots
    else:
        raise UsageError(f"TARGET {target} does not exist; give a suite folder, a folder of screenshots or an "
                         "annotations.jsonl")
    if out is not None:
        file = Path(out)
        if file.suffix != ".jsonl":
            raise UsageError(f"--out {out}: the page writes annotations.jsonl (one JSON object per line): pass "
                             f"--out {file.with_suffix('.jsonl')}")
    root = file.resolve().parent
    if not folder.resolve().is_relative_to(root):
        raise UsageError(f"the screenshots in {folder} are not under {root}, the folder of {file}: a sample's image "
                         "path is relative to the file and never contains '..'; put the file beside or above them")
    return file, folder


def _suite_file(folder: Path) -> str:
    """The annotations file a suite folder names (``[loader.options] annotations``), or the default."""
    toml = folder / "suite.toml"
    if not toml.is_file():
        return DEFAULT_FILE
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        loader = tomllib.loads(toml.read_text(encoding="utf-8")).get("loader", {})
    except (OSError, ValueError) as exc:
        raise UsageError(f"{toml} cannot be read ({exc}); fix it or give the annotations.jsonl itself") from exc
    name = (loader.get("options") or {}).get("annotations") if isinstance(loader, dict) else None
    if name is None:
        return DEFAULT_FILE
    if not isinstance(name, str) or not name.endswith(".jsonl"):
        raise UsageError(f"{toml} reads annotations {name!r} (loader {loader.get('name')!r}); the page writes the "
                         f"annotations.jsonl form: pass --out {folder / DEFAULT_FILE} (and point the suite at it)")
    return name


class Stopped(Exception):
    """SIGTERM or SIGHUP arrived: stop as Ctrl+C does (the save in progress finishes first)."""


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Stopped` in the main thread (once: a second signal during
    the clean-up is ignored, so the clean-up is not cut off); the previous handlers come back after."""
    wanted = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]
    fired: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        if not fired:
            fired.append(signum)
            raise Stopped(signal.Signals(signum).name)

    try:
        previous = {s: signal.signal(s, handler) for s in wanted}
    except ValueError:  # not the main thread (the command run inside a test's thread): nothing to catch
        yield
        return
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)


def serve(args: argparse.Namespace) -> int:
    file, folder = resolve(Path(args.target), args.out)
    store = Store(file)
    for stale in store.remove_temp_files():
        print(f"annotate: removed {stale}, a temporary file an interrupted save left", flush=True)
    snap = store.read()
    root = file.resolve().parent
    images = find_images(folder.resolve(), root, [e.data["image"] for e in snap.entries
                                                   if e.data and isinstance(e.data.get("image"), str)])
    if not images:
        raise UsageError(f"no png/jpg/webp screenshots under {folder} and no samples in {file}")
    proposals = None if args.detector == "none" else Proposals(store, images, args.detector, args.min_score)
    server = AnnotatorServer(Annotator(store, images, proposals), args.port)
    samples = sum(e.data is not None for e in snap.entries)
    print(f"annotate: {file} ({samples} sample(s), {len(images)} screenshot(s), proposals: {args.detector})\n"
          f"  open {server.url}\n  every change is saved as you make it; Ctrl+C stops the server", flush=True)
    for problem in snap.problems:
        print(f"  note: {problem}", flush=True)
    with stop_on_signals():
        try:
            if not args.no_browser:
                webbrowser.open(server.url)
            server.serve_forever()
        except (KeyboardInterrupt, Stopped) as exc:
            how = f" ({exc})" if isinstance(exc, Stopped) else ""
            print(f"\nannotate: stopped{how}; {file} holds every saved change", flush=True)
        finally:
            server.server_close()
            store.close()  # waits for a save in progress; no temporary file is left
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m pytest_uiground annotate``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    annotate = curation_tool()
    if args.terminal or args.answers is not None:
        return int(annotate.main([a for a in argv if a != "--terminal"]))
    AnnotateError = annotate.AnnotateError

    try:
        return serve(args)
    except UsageError as exc:
        print(f"annotate: error: {exc}", file=sys.stderr)
        return 2
    except AnnotateError as exc:  # --detector that cannot be loaded
        print(f"annotate: error: {exc}", file=sys.stderr)
        return int(exc.code)
