"""Guarantees of distribution-free calibration as pure, vectorised functions.

This package imports nothing else of calcheck. ``bounds.registry`` maps guarantee ids
(``gr21.thm3``, ``gr21.thm4.marginal``, ...) to functions and metadata.
"""

if __name__ == "bounds":  # the bare name (the repository root on the path): no second copy
    import importlib
    import sys

    sys.modules[__name__] = importlib.import_module("calcheck.bounds")

from . import gpr20, gpr20_shift, gr21, gr22, inverse
from .guarantee import Guarantee
from .registry import all_guarantees, get

__all__ = ["Guarantee", "all_guarantees", "get", "gpr20", "gpr20_shift", "gr21", "gr22", "inverse"]
