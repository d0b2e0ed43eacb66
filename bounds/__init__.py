"""Guarantees of distribution-free calibration as pure, vectorised functions.

This package imports nothing else of calcheck. ``bounds.registry`` maps guarantee ids
(``gr21.thm3``, ``gr21.thm4.marginal``, ...) to functions and metadata.
"""

from . import gpr20, gr21, gr22
from .registry import Guarantee, all_guarantees, get

__all__ = ["Guarantee", "all_guarantees", "get", "gpr20", "gr21", "gr22"]
