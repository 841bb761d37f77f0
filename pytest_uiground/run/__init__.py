"""The worker side of a run: collection into sample tests, and predicting, scoring and recording one
sample inside its test (the prediction strategies, the look-ahead, the prediction cache).
"""
