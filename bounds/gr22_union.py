"""The joint class-wise statements (13)/(14) of Gupta & Ramdas (2022), by a union bound.

Definition 2 asks each h_l to be (eps_l, alpha_l)-calibrated on its own (eqs. 11/12). A union
bound over the L classes gives statements that hold simultaneously for every class, with
``alpha = sum_l alpha_l`` and ``eps = max_l eps_l`` (eqs. 13/14); the paper says a union bound
is "the only way" it can show them, because CW-HB learns the h_l separately. Applied to
Theorem 2 (CW-HB, Algorithm 9) with the even split ``alpha_l = alpha / L`` and a common k:

* (13), marginal: ``eps = sqrt(log(2L/alpha)/(2(k-1))) + delta`` (:func:`eq13_joint_marginal_eps`);
* (14), conditional: ``eps = sqrt(log(2nL/(k alpha))/(2(k-1))) + delta``
  (:func:`eq14_joint_conditional_eps`; the radius Theorem 2(a) uses for the CW-ECE).

With per-class k_l the max over classes is attained at ``min_l k_l``: pass that. Logs are
natural; values are returned raw, also when vacuous (>= 1).

References
----------
.. [1] C. Gupta and A. Ramdas, "Top-label calibration and multiclass-to-binary reductions",
       ICLR 2022, Definition 2, eqs. (13)-(14), Theorem 2.
"""

from __future__ import annotations

from ._validation import as_integer_array, as_open_unit, guard_public
from .gr22 import thm2_conditional_eps, thm2_marginal_eps
from .guarantee import Guarantee

__all__ = ["eq13_joint_marginal_eps", "eq14_joint_conditional_eps"]


def _split(alpha, n_classes):
    """``alpha_l = alpha / L``: the even split of a total miscoverage over L classes."""
    n_cls = as_integer_array(n_classes, "n_classes", minimum=2).astype(float)
    return as_open_unit(alpha, "alpha") / n_cls


def eq13_joint_marginal_eps(points_per_bin, alpha, n_classes, *, delta=0.0):
    r"""Eq. (13) for CW-HB: every class within eps at one fresh test point.

    .. math:: \varepsilon = \max_l \varepsilon^{(1)}_l(\alpha / L)
              = \sqrt{\log(2L/\alpha) / (2(k - 1))} + \delta

    Paper: gr22, Definition 2, eq. (13) ("(11) implies (13)" with ``alpha = sum_l alpha_l``,
    ``eps = max_l eps_l``), applied to Theorem 2, eq. (15) with ``alpha_l = alpha / L``.

    Hypotheses: those of Theorem 2 (Algorithm 9 with k >= 2 points per bin, ``n >= k``,
    i.i.d. calibration data and test point, base model fixed, delta tie-breaking).

    Quantifier: marginal, jointly over classes:
    ``P_{D,X}(for all l in [L]: |P(Y = l | h_l(X)) - h_l(X)| <= eps) >= 1 - alpha``
    for every law; one test point X for all L classes.

    Parameters
    ----------
    points_per_bin : int or array_like of int
        Common k >= 2 (with per-class k_l, pass ``min_l k_l``).
    alpha : float or array_like
        Total miscoverage in (0, 1), split evenly over the classes.
    n_classes : int or array_like of int
        L >= 2.
    delta : float, default 0
        Tie-breaking parameter, added to the radius.

    Returns
    -------
    float or ndarray

    Notes
    -----
    Loose: each class's Hoeffding radius is already conservative (its exact miscoverage is
    1-2% at a nominal 10%), and the union bound over classes adds ``log L`` to the log term.
    On calcheck's class-wise laws the per-class radius *without* the union correction
    (alpha in place of alpha/L) still covers the joint event with probability above
    1 - alpha, so that control is not flagged; the union bound is not where the slack is.
    """
    return thm2_marginal_eps(points_per_bin, _split(alpha, n_classes), delta=delta)


def eq14_joint_conditional_eps(n, points_per_bin, alpha, n_classes, *, delta=0.0):
    r"""Eq. (14) for CW-HB: every output of every class within eps.

    .. math:: \varepsilon = \max_l \varepsilon^{(2)}_l(\alpha / L)
              = \sqrt{\log(2nL/(k\alpha)) / (2(k - 1))} + \delta

    Paper: gr22, Definition 2, eq. (14) ("(12) implies (14)"), applied to Theorem 2, eq. (15)
    with ``alpha_l = alpha / L``; the same radius bounds the CW-ECE in Theorem 2(a).

    Hypotheses: as :func:`eq13_joint_marginal_eps`.

    Quantifier: conditional (over the calibration data), jointly:
    ``P_D(for all l in [L], r in Range(h_l): |P(Y = l | h_l(X) = r) - r| <= eps) >= 1 - alpha``.

    Parameters
    ----------
    n : int or array_like of int
        Calibration points (every class's binning uses all n), ``n >= k``.
    points_per_bin, alpha, n_classes, delta
        As :func:`eq13_joint_marginal_eps`.

    Returns
    -------
    float or ndarray

    Notes
    -----
    A union bound over about ``L n / k`` bins: the largest of the L x B exact errors stays
    well inside it (calcheck measures coverage 1.0 on its class-wise laws). Dropping both
    union bounds (the per-class marginal eps^(1) at alpha for this joint event) is flagged.
    """
    return thm2_conditional_eps(n, points_per_bin, _split(alpha, n_classes), delta=delta)


guard_public(globals())  # broadcasting errors name the arguments

_HYP = (
    "Algorithm 9 (CW-HB), common k >= 2 points per bin, delta tie-breaking",
    "n >= k (printed n_l >= k_l)",
    "calibration data and test point iid",
    "base model g fixed",
    "alpha_l = alpha / L (even split of the union bound)",
)

#: The guarantees of this module, indexed by :mod:`calcheck.bounds.registry`.
GUARANTEES = (
    Guarantee(
        "gr22.eq13",
        eq13_joint_marginal_eps,
        "gr22",
        "Definition 2, eq. (13) via Theorem 2 (union bound over classes)",
        "CW-HB: Pr_{D,X}(for all l: |P(Y=l|h_l(X)) - h_l(X)| <= "
        "sqrt(log(2L/alpha)/(2(k-1))) + delta) >= 1-alpha",
        _HYP,
        "marginal",
    ),
    Guarantee(
        "gr22.eq14",
        eq14_joint_conditional_eps,
        "gr22",
        "Definition 2, eq. (14) via Theorem 2 (union bound over classes)",
        "CW-HB: w.p. >= 1-alpha, for all l and r in Range(h_l): |P(Y=l|h_l(X)=r) - r| <= "
        "sqrt(log(2nL/(k alpha))/(2(k-1))) + delta",
        _HYP,
        "conditional",
    ),
)
