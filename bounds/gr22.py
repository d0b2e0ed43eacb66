"""Guarantees of Gupta & Ramdas (2022), top-label calibration and M2B reductions.

Symbols: ``n`` calibration points, ``points_per_bin`` (the paper's k, or k_l for
class-wise binning), miscoverage ``alpha`` (alpha_l per class for Theorem 2) and the
tie-breaking ``delta`` of Algorithms 8-9 (every bound carries ``+ delta``). Logs are natural
(every step is Hoeffding). Values are returned raw, also when vacuous (>= 1).

Theorem 1 (TL-HB, Algorithm 8) and Theorem 2 (CW-HB, Algorithm 9) apply gr21's binary
bounds per class with ``floor(n_l / B_l) >= k`` interior-plus-boundary points per bin; the
proofs' "data-dependent" forms with the realised bin counts are provided too
(``*_data_dependent``), they are what the proofs actually establish and are never larger.

References
----------
.. [1] C. Gupta and A. Ramdas, "Top-label calibration and multiclass-to-binary reductions",
       ICLR 2022.
"""

from __future__ import annotations

import numpy as np

from ._concentration import hoeffding_radius
from ._validation import (
    as_integer_array,
    as_nonempty,
    as_nonnegative,
    as_open_unit,
    as_unit,
    guard_public,
    scalar_or_array,
)
from .gr22_discrete import discrete_top_label_errors
from .guarantee import Guarantee

__all__ = [
    "alg2_calibrated_accuracy",
    "discrete_top_label_errors",
    "thm1_conditional_eps",
    "thm1_conditional_eps_data_dependent",
    "thm1_ece_mean_bound",
    "thm1_marginal_eps",
    "thm2_conditional_eps",
    "thm2_ece_hp_eps",
    "thm2_ece_mean_bound",
    "thm2_marginal_eps",
]


def _k(points_per_bin, name="points_per_bin"):
    return as_integer_array(points_per_bin, name, minimum=2).astype(float)


def thm1_marginal_eps(points_per_bin, alpha, *, delta=0.0):
    r"""Theorem 1 (marginal part): TL-HB is (eps_1, alpha)-marginally top-label calibrated.

    .. math:: \varepsilon_1 = \sqrt{\log(2/\alpha) / (2(k - 1))} + \delta

    Paper: gr22, Theorem 1, eq. (8).

    Hypotheses: Algorithm 8 with k >= 2 points per bin and tie-breaking delta > 0 (the
    project's lexicographic tie-breaking is its delta -> 0 limit); ``n_l >= k`` for every
    predicted class l; calibration data and test point i.i.d.; base model fixed.

    Quantifier: marginal, ``P_{D, X}(|P(Y = c(X) | c(X), h(X)) - h(X)| <= eps_1) >= 1 - alpha``
    for every law. The proof gives it per predicted class too.

    Parameters
    ----------
    points_per_bin : int or array_like of int
        k >= 2.
    alpha : float or array_like
        Miscoverage in (0, 1).
    delta : float, default 0
        Tie-breaking parameter of Algorithm 8, added to the radius.

    Returns
    -------
    float or ndarray

    Notes
    -----
    Loose: Hoeffding on k - 1 points without a union bound. For Bernoulli(1/2) bins with k - 1
    points the exact coverage of eps_1 is 0.981-0.996 (k = 20-100, alpha = 0.1-0.05), and
    calcheck measures 0.996 at alpha = 0.05 on the eta = 1/2 law. Values above 1 (k = 2: 1.22)
    are vacuous and returned raw.
    """
    k = _k(points_per_bin)
    a = as_open_unit(alpha, "alpha")
    d = as_nonnegative(delta, "delta")
    return scalar_or_array(hoeffding_radius(np.log(2.0 / a), k - 1.0) + d)


def thm1_conditional_eps(n, points_per_bin, alpha, *, delta=0.0):
    r"""Theorem 1 (conditional part): TL-HB is (eps_2, alpha)-conditionally calibrated.

    .. math:: \varepsilon_2 = \sqrt{\log(2n/(k\alpha)) / (2(k - 1))} + \delta

    with n the *total* calibration size. Paper: gr22, Theorem 1, eq. (9).
    Equivalently ``P_D(TL-MCE <= eps_2) >= 1 - alpha`` (App. E.3), and since TL-ECE <=
    TL-MCE also ``P_D(TL-ECE <= eps_2) >= 1 - alpha`` (Theorem 1).

    Hypotheses: as :func:`thm1_marginal_eps`; ``n >= k``.

    Quantifier: conditional, over the calibration data only, simultaneously for every
    predicted class l and every output r.

    Notes
    -----
    Hoeffding plus a union bound over at most n/k bins. On the eta = 1/2 law with 200 bins
    of 9-10 points, the TL-MCE reaches about 0.7 of eps_2 at its 95% quantile (coverage 1);
    without the union term (eps_1 in its place) coverage drops to about 0.46.
    """
    n_arr = as_integer_array(n, "n", minimum=1).astype(float)
    k = _k(points_per_bin)
    if np.any(n_arr < k):
        raise ValueError(
            f"n must be >= points_per_bin, got n={n!r}, points_per_bin={points_per_bin!r}"
        )
    a = as_open_unit(alpha, "alpha")
    d = as_nonnegative(delta, "delta")
    return scalar_or_array(hoeffding_radius(np.log(2.0 * n_arr / (k * a)), k - 1.0) + d)


def thm1_conditional_eps_data_dependent(class_counts, bins_per_class, alpha, *, delta=0.0):
    r"""The radius the proof of Theorem 1 (conditional part) establishes.

    .. math:: \varepsilon_2' = \delta + \max_l \sqrt{\log(2B/\alpha) /
              (2(\lfloor n_l / B_l \rfloor - 1))}, \qquad B = \sum_l B_l

    over the predicted classes with ``B_l >= 1`` bins. Catalog G7 ("tighter variant"); it is
    <= eps_2 because B <= n/k and floor(n_l/B_l) >= k. With a fixed B_l per class (the
    variant of App. E.2) it is the guarantee of that variant.

    Parameters
    ----------
    class_counts : array_like of int, shape (..., L)
        n_l, calibration points predicted as class l.
    bins_per_class : array_like of int, shape (..., L)
        B_l (0 for a class without bins: it is skipped).
    alpha : float
    delta : float, default 0

    Returns
    -------
    float or ndarray
        Shape ``(...)``.

    Notes
    -----
    Only as tight as the worst class: the max over classes is attained at the class with
    the fewest points per bin, which is also what the stated eps_2 assumes (floor(n_l/B_l)
    = k); it gains only through B < n/k.
    """
    n_l = as_integer_array(class_counts, "class_counts", minimum=0)
    b_l = as_integer_array(bins_per_class, "bins_per_class", minimum=0)
    if n_l.shape != b_l.shape:
        raise ValueError(
            f"class_counts and bins_per_class differ in shape: {n_l.shape}, {b_l.shape}"
        )
    if np.any(n_l < 2 * b_l):
        raise ValueError(
            f"every class needs n_l >= 2 B_l, got class_counts={class_counts!r}, "
            f"bins_per_class={bins_per_class!r}"
        )
    a, d = as_open_unit(alpha, "alpha"), as_nonnegative(delta, "delta")
    total = b_l.sum(axis=-1).astype(float)
    if np.any(total == 0):
        raise ValueError(f"bins_per_class must hold at least one bin, got {bins_per_class!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.where(b_l > 0, n_l // np.maximum(b_l, 1) - 1, np.inf).astype(float)
    worst = np.min(m, axis=-1)
    return scalar_or_array(hoeffding_radius(np.log(2.0 * total / a), worst) + d)


def thm1_ece_mean_bound(points_per_bin, *, delta=0.0):
    r"""Theorem 1 (in expectation): ``E_D[TL-ECE(c, h)] <= sqrt(1/(2k)) + delta``.

    Paper: gr22, Theorem 1 and the informal result of Sec. 4.
    Hypotheses: as :func:`thm1_marginal_eps`. Quantifier: expectation over the data.

    Notes
    -----
    For Bernoulli(1/2) bins with k - 1 points the exact E|pi^ - pi| is about
    0.40/sqrt(k) against 0.71/sqrt(k) here; nearly tight at k = 2, where each
    bin but the last has one interior point and error exactly 1/2.
    """
    k = _k(points_per_bin)
    d = as_nonnegative(delta, "delta")
    return scalar_or_array(np.sqrt(1.0 / (2.0 * k)) + d)


def thm2_marginal_eps(points_per_bin, alpha, *, delta=0.0):
    r"""Theorem 2 (marginal part): CW-HB is (eps^(1), alpha)-marginally class-wise calibrated.

    .. math:: \varepsilon^{(1)}_l = \sqrt{\log(2/\alpha_l) / (2(k_l - 1))} + \delta

    Paper: gr22, Theorem 2, eq. (11). Hypotheses: Algorithm 9 with
    k_l >= 2 points per bin, ``n >= k_l`` (the printed "n_l >= k_l" is a typo),
    i.i.d. data. Quantifier: marginal, per class l,
    ``P_{D,X}(|P(Y = l | h_l(X)) - h_l(X)| <= eps_l) >= 1 - alpha_l``.
    The arguments broadcast (one entry per class, or a common value).

    Notes
    -----
    As loose as Theorem 1's eps_1; looser still for rare classes, whose bins at low g_l have
    biases near 0 (low variance).
    """
    return thm1_marginal_eps(points_per_bin, alpha, delta=delta)


def thm2_conditional_eps(n, points_per_bin, alpha, *, delta=0.0):
    r"""Theorem 2 (conditional part): CW-HB is (eps^(2), alpha)-conditionally calibrated.

    .. math:: \varepsilon^{(2)}_l = \sqrt{\log(2n/(k_l\alpha_l)) / (2(k_l - 1))} + \delta

    Paper: gr22, Theorem 2, eq. (12). Quantifier: conditional, per class l,
    ``P_D(for all r in Range(h_l): |P(Y = l | h_l(X) = r) - r| <= eps_l) >= 1 - alpha_l``.

    Notes
    -----
    Hoeffding with a union bound over floor(n/k_l) bins of one class; on the shipped laws
    the per-class max error stays below 0.8 of the radius.
    """
    return thm1_conditional_eps(n, points_per_bin, alpha, delta=delta)


def thm2_ece_hp_eps(n, points_per_bin, alpha, n_classes, *, delta=0.0):
    r"""Theorem 2(a): ``P_D(CW-ECE <= max_l eps^(2)_l) >= 1 - sum_l alpha_l``.

    Here with the even split ``alpha_l = alpha / L`` of a total miscoverage alpha and a common
    k: ``eps = sqrt(log(2 n L / (k alpha)) / (2(k - 1))) + delta``.
    Quantifier: conditional (over the data), union bound over classes.

    Notes
    -----
    Very loose: an average (CW-ECE) bounded by a max-type radius with a union bound over
    classes and bins; calcheck measures CW-ECE at about 0.1-0.2 of the radius.
    """
    n_cls = as_integer_array(n_classes, "n_classes", minimum=2).astype(float)
    a = as_open_unit(alpha, "alpha")
    return thm1_conditional_eps(n, points_per_bin, a / n_cls, delta=delta)


def thm2_ece_mean_bound(points_per_bin, *, delta=0.0):
    r"""Theorem 2(b): ``E_D[CW-ECE] <= max_l sqrt(1/(2 k_l)) + delta``.

    Paper: gr22, Theorem 2(b) (the proof's ``B_l/(2 n_l)`` should read ``B_l/(2n)``: each
    class's binning uses all n points). ``points_per_bin`` may hold one k_l per class (last axis).
    Quantifier: expectation over the data.

    Notes
    -----
    Loose by about the factor of Theorem 1's expectation bound, and much looser for rare
    classes. No bound is claimed for the normalised N-HB.
    """
    k = as_nonempty(_k(points_per_bin), "points_per_bin", points_per_bin)
    d = as_nonnegative(delta, "delta")
    kmin = k.min(axis=-1) if k.ndim else k
    return scalar_or_array(np.sqrt(1.0 / (2.0 * kmin)) + d)


def alg2_calibrated_accuracy(base_accuracy):
    """Sec. 3.2: top-label calibration keeps c, so its accuracy is ``g``'s.

    Holds for Algorithms 1, 2 and 8 whatever the binary calibrator, and for the top-K
    labels c^(1..K) of Algorithms 6 and 7 (App. A.1: the M2B wrapper, Algorithm 5, never
    changes its label predictors), so top-K accuracy is kept too; not for the class-wise
    (Algorithm 3/9) or normalised (Algorithm 4) calibrators read through the argmax of
    their vector, which may change. Quantifier: identity (deterministic).

    Parameters
    ----------
    base_accuracy : float or array_like
        Accuracy of the base model g.

    Returns
    -------
    float or ndarray
        The calibrated predictor's accuracy (the same number).

    Notes
    -----
    Exact, not a probability statement; the check runs the user-facing TL-HB and compares
    labels point by point.
    """
    return scalar_or_array(as_unit(base_accuracy, "base_accuracy"))


guard_public(globals())  # broadcasting errors name the arguments


# ---------------------------------------------------------------------- registry
_IID = "calibration data and test point iid"
_TL = (
    "Algorithm 8 (TL-HB), k >= 2 points per bin, delta tie-breaking",
    "n_l >= k for every predicted class l",
    _IID,
    "base model g fixed (independent of D)",
)
_CW = (
    "Algorithm 9 (CW-HB), k_l >= 2 points per bin, delta tie-breaking",
    "n >= k_l (printed n_l >= k_l)",
    _IID,
    "base model g fixed",
)


#: The guarantees of this module, indexed by :mod:`calcheck.bounds.registry`.
GUARANTEES = (
    Guarantee(
        "gr22.thm1.marginal",
        thm1_marginal_eps,
        "gr22",
        "Theorem 1, eq. (8) eps_1",
        "TL-HB: Pr(|P(Y=c(X)|c(X),h(X)) - h(X)| <= sqrt(log(2/alpha)/(2(k-1))) + delta) >= 1-alpha",
        _TL,
        "marginal",
    ),
    Guarantee(
        "gr22.thm1.conditional",
        thm1_conditional_eps,
        "gr22",
        "Theorem 1, eq. (9) eps_2",
        "TL-HB: w.p. >= 1-alpha, TL-MCE <= sqrt(log(2n/(k alpha))/(2(k-1))) + delta",
        _TL,
        "conditional",
    ),
    Guarantee(
        "gr22.thm1.conditional.data_dependent",
        thm1_conditional_eps_data_dependent,
        "gr22",
        "Theorem 1 proof (App. H.2), realised bins",
        "TL-HB (also with a fixed B_l): w.p. >= 1-alpha, TL-MCE <= "
        "delta + max_l sqrt(log(2B/alpha)/(2(floor(n_l/B_l)-1))), B = sum_l B_l",
        _TL,
        "conditional",
        variant_of="gr22.thm1.conditional",
    ),
    Guarantee(
        "gr22.thm1.ece_hp",
        thm1_conditional_eps,
        "gr22",
        "Theorem 1, TL-ECE bound",
        "TL-HB: w.p. >= 1-alpha, TL-ECE <= eps_2",
        _TL,
        "conditional",
    ),
    Guarantee(
        "gr22.thm1.ece_mean",
        thm1_ece_mean_bound,
        "gr22",
        "Theorem 1, E[TL-ECE] bound",
        "TL-HB: E_D[TL-ECE] <= sqrt(1/(2k)) + delta",
        _TL,
        "expectation",
    ),
    Guarantee(
        "gr22.thm2.marginal",
        thm2_marginal_eps,
        "gr22",
        "Theorem 2, eq. (11) eps^(1)",
        "CW-HB: per class l, Pr(|P(Y=l|h_l(X)) - h_l(X)| <= sqrt(log(2/alpha_l)/(2(k_l-1))) "
        "+ delta) >= 1-alpha_l",
        _CW,
        "marginal",
    ),
    Guarantee(
        "gr22.thm2.conditional",
        thm2_conditional_eps,
        "gr22",
        "Theorem 2, eq. (12) eps^(2)",
        "CW-HB: per class l, w.p. >= 1-alpha_l, every output of h_l within "
        "sqrt(log(2n/(k_l alpha_l))/(2(k_l-1))) + delta",
        _CW,
        "conditional",
    ),
    Guarantee(
        "gr22.thm2.ece_hp",
        thm2_ece_hp_eps,
        "gr22",
        "Theorem 2(a)",
        "CW-HB: w.p. >= 1-alpha, CW-ECE <= max_l eps^(2)_l with alpha_l = alpha/L",
        _CW,
        "conditional",
    ),
    Guarantee(
        "gr22.thm2.ece_mean",
        thm2_ece_mean_bound,
        "gr22",
        "Theorem 2(b)",
        "CW-HB: E_D[CW-ECE] <= max_l sqrt(1/(2 k_l)) + delta",
        _CW,
        "expectation",
    ),
    Guarantee(
        "gr22.prop4",
        discrete_top_label_errors,
        "gr22",
        "Proposition 4 (App. H.1), App. E.3",
        "for every predictor and law: conf-ECE <= TL-ECE and conf-MCE <= TL-MCE",
        ("none",),
        "identity",
    ),
    Guarantee(
        "gr22.accuracy",
        alg2_calibrated_accuracy,
        "gr22",
        "Sec. 3.2 (Algorithm 2), App. A.1 (Algorithms 5-7)",
        "top-label calibrators (Algorithms 1, 2, 8) keep c, hence the base model's accuracy; "
        "the top-K calibrators (Algorithms 6, 7) keep c^(1..K)",
        ("any binary calibrator",),
        "identity",
    ),
)
