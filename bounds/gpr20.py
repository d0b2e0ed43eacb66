"""Guarantees of Gupta, Podkopaev & Ramdas (2020), distribution-free binary classification.

Every function is pure and vectorised over its arguments (they broadcast). Symbols follow
the paper: ``n_bin`` is a bin count N_b, ``variance`` the biased (divide-by-N_b) sample
variance V^_b of eq. (17), ``n_bins`` the number of bins B, ``alpha`` the miscoverage.
Logs are natural. Values are returned raw, also when vacuous (>= 1); a bin with no point
(N_b = 0, excluded by the paper's hypothesis N_b >= 1) has half-width ``inf``.

Derived results that are not claims of the paper (the per-bin Hoeffding analogue, the
explicit constant of Theorem 7) say so in their docstrings and registry labels.

References
----------
.. [1] C. Gupta, A. Podkopaev and A. Ramdas, "Distribution-free binary classification:
       prediction sets, confidence intervals and calibration", NeurIPS 2020, extended arXiv
       version.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import zeta

from ._concentration import empirical_bernstein_halfwidth, per_count
from ._validation import (
    as_counts,
    as_integer_array,
    as_nonnegative,
    as_open_unit,
    as_positive,
    guard_public,
    scalar_or_array,
)
from .guarantee import Guarantee

__all__ = [
    "THM6_ETA",
    "THM6_S",
    "cor1_width_lower_bound",
    "cor1_width_probability",
    "cor3_eps_max_halfwidth",
    "cor3_eps_stated",
    "empirical_bernstein_halfwidth",
    "hoeffding_bin_halfwidth",
    "thm3_eps_lower_bound",
    "thm4_halfwidth",
    "thm5_cal1_size",
    "thm5_min_count",
    "thm5_positive_from",
    "thm6_constants",
    "thm6_halfwidth",
    "thm6_halfwidth_intermediate",
]

#: Stitching parameters of the proof of Theorem 6 (App. C.4): eta = e, s = 1.4.
THM6_ETA = math.e
THM6_S = 1.4


def thm4_halfwidth(n_bin, variance, n_bins, alpha):
    r"""Empirical-Bernstein half-width of a bin probability, Theorem 4 (eq. 17).

    .. math:: \sqrt{\frac{2 \hat V_b \ln(3B/\alpha)}{N_b}} + \frac{3 \ln(3B/\alpha)}{N_b}

    Parameters
    ----------
    n_bin : int or array_like
        Calibration points N_b in the bin (``inf`` for N_b = 0).
    variance : float or array_like
        ``V^_b = (1/N_b) sum (Y_i - pi^_b)^2``, divided by N_b; ``pi^_b (1 - pi^_b)`` for
        0/1 labels.
    n_bins : int or array_like
        Number of bins B of the fixed partition.
    alpha : float or array_like
        Miscoverage in (0, 1).

    Notes
    -----
    Paper: gpr20, Theorem 4 (Sec. 4.1, eq. 17), via Audibert et al. (Theorem 12, s = 1,
    delta = alpha/B) and a union bound over bins.
    Hypotheses: the partition is fixed (independent of the calibration data); calibration
    data iid; N_b >= 1 for all b.
    Quantifier: conditional on the bin memberships -- with probability >= 1 - alpha,
    ``|pi_b - pi^_b| <= half-width`` simultaneously for all b, where
    ``pi_b = E[Y | X in X_b]``.
    """
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    a = as_open_unit(alpha, "alpha")
    return empirical_bernstein_halfwidth(n_bin, variance, a / b)


def _last_axis_counts(counts, variances):
    c = as_counts(counts, "counts")
    v = as_nonnegative(variances, "variances")
    if c.ndim == 0 or c.shape[-1] < 1:
        raise ValueError(f"counts must have a bins axis (last), got shape {c.shape}")
    if v.shape != c.shape:
        raise ValueError(f"variances must have the shape of counts {c.shape}, got {v.shape}")
    return c, v


def cor3_eps_stated(counts, variances, alpha):
    r"""Calibration radius of histogram binning as printed in Corollary 3.

    ``eps = hw_{b*}`` with ``b* = argmin_b N_b`` (first minimiser), hw of Theorem 4.

    Parameters
    ----------
    counts : array_like of int, shape (..., B)
        Bin counts N_b (last axis = bins).
    variances : array_like, shape (..., B)
        Per-bin V^_b.
    alpha : float
        Miscoverage in (0, 1).

    Notes
    -----
    Paper: gpr20, Corollary 3 (Sec. 4.1; proof App. C.2). Stated form. The paper claims
    ``sup_b |C(b)|/2`` equals the half-width at b*; that is false in general, because V^_b
    differs across bins: the widest interval can sit in a bin with
    more points and larger V^_b. This radius can therefore fall short of
    :func:`cor3_eps_max_halfwidth`, the valid one, and the suite exhibits a law where the
    stated radius loses its coverage.
    Quantifier (claimed): conditional -- with probability >= 1 - alpha over the data,
    ``|E[Y | h(X)] - h(X)| <= eps`` almost surely (eq. 18).
    """
    c, v = _last_axis_counts(counts, variances)
    n_bins = c.shape[-1]
    star = np.argmin(c, axis=-1)[..., None]
    n_star = np.take_along_axis(c, star, axis=-1)[..., 0]
    v_star = np.take_along_axis(v, star, axis=-1)[..., 0]
    return thm4_halfwidth(n_star, v_star, n_bins, alpha)


def cor3_eps_max_halfwidth(counts, variances, alpha):
    r"""Valid calibration radius of histogram binning: ``max_b hw_b`` (Corollary 3 corrected).

    Parameters
    ----------
    counts, variances, alpha
        As in :func:`cor3_eps_stated`.

    Notes
    -----
    Paper: gpr20, Corollary 3 with Theorem 1(ii), ``eps = sup_b |C(b)|/2``; the b*-formula
    of the paper is replaced by the maximum it was meant to equal.
    Hypotheses: fixed partition, iid data, N_b >= 1 (an empty bin gives ``inf``).
    Quantifier: conditional -- with probability >= 1 - alpha over the data,
    ``|E[Y | h(X) = r] - r| <= eps`` for every r in Range(h), bins with equal outputs
    merged (eq. 18), and therefore also marginally (eq. 7).
    """
    c, v = _last_axis_counts(counts, variances)
    hw = np.asarray(thm4_halfwidth(c, v, c.shape[-1], alpha))
    return scalar_or_array(hw.max(axis=-1))


def hoeffding_bin_halfwidth(n_bin, n_bins, alpha):
    r"""Per-bin Hoeffding half-width ``sqrt(ln(2B/alpha) / (2 N_b))`` -- derived, not a claim.

    Notes
    -----
    Not stated in gpr20: the standard Hoeffding analogue of Theorem 4,
    offered for comparison. Hypotheses as Theorem 4 (fixed partition, labels in [0, 1]).
    Quantifier: conditional on memberships, with probability >= 1 - alpha simultaneously
    for all b. At V^_b = 1/4 it is tighter than Theorem 4; Theorem 4 wins only for small
    variances and large N_b.
    """
    counts = as_counts(n_bin)
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(np.sqrt(per_count(np.log(2.0 * b / a) / 2.0, counts)))


def thm5_min_count(n_cal2, n_bins, alpha):
    r"""Lower bound on the smallest bin count of uniform-mass binning, Theorem 5.

    .. math:: N_{b^*} \ge \frac{|D^2|}{2B} - \sqrt{\frac{|D^2| \ln(2B/\alpha)}{2}}

    Parameters
    ----------
    n_cal2 : int or array_like
        Points of the second split ``|D_cal^2|`` (those counted in the bins).
    n_bins : int or array_like
        Number of bins B.
    alpha : float or array_like
        Miscoverage in (0, 1).

    Returns
    -------
    float or ndarray
        The bound, raw: it is negative (vacuous) unless
        ``|D^2| > 2 B^2 ln(2B/alpha)`` (:func:`thm5_positive_from`).

    Notes
    -----
    Paper: gpr20, Theorem 5 (Sec. 4.2; proof App. C.3, eqs. 38-39).
    Hypotheses: bins from the empirical j/B quantiles of a first split D^1 independent of
    D^2 with ``|D^1| >= c B ln(2B/alpha)`` (:func:`thm5_cal1_size`; c is an unspecified
    universal constant of Kumar et al.'s Lemma 4.3); implicitly g(X) without large atoms.
    Quantifier: with probability >= 1 - alpha over both splits.
    """
    n2 = as_integer_array(n_cal2, "n_cal2", minimum=1).astype(float)
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(n2 / (2.0 * b) - np.sqrt(n2 * np.log(2.0 * b / a) / 2.0))


def thm5_positive_from(n_bins, alpha):
    """``2 B^2 ln(2B/alpha)``: Theorem 5's bound is positive only for larger ``|D^2|``."""
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(2.0 * b**2 * np.log(2.0 * b / a))


def thm5_cal1_size(n_bins, alpha, c=1.0):
    """Precondition of Theorem 5 on the first split: ``|D^1| >= c B ln(2B/alpha)``.

    The paper does not give c (inherited from Kumar et al. 2019, Lemma 4.3); it is a
    parameter here.
    """
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(as_positive(c, "c") * b * np.log(2.0 * b / a))


def thm6_constants() -> dict:
    """Constants of the stitching proof of Theorem 6 (App. C.4): zeta(1.4), k1, k2, ...

    ``k1 = (eta^{1/4} + eta^{-1/4}) / sqrt(2)`` and ``k2 = (sqrt(eta) + 1) / sqrt(2)`` with
    eta = e; ``2 zeta(1.4) <= 6.3`` is the constant inside ``ln(6.3 B / alpha)``.
    """
    z = float(zeta(THM6_S))
    k1 = (THM6_ETA**0.25 + THM6_ETA**-0.25) / math.sqrt(2.0)
    k2 = (math.sqrt(THM6_ETA) + 1.0) / math.sqrt(2.0)
    return {
        "zeta_s": z,
        "two_zeta_s": 2.0 * z,
        "k1": k1,
        "k2": k2,
        "k1_sqrt_s": k1 * math.sqrt(THM6_S),
    }


def _thm6_args(n_bin, v_plus, n_bins, alpha):
    counts = as_counts(n_bin)
    v = np.maximum(as_nonnegative(v_plus, "v_plus"), 1.0)  # eq. (20): V^+ = 1 v sum(...)
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    a = as_open_unit(alpha, "alpha")
    return counts, v, np.log(6.3 * b / a), np.log1p(np.log(v))


def thm6_halfwidth(n_bin, v_plus, n_bins, alpha):
    r"""Time-uniform half-width of a bin probability, Theorem 6 (stated form).

    .. math:: \frac{7\sqrt{V^+_b \ln(1 + \ln V^+_b)} + 5.3 \ln(6.3 B/\alpha)}{N_b^{(n)}}

    Parameters
    ----------
    n_bin : int or array_like
        Current bin count N_b^(n).
    v_plus : float or array_like
        Predictable-mean variance process ``sum_i (Y_i - Ybar_{i-1})^2`` of eq. (20),
        unnormalised; floored at 1 here (the paper's ``1 v ...``).
    n_bins, alpha
        Number of bins B and miscoverage in (0, 1).

    Notes
    -----
    Paper: gpr20, Theorem 6 (Sec. 4.3; proof App. C.4, polynomial stitching of Howard et
    al. with eta = e, s = 1.4, c = 1, m = 1 at level alpha/(2B)).
    Hypotheses: fixed partition; a stream of iid points.
    Quantifier: time-uniform -- with probability >= 1 - alpha,
    ``|pi_b - pi^_b| <= half-width`` simultaneously for all b and all n (also at any
    data-dependent stopping time).
    Proof gap: the final simplification drops a
    ``1.46 sqrt(V^+ ln(6.3B/alpha)) / N_b`` term of the intermediate bound
    (:func:`thm6_halfwidth_intermediate`); numerically the stated form still dominates the
    intermediate one unless ``ln(6.3B/alpha) >~ 57``.
    """
    counts, v, log_b, loglog = _thm6_args(n_bin, v_plus, n_bins, alpha)
    return scalar_or_array(per_count(7.0 * np.sqrt(v * loglog) + 5.3 * log_b, counts))


def thm6_halfwidth_intermediate(n_bin, v_plus, n_bins, alpha):
    r"""Time-uniform half-width, intermediate form of the proof of Theorem 6 (App. C.4).

    .. math:: \frac{1.46\sqrt{V^+ (1.4 \ln\ln(e V^+) + \ln(6.3B/\alpha))}
              + 5.27 \ln\ln(e V^+) + 3.76 \ln(6.3B/\alpha)}{N_b}

    Notes
    -----
    Paper: gpr20, App. C.4, the per-bin bound before the final simplification, with the
    stitching form ``sqrt(v l(v))`` (V^+ multiplies both terms of l; the printed LaTeX
    parenthesisation is ambiguous); k1 <= 1.46, 2 k2 <= 3.76,
    1.4 * 3.76 <= 5.27. This is the bound the proof establishes; it is tighter than the
    stated form in typical regimes. ``ln ln(e V) = ln(1 + ln V)`` with V floored at 1.
    Hypotheses and quantifier as :func:`thm6_halfwidth`.
    """
    counts, v, log_b, loglog = _thm6_args(n_bin, v_plus, n_bins, alpha)
    num = 1.46 * np.sqrt(v * (1.4 * loglog + log_b)) + 5.27 * loglog + 3.76 * log_b
    return scalar_or_array(per_count(num, counts))


def _half_open_alpha(alpha):
    a = np.asarray(alpha, dtype=float)
    if not np.all((a > 0) & (a < 0.5)):
        raise ValueError(f"alpha must lie in (0, 0.5), got {alpha!r}")
    return a


def thm3_eps_lower_bound(alpha):
    r"""Smallest eps an injective calibrator can guarantee, ``0.25 - alpha/2`` (Theorem 3).

    Notes
    -----
    Paper: gpr20, Theorem 3 (Sec. 3.3; proof App. B.4 with Corollary 1): if ``h_n = m_n(f)``
    with m_n injective is distribution-free (eps_n, alpha)-calibrated, alpha < 0.5, and
    Range(f) contains an interval, then ``eps_n >= 0.25 - alpha/2`` for every n.
    Quantifier: lower bound -- there is a law P (the adversary Q of Theorem 2) under which
    ``P(|E[Y | h_n(X)] - h_n(X)| > eps) > alpha`` for every ``eps < 0.25 - alpha/2``.
    """
    return scalar_or_array(0.25 - _half_open_alpha(alpha) / 2.0)


def cor1_width_lower_bound(alpha):
    r"""Expected-width lower bound of a distribution-free CI w.r.t. f, ``0.5 - alpha`` (Cor. 1).

    Notes
    -----
    Paper: gpr20, Corollary 1 (Sec. 3.2; proof App. B.3).
    Hypotheses: C_n is a distribution-free (1 - alpha)-CI w.r.t. f (valid for every law,
    atomic ones included); P_f non-empty; alpha in (0, 0.5).
    Quantifier: lower bound -- for P with nonatomic f(X) and ``E[Y | X] = 1/2``,
    ``E|C_n(f(X_{n+1}))| >= 0.5 - alpha`` for every n; the proof gives the stronger
    ``P(|C_n| >= 0.5) >= 1 - 2 alpha`` (:func:`cor1_width_probability`).
    """
    return scalar_or_array(0.5 - _half_open_alpha(alpha))


def cor1_width_probability(alpha):
    """``1 - 2 alpha``: probability that a distribution-free CI has width >= 1/2 (Cor. 1 proof)."""
    return scalar_or_array(1.0 - 2.0 * _half_open_alpha(alpha))


guard_public(globals())  # broadcasting errors name the arguments


# ---------------------------------------------------------------------- registry
_IID = "calibration data and test point iid"
_FIXED = "fixed partition, independent of the calibration data"
_NB1 = "N_b >= 1 for every bin"

#: The guarantees of this module, indexed by :mod:`calcheck.bounds.registry`.
GUARANTEES = (
    Guarantee(
        "gpr20.thm4",
        thm4_halfwidth,
        "gpr20",
        "Theorem 4, eq. (17)",
        "w.p. >= 1-alpha given memberships, |pi_b - pi^_b| <= EB half-width for all b",
        (_FIXED, "calibration data iid", _NB1),
        "conditional",
    ),
    Guarantee(
        "gpr20.thm4.hoeffding",
        hoeffding_bin_halfwidth,
        "gpr20",
        "derived Hoeffding analogue of Theorem 4",
        "w.p. >= 1-alpha given memberships, |pi_b - pi^_b| <= sqrt(ln(2B/alpha)/(2N_b)) for all b",
        (_FIXED, "calibration data iid", _NB1),
        "conditional",
        variant_of="gpr20.thm4",
    ),
    Guarantee(
        "gpr20.cor3",
        cor3_eps_stated,
        "gpr20",
        "Corollary 3 (as printed: hw at argmin N_b)",
        "histogram binning: w.p. >= 1-alpha, |E[Y|h(X)] - h(X)| <= hw_{b*} a.s. (eq. 18)",
        (_FIXED, "calibration data iid", _NB1),
        "conditional",
    ),
    Guarantee(
        "gpr20.cor3.max_halfwidth",
        cor3_eps_max_halfwidth,
        "gpr20",
        "Corollary 3 corrected: eps = max_b hw_b",
        "histogram binning: w.p. >= 1-alpha, |E[Y|h(X)=r] - r| <= max_b hw_b for all r",
        (_FIXED, "calibration data iid", _NB1),
        "conditional",
        variant_of="gpr20.cor3",
    ),
    Guarantee(
        "gpr20.thm5",
        thm5_min_count,
        "gpr20",
        "Theorem 5 (App. C.3, eqs. 38-39)",
        "uniform-mass binning with a split: w.p. >= 1-alpha, "
        "N_{b*} >= n2/(2B) - sqrt(n2 ln(2B/a)/2)",
        (
            "|D^1| >= c B ln(2B/alpha), c unspecified",
            "D^1 independent of D^2",
            "g(X) without atoms (implicit)",
        ),
        "conditional",
    ),
    Guarantee(
        "gpr20.thm6",
        thm6_halfwidth,
        "gpr20",
        "Theorem 6 (stated form)",
        "streaming binning: w.p. >= 1-alpha, |pi_b - pi^_b| <= [7 sqrt(V ln(1+ln V)) "
        "+ 5.3 ln(6.3B/alpha)]/N_b for all b and all n",
        (_FIXED, "stream of iid points"),
        "time_uniform",
    ),
    Guarantee(
        "gpr20.thm6.intermediate",
        thm6_halfwidth_intermediate,
        "gpr20",
        "Theorem 6, intermediate bound of the proof (App. C.4)",
        "streaming binning: the bound the stitching proof establishes, before the final step",
        (_FIXED, "stream of iid points"),
        "time_uniform",
        variant_of="gpr20.thm6",
    ),
    Guarantee(
        "gpr20.thm3",
        thm3_eps_lower_bound,
        "gpr20",
        "Theorem 3 (App. B.4)",
        "injective post-hoc calibration: eps_n >= 0.25 - alpha/2 on some law, for every n",
        ("m_n injective", "Range(f) contains an interval", "alpha in (0, 0.5)"),
        "lower_bound",
    ),
    Guarantee(
        "gpr20.cor1",
        cor1_width_lower_bound,
        "gpr20",
        "Corollary 1 (App. B.3)",
        "distribution-free CI w.r.t. f: E|C_n| >= 0.5 - alpha (P(|C_n| >= 1/2) >= 1 - 2 alpha) "
        "when E[Y|X] = 1/2 and f(X) is nonatomic",
        ("C_n valid for every law (atomic ones included)", "P_f non-empty", "alpha in (0, 0.5)"),
        "lower_bound",
    ),
)
