"""Dataset loaders, found by name through the ``pytest_uiground.loaders`` entry-point group."""
