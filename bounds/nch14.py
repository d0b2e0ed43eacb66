"""Guarantees of Naeini, Cooper & Hauskrecht (2014), binary histogram binning (Hist).

Symbols follow the project, not the paper: ``n`` is the calibration sample size (the
paper's N; its ``n`` counts negatives), ``n_bins`` the paper's B, and ``alpha`` the failure
probability (the paper's delta). Bins are equal-frequency (hypothesis H2: every bin holds
n/B points), logs are natural.

The paper's eq. (3) (and hence Theorem 3.1) uses the exponent N eps^2/(2B), four times
weaker than its own Hoeffding step eq. (1), 2 N eps^2 / B: both forms are registered, the
stated one as printed and the Hoeffding-consistent one as a variant (catalog Sec. 9 item 1).
Theorem 3.3's constant C is not given: three reconstructions are registered as variants.
Theorem 3.4 (the AUC loss) is in :mod:`calcheck.bounds.nch14_auc`.

References
----------
.. [1] M. P. Naeini, G. F. Cooper and M. Hauskrecht, "Binary classifier calibration:
       non-parametric approach", arXiv:1401.3390 (2014), Secs. 3, 7.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    as_integer_array,
    as_open_unit,
    as_positive,
    as_unit,
    guard_public,
    scalar_or_array,
)
from .guarantee import Guarantee

__all__ = [
    "cor32_mce_rate",
    "eq1_bin_rate_radius",
    "eq2_output_bin_bound",
    "eq3_output_bin_radius",
    "eq8_bin_mass_radius",
    "thm31_mce_bound",
    "thm31_mce_bound_hoeffding",
    "thm33_ece_bound",
    "thm33_ece_bound_hoeffding",
    "thm33_ece_bound_variance",
]


def _n_b(n, n_bins):
    n_ = as_integer_array(n, "n", minimum=1).astype(float)
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    return n_, b


def thm31_mce_bound(n, n_bins, alpha):
    r"""Theorem 3.1 as printed: w.p. >= 1 - alpha, MCE <= sqrt(2 B log(2B/alpha) / n).

    Paper: nch14, Theorem 3.1 (Sec. 3; proof via eqs. (1)-(3): Hoeffding per bin, the
    triangle inequality (2) and a union bound over the B bins).

    Hypotheses: calibration pairs i.i.d. (H1); equal-frequency bins of n/B points (H2);
    the base classifier independent of the calibration data.

    Quantifier: conditional (w.p. >= 1 - alpha over the calibration sample, for every
    output bin at once: MCE is the population max over bins of ``|o_i - e_i|``, bounded by
    ``max_K |thetahat_K - theta_K|`` over the input bins).

    Parameters
    ----------
    n, n_bins : int or array_like of int
    alpha : float or array_like
        Failure probability in (0, 1) (the paper's delta).

    Returns
    -------
    float or ndarray

    Notes
    -----
    The exponent of eq. (3), n eps^2 / (2B), is four times weaker than eq. (1)'s: the
    bound is twice :func:`thm31_mce_bound_hoeffding`. It is vacuous (>= 1) for
    n <= 2B log(2B/alpha).
    """
    n_, b = _n_b(n, n_bins)
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(np.sqrt(2.0 * b * np.log(2.0 * b / a) / n_))


def thm31_mce_bound_hoeffding(n, n_bins, alpha):
    r"""Theorem 3.1 with eq. (1)'s exponent: MCE <= sqrt(B log(2B/alpha) / (2n)).

    Paper: nch14, Theorem 3.1, corrected (catalog Sec. 9 item 1): solving
    alpha = 2B exp(-2 n eps^2 / B) instead of eq. (3)'s 2B exp(-n eps^2 / (2B)).

    Hypotheses: as :func:`thm31_mce_bound`.

    Quantifier: conditional.

    Parameters
    ----------
    n, n_bins : int or array_like of int
    alpha : float or array_like

    Returns
    -------
    float or ndarray

    Notes
    -----
    Exactly half of the printed bound. Still a union bound over B bins and Hoeffding in
    place of the binomial law, so it is loose except for eta = 1/2.
    """
    n_, b = _n_b(n, n_bins)
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(np.sqrt(b * np.log(2.0 * b / a) / (2.0 * n_)))


def eq1_bin_rate_radius(n, n_bins, alpha):
    r"""Eqs. (1), (9): one bin's rate is within sqrt(B log(2/alpha) / (2n)) w.p. 1 - alpha.

    Paper: nch14, eq. (1) (= eq. 7) and its inverse eq. (9).

    Hypotheses: H1, H2 (the bin holds n/B points with i.i.d. labels of mean theta).

    Quantifier: marginal over one bin (no union bound): w.p. >= 1 - alpha for a fixed bin
    index.

    Parameters
    ----------
    n, n_bins : int or array_like of int
    alpha : float or array_like

    Returns
    -------
    float or ndarray

    Notes
    -----
    With data-dependent equal-frequency edges the boundary order statistics sit inside the
    bins; conditionally on the edges the interior points are i.i.d., so the bound holds up
    to O(1) points per bin.
    """
    n_, b = _n_b(n, n_bins)
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(np.sqrt(b * np.log(2.0 / a) / (2.0 * n_)))


def eq3_output_bin_radius(n, n_bins, alpha, *, k=1):
    r"""Eq. (3) (= eq. 6): one output bin is within sqrt(2B log(2k/alpha) / n) w.p. 1 - alpha.

    Paper: nch14, eq. (3), the tail bound of one output bin fed by ``k`` input bins,
    ``P(|o_i - e_i| > eps) <= 2 k exp(-n eps^2 / (2B))``, solved for eps.

    Hypotheses: H1, H2.

    Quantifier: marginal over one output bin: w.p. >= 1 - alpha for a fixed bin index.

    Parameters
    ----------
    n, n_bins : int or array_like of int
    alpha : float or array_like
    k : int, default 1
        Input bins mapped into the output bin (1: one output per input bin).

    Returns
    -------
    float or ndarray

    Notes
    -----
    The exponent n eps^2 / (2B) is four times weaker than eq. (1)'s 2 n eps^2 / B (catalog
    Sec. 9 item 1), so with ``k = 1`` the radius is twice :func:`eq1_bin_rate_radius`: valid
    whenever eq. (1) is, and loose.
    """
    n_, b = _n_b(n, n_bins)
    a = as_open_unit(alpha, "alpha")
    k_ = as_integer_array(k, "k", minimum=1).astype(float)
    return scalar_or_array(np.sqrt(2.0 * b * np.log(2.0 * k_ / a) / n_))


def eq8_bin_mass_radius(n, alpha):
    r"""Eqs. (8), (10): w.p. >= 1 - alpha, ``|etahat - eta| <= sqrt(log(2/alpha) / (2n))``.

    Paper: nch14, eq. (8) and its inverse eq. (10) (Hoeffding for a fixed bin's mass).

    Hypotheses: H1; a fixed bin. For data-dependent equal-frequency bins etahat = N_i/n is
    fixed and eta random; DKW gives a uniform version.

    Quantifier: marginal over one bin (no union bound).

    Parameters
    ----------
    n : int or array_like of int
    alpha : float or array_like

    Returns
    -------
    float or ndarray

    Notes
    -----
    Very loose for quantile bins: a uniform-score quantile bin's mass has standard
    deviation about sqrt((1/B)(1 - 1/B)/n).
    """
    n_ = as_integer_array(n, "n", minimum=1).astype(float)
    return scalar_or_array(np.sqrt(np.log(2.0 / as_open_unit(alpha, "alpha")) / (2.0 * n_)))


def eq2_output_bin_bound(max_bin_error):
    r"""Eq. (2): ``|o_i - e_i| <= max_t |thetahat_it - theta_it|`` for every output bin.

    Paper: nch14, eq. (2) (a convex combination with weights alpha_it = eta_it / sum_t
    eta_it is at most its largest term).

    Hypotheses: none (deterministic; population bin weights).

    Quantifier: identity (holds surely).

    Parameters
    ----------
    max_bin_error : float or array_like
        ``max_t |thetahat_it - theta_it|`` over the input bins of an output bin, in [0, 1].

    Returns
    -------
    float or ndarray
        The bound on ``|o_i - e_i|``: the argument itself.

    Notes
    -----
    Checked on two output partitions of every fitted map: ten equal-frequency evaluation
    bins of the outputs (the paper's Sec. 2.1) and one bin per distinct output.
    """
    return scalar_or_array(as_unit(max_bin_error, "max_bin_error"))


def cor32_mce_rate(n, n_bins, *, c):
    r"""Corollary 3.2: MCE = O(sqrt(B log B / n)) (for fixed alpha).

    Paper: nch14, Corollary 3.2 (from Theorem 3.1: log(2B/alpha) = log B + log(2/alpha)).

    Hypotheses: those of Theorem 3.1; alpha fixed.

    Quantifier: rate (a high-probability rate: the (1 - alpha)-quantile of the MCE is at
    most c sqrt(B log B / n)).

    Parameters
    ----------
    n, n_bins : int or array_like of int
        B >= 2.
    c : float
        The unspecified constant (keyword, required).

    Returns
    -------
    float or ndarray

    Notes
    -----
    Checked as an exponent: the quantile's slope in n at fixed B is -1/2; under the
    schedule B = n^(1/3) the rate is n^(-1/3) sqrt(log n).
    """
    if c is None:
        raise ValueError("c must be given: the paper leaves its constant unspecified")
    n_, b = _n_b(n, n_bins)
    if np.any(b < 2):
        raise ValueError(f"n_bins must be >= 2 (log B = 0 at B = 1), got {n_bins!r}")
    return scalar_or_array(as_positive(c, "c") * np.sqrt(b * np.log(b) / n_))


def _ece(n, n_bins, const):
    n_, b = _n_b(n, n_bins)
    return scalar_or_array(const * np.sqrt(b / n_))


def thm33_ece_bound(n, n_bins):
    r"""Theorem 3.3 with the paper's exponent: E[ECE] <= sqrt(2 pi) sqrt(B/n).

    Paper: nch14, Theorem 3.3 and App. 7.1 ("E_i <= C sqrt(B/N), where C is a constant";
    C is not given). Reconstructed: integrating eq. (6)'s tail 2 exp(-n t^2/(2B)) for one
    bin (Lemmas 7.1, 7.2) and averaging with the eta weights of eq. (2) gives
    C = sqrt(2 pi) ~ 2.507 (catalog G6).

    Hypotheses: H1, H2.

    Quantifier: expectation over the calibration sample of the population ECE
    ``sum_K eta_K |thetahat_K - theta_K|`` (which bounds the ECE of every output partition).

    Parameters
    ----------
    n, n_bins : int or array_like of int

    Returns
    -------
    float or ndarray

    Notes
    -----
    The sketch's per-output-bin integral carries a factor k_i (input bins per output bin),
    up to B: "C is a constant" is a gap that the eta-weighted form avoids.
    """
    return _ece(n, n_bins, np.sqrt(2.0 * np.pi))


def thm33_ece_bound_hoeffding(n, n_bins):
    r"""Theorem 3.3 with eq. (1)'s exponent: E[ECE] <= sqrt(pi/2) sqrt(B/n) ~ 1.253 sqrt(B/n).

    Paper: nch14, Theorem 3.3, reconstructed constant (catalog G6).

    Hypotheses: H1, H2.

    Quantifier: expectation.

    Parameters
    ----------
    n, n_bins : int or array_like of int

    Returns
    -------
    float or ndarray

    Notes
    -----
    The integral of 2 exp(-2 n t^2 / B) over t >= 0.
    """
    return _ece(n, n_bins, np.sqrt(np.pi / 2.0))


def thm33_ece_bound_variance(n, n_bins):
    r"""Theorem 3.3 by Jensen and the binomial variance: E[ECE] <= (1/2) sqrt(B/n).

    Not in the paper (catalog G6): ``E|thetahat_K - theta_K| <= sqrt(theta_K (1 - theta_K)
    B/n) <= sqrt(B/n)/2`` for a bin of n/B points.

    Hypotheses: H1, H2.

    Quantifier: expectation.

    Parameters
    ----------
    n, n_bins : int or array_like of int

    Returns
    -------
    float or ndarray

    Notes
    -----
    Asymptotically E|.| ~ sqrt(2/pi) sqrt(theta (1 - theta) B / n) <= 0.399 sqrt(B/n): the
    tightest of the three, attained at theta = 1/2.
    """
    return _ece(n, n_bins, 0.5)


_H = ("calibration pairs i.i.d. (H1)", "equal-frequency bins, n/B points each (H2)")

guard_public(globals())  # broadcasting errors name the arguments

GUARANTEES = (
    Guarantee(
        "nch14.thm31",
        thm31_mce_bound,
        "nch14",
        "Theorem 3.1",
        "w.p. >= 1 - alpha the population MCE of histogram binning is <= sqrt(2B log(2B/alpha)/n)",
        (*_H, "base classifier independent of the calibration data"),
        "conditional",
    ),
    Guarantee(
        "nch14.thm31.hoeffding",
        thm31_mce_bound_hoeffding,
        "nch14",
        "Theorem 3.1 with eq. (1)'s exponent (corrected)",
        "w.p. >= 1 - alpha the population MCE is <= sqrt(B log(2B/alpha)/(2n))",
        (*_H, "base classifier independent of the calibration data"),
        "conditional",
        variant_of="nch14.thm31",
    ),
    Guarantee(
        "nch14.eq9",
        eq1_bin_rate_radius,
        "nch14",
        "eqs. (1), (9)",
        "for one bin, w.p. >= 1 - alpha, |thetahat - theta| <= sqrt(B log(2/alpha)/(2n))",
        _H,
        "marginal",
    ),
    Guarantee(
        "nch14.eq3",
        eq3_output_bin_radius,
        "nch14",
        "eqs. (3), (6)",
        "for one output bin fed by k input bins, w.p. >= 1 - alpha, |o_i - e_i| <= "
        "sqrt(2B log(2k/alpha)/n)",
        _H,
        "marginal",
    ),
    Guarantee(
        "nch14.cor32",
        cor32_mce_rate,
        "nch14",
        "Corollary 3.2",
        "MCE = O(sqrt(B log B / n)) for fixed alpha",
        (*_H, "constant c unspecified"),
        "rate",
    ),
    Guarantee(
        "nch14.thm33",
        thm33_ece_bound,
        "nch14",
        "Theorem 3.3 (C = sqrt(2 pi), reconstructed)",
        "E[ECE] <= C sqrt(B/n), C = sqrt(2 pi) from eq. (6)",
        _H,
        "expectation",
    ),
    Guarantee(
        "nch14.thm33.hoeffding",
        thm33_ece_bound_hoeffding,
        "nch14",
        "Theorem 3.3 (C = sqrt(pi/2), reconstructed from eq. (1))",
        "E[ECE] <= sqrt(pi/2) sqrt(B/n)",
        _H,
        "expectation",
        variant_of="nch14.thm33",
    ),
    Guarantee(
        "nch14.thm33.variance",
        thm33_ece_bound_variance,
        "nch14",
        "Theorem 3.3 (C = 1/2, by the binomial variance; not in the paper)",
        "E[ECE] <= (1/2) sqrt(B/n)",
        _H,
        "expectation",
        variant_of="nch14.thm33",
    ),
    Guarantee(
        "nch14.eq10",
        eq8_bin_mass_radius,
        "nch14",
        "eqs. (8), (10)",
        "for one bin, w.p. >= 1 - alpha, |etahat - eta| <= sqrt(log(2/alpha)/(2n))",
        ("calibration pairs i.i.d. (H1)",),
        "marginal",
    ),
    Guarantee(
        "nch14.eq2",
        eq2_output_bin_bound,
        "nch14",
        "eq. (2)",
        "|o_i - e_i| <= max_t |thetahat_it - theta_it| for every output bin",
        ("population bin weights",),
        "identity",
    ),
)
