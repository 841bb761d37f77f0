"""``--uiground-probe``: the coordinate-contract probe at the start of a pytest session.

Registered by the main plugin on the controlling process only (never on an xdist worker), it
runs before collection and before xdist starts its workers, so a wrong frame costs 13
requests rather than a run. The verdict is kept in the config's stash and stamped into each
suite's provenance and model fingerprint through the ``pytest_uiground_provenance`` hook
(:func:`stamp`), so summary.json, the baseline and the report carry it. A failed probe ends the
session with the diagnosis (exit status 4, a usage error: the setup is wrong, not the model's
skill); ``probe.json`` is written beside the report when ``--uiground-report`` is given, also
when it fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground.options import RunOptions
from pytest_uiground.run import STATE

PROBE: pytest.StashKey[dict[str, Any]] = pytest.StashKey()


def family_of(opts: RunOptions) -> str:
    """The family the run reads answers with: ``--uiground-parser``, or the model itself where its
    name is a family (``--model qwen-vl``)."""
    from pytest_uiground.models import families

    if opts.model.name == "replay":
        raise pytest.UsageError("--uiground-probe asks the model about generated screens; --model replay can only "
                                "repeat answers recorded for a dataset: probe the model that wrote them instead")
    for name in (opts.model.parser, opts.model.name):
        if name and families.is_family(name):
            return name
    raise pytest.UsageError(f"--uiground-probe: --model {opts.model.name} names no model family to check; give "
                            f"--uiground-parser NAME (known: {', '.join(families.names())})")


def stamp(model: dict[str, Any] | None, prov: dict[str, Any], config: pytest.Config
          ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """``model`` and ``prov`` with the probe's verdict and mapping added, when the probe ran."""
    verdict = config.stash.get(PROBE, None)
    if verdict is None:
        return model, prov
    short = {k: verdict[k] for k in ("verdict", "diagnosis", "family", "frame", "mapping", "best_reading")}
    fingerprint = (model or {}).get("fingerprint")
    stamped = {**fingerprint, "probe": short} if isinstance(fingerprint, dict) else {"model": fingerprint,
                                                                                    "probe": short}
    prov = {**prov, "probe": verdict, "model_fingerprint": stamped}
    return ({**model, "fingerprint": stamped} if model is not None else None), prov


class ProbePlugin:
    def __init__(self, config: pytest.Config, opts: RunOptions) -> None:
        self.config, self.opts = config, opts

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        from pytest_uiground import probe
        from pytest_uiground.run.build import build_model

        family = family_of(self.opts)
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        say = tr.write_line if tr is not None else print
        model, load_s = build_model(self.opts, "master")
        kept = False
        try:
            result = probe.run(model, probe.family_view(family, self.opts.model), progress=say)
            if result.passed and not distributed(self.config):  # this process runs the samples: keep the model
                state = self.config.stash[STATE]
                state.preloaded, state.model_load_s, kept = model, load_s, True
        finally:
            if not kept:
                model.close()
        doc = result.to_json()
        self.config.stash[PROBE] = doc
        mapping = ", ".join(f"{axis} = {m['scale']} x read + {m['offset']}" for axis, m in result.mapping.items())
        say(f"uiground probe: {doc['verdict'].upper()}: {result.diagnosis}; fitted truth: {mapping}")
        if self.opts.report_dir is not None:
            write(self.opts.report_dir / "probe.json", doc)
        if not result.passed:
            pytest.exit(f"uiground probe failed before the run: {result.diagnosis}",
                        returncode=pytest.ExitCode.USAGE_ERROR)

    def pytest_uiground_provenance(self, config: pytest.Config, outcome: Any, provenance: dict[str, Any]) -> None:
        """The probe's verdict into the suite's provenance and model fingerprint (the one provenance the
        baseline and the summary both carry)."""
        model, stamped = stamp(outcome.model, provenance, config)
        provenance.update(stamped)
        outcome.model = model


def distributed(config: pytest.Config) -> bool:
    """Whether pytest-xdist will run the samples on workers (each loads its own model), so the
    model the probe built in the controlling process is of no use after the probe."""
    return str(getattr(config.option, "dist", "no")) != "no"


def write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
