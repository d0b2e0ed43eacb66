"""Theorem 3.4 of Naeini, Cooper & Hauskrecht (2014): the AUC loss of histogram binning.

The bound holds only in the limit n/B -> infinity (quantifier ``asymptotic``) and is tight
(the staircase law attains it). Symbols as in :mod:`calcheck.bounds.nch14`.

References
----------
.. [1] M. P. Naeini, G. F. Cooper and M. Hauskrecht, "Binary classifier calibration:
       non-parametric approach", arXiv:1401.3390 (2014), Sec. 3 and App. 7.2.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    as_float_array,
    as_integer_array,
    as_nonnegative,
    as_unit,
    guard_public,
    scalar_or_array,
)
from .guarantee import Guarantee
from .nch14 import _H

__all__ = [
    "chebyshev_sum_gap",
    "loss1_bound",
    "loss2_bound",
    "thm34_auc_loss_bound",
    "thm34_auc_loss_bound_unequal",
]


def thm34_auc_loss_bound(n_bins):
    r"""Theorem 3.4 / eq. (23): the AUC loss of histogram binning is at most 1/(2B) as n -> inf.

    Paper: nch14, Theorem 3.4 ("O(1/B)") with the constant of App. 7.2, eq. (23):
    Loss_1 <= 0 (pairs in different bins, eqs. 16-20) and Loss_2 <= 1/(2B) (pairs in the
    same bin, eqs. 21-23, by Chebyshev's sum inequality).

    Hypotheses: H1; equal-frequency bins (eta_K = 1/B); a continuous score; distinct
    thetahat (Assumption 1); thetahat = theta (the large-n limit).

    Quantifier: asymptotic (a statement about the limit n/B -> infinity, not about any
    finite n).

    Parameters
    ----------
    n_bins : int or array_like of int

    Returns
    -------
    float or ndarray

    Notes
    -----
    Tight: the staircase law (labels deterministic within bins, nearly equal bin rates)
    attains 1/(2B) in the limit. At finite n the loss can exceed it (ties and misorderings
    of thetahat when bins hold few points): what an asymptotic statement allows.
    """
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    return scalar_or_array(1.0 / (2.0 * b))


def thm34_auc_loss_bound_unequal(bin_masses, bin_rates):
    r"""Eq. (22) with unequal masses: Loss_2 <= sum_K eta_K^2 theta_K (1 - theta_K) / (2 pi1 pi0).

    Paper: nch14, App. 7.2, eq. (22) before eta_K = 1/B is used (catalog G13).

    Hypotheses: H1; continuous score; the bins' true masses eta_K and rates theta_K.

    Quantifier: asymptotic.

    Parameters
    ----------
    bin_masses : array_like, shape (..., B)
        eta_K, summing to 1.
    bin_rates : array_like, shape (..., B)
        theta_K in [0, 1].

    Returns
    -------
    float or ndarray

    Notes
    -----
    Equals 1/(2B) times ``sum theta (1 - theta) / (B pi1 pi0)`` when eta_K = 1/B, which is at
    most 1/(2B) by Chebyshev's sum inequality; with unequal masses it can exceed 1/(2B).
    """
    eta = as_nonnegative(bin_masses, "bin_masses")
    theta = as_unit(bin_rates, "bin_rates")
    if eta.shape != theta.shape or eta.ndim == 0:
        raise ValueError(
            f"bin_masses and bin_rates must be arrays of one shape (..., B), got {eta.shape} "
            f"and {theta.shape}"
        )
    if not np.allclose(eta.sum(axis=-1), 1.0):
        raise ValueError(f"bin_masses must sum to 1, got {eta.sum(axis=-1)!r}")
    pi1 = np.sum(eta * theta, axis=-1)
    if np.any((pi1 <= 0) | (pi1 >= 1)):
        raise ValueError(
            "bin_masses and bin_rates must give both classes positive probability "
            f"(0 < pi1 < 1), got bin_masses={bin_masses!r}, bin_rates={bin_rates!r}"
        )
    return scalar_or_array(0.5 * np.sum(eta**2 * theta * (1 - theta), axis=-1) / (pi1 * (1 - pi1)))


def loss1_bound():
    r"""Eqs. (16)-(20): the loss from pairs in different bins is at most 0 (as n -> inf).

    Paper: nch14, App. 7.2, eqs. (16)-(20): a pair (K > L) contributes only where thetahat
    reorders the bins, ``theta_K - theta_L``, which is <= 0 once thetahat = theta.

    Hypotheses: H1; thetahat = theta (the large-n limit); continuous score.

    Quantifier: asymptotic.

    Returns
    -------
    float
        0.

    Notes
    -----
    At finite n, misordered adjacent bins make Loss_1 positive; its frequency falls slowly
    with n/B (reported by ``calcheck figures nch14``).
    """
    return 0.0


def loss2_bound(n_bins):
    r"""Eqs. (21)-(23): the loss from pairs in the same bin is at most 1/(2B).

    Paper: nch14, App. 7.2, eqs. (21)-(23) (Chebyshev's sum inequality with eta_K = 1/B).

    Hypotheses: H1; equal-frequency bins (eta_K = 1/B); continuous score.

    Quantifier: asymptotic.

    Parameters
    ----------
    n_bins : int or array_like of int

    Returns
    -------
    float or ndarray

    Notes
    -----
    Attained when every within-bin AUC is 1 and the bin rates are equal (the staircase).
    """
    return thm34_auc_loss_bound(n_bins)


def chebyshev_sum_gap(a, b):
    r"""Theorem 7.1 (Chebyshev's sum inequality): (1/n) sum a_k b_k - mean(a) mean(b).

    Non-positive when a is non-decreasing and b non-increasing (the helper App. 7.2 uses
    for eq. 23). Returned for testing; not a registered guarantee.

    Parameters
    ----------
    a, b : array_like, shape (n,)

    Returns
    -------
    float
    """
    x = as_float_array(a, "a")
    y = as_float_array(b, "b")
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"a and b must be 1-d of equal length, got {x.shape} and {y.shape}")
    for name, arr, value in (("a", x, a), ("b", y, b)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite, got {value!r}")
    return float(np.mean(x * y) - x.mean() * y.mean())


guard_public(globals())  # broadcasting errors name the arguments

GUARANTEES = (
    Guarantee(
        "nch14.thm34",
        thm34_auc_loss_bound,
        "nch14",
        "Theorem 3.4, eq. (23)",
        "as n/B -> infinity, AUC(y) - AUC(yhat) <= 1/(2B)",
        (*_H, "continuous score", "distinct thetahat (Assumption 1)"),
        "asymptotic",
    ),
    Guarantee(
        "nch14.thm34.unequal",
        thm34_auc_loss_bound_unequal,
        "nch14",
        "App. 7.2, eq. (22) (unequal bin masses)",
        "as n/B -> infinity, the loss is <= sum eta_K^2 theta_K(1-theta_K)/(2 pi1 pi0)",
        ("calibration pairs i.i.d. (H1)", "continuous score"),
        "asymptotic",
        variant_of="nch14.thm34",
    ),
    Guarantee(
        "nch14.loss1",
        loss1_bound,
        "nch14",
        "App. 7.2, eqs. (16)-(20)",
        "as n/B -> infinity, Loss_1 (pairs in different bins) <= 0",
        ("calibration pairs i.i.d. (H1)", "thetahat = theta (the limit)", "continuous score"),
        "asymptotic",
    ),
    Guarantee(
        "nch14.loss2",
        loss2_bound,
        "nch14",
        "App. 7.2, eqs. (21)-(23)",
        "as n/B -> infinity, Loss_2 (pairs in the same bin) <= 1/(2B)",
        (*_H, "continuous score"),
        "asymptotic",
    ),
)
