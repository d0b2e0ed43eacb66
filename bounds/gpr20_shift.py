"""Covariate-shift guarantees of Gupta, Podkopaev & Ramdas (2020), Sec. 4.4 and App. D.

Radii of weighted histogram binning (Theorem 7, stated with an unspecified constant c, and
with constants derived from its proof in App. D.1), the oracle-m_b estimator (Theorem 10)
and the target-bin-mean identity (Proposition 3).

References
----------
Gupta, C., Podkopaev, A. and Ramdas, A. (2020). Distribution-free binary classification:
prediction sets, confidence intervals and calibration. NeurIPS. Theorems 7 and 10,
Proposition 3 (App. D.1-D.2).
"""

from __future__ import annotations

import numpy as np

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
    "prop3_target_bin_mean",
    "thm7_explicit_halfwidth",
    "thm7_halfwidth",
    "thm7_min_n",
    "thm10_halfwidth",
]


def _ratio_bounds(upper, lower):
    u = np.asarray(upper, dtype=float)
    lo = np.asarray(lower, dtype=float)
    if not np.all(np.isfinite(u) & (u >= 1.0)):
        raise ValueError(f"upper must be finite and >= 1, got {upper!r}")
    if not np.all((lo > 0) & (lo <= 1.0)):
        raise ValueError(f"lower must lie in (0, 1], got {lower!r}")
    return u, lo


def thm7_halfwidth(n, n_bins, alpha, upper, lower, c=1.0):
    r"""Covariate-shift radius of weighted binning, Theorem 7 (stated form, constant ``c``).

    .. math:: c \left(\frac{U}{L}\right)^2 \sqrt{\frac{B \ln(6B/\alpha)}{2n}}

    Parameters
    ----------
    n : int or array_like
        Labelled source points used for the bin estimates (|D_cal^2|).
    n_bins, alpha
        Number of bins B and miscoverage in (0, 1).
    upper, lower : float
        Bounds ``L <= w(x) <= U`` of the likelihood ratio, ``0 < L <= 1 <= U`` (eq. 23).
    c : float, default 1
        The "explicit universal constant", never made explicit by the paper.
        The suite checks c = 1; :func:`thm7_explicit_halfwidth` is a derived constant.

    Notes
    -----
    Paper: gpr20, Theorem 7 (Sec. 4.4; proof App. D.1).
    Hypotheses: covariate shift with known w, L <= w <= U; uniform-mass bins on the source
    with ``|D^1| >= c B ln(6B/alpha)``; ``n >= c (U/L)^2 B ln^2(6B/alpha)``
    (:func:`thm7_min_n`).
    Quantifier: with probability >= 1 - alpha, for all b,
    ``|pi_check_b^(w) - E_target[Y | X in X_b]| <=`` the radius.
    """
    n_arr = as_integer_array(n, "n", minimum=1).astype(float)
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    a = as_open_unit(alpha, "alpha")
    u, lo = _ratio_bounds(upper, lower)
    cc = as_positive(c, "c")
    return scalar_or_array(cc * (u / lo) ** 2 * np.sqrt(b * np.log(6.0 * b / a) / (2.0 * n_arr)))


def thm7_min_n(n_bins, alpha, upper, lower, c=1.0):
    """Sample-size precondition of Theorem 7: ``c (U/L)^2 B ln^2(6B/alpha)``."""
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    a = as_open_unit(alpha, "alpha")
    u, lo = _ratio_bounds(upper, lower)
    return scalar_or_array(as_positive(c, "c") * (u / lo) ** 2 * b * np.log(6.0 * b / a) ** 2)


def thm7_explicit_halfwidth(n_bin, n_bins, alpha, upper, lower, m_b=None):
    r"""Per-bin covariate-shift radius with explicit constants -- derived from the proof.

    .. math:: (2 U^2 m_b^2 + U m_b) \sqrt{\frac{\ln(6B/\alpha)}{2 N_b}}
              \le 3 (U/L)^2 \sqrt{\frac{\ln(6B/\alpha)}{2 N_b}}

    Parameters
    ----------
    n_bin : int or array_like
        Source calibration points N_b in the bin.
    n_bins, alpha, upper, lower
        As in :func:`thm7_halfwidth`.
    m_b : float or array_like, optional
        ``P(X in X_b) / P_target(X in X_b)`` if known; otherwise its bound 1/L.

    Returns
    -------
    float or ndarray
        The radius; ``inf`` where ``N_b <= 2 U^2 m_b^2 ln(6B/alpha)`` (Step 3 of the proof
        needs the weight-mean error below ``r_b / 2 = 1 / (2 m_b)``).

    Notes
    -----
    Not a claim of the paper: the explicit instantiation of Steps 2-4 of the proof of
    Theorem 7 (App. D.1), with the Step 4 Hoeffding scale ``m_b U``.
    Hypotheses: known w with L <= w <= U; any fixed partition (no uniform-mass argument is
    needed; the statement is conditional on the N_b).
    Quantifier: with probability >= 1 - 2 alpha / 3, simultaneously for all b,
    ``|pi_check_b^(w) - E_target[Y | X in X_b]| <=`` the radius.
    """
    counts = as_counts(n_bin)
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    a = as_open_unit(alpha, "alpha")
    u, lo = _ratio_bounds(upper, lower)
    m = 1.0 / lo if m_b is None else as_positive(m_b, "m_b")
    log_term = np.log(6.0 * b / a)
    radius = (2.0 * u**2 * m**2 + u * m) * np.sqrt(per_count(log_term / 2.0, counts))
    applies = counts > 2.0 * u**2 * m**2 * log_term
    return scalar_or_array(np.where(applies, radius, np.inf))


def thm10_halfwidth(n_bin, variance, m_b, upper, n_bins, alpha):
    r"""Covariate-shift half-width with oracle m_b, Theorem 10 (empirical Bernstein).

    .. math:: \sqrt{\frac{2 \hat V^{(w)}_b \ln(3B/\alpha)}{N_b}}
              + \frac{3 m_b U \ln(3B/\alpha)}{N_b}

    Parameters
    ----------
    n_bin : int or array_like
        Source points N_b in the bin (``inf`` for N_b = 0).
    variance : float or array_like
        ``V^(w)_b``, the biased sample variance of ``m_b w(X_i) Y_i`` in the bin.
    m_b : float or array_like
        Oracle ``P(X in X_b) / P_target(X in X_b)``.
    upper : float
        ``U = sup_x w(x)`` (no lower bound needed).
    n_bins, alpha
        Number of bins and miscoverage.

    Notes
    -----
    Paper: gpr20, Theorem 10 (App. D.2), estimator (40).
    Hypotheses: covariate shift; w known and bounded by U; m_b known; fixed partition.
    Quantifier: conditional on memberships, with probability >= 1 - alpha, for all b,
    ``|pi^_b^(w) - E_target[Y | X in X_b]| <=`` the half-width.
    """
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    a = as_open_unit(alpha, "alpha")
    scale = as_positive(m_b, "m_b") * as_positive(upper, "upper")
    return empirical_bernstein_halfwidth(n_bin, variance, a / b, scale)


def prop3_target_bin_mean(source_mass, target_mass, source_weighted_mean):
    r"""Target bin mean from source quantities, Proposition 3 (identity).

    .. math:: E_{\tilde P}[Y | X \in X_b] = m_b\, E_P[w(X) Y | X \in X_b],
              \quad m_b = P(X \in X_b) / \tilde P(X \in X_b)

    Parameters
    ----------
    source_mass, target_mass : float or array_like
        ``P(X in X_b)`` and ``P_target(X in X_b) > 0``.
    source_weighted_mean : float or array_like
        ``E_P[w(X) Y | X in X_b]``.

    Notes
    -----
    Paper: gpr20, Proposition 3 (App. D.2); companion identity (41):
    ``E_P[w(X) | X in X_b] = 1 / m_b``. Hypothesis: covariate shift. Exact (no probability).
    """
    p = as_nonnegative(source_mass, "source_mass")
    q = as_positive(target_mass, "target_mass")
    return scalar_or_array(p / q * as_nonnegative(source_weighted_mean, "source_weighted_mean"))


guard_public(globals())  # broadcasting errors name the arguments


# ---------------------------------------------------------------------- registry
_FIXED = "fixed partition, independent of the calibration data"
_NB1 = "N_b >= 1 for every bin"
_SHIFT = "covariate shift: target = P~_X x P_{Y|X}, w = dP~_X/dP_X known"


#: The guarantees of this module, indexed by :mod:`bounds.registry`.
GUARANTEES = (
    Guarantee(
        "gpr20.thm7",
        thm7_halfwidth,
        "gpr20",
        "Theorem 7 (c unspecified; checked at c = 1)",
        "weighted binning: w.p. >= 1-alpha, |pi_check_b - E~[Y|X_b]| <= c (U/L)^2 "
        "sqrt(B ln(6B/alpha)/(2n)) for all b",
        (
            _SHIFT,
            "0 < L <= w <= U",
            "uniform-mass bins on the source",
            "n >= c (U/L)^2 B ln^2(6B/alpha)",
        ),
        "conditional",
    ),
    Guarantee(
        "gpr20.thm7.explicit",
        thm7_explicit_halfwidth,
        "gpr20",
        "Theorem 7 with explicit constants derived from App. D.1",
        "weighted binning: w.p. >= 1-2alpha/3, |pi_check_b - E~[Y|X_b]| <= (2U^2 m_b^2 + U m_b) "
        "sqrt(ln(6B/alpha)/(2N_b)) for all b",
        (_SHIFT, "0 < L <= w <= U", _FIXED, "N_b > 2 U^2 m_b^2 ln(6B/alpha)"),
        "conditional",
        variant_of="gpr20.thm7",
    ),
    Guarantee(
        "gpr20.thm10",
        thm10_halfwidth,
        "gpr20",
        "Theorem 10 (App. D.2), estimator (40)",
        "oracle m_b: w.p. >= 1-alpha, |pi^_b^(w) - E~[Y|X_b]| <= EB half-width with scale m_b U",
        (_SHIFT, "w <= U", "m_b known", _FIXED, _NB1),
        "conditional",
    ),
    Guarantee(
        "gpr20.prop3",
        prop3_target_bin_mean,
        "gpr20",
        "Proposition 3 (App. D.2)",
        "E~[Y | X in X_b] = m_b E[w(X) Y | X in X_b], m_b = P(X_b)/P~(X_b)",
        (_SHIFT, "P~(X in X_b) > 0"),
        "identity",
    ),
)
