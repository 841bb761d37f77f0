"""Robustness suites: exact transforms of any grounding suite (a resized, zoomed, letterboxed, inverted,
blurred or photographed screen), each derived sample its own test, baseline entry and ``perturb=`` slice.

:mod:`.transforms` holds the image operations and the exact mapping of targets through them,
:mod:`.derive` turns a suite's samples into their perturbed variants (the image transformed lazily,
when the model asks for it), :mod:`.robustness` measures what a perturbation costs against the
unperturbed answers on the same samples.
"""
