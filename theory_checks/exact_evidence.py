"""Exact evidence first: a cell whose probability calcheck can compute exactly is decided by it.

(Stub: the exact route is filled in by the exact-evidence work of issue 35.)
"""

from __future__ import annotations

__all__ = ["with_exact_evidence"]


def with_exact_evidence(check, experiment, alpha, radius, cell):
    """``cell`` with its exact coverage where one exists (unchanged otherwise)."""
    return cell
