"""Plug-in calibration metrics of binary predictors on a finite test sample.

The estimators of Gupta & Ramdas (2021, Sec. 2.1 and 4) and the fixed-width plug-in ECE of
Gupta, Podkopaev & Ramdas (2020, App. D.4).
"""

from __future__ import annotations

import numpy as np

from ..calibrators.edges import fixed_width_bin_index
from ..validation import check_eps, check_n_bins, check_scores_labels

__all__ = [
    "evaluation_metrics",
    "fixed_width_reliability",
    "plugin_conditional_validity",
    "plugin_ece_fixed_width",
    "plugin_validity",
]


def _predictions_labels(predictions, labels):
    p, y = check_scores_labels(
        predictions, labels, allow_fractional=True, names=("predictions", "labels")
    )
    if p.size == 0:
        raise ValueError("predictions and labels must not be empty")
    return p, y


def _plugin_errors(predictions, labels):
    p, y = _predictions_labels(predictions, labels)
    values, inverse, counts = np.unique(p, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=y) / counts
    return np.abs(means - values)[inverse]


def plugin_validity(predictions, labels, eps) -> np.ndarray:
    """Plug-in validity estimate of gr21 eq. (6) on a test sample.

    ``hatV(eps) = mean_i 1{|hatE[Y | h(X) = h(X_i)] - h(X_i)| <= eps}`` where ``hatE`` is the
    test-sample mean of the labels with the same prediction. Biased downwards (gr21 §2.1).
    """
    err = np.sort(_plugin_errors(predictions, labels))
    return np.searchsorted(err, np.atleast_1d(check_eps(eps)), side="right") / err.size


def plugin_conditional_validity(predictions, labels, eps) -> np.ndarray:
    """Plug-in conditional validity of gr21 §4: ``1{max_i |hatE[...] - h(X_i)| <= eps}``."""
    err = _plugin_errors(predictions, labels)
    return (err.max() <= np.atleast_1d(check_eps(eps))).astype(float)


def fixed_width_reliability(predictions, labels, n_bins: int = 10):
    """Per-bin mass, mean prediction (MP) and fraction of positives (FP), fixed-width bins.

    Bins ``[(i-1)/B, i/B)``, the last closed at 1 (gpr20 App. D.4). Empty bins have mass 0
    and NaN means.

    Returns
    -------
    mass, mean_prediction, mean_label : ndarray (n_bins,)
    """
    p, y = _predictions_labels(predictions, labels)
    n_bins = check_n_bins(n_bins)
    idx = fixed_width_bin_index(p, n_bins)
    counts = np.bincount(idx, minlength=n_bins).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mp = np.bincount(idx, weights=p, minlength=n_bins) / counts
        fp = np.bincount(idx, weights=y, minlength=n_bins) / counts
    return counts / p.size, mp, fp


def plugin_ece_fixed_width(predictions, labels, n_bins: int = 10) -> float:
    """Plug-in l1-ECE with fixed-width bins, as gpr20 App. D.4 computes it.

    ``sum_b p^_b |MP(I_b) - FP(I_b)|`` over non-empty bins (an empty bin contributes 0).
    Biased: it underestimates the ECE of continuous outputs and carries sampling noise of
    order 0.005 on 28000 points (Gupta, Podkopaev & Ramdas 2020, App. D.4).
    """
    mass, mp, fp = fixed_width_reliability(predictions, labels, n_bins)
    keep = mass > 0
    return float(np.sum(mass[keep] * np.abs(mp[keep] - fp[keep])))


def evaluation_metrics(predictions, labels, n_bins: int = 10) -> dict:
    """RMSE, AUC (ties 1/2), ACC (threshold 1/2), MCE and ECE of nch14 Sec. 2.1.

    MCE and ECE use ``n_bins`` equal-frequency evaluation bins of the sorted predictions
    (nch14: "the predictions are sorted and partitioned into ten bins"; equal frequency
    assumed, catalog Sec. 9), each bin's observed positive rate against its mean
    prediction; plug-in, no debiasing.

    Returns
    -------
    dict
        ``rmse``, ``auc``, ``acc``, ``mce``, ``ece``.
    """
    from scipy.stats import rankdata

    p, y = _predictions_labels(predictions, labels)
    check_n_bins(n_bins)
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("labels must be 0 or 1 for these metrics")
    m = y.sum()
    if m == 0 or m == y.size:
        raise ValueError("both classes must be present in the test set")
    ranks = rankdata(p)  # average ranks: ties count 1/2
    auc = (ranks[y == 1].sum() - m * (m + 1) / 2) / (m * (y.size - m))
    order = np.argsort(p, kind="stable")
    chunks = np.array_split(order, n_bins)
    gaps = np.array([abs(y[c].mean() - p[c].mean()) for c in chunks if c.size])
    weights = np.array([c.size for c in chunks if c.size]) / y.size
    return {
        "rmse": float(np.sqrt(np.mean((p - y) ** 2))),
        "auc": float(auc),
        "acc": float(np.mean((p >= 0.5) == (y == 1))),
        "mce": float(gaps.max()),
        "ece": float(np.sum(weights * gaps)),
    }
