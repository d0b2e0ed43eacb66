"""Experiments: law x method x exact estimand, returning typed outcomes of raw statistics.

:mod:`.base` holds the protocol (:class:`Experiment`, :class:`Outcome`); :mod:`.binning`
the binary binning cell shared by every paper; one module per paper for the rest.
"""

from .base import BLOCK_REPS, BinOutcome, BlockOutcome, Experiment, Outcome
from .binning import BinningExperiment

__all__ = ["BLOCK_REPS", "BinOutcome", "BinningExperiment", "BlockOutcome", "Experiment", "Outcome"]
