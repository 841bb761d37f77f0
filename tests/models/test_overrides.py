"""Per-suite model overrides: prompts, preprocessing and parsers, from suite.toml or a plugin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Project

from pytest_uiground.models import families
from pytest_uiground.models.overrides import Overrides, from_table
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite.config import SuiteConfigError, load_suite_config
from pytest_uiground.suite.loading import load_suite

CUSTOM_PARSER = '''
from pytest_uiground.record.geometry import Point
from pytest_uiground.models.families import Parsed


def parse(text, task, ctx):
    """Reads 'AT x y' with x, y in 0..1."""
    parts = text.split()
    if len(parts) == 3 and parts[0] == "AT":
        return Parsed(point=Point(float(parts[1]), float(parts[2])))
    return Parsed(format_error=True, note="not 'AT x y'")
'''


def test_prompt_override_fills_the_instruction() -> None:
    sample = Sample("s", ImageRef.from_path("x.png"), "the OK button", "point", Target(box=Box(0, 0, 1, 1)))
    ov = Overrides(prompts={"point": "Click on: {instruction}"})
    assert ov.prompt(sample, "uground") == "Click on: the OK button"
    # the family's own, by default
    assert Overrides().prompt(sample, "uground") == families.get("uground").user_text(sample)
    assert ov.key() != Overrides().key()


@pytest.mark.parametrize(("table", "message"), [
    ({"prompts": {"click": "x"}}, "unknown task kind 'click'"),
    ({"parser": "nonsense"}, "neither a family"),
    ({"colour": "red"}, "unknown field(s) ['colour']"),
])
def test_bad_overrides_are_named(table: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        from_table(table, where="[models.x]")


def test_suite_file_with_bad_override_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text('[suite]\nname="x"\nversion="1"\n[loader]\nname="synthetic"\n[[metrics]]\nname="a"\n'
                    '[models.uitars]\nparser = "nonsense"\n')
    with pytest.raises(SuiteConfigError, match=r"suite\.toml: \[models\.uitars\]: parser 'nonsense'"):
        load_suite_config(path)


def _outputs(project: Project, fmt: str) -> Path:
    samples = sorted(load_suite(project.root / "suites" / "mini" / "suite.toml").samples, key=lambda s: s.id)
    lines = []
    for s in samples:
        c = s.target.box.center
        lines.append({"sample_id": s.id, "output": fmt.format(x=c.x, y=c.y, lx=int(c.x * 1000), ly=int(c.y * 1000))})
    path = project.root / "outputs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def _run(project: Project, outputs: Path, override: str) -> dict:  # type: ignore[type-arg]
    path = project.root / "suites" / "mini" / "suite.toml"
    path.write_text(path.read_text() + "\n[models.uground]\n" + override + "\n")  # the replayed family's table
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "replay", "--uiground-predictions", str(outputs), "--uiground-replay-parser",
        "uground",
        "-p", "no:cacheprovider", "--uiground-report", "out", "--snapshot-update")
    assert result.ret == 0, result.stdout.str()[-2000:]
    return project.summary()["metrics"]["grounding_accuracy"]


@pytest.mark.slow
def test_suite_swaps_the_parser_by_family(project: Project) -> None:
    outputs = _outputs(project,
    "click<loc_{lx}><loc_{ly}>")  # TinyClick's format, replayed with --uiground-replay-parser uground
    metric = _run(project, outputs, 'parser = "tinyclick"')
    assert metric["value"] == 100.0 and metric["format_errors"] == 0


@pytest.mark.slow
def test_suite_plugs_in_a_python_parser(project: Project) -> None:
    project.pytester.makepyfile(myparsers=CUSTOM_PARSER)
    outputs = _outputs(project, "AT {x} {y}")
    metric = _run(project, outputs, 'parser = "myparsers:parse"')
    assert metric["value"] == 100.0
