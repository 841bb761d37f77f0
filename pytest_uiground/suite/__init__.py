"""A suite as declared (``suite.toml``) and loaded (its loader run, its samples built), the hub
downloads and the look-alike data writers the tests and fixtures share.
"""
