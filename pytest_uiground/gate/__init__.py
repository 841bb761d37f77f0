"""The controller side of a run: the aggregate checks, metrics, statistics and the baseline they
meet, and the hooks that sequence them after the sample tests.
"""

EACH, SIGNIFICANT = "each", "significant"
"""How per-sample flips fail a run (``--uiground-regressions``, ``[baseline] regressions``): every
regressed sample, or only significant evidence (:mod:`.flips`). Spelled here, in the stage's package,
so that the flip test and the verdict both read them and neither imports the other at run time."""
