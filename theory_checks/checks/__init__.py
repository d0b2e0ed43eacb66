"""The coverage check and its vocabulary.

Events, per-bin radii, methods, budgets, and the evidence of its cells (exact, certified).
"""
