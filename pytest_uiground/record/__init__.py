"""The one record of a sample, from dataset row to report: sample, prediction, score, result, outcome,
and the geometry and images they refer to. Imports nothing else of the package.
"""
