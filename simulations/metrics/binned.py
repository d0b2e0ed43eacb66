"""Squared calibration-error estimators of a binned model (Kumar, Liang & Ma 2019, Sec. 5).

Inputs are per-output sufficient statistics, vectorised over replicates (rows): counts
``n_s``, label sums and the output values ``s`` (or the mean model output of each bin,
which equals ``s`` for a binned model). Conventions the paper leaves open, stated here once:

* an empty bin contributes 0 to both estimators (its weight ``n_s / n`` is 0);
* the debiased estimator divides by ``n_s - 1``: with ``small_bins="drop"`` (the authors'
  code, ``unbiased_square_ce``) a bin with ``n_s < 2`` contributes 0; with ``"keep"`` it
  contributes its plug-in term ``(s - yhat_s)^2`` and no correction (0/0 := 0);
* negative debiased estimates are returned as they are (the code's ``sqrt(max(., 0))`` is
  for the l2 error, not the squared one).
"""

from __future__ import annotations

import numpy as np

__all__ = ["binned_sq_ce", "conditional_sq_ce", "debiased_sq_ce", "plugin_sq_ce"]


def _stats(values, counts, label_sums):
    n_s = np.asarray(counts, dtype=float)
    sums = np.asarray(label_sums, dtype=float)
    s = np.asarray(values, dtype=float)
    if n_s.shape != sums.shape or np.broadcast_shapes(s.shape, n_s.shape) != n_s.shape:
        raise ValueError(
            f"counts, label_sums and values must have matching shapes, got {n_s.shape}, "
            f"{sums.shape} and {s.shape}"
        )
    if np.any(n_s < 0) or np.any(sums < 0) or np.any(sums > n_s) or np.isnan(s).any():
        raise ValueError("counts must be >= 0, label sums in [0, counts], values not NaN")
    n = n_s.sum(axis=-1, keepdims=True)
    if np.any(n == 0):
        raise ValueError("every row of counts needs at least one point")
    with np.errstate(invalid="ignore", divide="ignore"):
        yhat = np.where(n_s > 0, sums / np.where(n_s > 0, n_s, 1.0), 0.0)
    return s, n_s, yhat, n


def plugin_sq_ce(values, counts, label_sums):
    r"""Plug-in estimate :math:`\hat E^2_{pl} = \sum_s \hat p_s (s - \hat y_s)^2`.

    Paper: klm19, Definition 5.1.

    Parameters
    ----------
    values : array_like, shape (B,) or (R, B)
        Output values ``s`` (or mean model outputs per bin).
    counts, label_sums : array_like, shape (R, B) or (B,)
        ``n_s`` and ``sum of labels`` per output.

    Returns
    -------
    ndarray, shape (R,) (or a 0-d array)
    """
    s, n_s, yhat, n = _stats(values, counts, label_sums)
    return np.sum(n_s / n * (s - yhat) ** 2, axis=-1)


def debiased_sq_ce(values, counts, label_sums, *, small_bins="drop"):
    r"""Debiased estimate (Broecker 2012; Ferro & Fricker 2012).

    .. math:: \hat E^2_{db} = \sum_s \hat p_s \Big[(s - \hat y_s)^2
              - \frac{\hat y_s (1 - \hat y_s)}{\hat p_s n - 1}\Big]

    Paper: klm19, Definition 5.2.

    Parameters
    ----------
    values, counts, label_sums : array_like
        As in :func:`plugin_sq_ce`.
    small_bins : {"drop", "keep"}
        Bins with ``n_s < 2``: contribute 0 (``"drop"``, the authors' code) or their
        plug-in term without correction (``"keep"``).

    Returns
    -------
    ndarray
        May be negative.
    """
    if small_bins not in ("drop", "keep"):
        raise ValueError(f"small_bins must be 'drop' or 'keep', got {small_bins!r}")
    s, n_s, yhat, n = _stats(values, counts, label_sums)
    big = n_s >= 2
    corr = np.where(big, yhat * (1 - yhat) / np.where(big, n_s - 1, 1.0), 0.0)
    term = (s - yhat) ** 2 - corr
    if small_bins == "drop":
        term = np.where(big, term, 0.0)
    return np.sum(n_s / n * term, axis=-1)


def conditional_sq_ce(values, label_means, counts, *, min_count=2):
    r"""``sum_s (n_s / n) (s - y_s)^2`` over bins with ``n_s >= min_count``.

    The conditional expectation of the debiased estimator (``small_bins="drop"``, min_count
    2) given the counts, and the plug-in's minus its bias (min_count 1): with
    ``Var(yhat_s | n_s) = y_s (1 - y_s) / n_s`` the correction term is conditionally unbiased.
    """
    n_s = np.asarray(counts, dtype=float)
    s = np.asarray(values, dtype=float)
    y = np.asarray(label_means, dtype=float)
    n = n_s.sum(axis=-1)
    return np.sum(np.where(n_s >= min_count, n_s, 0.0) * (s - y) ** 2, axis=-1) / n


_ESTIMATORS = ("plugin", "debiased")
_MODES = ("binary", "marginal", "top_label")


def _grouped(outputs, labels, bins, estimator):
    """One binary problem: group by ``bins`` (or distinct outputs), then estimate."""
    key = outputs if bins is None else bins
    _, inv = np.unique(key, return_inverse=True)
    counts = np.bincount(inv).astype(float)
    sums = np.bincount(inv, weights=labels)
    values = np.bincount(inv, weights=outputs) / counts  # mean output per group
    if estimator == "plugin":
        return float(plugin_sq_ce(values, counts, sums))
    return float(debiased_sq_ce(values, counts, sums))


def binned_sq_ce(outputs, labels, *, estimator="plugin", mode="binary", bins=None):
    r"""Squared CE estimate from data: binary, marginal (mean over classes) or top-label.

    Points are grouped by their distinct outputs (a binned model, klm19 Sec. 5) or, with
    ``bins``, by given bin indices (a continuous model binned, Sec. 3: the group's value is
    its mean output, which makes it an estimate of CE(f_B), a lower bound on CE(f)).

    Parameters
    ----------
    outputs : array_like
        ``(n,)`` probabilities of class 1 (``mode="binary"``) or ``(n, K)`` probability
        vectors (``"marginal"``: every column against ``1{y = k}``, averaged with weights
        1/K, klm19 Definition 2.4; ``"top_label"``: the largest entry against
        ``1{argmax = y}``).
    labels : array_like of int, shape (n,)
        0/1 (binary) or 0..K-1.
    estimator : {"plugin", "debiased"}
        Definition 5.1, or Definition 5.2 with bins of fewer than 2 points dropped.
    mode : {"binary", "marginal", "top_label"}
    bins : array_like of int, optional
        Bin index of every point (``(n,)``, or ``(n, K)`` per class in marginal mode).

    Returns
    -------
    float
        The squared CE estimate (the debiased one may be negative; it is not clipped, unlike
        the authors' ``get_calibration_error``, which clips every class at 0 before
        averaging).
    """
    if estimator not in _ESTIMATORS:
        raise ValueError(f"estimator must be one of {_ESTIMATORS}, got {estimator!r}")
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
    p = np.asarray(outputs, dtype=float)
    y = np.asarray(labels)
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("outputs must be finite probabilities in [0, 1]")
    if (p.ndim != 1) == (mode == "binary") or p.ndim > 2 or y.shape != p.shape[:1]:
        raise ValueError(
            f"outputs must be (n,) for mode='binary' and (n, K) otherwise, with labels (n,); "
            f"got {p.shape} and {y.shape} for mode={mode!r}"
        )
    k = 2 if p.ndim == 1 else p.shape[1]
    if y.size == 0 or (not np.issubdtype(y.dtype, np.integer) and np.any(y != np.round(y))):
        raise ValueError("labels must be a non-empty array of integers")
    if np.any((y < 0) | (y >= k)):
        raise ValueError(f"labels must lie in 0..{k - 1}, got values in [{y.min()}, {y.max()}]")
    b = None if bins is None else np.asarray(bins)
    if b is not None and b.shape != (p.shape if mode == "marginal" else y.shape):
        raise ValueError(f"bins must have shape {p.shape if mode == 'marginal' else y.shape}")
    if mode == "binary":
        return _grouped(p, y.astype(float), b, estimator)
    if mode == "top_label":
        return _grouped(p.max(axis=1), (p.argmax(axis=1) == y).astype(float), b, estimator)
    return float(
        np.mean(
            [
                _grouped(p[:, j], (y == j).astype(float), None if b is None else b[:, j], estimator)
                for j in range(k)
            ]
        )
    )
