"""pytest_uiground.report.assets: the pages' scripts and stylesheets are files under ``report/static/``.

The promises checked here (issue 42): no JavaScript or CSS lives in a Python string; every static
file is package data (the wheel carries it) and is what the pages inline; the pinned eslint lints
every ``.js`` of the package and refuses markup sinks and network calls; the pages escape through
one helper. What the scripts *do* is tested in Chromium: ``test_report_front.py``.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import pytest
import tomllib

from pytest_uiground.report import assets, browse
from pytest_uiground.report import html as htmlreport
from pytest_uiground.report.summary import SuiteSummary

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_uiground"
STATIC = PACKAGE / "report" / "static"
ESLINT = ROOT / "node_modules" / ".bin" / "eslint"


def test_every_static_file_is_listed_read_and_package_data() -> None:
    on_disk = sorted(p.name for p in STATIC.iterdir() if p.is_file())
    assert on_disk == sorted(assets.FILES)
    shipped = resources.files("pytest_uiground.report").joinpath("static")
    for name in assets.FILES:
        assert assets.static(name) == shipped.joinpath(name).read_text(encoding="utf-8")
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = globs["pytest_uiground.report"]
    assert all(any(Path("static", n).match(g) for g in patterns) for n in on_disk), patterns
    assert "recursive-include pytest_uiground/report/static *.js *.css" in (ROOT / "MANIFEST.in").read_text()


def test_a_name_outside_the_static_files_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"report/static/nope\.js: not one of the report's static files page\.css"):
        assets.static("nope.js")


def test_a_static_file_that_would_end_its_inline_element_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "sort.js").write_text('var s = "</SCRIPT>";\n', encoding="utf-8")
    (tmp_path / "static" / "page.css").write_text('p::after{content:"</style>"}\n', encoding="utf-8")
    monkeypatch.setattr(assets.resources, "files", lambda package: tmp_path)
    with pytest.raises(ValueError, match=r"report/static/sort\.js contains '</script'"):
        assets.static.__wrapped__("sort.js")
    with pytest.raises(ValueError, match=r"report/static/page\.css contains '</style'"):
        assets.static.__wrapped__("page.css")


def test_the_pages_inline_the_files() -> None:
    text = htmlreport.render(SuiteSummary(
        suite="s", model="m", model_fingerprint={}, n_samples=0, metrics={}, baseline_comparison={},
        latency_ms=None, regressed=(), fixed=(), errors=(), format_errors=0, provenance={}), [])
    for name in ("page.css", "sort.css", "browser.css", "sort.js", "browser.js"):
        assert assets.static(name) in text, name
    assert 'src="' not in text.split("<body>")[0] and "<link" not in text  # nothing fetched


CSS_RULE = re.compile(r"[\w\]\)*]\s*\{\s*(?:[a-z-]+\s*:[^;{}]*;\s*)*"
                      r"(?:color|background|margin|padding|font|border|display|width|height|position|cursor|stroke"
                      r"|fill|max-width|overflow|white-space)[a-z-]*\s*:")
JS_CODE = re.compile(r"\bfunction\s*\(|=>\s*\{|addEventListener\(|getElementById\(|querySelector")


def strings(tree: ast.AST) -> list[str]:
    """Every string constant in a module, f-strings' literal parts included (docstrings too)."""
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_no_script_or_stylesheet_lives_in_a_python_string() -> None:
    modules = [*sorted((PACKAGE / "report").glob("*.py")), PACKAGE / "screens" / "validate.py"]
    for path in modules:
        for text in strings(ast.parse(path.read_text(encoding="utf-8"))):
            assert not CSS_RULE.search(text), f"{path.name}: CSS in a Python string: {text[:80]!r}"
            assert not JS_CODE.search(text), f"{path.name}: JavaScript in a Python string: {text[:80]!r}"


def test_the_python_string_check_sees_css_and_js() -> None:
    assert CSS_RULE.search(".error{color:#c00}") and CSS_RULE.search("th.sorts{cursor:pointer;user-select:none}")
    assert CSS_RULE.search("body{font:14px sans-serif;margin:1em}")
    assert not CSS_RULE.search("{value:.2f} {p50:.1f} ms")  # format specs are not CSS
    assert JS_CODE.search("(function () {") and not JS_CODE.search("a function of the run")


def test_one_escaping_helper() -> None:
    """Only report/markup.py escapes HTML (``esc``); a page module escaping its own way would drift."""
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "report" / "markup.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bhtml\.escape\(|from html import escape|markupsafe|jinja2", text), path


def test_every_element_the_script_looks_up_is_written_by_the_browser_section() -> None:
    script = assets.static("browser.js")
    wanted = set(re.findall(r'getElementById\("([a-z-]+)"\)', script))
    wanted |= set(re.findall(r'querySelectorAll\("#([a-z-]+)', script))
    assert {"uig-data", "f-outcome", "f-text", "f-count", "detail", "samples"} <= wanted
    source = inspect.getsource(browse)
    for element_id in wanted:
        assert f'id="{element_id}' in source, element_id
    assert 'class="f-slice"' in source and 'data-key="' in source  # the slice filters the script reads


def eslint(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ESLINT), *args], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=120)


needs_eslint = pytest.mark.skipif(not ESLINT.exists() or shutil.which("node") is None,
                                  reason="needs the pinned eslint: npm ci --no-audit --no-fund (Node >= 20.19)")


@needs_eslint
def test_eslint_lints_every_script_of_the_package_clean() -> None:
    done = eslint("--format", "json", "pytest_uiground")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    linted = {Path(r["filePath"]).relative_to(ROOT).as_posix() for r in json.loads(done.stdout)}
    every = {p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.js")}
    assert linted == every and {"pytest_uiground/screens/annotator/page.js", "pytest_uiground/report/static/browser.js",
                                "pytest_uiground/report/static/sort.js"} <= linted


@needs_eslint
def test_eslint_refuses_markup_sinks_network_calls_and_undefined_names() -> None:
    bad = ('(function () {\n  "use strict";\n  var d = document.getElementById("x");\n  d.innerHTML = "<b>";\n'
           '  fetch("x");\n  undefinedName();\n})();\n')
    done = eslint("--format", "json", "--stdin", "--stdin-filename", "pytest_uiground/report/static/bad.js",
                  stdin=bad)
    rules = sorted(m["ruleId"] for m in json.loads(done.stdout)[0]["messages"])
    assert done.returncode == 1 and rules == ["no-restricted-globals", "no-restricted-properties", "no-undef"]
