"""Exact calibration metrics of binning maps under a known law (the E of ADEMP).

For a fitted binning map h with bins of exact mass ``w_b`` and exact bias
``Pi_b = E[Y | X in bin b]``, the error of output r is ``|E[Y | h(X) = r] - r|``, where
bins with equal outputs are merged (``E[Y | h(X)]`` conditions on the output, not on the
bin) and Range(h) holds the outputs of positive mass (Gupta & Ramdas 2021, Sec. 2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..calibrators.binning import BinningBatch
from ..laws.binary import BinaryLaw

__all__ = [
    "BinErrors",
    "conditional_max_error",
    "exact_bin_errors",
    "lp_ece",
    "marginal_validity",
    "merge_equal_outputs",
    "validity_curve",
]


@dataclass(frozen=True)
class BinErrors:
    """Exact per-bin quantities of R fitted maps, arrays of shape ``(R, B)``.

    Attributes
    ----------
    mass : ndarray
        ``w_b = Pr(X in bin b)`` under the law (lexicographic bins).
    bin_mean : ndarray
        ``Pi_b = E[Y | X in bin b]`` (NaN where the mass is 0).
    output_mean : ndarray
        ``E[Y | h(X) = h_b]`` after merging bins with equal outputs.
    error : ndarray
        ``|output_mean - value|``; NaN for outputs of zero mass (not in Range(h)).
    """

    mass: np.ndarray
    bin_mean: np.ndarray
    output_mean: np.ndarray
    error: np.ndarray


def merge_equal_outputs(keys, mass, moment):
    """Sum mass and moment over bins of a row that share an output key."""
    r, b = keys.shape
    order = np.argsort(keys, axis=1, kind="stable")
    k_sorted = np.take_along_axis(keys, order, axis=1)
    new_group = np.ones((r, b), dtype=bool)
    new_group[:, 1:] = k_sorted[:, 1:] != k_sorted[:, :-1]
    gid = np.cumsum(new_group.ravel()) - 1
    g_mass = np.bincount(gid, weights=np.take_along_axis(mass, order, axis=1).ravel())
    g_moment = np.bincount(gid, weights=np.take_along_axis(moment, order, axis=1).ravel())
    merged_mass = np.empty((r, b))
    merged_moment = np.empty((r, b))
    np.put_along_axis(merged_mass, order, g_mass[gid].reshape(r, b), axis=1)
    np.put_along_axis(merged_moment, order, g_moment[gid].reshape(r, b), axis=1)
    return merged_mass, merged_moment


def exact_bin_errors(batch: BinningBatch, law: BinaryLaw) -> BinErrors:
    """Exact masses, biases and output errors of R fitted maps under ``law``."""
    mass, moment = law.interval_moments(batch.lower_s, batch.lower_u, batch.upper_s, batch.upper_u)
    # Rounding can leave a few ulps of negative mass where a bin is empty.
    mass = np.maximum(mass, 0.0)
    keys = batch.output_keys
    distinct = np.all(keys == np.arange(batch.n_bins))
    if distinct:
        out_mass, out_moment = mass, moment
    else:
        out_mass, out_moment = merge_equal_outputs(np.asarray(keys), mass, moment)
    with np.errstate(invalid="ignore", divide="ignore"):
        bin_mean = np.where(mass > 0, moment / mass, np.nan)
        output_mean = np.where(out_mass > 0, out_moment / out_mass, np.nan)
    error = np.where(mass > 0, np.abs(output_mean - batch.values), np.nan)
    return BinErrors(mass, bin_mean, output_mean, error)


def conditional_max_error(error: np.ndarray) -> np.ndarray:
    """``max_{r in Range(h)} |E[Y | h(X) = r] - r|`` per row (the l_inf-ECE)."""
    return np.nanmax(error, axis=-1)


def marginal_validity(error: np.ndarray, mass: np.ndarray, eps) -> np.ndarray:
    """``Pr_X(|E[Y | h(X)] - h(X)| <= eps)`` per row, for each eps (last axis)."""
    eps = np.asarray(eps, dtype=float)
    err = np.where(np.isnan(error), np.inf, error)  # zero-mass outputs never count
    if eps.ndim == 0:
        return (mass * (err <= eps)).sum(axis=-1)
    ok = err[..., None] <= eps
    return np.einsum("...b,...be->...e", mass, ok.astype(float))


def lp_ece(error: np.ndarray, mass: np.ndarray, p: float = 1.0) -> np.ndarray:
    """Exact ``lp-ECE(h) = (sum_b w_b err_b^p)^(1/p)`` per row (gr21 Definition 3)."""
    if not p >= 1:
        raise ValueError(f"p must be >= 1, got {p!r}")
    e = np.where(np.isnan(error), 0.0, error)
    if np.isinf(p):
        return conditional_max_error(error)
    return ((mass * e**p).sum(axis=-1)) ** (1.0 / p)


def validity_curve(error: np.ndarray, mass: np.ndarray, eps) -> np.ndarray:
    """Exact validity function ``V(eps)`` averaged over rows (replicates)."""
    return marginal_validity(error, mass, np.atleast_1d(eps)).mean(axis=0)
