r"""Proof steps of the covariate-shift results of Gupta, Podkopaev & Ramdas (2020), App. D.

The concentration steps G3 (step 2 of Theorem 7's proof, eq. 44) and G4 (step 4) on their
own, G4 as printed (scale U) and corrected (scale ``m_b U``), and Proposition 2's plug-in
term (the proof's step (3), a sharp form and its rate in ``Delta = sup |w_hat - w|``).

References
----------
Gupta, C., Podkopaev, A. and Ramdas, A. (2020). Distribution-free binary classification:
prediction sets, confidence intervals and calibration. NeurIPS. App. D.1 (proof of
Theorem 7) and D.3 (proof of Proposition 2).
"""

from __future__ import annotations

import numpy as np

from ._concentration import per_count
from ._validation import (
    as_counts,
    as_integer_array,
    as_nonnegative,
    as_open_unit,
    as_positive,
    guard_public,
    scalar_or_array,
)
from .gpr20_shift import _ratio_bounds
from .guarantee import Guarantee

__all__ = [
    "g3_weight_mean_radius",
    "g4_oracle_hoeffding_radius",
    "g4_oracle_hoeffding_radius_corrected",
    "prop2_gap_rate",
    "prop2_plugin_gap_bound",
    "prop2_plugin_gap_bound_stated",
]


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


guard_public(globals())  # broadcasting errors name the arguments


# ---------------------------------------------------------------------- registry
_SHIFT = "covariate shift: target = P~_X x P_{Y|X}, w = dP~_X/dP_X known"
_GIVEN = "fixed partition; bin memberships given"

#: The guarantees of this module, indexed by :mod:`calcheck.bounds.registry`.
GUARANTEES = (
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
        "gpr20.g3",
        g3_weight_mean_radius,
        "gpr20",
        "G3: proof of Theorem 7, step 2, eq. (44) (App. D.1)",
        "w.p. >= 1-alpha/3, |r_b - r^_b| <= sqrt(U^2 ln(6B/alpha)/(2N_b)) for all b, "
        "r_b = E[w(X) | X_b] = 1/m_b, r^_b the bin's mean weight",
        (_SHIFT, "w <= U", _GIVEN),
        "conditional",
    ),
    Guarantee(
        "gpr20.g4",
        g4_oracle_hoeffding_radius,
        "gpr20",
        "G4: proof of Theorem 7, step 4 (App. D.1), as printed (scale U)",
        "oracle m_b: w.p. >= 1-alpha/3, |pi^_b^(w) - E~[Y|X_b]| <= sqrt(U^2 ln(6B/alpha)/(2N_b)) "
        "for all b",
        (_SHIFT, "L <= w <= U", "m_b known", _GIVEN),
        "conditional",
    ),
    Guarantee(
        "gpr20.g4.corrected",
        g4_oracle_hoeffding_radius_corrected,
        "gpr20",
        "G4 with the summands' range m_b U (App. D.1 step 4, corrected)",
        "oracle m_b: w.p. >= 1-alpha/3, |pi^_b^(w) - E~[Y|X_b]| <= m_b U sqrt(ln(6B/alpha)/(2N_b)) "
        "for all b",
        (_SHIFT, "w <= U", "m_b known", _GIVEN),
        "conditional",
        variant_of="gpr20.g4",
    ),
)
