"""Theorem 4.1 of Kumar, Liang & Ma (2019): the scaling-binning calibrator's guarantee.

Also the derived form of Proposition D.4 (binning does not raise the MSE by much), whose
appendix is missing from the paper: :func:`prop_d4_mse_increase_bound_derived`.

Symbols as in :mod:`calcheck.bounds.klm19`: ``n_bins`` (B), ``eps_sq`` (the target eps^2),
``min_ce_sq`` (the best squared CE in the family G) and the unspecified constant ``c``
(here not universal: it depends on delta, G and the law).

References
----------
.. [1] A. Kumar, P. Liang and T. Ma, "Verified uncertainty calibration", NeurIPS 2019,
       Sec. 4.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    as_nonnegative,
    as_open_unit,
    as_positive,
    guard_public,
    scalar_or_array,
)
from .guarantee import Guarantee
from .klm19 import _b, _c

__all__ = ["prop_d4_mse_increase_bound_derived", "thm41_ce_sq_bound", "thm41_sample_size"]


def thm41_sample_size(n_bins, eps_sq, *, c):
    r"""Theorem 4.1: recalibration size after which scaling-binning is eps-calibrated.

    .. math:: n \ge c \left(B \log B + \frac{\log B}{\epsilon^2}\right)
        \;\Rightarrow\; CE(\hat g_\mathcal{B})^2 \le 2 \min_{g \in G} CE(g)^2 + \epsilon^2
        \text{ w.p. } \ge 1 - \delta.

    Paper: klm19, Theorem 4.1 (Sec. 4.2; the abstract's O(B + 1/eps^2) drops the logs).

    Hypotheses: G a regular family (finite parameters, injective, Lipschitz, consistent,
    twice differentiable; App. D, not available), e.g. Platt's sigmoids; the scaling-binning
    calibrator of Sec. 4.1 (T1/T2/T3 split); n the total recalibration size.

    Quantifier: rate. Unlike Lemma 4.3 and Theorems 5.3/5.4, c is not universal: it
    depends on delta, G and the law (delta enters only through c).

    Parameters
    ----------
    n_bins : int or array_like of int
        B >= 2 (log B = 0 at B = 1).
    eps_sq : float or array_like
        eps^2 in (0, 1).
    c : float

    Returns
    -------
    float or ndarray

    Notes
    -----
    calcheck checks the threshold n* at which CE^2 <= 2 min_G CE^2 + eps^2 holds w.p. 0.9
    for the calibrator as written (thirds, squared-loss Platt), with CE^2 exact by
    quadrature. Measured on the well-specified law (a, b) = (2, 1): n* ~ 2.4 / eps^2, nearly
    flat in B (B^0.14 over B = 2..200 at eps^2 = 0.01, where n >= 3B is forced by the
    split), so the log B factor is loose on this law.
    """
    b = _b(n_bins, minimum=2)
    e = as_open_unit(eps_sq, "eps_sq")
    return scalar_or_array(_c(c) * (b * np.log(b) + np.log(b) / e))


def thm41_ce_sq_bound(min_ce_sq, eps_sq):
    r"""Theorem 4.1's bound on the squared CE: :math:`2 \min_G CE(g)^2 + \epsilon^2`.

    Paper: klm19, Theorem 4.1 (the factor 2 on the best CE^2 in G; a well-specified family,
    min = 0, gives CE^2 <= eps^2).

    Parameters
    ----------
    min_ce_sq : float or array_like
        ``min_{g in G} CE(g)^2`` in [0, 1].
    eps_sq : float or array_like
        eps^2 in (0, 1).

    Returns
    -------
    float or ndarray

    Notes
    -----
    Binning can beat the best g of the family (Prop. 3.3 gives CE(g*_B) <= CE(g*)), so the
    factor 2 is loose; dropping the min term altogether is wrong on a misspecified law
    (the suite's control).
    """
    m = np.asarray(min_ce_sq, dtype=float)
    if not np.all((m >= 0) & (m <= 1)):
        raise ValueError(f"min_ce_sq must lie in [0, 1], got {min_ce_sq!r}")
    return scalar_or_array(2.0 * m + as_open_unit(eps_sq, "eps_sq"))


def prop_d4_mse_increase_bound_derived(n_bins, ce=0.0, *, alpha=1.0):
    r"""Proposition D.4, **derived form** (not the paper's): binning raises the MSE little.

    The paper states (Sec. 4) that "if we use many bins, binning the outputs cannot increase
    the mean-squared error by much" and proves it in Proposition D.4, whose appendix is
    missing from the text we have. This is the substitute bound the project's catalog
    derives: for a monotone g with values in [0, 1] and alpha-well-balanced bins
    (``P(bin j) <= alpha / B``), the population-binned ``g_B`` has
    ``E[(g - g_B)^2] = sum_j P_j Var(g | I_j) <= (alpha/B) sum_j w_j^2 / 4 <= alpha/(4B)``
    (Popoviciu, with ``w_j`` the range of g on bin j and ``sum_j w_j <= 1``), and

    .. math:: MSE(g_B) - MSE(g) = E[(g_B - g)^2] + 2 E[(g_B - g)(g - q)]
              \le \frac{\alpha}{4B} + CE(g) \sqrt{\alpha / B}.

    Parameters
    ----------
    n_bins : int or array_like of int
        B >= 1.
    ce : float or array_like, default 0
        CE(g) = sqrt(E[(g - q)^2]) in [0, 1]; 0 (a calibrated g) leaves ``alpha/(4B)``,
        which also bounds ``E[(g - g_B)^2]`` for any g.
    alpha : float, default 1
        Balance: every bin has probability at most alpha / B (1: uniform-mass bins).

    Returns
    -------
    float or ndarray

    Notes
    -----
    Hypotheses: g monotone with values in [0, 1]; population bins (the binned map's
    values are the exact bin means of g); bins alpha-well-balanced. Quantifier: identity
    (a deterministic inequality for every such law). Labelled derived: the constant is the
    catalog's, not the paper's. Checked exactly by quadrature in
    ``tests/papers/test_klm19_prop_d4.py``, where a near-step g attains ``1/(4B)`` to 3%.
    """
    b = _b(n_bins)
    ce_ = as_nonnegative(ce, "ce")
    if np.any(ce_ > 1):
        raise ValueError(f"ce must lie in [0, 1], got {ce!r}")
    a = as_positive(alpha, "alpha")
    if np.any(a < 1):
        raise ValueError(f"alpha must be >= 1 (bins cannot all be lighter than 1/B), got {alpha!r}")
    return scalar_or_array(a / (4 * b) + ce_ * np.sqrt(a / b))


guard_public(globals())  # broadcasting errors name the arguments

GUARANTEES = (
    Guarantee(
        "klm19.thm41",
        thm41_sample_size,
        "klm19",
        "Theorem 4.1",
        "scaling-binning: n >= c (B log B + log B / eps^2) gives CE(g_B)^2 <= "
        "2 min_G CE(g)^2 + eps^2 w.p. >= 1 - delta",
        (
            "G regular (injective, Lipschitz, consistent; App. D), e.g. Platt's sigmoids",
            "T1/T2/T3 split; n the total recalibration size",
            "c depends on delta, G and the law; natural log",
        ),
        "rate",
    ),
)
