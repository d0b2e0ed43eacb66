"""Importance-weighted histogram binning and uLSIF density-ratio estimation (gpr20 Sec. 4.4).

:class:`WeightedHistogramBinning` is estimator (22) of Gupta, Podkopaev & Ramdas (2020);
:class:`ULSIF` is the unconstrained least-squares importance fitting of Kanamori et al.
(2009) used in their App. D.4.
"""

from __future__ import annotations

import numpy as np

from ..validation import check_n_bins
from .edges import bin_index_from_edges, fixed_width_edges, uniform_mass_edges

__all__ = ["ULSIF", "WeightedHistogramBinning", "bin_totals", "weighted_bin_sums"]


def weighted_bin_sums(bins, labels, weights, n_bins):
    """Per-row bin counts, weight sums and weighted label sums, arrays ``(R, B)``."""
    return bin_totals(bins, n_bins, weights, weights * labels)


def bin_totals(bins, n_bins, *values, offset=True):
    """Per-row bin counts and per-row bin sums of each of ``values``, arrays ``(R, B)``.

    ``bins`` ``(R, n)`` holds bin indices in ``[0, B)`` (with ``offset=False``: already
    plus ``B`` times the row). Each sum adds a row's values in their order
    (``np.bincount``), so it does not depend on which other sums are taken.
    """
    r = bins.shape[0]
    flat = (bins + n_bins * np.arange(r)[:, None] if offset else bins).ravel()
    size = r * n_bins

    def total(v=None):
        w = None if v is None else v.ravel()
        return np.bincount(flat, weights=w, minlength=size).reshape(r, n_bins).astype(float)

    return (total(), *(total(v) for v in values))


class WeightedHistogramBinning:
    """Histogram binning with importance weights, estimator (22) of gpr20.

    ``pi_check_b = sum_{i in b} w_i Y_i / sum_{i in b} w_i``; with unit weights it is plain
    histogram binning (eq. 17), the unweighted baseline that is biased under shift.

    Parameters
    ----------
    n_bins : int, default 10
    partition : {"uniform_mass", "fixed_width"}, default "uniform_mass"
        Uniform-mass edges come from the first ``split`` fraction of the calibration
        points (empirical quantiles at Algorithm 1's ranks, gpr20 Sec. 4.2); the rest
        give the bin estimates. Fixed-width bins use all points.
    split : float, default 0.2
        Fraction used for the edges (App. D.4 uses 1940 of 9780, about 0.2).

    Attributes
    ----------
    edges_ : ndarray (B + 1,)
        Bins ``[edges_[b], edges_[b + 1])``, the last closed at 1.
    values_, counts_, weight_sums_ : ndarray (B,)
        Bin estimates (an empty bin predicts its midpoint), counts N_b, sums of weights.
    """

    def __init__(self, n_bins=10, *, partition="uniform_mass", split=0.2):
        self.n_bins = n_bins
        self.partition = partition
        self.split = split

    def fit(self, scores, labels, *, sample_weight=None):
        """Fit on calibration data; returns self."""
        s = np.asarray(scores, dtype=float)
        y = np.asarray(labels, dtype=float)
        if s.ndim != 1 or y.shape != s.shape:
            raise ValueError(
                f"scores and labels must be 1-d of equal length, got {s.shape}, {y.shape}"
            )
        w = np.ones_like(s) if sample_weight is None else np.asarray(sample_weight, float)
        if w.shape != s.shape or not np.all(np.isfinite(w) & (w >= 0)):
            raise ValueError("sample_weight must be finite, >= 0 and of the shape of scores")
        b = check_n_bins(self.n_bins)
        if self.partition == "uniform_mass":
            if not (0 < self.split < 1):
                raise ValueError(f"split must lie in (0, 1), got {self.split!r}")
            n1 = round(self.split * s.size)
            if n1 < b or n1 >= s.size:
                raise ValueError(
                    f"split={self.split!r} leaves {n1} of {s.size} points for "
                    f"the edges; need n_bins={b} <= n1 < n"
                )
            self.edges_ = uniform_mass_edges(np.sort(s[:n1]), b)
            s, y, w = s[n1:], y[n1:], w[n1:]
        elif self.partition == "fixed_width":
            self.edges_ = fixed_width_edges(b)
        else:
            raise ValueError(
                f"partition must be 'uniform_mass' or 'fixed_width', got {self.partition!r}"
            )
        bins = self._bins(s)
        counts, wsum, wysum = weighted_bin_sums(bins[None], y[None], w[None], b)
        mid = (self.edges_[:-1] + self.edges_[1:]) / 2
        with np.errstate(invalid="ignore", divide="ignore"):
            self.values_ = np.where(wsum[0] > 0, wysum[0] / wsum[0], mid)
        self.counts_, self.weight_sums_ = counts[0], wsum[0]
        return self

    def _bins(self, scores):
        return bin_index_from_edges(scores, self.edges_)

    def predict(self, scores):
        """Calibrated prediction of each point."""
        if not hasattr(self, "values_"):
            raise ValueError("this WeightedHistogramBinning is not fitted yet; call fit first")
        return self.values_[self._bins(np.asarray(scores, dtype=float))]

    def predict_proba(self, scores):
        """Calibrated class probabilities."""
        h = self.predict(scores)
        return np.column_stack([1.0 - h, h])


class ULSIF:
    """Unconstrained least-squares importance fitting (Kanamori, Hido & Sugiyama 2009).

    Estimates ``w(x) = p_target(x) / p_source(x)`` as ``sum_l theta_l K(x, c_l)`` with
    Gaussian kernels ``K(x, c) = exp(-|x - c|^2 / (2 sigma^2))`` centred on target points,
    ``theta = max(0, (H + lambda I)^{-1} h)``, ``H = mean_source K K^T``,
    ``h = mean_target K``. sigma and lambda are chosen on a grid by k-fold cross-validation
    of the uLSIF criterion ``J = mean_source(w^2)/2 - mean_target(w)`` (gpr20 App. D.4 used
    leave-one-out on the same grids; k-fold is a documented simplification).

    Parameters
    ----------
    sigmas : array_like, default 25 log-spaced values in [1e-2, 1e2] (App. D.4)
    lambdas : array_like, default 100 log-spaced values in [1e-3, 1e3] (App. D.4)
    n_centers : int, default 100
    n_folds : int, default 5
    rng : None, int or Generator
        Chooses the centres and the folds.

    Attributes
    ----------
    sigma_, lambda_ : float
    centers_ : ndarray (n_centers, d)
    theta_ : ndarray (n_centers,)
    cv_scores_ : ndarray (len(sigmas), len(lambdas))
    """

    def __init__(self, *, sigmas=None, lambdas=None, n_centers=100, n_folds=5, rng=None):
        self.sigmas = sigmas
        self.lambdas = lambdas
        self.n_centers = n_centers
        self.n_folds = n_folds
        self.rng = rng

    @staticmethod
    def _kernel(x, centers, sigma):
        d2 = ((x[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
        return np.exp(-d2 / (2.0 * sigma * sigma))

    def fit(self, x_source, x_target):
        """Fit on calibration data; returns self."""
        xs = np.atleast_2d(np.asarray(x_source, dtype=float).T).T
        xt = np.atleast_2d(np.asarray(x_target, dtype=float).T).T
        if xs.ndim != 2 or xt.ndim != 2 or xs.shape[1] != xt.shape[1]:
            raise ValueError(
                f"x_source and x_target need the same number of features, got "
                f"{xs.shape} and {xt.shape}"
            )
        if min(len(xs), len(xt)) < self.n_folds:
            raise ValueError(f"need at least n_folds={self.n_folds} points per sample")
        rng = np.random.default_rng(self.rng)
        sigmas = np.logspace(-2, 2, 25) if self.sigmas is None else np.asarray(self.sigmas)
        lambdas = np.logspace(-3, 3, 100) if self.lambdas is None else np.asarray(self.lambdas)
        k = min(self.n_centers, len(xt))
        centers = xt[rng.choice(len(xt), size=k, replace=False)]
        fold_s = rng.permutation(len(xs)) % self.n_folds
        fold_t = rng.permutation(len(xt)) % self.n_folds
        scores = np.zeros((sigmas.size, lambdas.size))
        for i, sigma in enumerate(sigmas):
            ks, kt = self._kernel(xs, centers, sigma), self._kernel(xt, centers, sigma)
            for f in range(self.n_folds):
                tr_s, te_s = ks[fold_s != f], ks[fold_s == f]
                tr_t, te_t = kt[fold_t != f], kt[fold_t == f]
                theta = self._solve(tr_s, tr_t, lambdas)  # (k, n_lambda)
                ws, wt = te_s @ theta, te_t @ theta
                scores[i] += (ws**2).mean(axis=0) / 2.0 - wt.mean(axis=0)
        i, j = np.unravel_index(np.argmin(scores), scores.shape)
        self.sigma_, self.lambda_ = float(sigmas[i]), float(lambdas[j])
        self.centers_, self.cv_scores_ = centers, scores / self.n_folds
        ks, kt = self._kernel(xs, centers, self.sigma_), self._kernel(xt, centers, self.sigma_)
        self.theta_ = self._solve(ks, kt, np.array([self.lambda_]))[:, 0]
        return self

    @staticmethod
    def _solve(ks, kt, lambdas):
        """``max(0, (H + lambda I)^{-1} h)`` for every lambda via one eigendecomposition."""
        h_mat = ks.T @ ks / len(ks)
        h_vec = kt.mean(axis=0)
        evals, evecs = np.linalg.eigh(h_mat)
        proj = evecs.T @ h_vec
        theta = evecs @ (proj[:, None] / (evals[:, None] + lambdas[None, :]))
        return np.maximum(theta, 0.0)

    def predict(self, x):
        """Estimated ratio ``w(x)`` (>= 0)."""
        if not hasattr(self, "theta_"):
            raise ValueError("this ULSIF is not fitted yet; call fit first")
        xx = np.atleast_2d(np.asarray(x, dtype=float).T).T
        return self._kernel(xx, self.centers_, self.sigma_) @ self.theta_
