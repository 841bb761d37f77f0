"""An adapter declares its own settings (issue 21): a package outside pytest-uiground registers a
sequence of ``Opt`` under the ``pytest_uiground.model_options`` entry-point group, and its flag, its
ini key and its parsed value reach the adapter's factory in ``ModelOptions.settings``, with no edit
to ``pytest_uiground/options.py``."""

from __future__ import annotations

import json

import pytest
from conftest import Project

pytestmark = pytest.mark.slow

ADAPTER = '''
import json, os
from pytest_uiground.models.offline.center import CenterModel
from pytest_uiground.options import Opt

OPTIONS = (
    Opt("--tempo-temperature", 0.0, "tempo: sampling temperature", float),
    Opt("--tempo-greedy", False, "tempo: greedy decoding", lambda s: s == "true", switch=True),
)


def create(options):
    with open(os.environ["TEMPO_OUT"], "w") as fh:
        json.dump(dict(options.settings), fh)
    return CenterModel()
'''


def _install(project: Project, options: str = "tempo:OPTIONS") -> None:
    project.pytester.makepyfile(tempo=ADAPTER)
    dist = project.root / "tempo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tempo\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[pytest_uiground.model_options]\ntempo = {options}\n")
    project.importable()
    project.monkeypatch.setenv("TEMPO_OUT", str(project.root / "settings.json"))


def _run(project: Project, *args: str) -> pytest.RunResult:
    return project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "tempo:create", "-p", "no:cacheprovider", "--uiground-limit", "3",
        "--benchmark-disable", *args)


def test_a_declared_setting_reaches_the_factory_from_the_command_line(project: Project) -> None:
    _install(project)
    result = _run(project, "--tempo-temperature", "0.7", "--tempo-greedy")
    assert result.ret in (0, 1), result.stdout.str()  # the centre model may fail the floor; settings are the point
    settings = json.loads((project.root / "settings.json").read_text())
    assert settings == {"tempo_temperature": 0.7, "tempo_greedy": True}


def test_a_declared_setting_reads_its_ini_key_and_its_default(project: Project) -> None:
    _install(project)
    project.pytester.makeini("[pytest]\nuiground_tempo_temperature = 0.25\n")
    _run(project)
    assert json.loads((project.root / "settings.json").read_text()) == {"tempo_temperature": 0.25,
                                                                        "tempo_greedy": False}
    help_text = project.pytester.runpytest_subprocess("--help").stdout.str()
    assert "--tempo-temperature" in help_text and "tempo: sampling temperature" in help_text


def test_a_declaration_that_shadows_a_built_in_flag_is_one_start_up_error(project: Project) -> None:
    project.pytester.makepyfile(shadow='from pytest_uiground.options import Opt\n'
                                       'OPTIONS = (Opt("--uiground-seed", 0, "again", int),)\n')
    dist = project.root / "shadow-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: shadow\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[pytest_uiground.model_options]\nshadow = shadow:OPTIONS\n")
    project.importable()
    result = project.pytester.runpytest_subprocess("suites/mini", "-p", "no:cacheprovider")
    assert result.ret != 0
    out = result.stdout.str() + result.stderr.str()
    assert "--uiground-seed is declared twice" in out and "shadow:OPTIONS" in out
    assert len(out.splitlines()) < 40
