"""UI-Vision (ServiceNow, arXiv 2503.15661): element grounding on 83 desktop applications.

``mapdict_cat2platform.json`` is the platform → domain table of ``uivision/UI-Vision``
@2b79355f962a2db1402ce0ad3d261aa9cb74b855 (``mapdict_cat2platform.json``, unchanged): it is in
the GitHub repository only, not in the Hub dataset, so it ships here.
"""
