"""Exact CE^2 and MSE of fitted recalibration maps under a :class:`RecalibrationLaw`.

No Monte Carlo ground truth: every quantity is an integral of q against Z's law
(klm19 catalog, suggested protocol 1).

* A *binned* map outputs ``v_j`` on the z-interval ``J_j``. With ``P_j = P(Z in J_j)`` and
  ``Q_j = int_{J_j} q dP``, grouping bins of equal output (the map's level sets),
  ``CE^2 = sum_v P_v (v - Q_v / P_v)^2`` (klm19 Definition 2.2 with p = 2: E[Y | h(Z)]
  averages q over a level set) and ``MSE = E[(h - Y)^2] = sum_j (P_j v_j^2 - 2 v_j Q_j) +
  E[q]``.
* An *injective* map g (a Platt fit with a != 0) has ``E[Y | g(Z)] = q(Z)``, so
  ``CE^2 = int (g - q)^2 dP`` and ``MSE = int (g^2 - 2 g q) dP + E[q]``, by the law's
  quadrature rules.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.optimize import minimize

__all__ = ["binned_map_truth", "binned_map_truth_both", "min_platt_ce_sq", "platt_truth"]


def binned_map_truth(law, lower_z, upper_z, values, *, merge=True):
    """Exact ``(ce_sq, mse)`` of R binned maps, each a row of z-intervals and outputs.

    Parameters
    ----------
    law : RecalibrationLaw
    lower_z, upper_z : ndarray, shape (R, B)
        Interval ends in z (``lower <= upper``); the intervals of a row partition Z's range.
    values : ndarray, shape (R, B)
        Output on each interval. Equal outputs are merged (one level set).
    merge : bool
        ``False`` treats every bin as its own level set (the CE of the binning rather than
        of the map: an upper bound, by Jensen, when outputs tie).

    Returns
    -------
    ce_sq, mse : ndarray, shape (R,)
    """
    mass, qint = _integrals(law, lower_z, upper_z)
    v = np.asarray(values, dtype=float)
    return _ce_sq(mass, qint, v, merge), _mse(law, mass, qint, v)


def binned_map_truth_both(law, lower_z, upper_z, values):
    """``(ce_sq, ce_sq_bins, mse)``: :func:`binned_map_truth` with and without merging.

    The interval integrals, most of the cost, are computed once for both.
    """
    mass, qint = _integrals(law, lower_z, upper_z)
    v = np.asarray(values, dtype=float)
    return _ce_sq(mass, qint, v, True), _ce_sq(mass, qint, v, False), _mse(law, mass, qint, v)


def _integrals(law, lower_z, upper_z):
    lo, hi = np.minimum(lower_z, upper_z), np.maximum(lower_z, upper_z)
    return law.mass(lo, hi), law.q_integral(lo, hi)


def _mse(law, mass, qint, v):
    return np.sum(mass * v**2 - 2.0 * v * qint, axis=1) + law.mean_q


def _ce_sq(mass, qint, v, merge):
    if not merge:
        with np.errstate(invalid="ignore", divide="ignore"):
            per_bin = np.where(mass > 0, (v * mass - qint) ** 2 / mass, 0.0)
        return per_bin.sum(axis=1)
    r, b = v.shape
    rows = np.repeat(np.arange(r), b)
    order = np.lexsort((v.ravel(), rows))
    vs, rs = v.ravel()[order], rows[order]
    start = np.r_[True, (vs[1:] != vs[:-1]) | (rs[1:] != rs[:-1])]
    idx = np.flatnonzero(start)
    p_v = np.add.reduceat(mass.ravel()[order], idx)
    q_v = np.add.reduceat(qint.ravel()[order], idx)
    with np.errstate(invalid="ignore", divide="ignore"):
        term = np.where(p_v > 0, (vs[idx] * p_v - q_v) ** 2 / p_v, 0.0)
    return np.bincount(rs[idx], weights=term, minlength=r)


def _platt(coef, z):
    t = coef[:, :1] * (np.log(z) - np.log1p(-z)) + coef[:, 1:2]
    return 0.5 * (1.0 + np.tanh(0.5 * t))


def platt_truth(law, coef):
    """Exact ``(ce_sq, mse)`` of R Platt maps ``sigma(a logit z + b)``, ``coef`` ``(R, 2)``.

    Assumes ``a != 0`` (an injective map); a fit with ``a = 0`` is a constant, whose CE is
    computed as a one-bin map.
    """
    coef = np.atleast_2d(np.asarray(coef, dtype=float))
    xs, ws = law.smooth_rule
    xq, wq = law.q_rule
    g_sq = _platt(coef, xs) ** 2 @ ws
    g_q = _platt(coef, xq) @ wq
    ce_sq = g_sq - 2.0 * g_q + law.mean_q_sq
    mse = g_sq - 2.0 * g_q + law.mean_q
    const = coef[:, 0] == 0
    if const.any():
        c = _platt(coef[const], np.array([0.5]))
        ones = np.ones_like(c)
        ce_c, _ = binned_map_truth(law, law.lo * ones, law.hi * ones, c)
        ce_sq[const] = ce_c
    return np.maximum(ce_sq, 0.0), mse


@lru_cache(maxsize=32)
def min_platt_ce_sq(law) -> tuple[float, tuple[float, float]]:
    """``min_{a, b} CE(sigma(a logit z + b))^2`` and its minimiser (klm19 Theorem 4.1).

    For injective g, ``CE(g)^2 = int (g - q)^2`` (catalog G3), minimised numerically from
    the law's own ``(a, b)``; 0 for a well-specified law.
    """
    if law.kind == "sigmoid":
        return 0.0, (law.a, law.b)

    def objective(theta):
        return float(platt_truth(law, np.asarray(theta)[None])[0][0])

    res = minimize(
        objective,
        x0=[law.a, law.b],
        method="Nelder-Mead",
        options={"xatol": 1e-9, "fatol": 1e-14, "maxiter": 4000},
    )
    return float(res.fun), (float(res.x[0]), float(res.x[1]))
