"""Shared pieces of the klm19 figures: the CIFAR-10 VGG16 data and row-wise plug-in CE.

Conventions (the authors' code, which ran the paper's experiments): scaling-binning fits a
log-loss sigmoid and uses the same points for every step (``split="none"``); histogram
binning is Zadrozny-Elkan (uniform-mass bins, label means, all points). Squared CEs of
binned outputs are plug-in estimates over their distinct values, as in the paper.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.calibrators.binning import uniform_mass_fit_sorted
from calcheck.simulations.calibrators.edges import bin_index_rows
from calcheck.simulations.calibrators.scaling_binning import bin_platt_values, platt_fit_batch
from calcheck.simulations.laws.recalibration import logit

from ..data import data_file, load_cifar10_vgg16

__all__ = ["fit_rows", "load", "plugin_rows", "row_bins"]


def load(data_root=None):
    """``(probs, labels)`` of the CIFAR-10 VGG16 test set (``figures.data``)."""
    return load_cifar10_vgg16(data_file(data_root, "cifar10_vgg16_probs"))


class _HistogramRows:
    """R Zadrozny-Elkan fits with the interface of a scaling-binning batch."""

    def __init__(self, scores, labels, n_bins):
        order = np.argsort(scores, axis=1)
        s = np.take_along_axis(scores, order, axis=1)
        y = np.take_along_axis(labels, order, axis=1)
        fit = uniform_mass_fit_sorted(s, np.zeros_like(s), y, n_bins, include_upper=True)
        self.edges = np.concatenate([fit.lower_s, fit.upper_s[:, -1:]], axis=1)
        self.values = fit.values

    def bins(self, scores):
        return bin_index_rows(scores, self.edges)


def fit_rows(method, scores, labels, n_bins):
    """Fit R binary calibrators (rows of ``scores``, ``labels``); ``.values``, ``.bins()``.

    ``method``: ``"sb"`` (scaling-binning, log-loss sigmoid, no split) or ``"hist"``.
    """
    if method == "sb":
        coef = platt_fit_batch(scores, labels, loss="log")
        return bin_platt_values(coef, logit(scores), n_bins, split="none")
    return _HistogramRows(scores, labels, n_bins)


def row_bins(fit, scores):
    """Bin of every evaluation score ``(m,)`` under each of the R fitted maps: ``(R, m)``."""
    return fit.bins(np.broadcast_to(scores, (fit.values.shape[0], scores.size)))


def plugin_rows(values, bins, labels):
    """Plug-in squared CE and MSE of R binned maps on one evaluation set.

    Bins with equal outputs are merged (one level set of the map), as the paper's
    evaluation groups by distinct output values.

    Parameters
    ----------
    values : ndarray, shape (R, B)
    bins : ndarray of int, shape (R, m)
        Bin of every evaluation point.
    labels : ndarray, shape (m,)
        0/1.

    Returns
    -------
    ce_sq, mse : ndarray, shape (R,)
    """
    r, b = values.shape
    m = bins.shape[1]
    flat = (bins + b * np.arange(r)[:, None]).ravel()
    counts = np.bincount(flat, minlength=r * b).reshape(r, b).astype(float)
    sums = np.bincount(flat, weights=np.tile(labels, r), minlength=r * b).reshape(r, b)
    out = np.take_along_axis(values, bins, axis=1)
    mse = np.mean((out - labels) ** 2, axis=1)
    order = np.argsort(values, axis=1)
    v = np.take_along_axis(values, order, axis=1).ravel()
    c = np.take_along_axis(counts, order, axis=1).ravel()
    s = np.take_along_axis(sums, order, axis=1).ravel()
    rows = np.repeat(np.arange(r), b)
    start = np.flatnonzero(np.r_[True, (v[1:] != v[:-1]) | (rows[1:] != rows[:-1])])
    cv, sv, vv = np.add.reduceat(c, start), np.add.reduceat(s, start), v[start]
    with np.errstate(invalid="ignore", divide="ignore"):
        term = np.where(cv > 0, (vv * cv - sv) ** 2 / cv, 0.0)
    return np.bincount(rows[start], weights=term, minlength=r) / m, mse
