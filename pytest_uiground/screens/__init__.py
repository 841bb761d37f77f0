"""Your own screens: the one package for a user's own grounding data, from screenshots to a gated suite.

``format`` is the one reader and writer of ``annotations.jsonl`` (and its CSV form); ``importers``
converts a labelling tool's export into it (``python -m pytest_uiground import``), ``scaffold``
starts a suite from a folder of screenshots (``init NAME --from DIR``), ``checks`` and ``validate``
check a suite before it is trusted, ``review`` holds the proposal detectors and the terminal review,
and ``annotator/`` is the browser front end (``python -m pytest_uiground annotate``). The grounding
*benchmark* (``benchmarks/grounding``) stays a benchmark and reads through ``format``; no module
here imports a benchmark (issue 39: this code lived in two benchmarks' folders and reached the rest
by string imports that the layout rules could not see).
"""
