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
    "g3_weight_mean_radius",
    "g4_oracle_hoeffding_radius",
    "g4_oracle_hoeffding_radius_corrected",
    "prop2_gap_rate",
    "prop2_plugin_gap_bound",
    "prop2_plugin_gap_bound_stated",
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


def g3_weight_mean_radius(n_bin, n_bins, alpha, upper):
    r"""Radius of the bin's mean weight, step 2 of the proof of Theorem 7 (G3, eq. 44).

    .. math:: |r_b - \hat r_b| \le \sqrt{\frac{U^2 \ln(6B/\alpha)}{2 N_b}}, \quad
              r_b = E_P[w(X) | X \in X_b] = 1/m_b, \quad
              \hat r_b = \frac{1}{N_b} \sum_{i: X_i \in X_b} w(X_i)

    Parameters
    ----------
    n_bin : int or array_like
        Source calibration points N_b in the bin (``inf`` is returned for N_b = 0).
    n_bins, alpha
        Number of bins B and miscoverage in (0, 1).
    upper : float
        ``U = sup_x w(x)``.

    Notes
    -----
    Paper: gpr20, App. D.1, proof of Theorem 7, step 2, eq. (44) (the text says "the Y_i's
    ... Bernoulli"; it means the w(X_i), iid in [0, U] given the bin memberships).
    Hypotheses: covariate shift, ``w <= U``; fixed partition; memberships given.
    Quantifier: two-sided Hoeffding at level alpha/(3B) per bin; with probability
    >= 1 - alpha/3, simultaneously for all b.
    """
    return _hoeffding_shift(n_bin, n_bins, alpha, as_positive(upper, "upper"))


def _hoeffding_shift(n_bin, n_bins, alpha, scale):
    counts = as_counts(n_bin)
    b = as_integer_array(n_bins, "n_bins", minimum=1).astype(float)
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(scale * np.sqrt(per_count(np.log(6.0 * b / a) / 2.0, counts)))


def g4_oracle_hoeffding_radius(n_bin, n_bins, alpha, upper):
    r"""Hoeffding radius of the oracle-m_b estimator as printed, step 4 of Theorem 7 (G4).

    .. math:: |\hat\pi^{(w)}_b - E_{\tilde P}[Y | X \in X_b]|
              \le \sqrt{\frac{U^2 \ln(6B/\alpha)}{2 N_b}}

    Parameters
    ----------
    n_bin, n_bins, alpha, upper
        As in :func:`g3_weight_mean_radius` (``inf`` is returned for N_b = 0).

    Notes
    -----
    Paper: gpr20, App. D.1, proof of Theorem 7, step 4 ("replace the empirical Bernstein
    inequality by Hoeffding's" in Theorem 10's proof), estimator (40)
    ``pi^_b^(w) = (1/N_b) sum m_b w(X_i) Y_i``. **As printed the scale is U**, but the
    summands ``m_b w(X_i) Y_i`` lie in ``[0, m_b U]`` (Theorem 10's own proof says so) and
    ``m_b`` can exceed 1: this form fails for bins the target under-weights (calcheck
    shows it exactly, ``tests/papers/test_gpr20_shift_steps.py``). The corrected form is
    :func:`g4_oracle_hoeffding_radius_corrected`; the paper's next inequality,
    ``<= (U/L)^2 sqrt(ln(6B/alpha)/(2N_b))``, holds because ``m_b U <= U/L <= (U/L)^2``.
    Hypotheses: covariate shift, ``L <= w <= U``; m_b known; fixed partition.
    Quantifier: with probability >= 1 - alpha/3, for all b (per bin alpha/(3B)).
    """
    return _hoeffding_shift(n_bin, n_bins, alpha, as_positive(upper, "upper"))


def g4_oracle_hoeffding_radius_corrected(n_bin, n_bins, alpha, upper, m_b):
    r"""G4 with the range of the summands, ``m_b U``: the corrected step 4 of Theorem 7.

    .. math:: |\hat\pi^{(w)}_b - E_{\tilde P}[Y | X \in X_b]|
              \le m_b U \sqrt{\frac{\ln(6B/\alpha)}{2 N_b}}

    Parameters
    ----------
    n_bin, n_bins, alpha, upper
        As in :func:`g3_weight_mean_radius` (``inf`` is returned for N_b = 0).
    m_b : float or array_like
        ``P(X in X_b) / P_target(X in X_b) > 0``.

    Notes
    -----
    Corrects :func:`g4_oracle_hoeffding_radius` (gpr20, App. D.1, step 4): Hoeffding for
    N_b iid summands ``m_b w(X_i) Y_i`` in ``[0, m_b U]`` with mean
    ``E_target[Y | X in X_b]`` (Proposition 3), at level alpha/(3B) per bin. Hypotheses:
    covariate shift, ``w <= U``; fixed partition; memberships given. Quantifier: with
    probability >= 1 - alpha/3, for all b.
    """
    scale = as_positive(m_b, "m_b") * as_positive(upper, "upper")
    return _hoeffding_shift(n_bin, n_bins, alpha, scale)


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


def _sup_error(sup_error, lower):
    d = as_nonnegative(sup_error, "sup_error")
    lo = as_positive(lower, "lower")
    if np.any(lo > 1.0):
        raise ValueError(f"lower must lie in (0, 1], got {lower!r}")
    return d, lo


def prop2_plugin_gap_bound_stated(sup_error, lower, upper, n):
    r"""Bound (3) of the proof of Proposition 2 on the plug-in's distance to the oracle.

    .. math:: |\check\pi^{(w)}_b - \check\pi^{(\hat w_k)}_b| \le \frac{n}{L}\Delta_k
              + \frac{n \Delta_k}{(L - \Delta_k) L} (U + \Delta_k) n,
              \qquad \Delta_k = \sup_x |w(x) - \hat w_k(x)|

    Parameters
    ----------
    sup_error : float or array_like
        ``Delta_k >= 0``.
    lower, upper : float
        ``L <= w <= U`` (eq. 23), ``0 < L <= 1 <= U``.
    n : int or array_like
        Calibration points (the proof bounds every N_b by n).

    Returns
    -------
    float or ndarray
        The bound; ``inf`` where ``Delta_k >= L`` (the proof needs ``Delta_k < L``).

    Notes
    -----
    Paper: gpr20, App. D.3, proof of Proposition 2, step (3). Deterministic: it holds for
    every data set and every bin. Very crude (the factor n^2); :func:`prop2_plugin_gap_bound`
    is a sharp form.
    """
    d, lo = _sup_error(sup_error, lower)
    u, _ = _ratio_bounds(upper, lo)
    n_arr = as_integer_array(n, "n", minimum=1).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = n_arr / lo * d + n_arr * d / ((lo - d) * lo) * (u + d) * n_arr
    return scalar_or_array(np.where(d < lo, value, np.inf))


def prop2_plugin_gap_bound(sup_error, lower):
    r"""Sharp deterministic bound on the plug-in's distance to the oracle (Proposition 2).

    .. math:: |\check\pi^{(\hat w)}_b - \check\pi^{(w)}_b|
              = \frac{|\sum_{i \in b} (\hat w - w)(X_i) (Y_i - \check\pi^{(w)}_b)|}
                     {\sum_{i \in b} \hat w(X_i)}
              \le \frac{\Delta}{L - \Delta}

    Parameters
    ----------
    sup_error : float or array_like
        ``Delta = sup_x |w(x) - w_hat(x)| >= 0``.
    lower : float
        ``L = inf_x w(x)`` in (0, 1].

    Returns
    -------
    float or ndarray
        ``Delta / (L - Delta)``; ``inf`` where ``Delta >= L``.

    Notes
    -----
    Not a claim of the paper: the identity above (exact algebra on estimator (22)) with
    ``|Y - pi| <= 1`` and ``w_hat >= L - Delta`` replaces the proof's step (3)
    (:func:`prop2_plugin_gap_bound_stated`, which has a factor n^2). Hypotheses: labels in
    [0, 1]; ``w >= L``. Deterministic, for every data set and bin. It makes Proposition 2's
    second term Lipschitz in Delta, uniformly in n: the plug-in's error tends to the
    oracle's as ``Delta -> 0`` at rate O(Delta) (:func:`prop2_gap_rate`).
    """
    d, lo = _sup_error(sup_error, lower)
    with np.errstate(divide="ignore", invalid="ignore"):
        return scalar_or_array(np.where(d < lo, d / (lo - d), np.inf))


def prop2_gap_rate(sup_error, *, c):
    r"""Rate of Proposition 2's plug-in term: ``c * Delta`` as ``Delta -> 0``.

    Parameters
    ----------
    sup_error : float or array_like
        ``Delta = sup_x |w(x) - w_hat(x)| >= 0``.
    c : float
        The constant (keyword, required): the paper states only a limit.

    Returns
    -------
    float or ndarray

    Notes
    -----
    Paper: gpr20, Proposition 2 (Sec. 4.4, proof App. D.3): if ``sup|w_hat_k - w| -> 0`` in
    probability, weighted binning with ``w_hat_k`` is distribution-free asymptotically
    calibrated. Its proof splits the plug-in's error into Theorem 7's term and
    ``|pi_check^(w)_b - pi_check^(w_hat_k)_b|``, which its step (3) bounds by O(Delta_k) at
    fixed n. Hypotheses: covariate shift, ``L <= w <= U``; Delta_k < L.
    Quantifier: informal_rate -- the mean of ``max_b |pi_check^(w_hat) - pi_check^(w)|``
    is proportional to Delta (exponent 1 in Delta), checked by a fitted exponent.
    """
    if c is None:
        raise ValueError("c must be given: the paper leaves its constant unspecified")
    return scalar_or_array(as_positive(c, "c") * as_nonnegative(sup_error, "sup_error"))


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
        "gpr20.prop2",
        prop2_gap_rate,
        "gpr20",
        "Proposition 2 (App. D.3, step (3)): rate of the plug-in term",
        "weighted binning with w_hat: max_b |pi_check^(w_hat)_b - pi_check^(w)_b| = O(Delta), "
        "Delta = sup|w_hat - w|, so the plug-in's error tends to the oracle's as Delta -> 0",
        (_SHIFT, "0 < L <= w <= U", "Delta = sup|w_hat - w| < L"),
        "informal_rate",
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
