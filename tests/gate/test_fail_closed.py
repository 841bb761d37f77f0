"""The gate fails closed (issue 38): no baseline is a FAIL on every output; the baseline is found from the
suite, not from pytest's rootdir (which an option's value can move); baselines outside the repository stop
the run; ``init`` pins the rootdir. Every run here is in a strict project (``filterwarnings = error``, the
``project`` fixture's ini), with and without ``-n 2``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import Project, verdict

from pytest_uiground.suite import init
from pytest_uiground.suite.project import baselines_root, outside_repository, project_of

pytestmark = pytest.mark.slow

SNAPSHOT = "--snapshot-update"


def test_no_baseline_fails_on_every_output(project: Project, xdist: list[str]) -> None:
    """A suite with no baseline FAILS: exit 1, one line naming --snapshot-update in the terminal, and the same
    verdict in summary.json, the Markdown summary, report.html and JUnit (a failing aggregate item)."""
    result = project.run("--uiground-report", "out", "--uiground-markdown", "md.md", "--junitxml", "j.xml",
                         xdist=xdist)
    out = result.stdout.str()
    assert result.ret == 1, out[-2000:]
    assert verdict(out).endswith(": FAIL: no baseline (record one with --snapshot-update)")
    assert "no baseline for 'mini'" in out and "--snapshot-update" in out
    summary = project.summary()
    assert summary["verdict"]["status"] == "FAIL" and "--snapshot-update" in summary["verdict"]["missing_baseline"]
    md = (project.root / "md.md").read_text()
    assert "❌" in md and "✅" not in md and "no baseline" in md
    assert "FAIL: no baseline" in (project.root / "out" / "report.html").read_text()
    junit = (project.root / "j.xml").read_text()
    assert 'name="test_aggregate[baseline]"' in junit and "<failure" in junit


def test_recorded_baseline_passes_and_removing_it_fails_again(project: Project, xdist: list[str]) -> None:
    """``--snapshot-update`` on a new suite records it (exit 0); the next run passes; ``rm -rf baselines``
    (the folder not committed, the common CI mistake) makes the gate fail again."""
    assert project.run(SNAPSHOT, xdist=xdist).ret == 0
    assert project.run(xdist=xdist).ret == 0
    shutil.rmtree(project.root / "baselines")
    gone = project.run(xdist=xdist)
    assert gone.ret == 1 and "FAIL: no baseline" in verdict(gone.stdout.str())


@pytest.mark.parametrize("option", ["--uiground-report", "--uiground-cache"])
def test_an_option_naming_an_existing_folder_does_not_lose_the_baseline(
        project: Project, tmp_path_factory: pytest.TempPathFactory, xdist: list[str], option: str) -> None:
    """Without a pytest ini, ``--uiground-report DIR`` (space-separated, an existing folder elsewhere) moves
    pytest's rootdir to a common ancestor; the baseline is still the suite's, so regressions still fail."""
    (project.root / "tox.ini").unlink()
    (project.root / "pyproject.toml").write_text("[tool.other]\n")  # a project file, but no pytest configuration
    ids = project.ids()
    assert project.run(SNAPSHOT, xdist=xdist).ret == 0
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    result = project.run(option, str(elsewhere), wrong=ids[:2], xdist=xdist)
    out = result.stdout.str()
    assert "no baseline" not in out, out[-2000:]
    assert result.ret == 1 and "2 samples regressed" in verdict(out), out[-2000:]


def test_baselines_outside_the_repository_stop_the_run(project: Project, tmp_path_factory: pytest.TempPathFactory,
                                                       xdist: list[str]) -> None:
    """In a git repository, ``--uiground-baselines`` naming a folder outside it stops the run at start-up,
    naming the folder and the fix; a folder inside it is used."""
    (project.root / ".git").mkdir()
    outside = tmp_path_factory.mktemp("outside-baselines")
    result = project.run(f"--uiground-baselines={outside}", xdist=xdist)
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, err
    assert str(outside) in err and "outside the repository" in err and "--uiground-baselines=" in err
    (project.root / "other").mkdir()
    assert project.run("--uiground-baselines=other", SNAPSHOT, xdist=xdist).ret == 0
    assert (project.root / "other" / "mini" / "samples.json").is_file()


def test_the_same_baseline_from_another_directory(project: Project, xdist: list[str]) -> None:
    """Started from the suite's own folder, the run reads ``<project>/baselines``: the same baseline."""
    ids = project.ids()
    assert project.run(SNAPSHOT, xdist=xdist).ret == 0
    project.monkeypatch.chdir(project.root / "suites")
    result = project.pytester.runpytest_subprocess(
        "mini", "--model", "fakemodels:create", "-p", "no:cacheprovider", "-p", "no:randomly",
        "--rootdir", str(project.root / "suites"), *xdist)
    out = result.stdout.str()
    assert "no baseline" not in out and result.ret == 0, out[-2000:]
    project.monkeypatch.setenv("UIGROUND_WRONG", ids[0])
    assert project.pytester.runpytest_subprocess(
        "mini", "--model", "fakemodels:create", "-p", "no:cacheprovider", "-p", "no:randomly", *xdist).ret == 1


def test_project_of_finds_the_folder_holding_suites(tmp_path: Path) -> None:
    suite = tmp_path / "repo" / "suites" / "x"
    suite.mkdir(parents=True)
    (suite / "suite.toml").write_text("")
    assert project_of(suite / "suite.toml") == tmp_path / "repo"
    assert project_of(tmp_path / "repo") == tmp_path / "repo"
    assert baselines_root([f"{suite}/suite.toml::test_sample[a]"], tmp_path, tmp_path / "else") == \
        tmp_path / "repo" / "baselines"
    loose = tmp_path / "loose" / "s"
    loose.mkdir(parents=True)
    (tmp_path / "loose" / "pyproject.toml").write_text("")
    assert baselines_root([str(loose)], tmp_path, Path("/")) == tmp_path / "loose" / "baselines"
    (tmp_path / "repo" / ".git").mkdir()
    assert outside_repository(tmp_path / "repo" / "baselines", [str(suite)], tmp_path) is None
    assert "outside the repository" in (outside_repository(tmp_path / "b", [str(suite)], tmp_path) or "")


def test_init_pins_the_rootdir_unless_configured(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``init`` writes a ``pytest.ini`` saying why; a project with a pytest configuration keeps its own."""
    assert init.main(["synthetic", "--dir", str(tmp_path / "a")]) == 0
    ini = (tmp_path / "a" / "pytest.ini").read_text()
    assert ini.startswith("#") and "rootdir" in ini and "[pytest]" in ini
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-q"\n')
    assert init.main(["synthetic", "--dir", str(tmp_path / "b")]) == 0
    assert not (tmp_path / "b" / "pytest.ini").exists()
    assert "kept the project's pytest configuration" in capsys.readouterr().out


def test_summary_round_trips_the_missing_baseline(project: Project) -> None:
    """``compare`` and the pages read summary.json back: the missing-baseline reason survives."""
    assert project.run("--uiground-report", "out").ret == 1
    from pytest_uiground.report.summary import read

    back = read(project.root / "out" / "summary.json")
    only = next(iter(back.values()))
    assert only.verdict is not None and not only.verdict.passed and "--snapshot-update" in only.verdict.missing
    assert json.loads((project.root / "out" / "summary.json").read_text())["verdict"]["status"] == "FAIL"
