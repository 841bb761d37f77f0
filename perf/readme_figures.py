"""Regenerate the figures README.md quotes, from runs on this machine (never edited by hand).

    python perf/readme_figures.py            # run, then rewrite README.md's marked figures
    python perf/readme_figures.py --check    # run, and exit 1 if README.md differs
    python perf/readme_figures.py --install  # also time `pip install .` (core) in a fresh venv

Each figure in README.md sits between ``<!--fig:NAME-->`` and ``<!--/fig-->`` (invisible when
rendered); a block figure (the main job's uiground section) between ``<!--fig:NAME-->`` and
``<!--/fig-->`` lines around a fenced block. The runs happen where a newcomer runs them: in a
fresh git repository made by ``python -m pytest_uiground init synthetic``, with this
interpreter's install of pytest-uiground, and the pytest cache off (no cached predictions).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FIG_RE = re.compile(r"<!--fig:(?P<name>[a-z0-9_]+)-->(?P<body>.*?)<!--/fig-->", re.S)
PROGRESS_END = re.compile(r"\[100%\]\s*$")
#: every figure measure() gives (install_* only with --install)
NAMES = ("main_output", "main_serial_s", "main_cpu_s", "main_xdist_s", "failing_lines", "limit40_screens",
         "limit40_s", "cores", "install_s", "install_mb")


def run(project: Path, *args: str) -> tuple[str, float, float]:
    """``pytest ARGS`` in ``project``: its output, wall seconds and CPU seconds (user + system, all
    processes: the figure a shared machine does not inflate)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider"], cwd=project,
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done.stdout, wall, cpu


def uiground_section(out: str) -> str:
    """The uiground section: from its ``===== uiground: ...`` header to the verdict line."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"=+ uiground: ", line))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("uiground verdict"))
    return "\n".join(lines[start:end + 1])


def lines_after_progress(out: str) -> int:
    """Lines printed after the progress dots (the last ``[100%]`` line), the closing line included."""
    lines = out.splitlines()
    last = max(i for i, line in enumerate(lines) if PROGRESS_END.search(line))
    return len(lines) - last - 1


def seconds(s: float) -> str:
    return f"{s:.0f} s"


def measure(install: bool) -> dict[str, str]:
    """Every figure, by name, as README.md shows it."""
    figs: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        subprocess.run([sys.executable, "-m", "pytest_uiground", "init", "synthetic"], cwd=project, check=True,
                       capture_output=True)
        out, wall, cpu = run(project, "suites/synthetic")
        section = uiground_section(out)
        if "verdict for synthetic: PASS" in section:
            figs["main_output"] = "\n```\n" + section + "\n```\n"
        else:  # a loaded machine misses the latency budget: not what a fresh machine prints
            print("the main job did not pass here; README's output block is kept:\n" + section, file=sys.stderr)
        figs["main_serial_s"] = seconds(wall)
        figs["main_cpu_s"] = seconds(cpu)
        out, wall, _ = run(project, "suites/synthetic", "-n", "2")
        figs["main_xdist_s"] = seconds(wall)
        out, _, _ = run(project, "suites/synthetic", "--model", "center", "-n", "2")
        figs["failing_lines"] = f"{lines_after_progress(out)} lines"
        out, _, _ = run(project, "suites/synthetic", "--uiground-limit", "40", "--collect-only", "-q")
        ids = [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "::test_sample[" in line]
        figs["limit40_screens"] = f"{len({i.rsplit('-', 1)[0] for i in ids})} of 50 screens"
        out, wall, cpu = run(project, "suites/synthetic", "--uiground-limit", "40")
        figs["limit40_s"] = f"{seconds(wall)}, {seconds(cpu)} of CPU"
        if install:
            venv = Path(tmp) / "venv"
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(ROOT)], check=True, capture_output=True)
            figs["install_s"] = seconds(time.perf_counter() - started)
            size = sum(p.stat().st_size for p in venv.rglob("*") if p.is_file() and not p.is_symlink())
            figs["install_mb"] = f"about {round(size / 1e6, -1):.0f} MB"
            shutil.rmtree(venv)
    figs["cores"] = f"{os.cpu_count()} CPU cores"
    return figs


def rewrite(text: str, figs: Mapping[str, str]) -> tuple[str, list[str]]:
    """``text`` with every known figure replaced; also the names README marks that ``figs`` lacks."""
    unknown: list[str] = []

    def sub(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in figs:
            unknown.append(name)
            return m.group(0)
        return f"<!--fig:{name}-->{figs[name]}<!--/fig-->"

    return FIG_RE.sub(sub, text), unknown


def main(argv: Sequence[str] | None = None, measure_: Callable[[bool], dict[str, str]] = measure) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="exit 1 if README.md's figures differ, change nothing")
    p.add_argument("--install", action="store_true", help="also time a core install in a fresh venv")
    args = p.parse_args(argv)
    figs = measure_(args.install)
    text = README.read_text(encoding="utf-8")
    new, unknown = rewrite(text, figs)
    for name in unknown:
        if not ((name.startswith("install_") and not args.install) or name == "main_output"):
            print(f"README.md marks a figure {name!r} that this script does not measure", file=sys.stderr)
    for name, value in figs.items():
        print(f"{name}: {value.strip()[:200]}")
    if args.check:
        return int(new != text)
    README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
