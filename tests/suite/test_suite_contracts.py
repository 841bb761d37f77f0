"""What a suite gives the plugin is checked with a message that names the problem: suite.toml's
encoding, the loader's return type.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_bom_in_suite_toml_is_named(tmp_path: Path) -> None:
    """A suite.toml starting with a byte-order mark is refused with a message that names the BOM (not
    tomllib's "Invalid statement (at line 1, column 1)"), and loads once the BOM is removed."""
    from conftest import SUITE_TOML

    from pytest_uiground.suite.config import SuiteConfigError, load_suite_config

    path = tmp_path / "suite.toml"
    path.write_bytes(b"\xef\xbb\xbf" + SUITE_TOML.format(loader="synthetic", floor=10.0).encode())
    with pytest.raises(SuiteConfigError, match="byte-order mark"):
        load_suite_config(path)
    path.write_text(SUITE_TOML.format(loader="synthetic", floor=10.0))
    assert load_suite_config(path).name == "mini"


LOADERS = '''
from pytest_uiground.benchmarks.synthetic.loader import load

def gen(options, ctx):
    yield from load({"seed": 1, "screens": 1}, ctx)

def dicts(options, ctx):
    return [{"id": "a", "instruction": "x"}]
'''


@pytest.mark.parametrize(("loader", "message"), [
    ("gen", "returned generator, expected a list of pytest_uiground.record.sample.Sample"),
    ("dicts", "returned a dict at index 0, expected a pytest_uiground.record.sample.Sample"),
])
def test_loader_contract_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loader: str, message: str) -> None:
    """A loader that returns something other than a list of Sample (a generator, dicts) is a SuiteLoadError
    naming the loader and what it returned, not a later KeyError or AttributeError."""
    from pytest_uiground.suite.loading import SuiteLoadError, load_suite

    (tmp_path / "faultloaders.py").write_text(LOADERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    suite = tmp_path / loader / "suite.toml"
    suite.parent.mkdir()
    suite.write_text(f'[suite]\nname = "{loader}"\nversion = "1"\n[loader]\nname = "faultloaders:{loader}"\n'
                     '[[metrics]]\nname = "acc"\ntasks = ["point"]\nslices = ["difficulty"]\n')
    with pytest.raises(SuiteLoadError, match=f"loader 'faultloaders:{loader}' {message}"):
        load_suite(suite)
