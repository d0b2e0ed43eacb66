"""Isotonic regression as a binning map (a data-dependent number of bins).

Used by the gr21 CREDIT figures as the comparison method of Gupta & Ramdas (2021), Sec. 5.
"""

from __future__ import annotations

import numpy as np

from .binning import BinningBatch, _BinningCalibrator

__all__ = ["IsotonicBinning"]


class IsotonicBinning(_BinningCalibrator):
    """Isotonic regression (pool-adjacent-violators) as a binning map.

    Fitted with ``scipy.optimize.isotonic_regression`` on the distinct calibration scores
    (tied scores pooled with their counts as weights). Each pooled block is a bin
    ``[first score of block, first score of next block)``, the first bin starting at 0 and
    the last closed at 1, so the map is a step function with finitely many outputs (unlike
    scikit-learn's linear interpolation), as a binning method must be for validity plots.
    Bin values are the block means; the number of bins is data-dependent (``n_bins`` is
    ignored).
    """

    name = "isotonic"

    def __init__(self, n_bins=None, *, rng=None):
        super().__init__(n_bins, rng=rng)

    def _params(self):
        return {"n_bins": self.n_bins}

    def _validated_n_bins(self):
        return None  # the number of bins is data-dependent

    def _check_size(self, n, n_bins):
        if n < 1:
            raise ValueError(f"need at least one calibration point, got {n}")

    def fit_batch(self, scores, labels, n_bins, rng):
        """Fit R calibration sets at once (rows of ``scores`` and ``labels``)."""
        from scipy.optimize import isotonic_regression

        if scores.shape[0] != 1:
            raise ValueError("isotonic regression fits one calibration set at a time")
        uniq, inverse, counts = np.unique(scores[0], return_inverse=True, return_counts=True)
        means = np.bincount(inverse, weights=labels[0]) / counts
        fitted = isotonic_regression(means, weights=counts.astype(float)).x
        starts = np.flatnonzero(np.r_[True, fitted[1:] != fitted[:-1]])
        values = fitted[starts]
        block_counts = np.add.reduceat(counts, starts).astype(float)
        inner = uniq[starts[1:]]
        k = values.size
        lower_s = np.concatenate([[0.0], inner])[None]
        upper_s = np.concatenate([inner, [1.0]])[None]
        upper_u = np.zeros((1, k))
        upper_u[0, -1] = 1.0
        return BinningBatch(
            lower_s,
            np.zeros((1, k)),
            upper_s,
            upper_u,
            values[None],
            values[None],
            block_counts[None],
        )
