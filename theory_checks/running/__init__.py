"""Simulate, evaluate, keep.

The runner, result records, ``verify``, controls, exact coverage, plans and benchmarks.
"""
