"""``python -m pytest_uiground probe --model ... --uiground-parser ...``: the probe alone.

The same options as a pytest run (model, API base, served model, parser, device, the
``UIGROUND_OPENAI_*_PIXELS`` environment), parsed by pytest itself so the two cannot drift:
this runs pytest with ``--uiground-probe`` on an empty folder, so the probe is all that
happens. Exit status 0 when the contract holds, 4 with the diagnosis when it does not.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence

USAGE = """usage: python -m pytest_uiground probe --model NAME [--uiground-parser FAMILY] [model options...]

Sends 13 generated calibration screens to the model, reads the answers with the family and
says whether they land where the targets are; if not, which frame the answers are in."""


def main(argv: Sequence[str]) -> int:
    import pytest

    args = list(argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if args else 2
    with tempfile.TemporaryDirectory(prefix="uiground-probe-") as empty:
        code = int(pytest.main([empty, "--uiground-probe", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                                "--uiground-cache", "off", *args]))
    if code == int(pytest.ExitCode.NO_TESTS_COLLECTED):  # the probe passed; there was nothing else to run
        return 0
    sys.stdout.flush()
    return code
