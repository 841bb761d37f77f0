"""pytest-uiground: GUI grounding benchmarks as pytest regression suites.

Importing this package must stay cheap: no torch, transformers or datasets.
"""

__version__ = "0.1.0"
