"""Lemma 1 and the two-bin heuristic (A4) of Gupta & Ramdas (2021).

Lemma 1 is distributional (not a bound): given the order statistics ``S_(l)`` and
``S_(u)``, the ``k = u - l - 1`` unordered points in between are iid from the score law
truncated to ``(S_(l), S_(u))``. Their probability integral transforms by the truncated
CDF are then iid Unif(0, 1), and calcheck tests that with the exact Kolmogorov-Smirnov
law: :func:`lemma1_ks_critical_value` is the level-alpha critical value of the one-sample
two-sided KS statistic ``D_k``, so that ``P(D_k <= c) = 1 - alpha`` *exactly* when the
lemma holds (the law of ``D_k`` is continuous).

A4 is the two-bin special case of Theorem 3 that §3 motivates it with: ``n = 2m + 1``
points, the empirical median ``M = S_(m+1)`` as the only edge, its label dropped.

References
----------
.. [1] C. Gupta and A. Ramdas, "Distribution-free calibration guarantees for histogram binning
       without sample splitting", ICML 2021, §3 and Lemma 1 (App. A.2, eqs. 12 and 15).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import kstwo

from ._concentration import hoeffding_radius
from ._validation import as_integer_array, as_open_unit, guard_public, scalar_or_array
from .guarantee import Guarantee

__all__ = ["a4_two_bin_eps", "lemma1_ks_critical_value", "lemma1_pairs_ks_critical_value"]


def lemma1_ks_critical_value(k, alpha):
    r"""Level-alpha critical value of the KS statistic of Lemma 1's transformed points.

    .. math:: c_k(\alpha) = \inf\{c : P(D_k > c) \le \alpha\}, \quad
              D_k = \sup_t |\hat F_k(t) - t|,\ \
              U_i = \frac{F(S_i) - F(S_{(l)})}{F(S_{(u)}) - F(S_{(l)})}

    Parameters
    ----------
    k : int or array_like of int
        Number ``u - l - 1 >= 1`` of points strictly between the two order statistics.
    alpha : float or array_like
        Level in (0, 1).

    Returns
    -------
    c : float or ndarray
        Critical value in (0, 1]: the exact ``(1 - alpha)``-quantile of ``D_k`` under
        iid Unif(0, 1) points (:data:`scipy.stats.kstwo`).

    Notes
    -----
    Paper: Gupta & Ramdas (2021), Lemma 1 (§3.1, proof in App. A.2; eq. (15) for two
    conditioning order statistics, eq. (12) for one, with ``S_(n+1) := 1``).
    Hypotheses: ``S_1, ..., S_n`` iid from a law with a density (no ties); with atoms, the
    lexicographic order on ``(S, U)`` with an independent uniform U restores it (App. C.1).
    Quantifier: distributional, conditional on ``S_(l), S_(u)``: the unordered in-between
    points are iid from the law truncated to ``(S_(l), S_(u))``. Consequence checked:
    ``P(D_k <= c_k(alpha)) = 1 - alpha`` exactly, for every k and every such law; the same
    holds for the KS statistic of ``floor(k/2)`` pair transforms
    ``(1 - |U_{2j-1} - U_{2j}|)^2`` (iid Unif(0, 1) iff consecutive unordered points are
    independent uniforms), the independence half of the lemma.
    """
    return _ks_critical_value(as_integer_array(k, "k", minimum=1), alpha)


def _ks_critical_value(kk, alpha):
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(np.asarray(kstwo.isf(a, kk), dtype=float))


def lemma1_pairs_ks_critical_value(k_pairs, alpha):
    r"""Level-alpha KS critical value for the pair transforms of Lemma 1 (independence).

    .. math:: V_j = (1 - |U_{2j-1} - U_{2j}|)^2, \quad j = 1, \dots, \lfloor k/2 \rfloor

    Parameters
    ----------
    k_pairs : int or array_like of int
        Number ``floor(k/2) >= 1`` of disjoint pairs of consecutive unordered points.
    alpha : float or array_like
        Level in (0, 1).

    Returns
    -------
    c : float or ndarray
        The exact ``(1 - alpha)``-quantile of the KS statistic of ``k_pairs`` iid
        Unif(0, 1) points.

    Notes
    -----
    Paper: Gupta & Ramdas (2021), Lemma 1 (App. A.2, eqs. 12, 15): the in-between points
    are *independent* draws. If ``U, U'`` are independent Unif(0, 1), ``|U - U'|`` has
    the triangular density ``2(1 - t)``, so ``(1 - |U - U'|)^2`` is Unif(0, 1); the pairs
    are disjoint, so the ``V_j`` are iid Unif(0, 1) under the lemma. Positively dependent
    (clustered) points push the ``V_j`` towards 1, negatively dependent ones towards 0.
    Hypotheses and quantifier as :func:`lemma1_ks_critical_value`.
    """
    return _ks_critical_value(as_integer_array(k_pairs, "k_pairs", minimum=1), alpha)


def a4_two_bin_eps(n, alpha):
    r"""Radius of the two-bin (median split) heuristic of §3 (A4), ``n = 2m + 1``.

    .. math:: \varepsilon = \sqrt{\frac{\log(4/\alpha)}{2m}}, \qquad m = (n - 1)/2

    Parameters
    ----------
    n : int or array_like of int
        Odd number of calibration points ``n = 2m + 1 >= 3``.
    alpha : float or array_like
        Miscoverage in (0, 1).

    Returns
    -------
    eps : float or ndarray
        Raw radius, possibly >= 1 (vacuous).

    Notes
    -----
    Paper: Gupta & Ramdas (2021), §3 (the motivating two-bin example, eq. (7) modified):
    ``M = S_(m+1)``, ``hatPi_1`` the mean of the m labels below M, ``hatPi_2`` of the m above
    (the paper's sum ``i = m+1..2m+1`` has m + 1 terms; its text drops the median, i.e.
    ``i = m+2..2m+1``, catalog §9.7). Per bin, conditionally on M,
    ``Pr(|E[Y | M, S < M] - hatPi_1| >= eps | M) <= 2 exp(-2 m eps^2)``, the same above M;
    the union bound over the two bins gives the radius above. It is Algorithm 1 with B = 2
    and odd n (``A_1 = m + 1``; every bin has exactly m points, where Theorem 3's eq. (8)
    only counts ``floor(n/2) - 1 = m - 1``).
    Hypotheses: iid; ``g(X)`` absolutely continuous (or ties broken on an independent
    uniform). Quantifier: conditional -- with probability >= 1 - alpha over the data, both
    bins within eps at once.
    """
    n_arr = as_integer_array(n, "n", minimum=3)
    if np.any(n_arr % 2 == 0):
        raise ValueError(f"n must be odd (n = 2m + 1, the paper's two-bin example), got {n!r}")
    a = as_open_unit(alpha, "alpha")
    return scalar_or_array(hoeffding_radius(np.log(4.0 / a), (n_arr - 1) / 2.0))


guard_public(globals())  # broadcasting errors name the arguments


#: The guarantees of this module, indexed by :mod:`calcheck.bounds.registry`.
GUARANTEES = (
    Guarantee(
        "gr21.lem1",
        lemma1_ks_critical_value,
        "gr21",
        "Lemma 1, eqs. (12), (15) (App. A.2)",
        "given S_(l), S_(u), the unordered in-between points are iid from the law truncated "
        "to (S_(l), S_(u)): their truncated-CDF transforms pass the exact level-alpha KS test "
        "w.p. exactly 1-alpha",
        (
            "S_1..S_n iid",
            "score law with a density, or ties broken on an independent uniform (App. C.1)",
        ),
        "conditional",
    ),
    Guarantee(
        "gr21.lem1.independence",
        lemma1_pairs_ks_critical_value,
        "gr21",
        "Lemma 1, eqs. (12), (15): independence of the in-between points",
        "given S_(l), S_(u), consecutive unordered in-between points are independent "
        "uniforms after the transform: their pair transforms pass the exact level-alpha KS "
        "test w.p. exactly 1-alpha",
        (
            "S_1..S_n iid",
            "score law with a density, or ties broken on an independent uniform (App. C.1)",
        ),
        "conditional",
        variant_of="gr21.lem1",
    ),
    Guarantee(
        "gr21.a4",
        a4_two_bin_eps,
        "gr21",
        "A4: the two-bin heuristic of §3 (median split, eq. (7) without the median's label)",
        "n = 2m+1, bins below/above the empirical median: w.p. >= 1-alpha both bins within "
        "sqrt(log(4/alpha)/(2m))",
        (
            "calibration data iid",
            "g(X) absolutely continuous (or ties broken on an independent uniform)",
            "n = 2m + 1 odd",
        ),
        "conditional",
    ),
)
