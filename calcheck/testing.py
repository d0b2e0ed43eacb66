"""Assertions for regression tests on theoretical constants (pytest or unittest).

Re-exported from :mod:`calcheck.theory_checks.running.assertions` (see there for the statistics) and
:mod:`calcheck.theory_checks.running.tightness` (``assert_tightness``: the bound's critical factor,
certified or exact, pinned: a constant shrunk while the bound stays valid fails it).
"""

from calcheck.theory_checks.running.assertions import (
    assert_guarantee_holds,
    assert_guarantee_violated,
)
from calcheck.theory_checks.running.tightness import assert_tightness

__all__ = ["assert_guarantee_holds", "assert_guarantee_violated", "assert_tightness"]
