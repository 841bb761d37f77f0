"""Model adapters. Each is found by name through the ``pytest_uiground.models``
entry-point group, so importing this package imports no adapter (and no torch)."""
