"""Comparing GPUs: the side-by-side table, radar geometry and the Pareto frontier.

Pure Python, no Qt: every number a compare chart draws is computed here, so
tests can check it without a display.
"""
