"""Assertions for regression tests on theoretical constants (pytest or unittest).

Re-exported from :mod:`calcheck.theory_checks.testing`; see there for the statistics.
"""

from calcheck.theory_checks.testing import assert_guarantee_holds, assert_guarantee_violated

__all__ = ["assert_guarantee_holds", "assert_guarantee_violated"]
