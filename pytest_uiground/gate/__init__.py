"""The controller side of a run: the aggregate checks, metrics, statistics and the baseline they
meet, and the hooks that sequence them after the sample tests.
"""
