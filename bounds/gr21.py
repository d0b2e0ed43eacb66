"""Guarantees of Gupta & Ramdas (2021), histogram binning without sample splitting.

Every function is a pure, vectorised function of the paper's symbols: ``n`` calibration
points, ``n_bins`` (the paper's B) bins, miscoverage ``alpha`` and Algorithm 2's
randomisation parameter ``delta``. Arguments broadcast against each other. Logs are
natural (Hoeffding). Values are returned raw, also when vacuous (>= 1): see
:func:`calcheck.bounds.inverse.is_informative`.

Notation: ``m = floor(n / B) - 1`` is the paper's lower bound on the number of
calibration points averaged in each bin of Algorithm 1.

References
----------
.. [1] C. Gupta and A. Ramdas, "Distribution-free calibration guarantees for histogram binning
       without sample splitting", ICML 2021.
"""

from __future__ import annotations

import numpy as np

from ._concentration import hoeffding_radius
from ._validation import (
    as_integer_array,
    as_nonnegative,
    as_open_unit,
    check_n_bins_vs_n,
    guard_public,
    scalar_or_array,
)
from .gr21_ums import UMSSampleSize, ums_required_n
from .guarantee import Guarantee

__all__ = [
    "UMSSampleSize",
    "a9_squared_ece_mean_bound",
    "cor1_conditional_eps",
    "single_bin_hoeffding_eps",
    "thm3_conditional_eps",
    "thm4_conditional_eps",
    "thm4_ece_mean_bound",
    "thm4_ece_mean_bound_proof_valid",
    "thm4_marginal_eps",
    "thm4_validity_curve",
    "ums_required_n",
    "zadrozny_elkan_shift_bound",
]


def _min_interior_points(n, n_bins):
    """Validate (n, n_bins) and return ``m = floor(n/B) - 1`` as a float array."""
    n_arr = as_integer_array(n, "n", minimum=1)
    b_arr = as_integer_array(n_bins, "n_bins", minimum=1)
    check_n_bins_vs_n(n_arr, b_arr, n, n_bins)
    return (n_arr // b_arr - 1).astype(float), b_arr.astype(float)


def thm3_conditional_eps(n, n_bins, alpha):
    r"""Conditional-calibration radius of UMD (Algorithm 1), Theorem 3, eq. (8).

    .. math:: \varepsilon = \sqrt{\frac{\log(2B/\alpha)}{2(\lfloor n/B\rfloor - 1)}}

    Parameters
    ----------
    n : int or array_like of int
        Number of calibration points, ``n >= 2 * n_bins``.
    n_bins : int or array_like of int
        Number of bins B >= 1.
    alpha : float or array_like
        Miscoverage in (0, 1).

    Returns
    -------
    eps : float or ndarray
        Radius; raw value, possibly >= 1 (vacuous).

    Notes
    -----
    Paper: Gupta & Ramdas (2021), Theorem 3, eq. (8).
    Hypotheses: iid calibration data; ``g(X)`` absolutely continuous (no ties; lexicographic
    tie-breaking on an independent uniform restores it, App. C.1); ``n >= 2B``.
    Quantifier: conditional -- with probability >= 1 - alpha over the calibration data,
    ``|E[Y | h(X) = r] - r| <= eps`` simultaneously for all ``r`` in Range(h), and hence
    ``lp-ECE(h) <= eps`` for all p (Proposition 1).
    Proof: Hoeffding in each bin at level alpha/B given the boundary order statistics
    (Lemma 2), union bound over bins.
    """
    m, b = _min_interior_points(n, n_bins)
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(hoeffding_radius(np.log(2.0 * b / a), m))


def zadrozny_elkan_shift_bound(n, n_bins):
    r"""Largest shift of a bin mean caused by the boundary point, fact (9): ``1/floor(n/B)``.

    Notes
    -----
    Paper: Gupta & Ramdas (2021), eq. (9) in the proof of Corollary 1. Deterministic: adding
    one value in [0, 1] to a mean of at least ``floor(n/B) - 1`` values in [0, 1] moves it
    by at most ``1/floor(n/B)``.
    """
    m, _ = _min_interior_points(n, n_bins)
    return scalar_or_array(1.0 / (m + 1.0))


def cor1_conditional_eps(n, n_bins, alpha):
    r"""Conditional-calibration radius of the original Zadrozny-Elkan UMD, Corollary 1, eq. (10).

    .. math:: \varepsilon = \sqrt{\frac{\log(2B/\alpha)}{2(\lfloor n/B\rfloor - 1)}}
              + \frac{1}{\lfloor n/B\rfloor}

    Parameters
    ----------
    n, n_bins, alpha
        As in :func:`thm3_conditional_eps`.

    Returns
    -------
    eps : float or ndarray

    Notes
    -----
    Paper: Gupta & Ramdas (2021), Corollary 1, eq. (10).
    Hypotheses: as Theorem 3 (iid, absolutely continuous ``g(X)``, ``n >= 2B``); the
    calibrator averages the upper boundary point into each of the first B - 1 bins.
    Quantifier: conditional (probability over the calibration data only).
    """
    m, b = _min_interior_points(n, n_bins)
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(hoeffding_radius(np.log(2.0 * b / a), m) + 1.0 / (m + 1.0))


def thm4_marginal_eps(n, n_bins, alpha, *, delta=0.0):
    r"""Marginal-calibration radius eps1 of randomized UMD (Algorithm 2), Theorem 4, eq. (11).

    .. math:: \varepsilon_1 = \sqrt{\frac{\log(2/\alpha)}{2(\lfloor n/B\rfloor - 1)}} + \delta

    Parameters
    ----------
    n, n_bins, alpha
        As in :func:`thm3_conditional_eps`.
    delta : float, default 0
        Randomisation parameter of Algorithm 2. The default 0 is the delta -> 0 limit that
        lexicographic tie-breaking on ``(score, U)`` implements.

    Returns
    -------
    eps1 : float or ndarray

    Notes
    -----
    Paper: Gupta & Ramdas (2021), Theorem 4, eq. (11), first line.
    Hypotheses: iid; ``n >= 2B``; no continuity assumption (scores are tie-broken and the
    bin values are a.s. distinct).
    Quantifier: marginal -- ``Pr(|E[Y | h(X)] - h(X)| <= eps1) >= 1 - alpha`` with the
    probability over the calibration data, the test point and the internal randomisation.
    No union bound over bins: the per-bin Hoeffding failure probability alpha is averaged
    over the bin the test point falls in.
    """
    m, _ = _min_interior_points(n, n_bins)
    a = as_open_unit(alpha, "alpha")
    d = as_nonnegative(delta, "delta")
    return scalar_or_array(hoeffding_radius(np.log(2.0 / a), m) + d)


def thm4_conditional_eps(n, n_bins, alpha, *, delta=0.0):
    r"""Conditional radius eps2 of randomized UMD, Theorem 4, eq. (11), second line.

    .. math:: \varepsilon_2 = \sqrt{\frac{\log(2B/\alpha)}{2(\lfloor n/B\rfloor - 1)}} + \delta

    The same value bounds every lp-ECE with probability >= 1 - alpha (Theorem 4(a)).

    Parameters
    ----------
    n, n_bins, alpha, delta
        As in :func:`thm4_marginal_eps`.

    Returns
    -------
    eps2 : float or ndarray

    Notes
    -----
    Paper: Gupta & Ramdas (2021), Theorem 4, eq. (11) and part (a).
    Hypotheses: iid; ``n >= 2B``; no continuity assumption.
    Quantifier: conditional -- probability over the calibration data (and the randomisation)
    that all bins are within eps2 at once; part (a): that ``lp-ECE(h) <= eps2`` for all p.
    """
    m, b = _min_interior_points(n, n_bins)
    a = as_open_unit(alpha, "alpha")
    d = as_nonnegative(delta, "delta")
    return scalar_or_array(hoeffding_radius(np.log(2.0 * b / a), m) + d)


def thm4_ece_mean_bound(n, n_bins, *, delta=0.0):
    r"""Bound on the expected lp-ECE of randomized UMD as stated, Theorem 4(b).

    .. math:: \mathbb{E}_{D_n}[\ell_p\text{-ECE}(h)] \le \sqrt{B/(2n)} + \delta,
              \quad p \in [1, 2]

    Parameters
    ----------
    n, n_bins
        As in :func:`thm3_conditional_eps`.
    delta : float, default 0
        Randomisation parameter of Algorithm 2.

    Returns
    -------
    bound : float or ndarray

    Notes
    -----
    Paper: Gupta & Ramdas (2021), Theorem 4(b).
    Hypotheses: iid; ``n >= 2B``.
    Quantifier: expectation over the calibration data and the randomisation.
    Proof gap: the proof uses ``floor(n/B) - 1 >= n/(2B)``, false for
    ``2B < n < 3B``. There the proof only establishes
    :func:`thm4_ece_mean_bound_proof_valid`. Simulations suggest the stated bound still
    holds; this function returns the stated form.
    """
    n_arr = as_integer_array(n, "n", minimum=1)
    b_arr = as_integer_array(n_bins, "n_bins", minimum=1)
    check_n_bins_vs_n(n_arr, b_arr, n, n_bins)
    d = as_nonnegative(delta, "delta")
    return scalar_or_array(np.sqrt(b_arr / (2.0 * n_arr)) + d)


def thm4_ece_mean_bound_proof_valid(n, n_bins, *, delta=0.0):
    r"""Bound on the expected lp-ECE that the proof of Theorem 4(b) actually establishes.

    .. math:: \mathbb{E}[\ell_p\text{-ECE}(h)] \le \frac{1}{2\sqrt{\lfloor n/B\rfloor - 1}}
              + \delta

    Parameters
    ----------
    n, n_bins, delta
        As in :func:`thm4_ece_mean_bound`.

    Returns
    -------
    bound : float or ndarray

    Notes
    -----
    Corrects two steps of the proof of Theorem 4(b):

    * it stops before ``1/(4(floor(n/B) - 1)) <= B/(2n)``, which fails for ``2B < n < 3B``;
    * it replaces ``E(Pi_b - hatPi_b)^2 <= Var(hatPi'_b) + delta^2`` (which drops a positive
      cross term) by Minkowski's ``(sqrt(Var) + delta)^2``.

    With ``Var(hatPi'_b) <= 1/(4 m)`` (eq. 19), Jensen gives the bound above for every
    ``n >= 2B``. It is smaller than the stated bound for ``n = 2B`` and ``n >= 3B``.
    Quantifier: expectation over the calibration data; p in [1, 2].
    """
    m, _ = _min_interior_points(n, n_bins)
    d = as_nonnegative(delta, "delta")
    return scalar_or_array(0.5 / np.sqrt(m) + d)


def a9_squared_ece_mean_bound(n, n_bins, *, delta=0.0):
    r"""Bound on the expected squared l2-ECE of randomized UMD (A9, step of Theorem 4(b)).

    .. math:: \mathbb{E}_{D_n}[(\ell_2\text{-ECE}(h))^2]
              \le \frac{1}{4(\lfloor n/B\rfloor - 1)} + \delta^2

    Parameters
    ----------
    n, n_bins
        As in :func:`thm3_conditional_eps`.
    delta : float, default 0
        Randomisation parameter of Algorithm 2.

    Returns
    -------
    bound : float or ndarray

    Notes
    -----
    Paper: Gupta & Ramdas (2021), proof of Theorem 4(b): eq. (19),
    ``Var(hatPi'_b) <= Pi_b (1 - Pi_b) / (floor(n/B) - 1) <= 1 / (4 (floor(n/B) - 1))``,
    summed over the bins with their masses. Hypotheses: iid; ``n >= 2B``. Quantifier:
    expectation over the calibration data. At eta = 1/2 and ``n < 3B`` (one interior point
    per bin) the bound is attained exactly. calcheck checks it in the delta -> 0 limit, where
    :func:`thm4_ece_mean_bound_proof_valid`'s remark on the dropped cross term does not arise.
    """
    m, _ = _min_interior_points(n, n_bins)
    d = as_nonnegative(delta, "delta")
    return scalar_or_array(0.25 / m + d * d)


def single_bin_hoeffding_eps(n, alpha):
    r"""Hoeffding radius of the one-bin (constant) predictor, §3 example.

    .. math:: \varepsilon = \sqrt{\log(2/\alpha)/(2n)}

    Notes
    -----
    Paper: Gupta & Ramdas (2021), §3 (B = 1): ``h = mean(Y_i)`` is (eps, alpha)-marginally
    (and conditionally) calibrated; n = 150, alpha = 0.1 gives about 0.1.
    Hypotheses: iid labels in [0, 1]. Quantifier: conditional (probability over the data).
    """
    n_arr = as_integer_array(n, "n", minimum=1)
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(hoeffding_radius(np.log(2.0 / a), n_arr))


def thm4_validity_curve(eps, n, n_bins, *, delta=0.0, conditional=False):
    r"""Theory curve of Theorem 4 in the validity plots of Figures 3-5 (reconstructed).

    .. math:: V_{th}(\varepsilon) = \max\bigl(0,\ 1 - 2K\exp(-2(\lfloor n/B\rfloor-1)
              (\varepsilon-\delta)^2)\bigr)

    with K = 1 (marginal) or K = B (conditional), and 0 for ``eps <= delta``.

    Notes
    -----
    **[RECON]** The paper plots a "Theorem 4" curve without its formula; this is eq. (11)
    solved for alpha. It is a lower bound on the validity function V(eps).
    """
    m, b = _min_interior_points(n, n_bins)
    e = np.asarray(eps, dtype=float)
    if np.any(~np.isfinite(e)) or np.any(e < 0):
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    d = as_nonnegative(delta, "delta")
    if not isinstance(conditional, bool | np.bool_):
        raise TypeError(f"conditional must be True or False, got {conditional!r}")
    k = b if conditional else 1.0
    gap = np.maximum(e - d, 0.0)
    curve = np.maximum(0.0, 1.0 - 2.0 * k * np.exp(-2.0 * m * gap**2))
    return scalar_or_array(np.where(e > d, curve, 0.0))


guard_public(globals())  # broadcasting errors name the arguments


# ---------------------------------------------------------------------- registry
_IID = "calibration data and test point iid"
_N2B = "n >= 2B"
_CONT = "g(X) absolutely continuous (or ties broken on an independent uniform)"


#: The guarantees of this module, indexed by :mod:`calcheck.bounds.registry`.
GUARANTEES = (
    Guarantee(
        "gr21.thm3",
        thm3_conditional_eps,
        "gr21",
        "Theorem 3, eq. (8)",
        "UMD (Algorithm 1): w.p. >= 1-alpha, |E[Y|h(X)=r]-r| <= eps for all r in Range(h)",
        (_IID, _CONT, _N2B),
        "conditional",
    ),
    Guarantee(
        "gr21.cor1",
        cor1_conditional_eps,
        "gr21",
        "Corollary 1, eq. (10)",
        "original Zadrozny-Elkan UMD: w.p. >= 1-alpha, all bins within eps",
        (_IID, _CONT, _N2B),
        "conditional",
    ),
    Guarantee(
        "gr21.thm4.marginal",
        thm4_marginal_eps,
        "gr21",
        "Theorem 4, eq. (11) eps1",
        "randomized UMD (Algorithm 2): Pr(|E[Y|h(X)]-h(X)| <= eps1) >= 1-alpha",
        (_IID, _N2B, "bin values a.s. distinct (Algorithm 2 lines 14-15)"),
        "marginal",
    ),
    Guarantee(
        "gr21.thm4.conditional",
        thm4_conditional_eps,
        "gr21",
        "Theorem 4, eq. (11) eps2",
        "randomized UMD: w.p. >= 1-alpha, all bins within eps2",
        (_IID, _N2B),
        "conditional",
    ),
    Guarantee(
        "gr21.thm4.ece_hp",
        thm4_conditional_eps,
        "gr21",
        "Theorem 4(a)",
        "randomized UMD: w.p. >= 1-alpha, lp-ECE(h) <= eps2 for all p >= 1",
        (_IID, _N2B),
        "conditional",
    ),
    Guarantee(
        "gr21.thm4.ece_mean",
        thm4_ece_mean_bound,
        "gr21",
        "Theorem 4(b)",
        "randomized UMD: E[lp-ECE(h)] <= sqrt(B/2n) + delta for p in [1, 2]",
        (_IID, _N2B),
        "expectation",
    ),
    Guarantee(
        "gr21.a9",
        a9_squared_ece_mean_bound,
        "gr21",
        "A9: Theorem 4(b)'s step, eq. (19)",
        "randomized UMD: E[(l2-ECE(h))^2] <= 1/(4(floor(n/B)-1)) + delta^2",
        (_IID, _N2B),
        "expectation",
    ),
    Guarantee(
        "gr21.thm4.ece_mean.proof_valid",
        thm4_ece_mean_bound_proof_valid,
        "gr21",
        "Theorem 4(b), proof as corrected",
        "randomized UMD: E[lp-ECE(h)] <= 1/(2 sqrt(floor(n/B)-1)) + delta for p in [1, 2]",
        (_IID, _N2B),
        "expectation",
        variant_of="gr21.thm4.ece_mean",
    ),
)
