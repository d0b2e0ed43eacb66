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
from ..validation import check_eps

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


def _float_array(value, name):
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers, got {value!r}") from None


def _check_error(error):
    """Per-output errors, shape (..., B): >= 0, NaN only for outputs of zero mass."""
    e = _float_array(error, "error")
    if e.ndim == 0 or e.size == 0:
        raise ValueError(f"error must be a non-empty array of shape (..., B), got {error!r}")
    if np.any(np.isinf(e) | (e < 0)):
        raise ValueError(f"error must be >= 0 and finite (NaN: zero-mass output), got {error!r}")
    if np.any(np.all(np.isnan(e), axis=-1)):
        raise ValueError(f"error has a row with no output of positive mass (all NaN): {error!r}")
    return e


def _check_mass(mass, error):
    m = _float_array(mass, "mass")
    if m.shape != error.shape:
        raise ValueError(f"mass must have the shape of error {error.shape}, got {m.shape}")
    if not np.all(np.isfinite(m) & (m >= 0)):
        raise ValueError(f"mass must be finite and >= 0, got {mass!r}")
    return m


def merge_equal_outputs(keys, mass, moment):
    """Sum mass and moment over bins of a row that share an output key."""
    keys = np.asarray(keys)
    if keys.ndim != 2 or keys.size == 0:
        raise ValueError(f"keys must be a non-empty 2-d array (R, B), got shape {keys.shape}")
    mass, moment = _float_array(mass, "mass"), _float_array(moment, "moment")
    if mass.shape != keys.shape or moment.shape != keys.shape:
        raise ValueError(
            f"mass and moment must have the shape of keys {keys.shape}, got {mass.shape} "
            f"and {moment.shape}"
        )
    if not (np.all(np.isfinite(mass)) and np.all(np.isfinite(moment))):
        raise ValueError("mass and moment must be finite")
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


def _chained_edges(batch):
    """The ``(R, B + 1)`` score edges when bin b's upper edge is bin b + 1's lower one.

    Uniform-mass maps are chained so; then the law evaluates its CDF once per edge
    (:meth:`~calcheck.simulations.laws.binary.BinaryLaw._chained_moments`). None unless the edges
    are also nondecreasing and free of -0.0 (where ``max(hi, lo)`` could differ from hi).
    """
    lo, hi = batch.lower_s, batch.upper_s
    if lo.ndim != 2 or lo.shape != hi.shape or not np.array_equal(lo[:, 1:], hi[:, :-1]):
        return None
    edges = np.concatenate([lo, hi[:, -1:]], axis=1)
    if not np.all(edges[:, 1:] >= edges[:, :-1]) or np.signbit(edges).any():
        return None  # also for NaN
    return edges


def exact_bin_errors(batch: BinningBatch, law: BinaryLaw) -> BinErrors:
    """Exact masses, biases and output errors of R fitted maps under ``law``."""
    if not isinstance(batch, BinningBatch):
        raise TypeError(f"batch must be a BinningBatch, got {type(batch).__name__}")
    if not isinstance(law, BinaryLaw):
        raise TypeError(f"law must be a BinaryLaw, got {type(law).__name__}")
    edges = _chained_edges(batch)
    if edges is not None and type(law).interval_moments is BinaryLaw.interval_moments:
        mass, moment = law._chained_moments(edges, batch.lower_u, batch.upper_u)
    else:
        mass, moment = law.interval_moments(
            batch.lower_s, batch.lower_u, batch.upper_s, batch.upper_u
        )
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
    return np.nanmax(_check_error(error), axis=-1)


def marginal_validity(error: np.ndarray, mass: np.ndarray, eps) -> np.ndarray:
    """``Pr_X(|E[Y | h(X)] - h(X)| <= eps)`` per row, for each eps (last axis)."""
    error = _check_error(error)
    mass = _check_mass(mass, error)
    eps = check_eps(eps)
    err = np.where(np.isnan(error), np.inf, error)  # zero-mass outputs never count
    if eps.ndim == 0:
        return (mass * (err <= eps)).sum(axis=-1)
    ok = err[..., None] <= eps
    return np.einsum("...b,...be->...e", mass, ok.astype(float))


def lp_ece(error: np.ndarray, mass: np.ndarray, p: float = 1.0) -> np.ndarray:
    """Exact ``lp-ECE(h) = (sum_b w_b err_b^p)^(1/p)`` per row (gr21 Definition 3)."""
    error = _check_error(error)
    mass = _check_mass(mass, error)
    if isinstance(p, bool) or np.ndim(p) != 0 or not p >= 1:
        raise ValueError(f"p must be >= 1, got {p!r}")
    e = np.where(np.isnan(error), 0.0, error)
    if np.isinf(p):
        return conditional_max_error(error)
    return ((mass * e**p).sum(axis=-1)) ** (1.0 / p)


def validity_curve(error: np.ndarray, mass: np.ndarray, eps) -> np.ndarray:
    """Exact validity function ``V(eps)`` averaged over rows (replicates)."""
    return marginal_validity(error, mass, np.atleast_1d(eps)).mean(axis=0)
