"""Every code block in README.md, CONTRIBUTING.md and docs/*.md is run or checked here (issue 29).

What "run" means per language:

* ``toml``: parsed with tomllib; a block with a ``[suite]`` table is loaded with the suite parser.
* ``python``: compiled and executed in a temporary folder (the examples are self-contained).
* ``bash``: each command is checked. ``pytest ARGS``: the options are parsed by this session's own
  pytest parser (the plugin's, syrupy's, xdist's ...), ``-k``/``-m`` expressions compiled, repository
  paths checked. ``python -m pytest_uiground SUB ARGS``: parsed by the subcommand's argparse (``probe``
  by pytest's). ``python -c CODE``: compiled. ``pip install ".[X]"``: each extra exists in
  pyproject.toml. A block marked ``<!-- run-by: .ci/run -->`` must appear in ``.ci/run`` line for line.
  The commands of unmarked blocks that touch the synthetic suite, ``init`` and ``python -c`` are then
  really run, once each, in a project made by ``python -m pytest_uiground init synthetic``.

A block that needs a GPU, a dataset, a model hub or a server carries ``<!-- no-run: REASON -->`` on the
line before its fence: it is not executed, but its commands are still parsed as above. Blocks without a
language (or ``text``) are program output, not code. ``docs/options.md`` is checked against the parser
by ``docs/gen_options.py --check``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)\s*$")
MARK = re.compile(r"<!-- (?P<kind>no-run|run-by): (?P<why>[^>]+?) -->\s*$")
OUTPUT_LANGS = {"", "text"}
CI_ONLY = {"python3", ".", "ruff", "mypy", "(command", "npm", "npx"}  # commands only .ci/run's blocks may hold
NO_RUN_ONLY = {"git", "export", "vllm", "hf"}  # commands only a no-run block may hold


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    mark: str | None  # "no-run" or "run-by"
    why: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    out = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if not m:
                i += 1
                continue
            indent, start = len(m.group("indent")), i
            i += 1
            body = []
            while not re.match(r"^ *```\s*$", lines[i]):
                body.append(lines[i][indent:])
                i += 1
            mark = MARK.search(lines[start - 1]) if start else None
            out.append(Block(path, start + 1, m.group("lang"), "\n".join(body) + "\n",
                             mark.group("kind") if mark else None, mark.group("why") if mark else ""))
            i += 1
    return out


BLOCKS = blocks()
CODE = [b for b in BLOCKS if b.lang not in OUTPUT_LANGS]


def commands(code: str) -> Iterator[list[str]]:
    """The shell commands of a block: continuation lines joined, comments dropped, ``&&`` split."""
    for line in code.replace("\\\n", " ").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.lstrip().startswith("(command -v"):
            yield ["(command", line]
            continue
        words: list[str] = []
        for word in shlex.split(line, comments=True):
            if word == "&&":
                yield words
                words = []
            else:
                words.append(word)
        if words:
            yield words


def _module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# -- the inventory ------------------------------------------------------------------------------


def test_every_code_block_is_run_or_marked() -> None:
    unknown = [b.where for b in CODE if b.lang not in ("bash", "toml", "python", "yaml")]
    assert unknown == [], f"a language this test does not run: {unknown}"
    marked = [b for b in CODE if b.mark == "no-run"]
    assert all(b.why.startswith(("needs", "installs", "interactive", "the same")) for b in marked), \
        [(b.where, b.why) for b in marked]
    assert len(CODE) >= 25 and len(marked) < len(CODE) // 2  # most blocks really run
    print(f"{len(CODE)} code blocks: {len(CODE) - len(marked)} run, {len(marked)} marked no-run")


def test_readme_is_short_and_its_links_resolve() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250
    slug = re.compile(r"[^\w\- ]")
    broken = []
    for path in [*DOCS]:
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            if not dest.exists():
                broken.append(f"{path.name}: {target}")
            elif anchor and dest.suffix == ".md":
                heads = re.findall(r"^#+ (.+)$", dest.read_text(encoding="utf-8"), re.M)
                if anchor not in {slug.sub("", h.strip().lower()).replace(" ", "-") for h in heads}:
                    broken.append(f"{path.name}: {target}")
    assert broken == []


def test_options_md_is_generated_from_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    gen = _module("gen_options", ROOT / "docs" / "gen_options.py")
    code = gen.main(["--check"])
    assert code == 0, capsys.readouterr().err
    flags = {f for _, opts in gen.rows(gen.build_parser()) for o in opts for f in o["flags"]}
    assert {"--model", "--uiground-limit", "--uiground-report"} <= flags


def test_architecture_map_is_generated_from_the_docstrings(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/architecture.md's package map is the modules' own docstrings (issue 42: the hand-written one drifted);
    a module added, moved or removed without regenerating it fails here."""
    gen = _module("gen_architecture", ROOT / "docs" / "gen_architecture.py")
    assert gen.main(["--check"]) == 0, capsys.readouterr().err
    text = (ROOT / "docs" / "architecture.md").read_text()
    for module in ("run/repeats.py", "run/stop.py", "gate/noise.py", "gate/flips.py"):  # the drifted-out ones
        folder, name = module.split("/")
        assert re.search(rf"^  {folder}/.*?^    {re.escape(name)} ", text, re.M | re.S), module


def test_the_ci_blocks_are_what_ci_runs() -> None:
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    ci_blocks = [b for b in CODE if b.mark == "run-by"]
    assert len(ci_blocks) == 2  # "Install for development" and "Run the project's own tests"
    for b in ci_blocks:
        for line in b.code.splitlines():
            parts = [p.strip() for p in line.split("&&")] if line.startswith("python3 -m venv") else [line]
            for part in parts:
                # .ci/run runs pip quietly and activates with ". .venv/bin/activate" on its own line
                assert part in ci or part.replace("pip install ", "pip install --quiet ") in ci, \
                    f"{b.where}: {part!r} is not in .ci/run"
    assert "pytest suites/synthetic" in ci  # the main job


# -- static checks of every block ---------------------------------------------------------------


def _check_pytest_args(parser: pytest.Parser, args: list[str], where: str) -> None:
    from _pytest.mark.expression import Expression

    ns, unknown = parser.parse_known_and_unknown_args(args)
    assert unknown == [], f"{where}: pytest {' '.join(args)}: unknown options {unknown}"
    for expr in (ns.keyword, ns.markexpr):
        if expr:
            Expression.compile(expr)
    for arg in ns.file_or_dir:
        if arg.startswith(("suites/", "tests")):
            assert (ROOT / arg).exists(), f"{where}: no {arg} in the repository"


class _Parsed(Exception):
    pass


def _check_subcommand(argv: list[str], parser: pytest.Parser, where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_uiground import __main__ as cli

    assert argv and argv[0] in cli.COMMANDS, f"{where}: unknown subcommand {argv[:1]}"
    if argv[0] == "probe":  # its options are pytest's
        _check_pytest_args(parser, argv[1:], where)
        return
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self: argparse.ArgumentParser, *a: object, **k: object) -> object:
        original(self, *a, **k)  # type: ignore[call-overload]
        raise _Parsed

    with monkeypatch.context() as m:
        m.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
        try:
            cli.main(argv)
        except _Parsed:
            return
        except SystemExit as exc:
            pytest.fail(f"{where}: python -m pytest_uiground {' '.join(argv)}: exit {exc.code}")
    pytest.fail(f"{where}: python -m pytest_uiground {argv[0]} never parsed its arguments")


@pytest.mark.parametrize("block", [b for b in CODE if b.lang == "bash"], ids=lambda b: b.where)
def test_shell_block_commands_parse(block: Block, pytestconfig: pytest.Config,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    parser: pytest.Parser = pytestconfig._parser
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for words in commands(block.code):
        head = words[0]
        if head == "pytest":
            _check_pytest_args(parser, words[1:], block.where)
        elif words[:3] == ["python", "-m", "pytest_uiground"]:
            _check_subcommand(words[3:], parser, block.where, monkeypatch)
        elif words[:2] == ["python", "-c"]:
            compile(words[2], block.where, "exec")
        elif head == "pip":
            assert words[1] == "install", block.where
            for spec in words[2:]:
                m = re.fullmatch(r"\.\[(.+)\]", spec)
                if m:
                    assert set(m.group(1).split(",")) <= set(extras), f"{block.where}: {spec}"
        elif head in CI_ONLY:
            assert block.mark == "run-by", f"{block.where}: {head} outside a .ci/run block"
        elif head in NO_RUN_ONLY:
            assert block.mark == "no-run", f"{block.where}: {head} can only be in a block marked no-run"
        else:
            pytest.fail(f"{block.where}: this test does not know how to check {head!r}")


@pytest.mark.parametrize("block", [b for b in CODE if b.lang == "yaml"], ids=lambda b: b.where)
def test_workflow_block_parses_and_its_commands_too(block: Block, pytestconfig: pytest.Config,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI workflow (``yaml``): it parses, and every ``run:`` step's commands are checked as a no-run
    shell block's, with each ``${{ expression }}`` read as ``1`` (a matrix index, say)."""
    yaml = pytest.importorskip("yaml", reason="checking a workflow needs PyYAML (the [dev] extra has it)")

    def runs(node: object) -> Iterator[str]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "run" and isinstance(value, str):
                    yield value
                else:
                    yield from runs(value)
        elif isinstance(node, list):
            for value in node:
                yield from runs(value)

    steps = list(runs(yaml.safe_load(block.code)))
    assert steps, f"{block.where}: a workflow without a run step"
    code = "\n".join(re.sub(r"\$\{\{[^}]*\}\}", "1", step) for step in steps) + "\n"
    test_shell_block_commands_parse(Block(block.path, block.line, "bash", code, "no-run", "a workflow"),
                                    pytestconfig, monkeypatch)


@pytest.mark.parametrize("block", [b for b in CODE if b.lang == "toml"], ids=lambda b: b.where)
def test_toml_block_parses(block: Block, tmp_path: Path) -> None:
    data = tomllib.loads(block.code)
    if "suite" in data:
        from pytest_uiground.suite.config import load_suite_config

        (tmp_path / "suite.toml").write_text(block.code)
        config = load_suite_config(tmp_path / "suite.toml")
        assert config.name == data["suite"]["name"]
    if "suites" in data and "model" in data:  # uiground-model.toml: the keys the gate workflow reads
        assert set(data) <= set(tomllib.loads((ROOT / "uiground-model.toml").read_text())) | {"revision"}


@pytest.mark.parametrize("block", [b for b in CODE if b.lang == "python"], ids=lambda b: b.where)
def test_python_block_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(block.code, block.where, "exec"), {"__name__": "docs_example"})


# -- the cheap commands, really run --------------------------------------------------------------


def _runnable() -> list[tuple[str, list[str]]]:
    """(where, command) of the unmarked blocks' commands that run in seconds on the synthetic suite."""
    seen: dict[tuple[str, ...], str] = {}
    for b in CODE:
        if b.lang != "bash" or b.mark:
            continue
        for words in commands(b.code):
            cheap = (words[:2] == ["pytest", "suites/synthetic"] or words[:2] == ["python", "-c"]
                     or words[:4] in (["python", "-m", "pytest_uiground", "init"],
                                      ["python", "-m", "pytest_uiground", "merge"]))
            if cheap:
                seen.setdefault(tuple(words), b.where)
    return [(where, list(words)) for words, where in seen.items()]


@pytest.mark.slow
def test_the_cheap_commands_run_in_a_fresh_project() -> None:
    """In a project made as the README says (``init``), the main job first (it passes and fills the
    prediction cache), then every other synthetic command, answered from that cache. A command whose
    comment says it fails may fail its checks (exit 1), never its usage (exit 2..5)."""
    runs = _runnable()
    # init first, then the main job (it fills the prediction cache), then the rest in document order
    order = sorted(runs, key=lambda r: (r[1][:4] != ["python", "-m", "pytest_uiground", "init"],
                                        r[1] != ["pytest", "suites/synthetic"]))
    assert ["pytest", "suites/synthetic"] in [c for _, c in runs]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID", "PYTEST_ADDOPTS"):
        env.pop(name, None)
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        for where, words in order:
            if words[:2] == ["python", "-c"] and importlib.util.find_spec("pyarrow") is None:
                continue  # the look-alike writer needs the [automotive] extra
            if words[0] == "python":
                # absolute /tmp/ paths in an example go to this test's folder instead
                words = [sys.executable, *[w.replace("/tmp/", f"{tmp}/") for w in words[1:]]]
            else:
                words = [sys.executable, "-m", *words]
            done = subprocess.run(words, cwd=project, capture_output=True, text=True, env=env, timeout=300)
            ok = (0,) if words[2:] == ["pytest", "suites/synthetic"] or "pytest" not in words[2:3] else (0, 1)
            assert done.returncode in ok, f"{where}: {' '.join(words[1:])}: exit {done.returncode}\n" + \
                (done.stdout + done.stderr)[-3000:]
            if words[2:] == ["pytest", "suites/synthetic"]:
                assert "uiground verdict for synthetic: PASS" in done.stdout
