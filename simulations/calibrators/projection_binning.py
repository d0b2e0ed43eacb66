"""Projection histogram binning for canonical calibration (gr22 Algorithm 10, App. G.3).

B - 1 unit directions ``q_b`` cut the simplex one after the other: ``T_b`` is the
``c``-th smallest projection ``v^T q_b`` of the points not yet binned, ``c = floor((n+1)/B)``,
and the points with ``v^T q_b <= T_b`` leave; ``T_B = 1.01`` (no projection of a point of
the simplex on a unit vector exceeds 1). A point's bin is ``min{b : g^T q_b < T_b}``; each
bin predicts the label frequencies of its *interior* calibration points (line 13: those
with ``g(X_i)^T q_s != T_s`` for every s, the boundary points left out as in gr21).

Without ties among the projections, bins 1..B-1 hold exactly ``c - 1`` interior points and
the last ``n - (B-1)c >= c - 1`` (:func:`calcheck.bounds.gr22_canonical.alg10_interior_count`).
With ties (atoms) a cut can remove more than c points and a later bin can be left short,
even empty (then ``T_b = -inf``, and an empty bin predicts the uniform 1/L, logged).

Directions: ``"cyclic"`` is the paper's ``-e_1, -e_2, ..., -e_L, -e_1, ...`` (a bin of the
largest remaining ``g_l``), ``"random"`` draws them uniformly on the unit sphere (Fig. 12d's
"unit ball", read as the sphere: the algorithm needs unit norm), or pass a ``(B, L)`` array.
"""

from __future__ import annotations

import logging

import numpy as np

from ..simplex_bins import check_simplex_points
from ..validation import as_generator, check_n_bins
from .multiclass_binning import check_probability_matrix

logger = logging.getLogger(__name__)

__all__ = [
    "ProjectionHistogramBinning",
    "cyclic_directions",
    "projection_bins",
    "projection_thresholds",
    "random_directions",
]

#: Algorithm 10 line 8: the last threshold, above every projection of the simplex.
SENTINEL = 1.01


def cyclic_directions(n_classes, n_bins) -> np.ndarray:
    """``(B, L)`` rows ``-e_1, -e_2, ..., -e_L, -e_1, ...`` (App. G.3's suggestion)."""
    L, B = check_n_bins(n_classes), check_n_bins(n_bins)
    return -np.eye(L)[np.arange(B) % L]


def random_directions(n_classes, n_bins, *, rng=None) -> np.ndarray:
    """``(B, L)`` rows drawn uniformly on the unit sphere of R^L (normalised Gaussians)."""
    L, B = check_n_bins(n_classes), check_n_bins(n_bins)
    z = as_generator(rng).standard_normal((B, L))
    return z / np.linalg.norm(z, axis=1, keepdims=True)


def _check_directions(directions, n_bins, n_classes) -> np.ndarray:
    q = np.asarray(directions, dtype=np.float64)
    if q.shape != (n_bins, n_classes) or not np.all(np.isfinite(q)):
        raise ValueError(
            f"directions must be a finite ({n_bins}, {n_classes}) array, got shape {q.shape}"
        )
    if not np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-9):
        raise ValueError(
            f"directions must have unit l2 norm, got norms {np.linalg.norm(q, axis=1)[:3]}"
        )
    return q


def projection_thresholds(projections, n_bins) -> np.ndarray:
    """Lines 1-8 of Algorithm 10 on the projections ``(..., n, B)``: the thresholds ``(..., B)``.

    ``projections[..., i, b] = g(X_i)^T q_b``; leading axes are replicates (vectorised).
    ``T_b`` is the ``c``-th smallest projection on ``q_b`` of the points still unbinned
    (``-inf`` when fewer than c remain, possible only with ties); ``T_B = 1.01``.
    """
    p = np.asarray(projections, dtype=np.float64)
    n, B = p.shape[-2], check_n_bins(n_bins)
    if p.shape[-1] != B or n + 1 < B:
        raise ValueError(f"projections must be (..., n, {B}) with n >= B - 1, got {p.shape}")
    c = (n + 1) // B
    thresholds = np.full((*p.shape[:-2], B), SENTINEL)
    remaining = np.ones(p.shape[:-1], dtype=bool)
    for b in range(B - 1):
        proj = np.where(remaining, p[..., b], np.inf)
        t = np.partition(proj, c - 1, axis=-1)[..., c - 1]
        t = np.where(np.isfinite(t), t, -np.inf)  # fewer than c points left (ties)
        thresholds[..., b] = t
        remaining &= ~(p[..., b] <= t[..., None])
    return thresholds


def projection_bins(projections, thresholds):
    """Line 9 and the boundary rule of line 13: ``(bin, interior)`` of each point.

    ``bin = min{b : g^T q_b < T_b}`` (0-based); ``interior`` is False when
    ``g^T q_s = T_s`` for some s.
    """
    p = np.asarray(projections, dtype=np.float64)
    t = np.asarray(thresholds, dtype=np.float64)[..., None, :]
    below = p < t
    return np.argmax(below, axis=-1), ~np.any(p == t, axis=-1)


class ProjectionHistogramBinning:
    """Algorithm 10: projection histogram binning, a canonical calibrator on ``(n, L)`` scores.

    Parameters
    ----------
    n_bins : int
        B >= 1, at most n + 1 at fit time.
    directions : {"cyclic", "random"} or array_like (B, L)
        The unit vectors ``q_1..q_B`` (``q_B`` is never used: ``T_B = 1.01``).
    rng : None, int, SeedSequence or Generator
        For ``directions="random"`` only.

    Attributes (after ``fit``)
    --------------------------
    directions_ : ndarray (B, L)
    thresholds_ : ndarray (B,)
    bin_probs_ : ndarray (B, L)
        Label frequencies of each bin's interior points (1/L where a bin has none).
    interior_counts_ : ndarray (B,)
    """

    def __init__(self, n_bins, directions="cyclic", *, rng=None):
        self.n_bins = check_n_bins(n_bins)
        if isinstance(directions, str) and directions not in ("cyclic", "random"):
            raise ValueError(
                f"directions must be 'cyclic', 'random' or an array, got {directions!r}"
            )
        self.directions = directions
        self.rng = as_generator(rng)

    def _directions(self, n_classes):
        if isinstance(self.directions, str):
            if self.directions == "cyclic":
                return cyclic_directions(n_classes, self.n_bins)
            return random_directions(n_classes, self.n_bins, rng=self.rng)
        return _check_directions(self.directions, self.n_bins, n_classes)

    def fit(self, scores, labels):
        """Fit on base-model probabilities ``(n, L)`` (rows on the simplex) and 0-based labels."""
        p, y = check_probability_matrix(scores, labels)
        check_simplex_points(p)
        n, L = p.shape
        if self.n_bins > n + 1:
            raise ValueError(f"n_bins must be <= n + 1 = {n + 1}, got {self.n_bins}")
        self.directions_ = self._directions(L)
        proj = p @ self.directions_.T
        self.thresholds_ = projection_thresholds(proj, self.n_bins)
        bins, interior = projection_bins(proj, self.thresholds_)
        counts = np.zeros((self.n_bins, L))
        np.add.at(counts, (bins[interior], y[interior]), 1.0)
        self.interior_counts_ = counts.sum(axis=1).astype(np.int64)
        empty = self.interior_counts_ == 0
        if empty.any():
            logger.info("Algorithm 10: %d bin(s) without interior points predict 1/L", empty.sum())
        with np.errstate(invalid="ignore", divide="ignore"):
            probs = counts / self.interior_counts_[:, None]
        self.bin_probs_ = np.where(empty[:, None], 1.0 / L, probs)
        self.n_classes_ = L
        return self

    def predict_bin(self, scores) -> np.ndarray:
        """0-based bin of each row (line 9)."""
        if not hasattr(self, "thresholds_"):
            raise ValueError("ProjectionHistogramBinning is not fitted: call fit first")
        p = check_simplex_points(scores, n_classes=self.n_classes_)
        return projection_bins(p @ self.directions_.T, self.thresholds_)[0]

    def predict_proba(self, scores) -> np.ndarray:
        """The recalibrated probability vector ``h(x) = Pi_hat[B(g(x))]`` of each row."""
        return self.bin_probs_[self.predict_bin(scores)]

    def predict(self, scores) -> np.ndarray:
        """The argmax class of ``h(x)`` (lowest index on ties), 0-based."""
        return np.argmax(self.predict_proba(scores), axis=1)
