r"""Exact population AUC loss of binning maps under a continuous binary law (nch14 Sec. 3).

For a map that sends the score y to ``thetahat_K`` on bin K (bins ordered in y), with true
masses ``eta_K`` and rates ``theta_K`` (exact, from the law), and within-bin AUCs ``A_K`` of
the base score, the loss of AUC from binning, with ties counted 1/2 (nch14 eqs. 11-15), is

.. math:: \mathrm{AUC}(y) - \mathrm{AUC}(\hat y) = \frac{1}{\pi_1 \pi_0}\Big[
   \sum_{K > L} \eta_K \eta_L (\theta_K - \theta_L)\big(1\{\hat\theta_L > \hat\theta_K\}
   + \tfrac12 1\{\hat\theta_L = \hat\theta_K\}\big)
   + \sum_K \big(D_K - \tfrac12 \eta_K^2 \theta_K (1 - \theta_K)\big)\Big],

the first sum being Loss_1 (pairs in different bins) and the second Loss_2 (pairs in the
same bin), with ``D_K = P(y_i > y_j, both in K, z_i = 1, z_j = 0) = eta_K^2 theta_K (1 -
theta_K) A_K`` (catalog G11, derived; verified against Monte Carlo in the tests).

``D_K`` is an integral over the bin in the quantile scale u = F(y):
``D(a, b) = int_a^b c(u) (C_0(u) - C_0(a)) du`` with ``C_0`` the cumulative of ``1 - c``;
it is read off cumulative tables on 2^16 cells (midpoint rule; error ~1e-10 for smooth
c and ~1/2^16 of a jump for a discontinuous one). Masses and rates are exact.
"""

from __future__ import annotations

import json

import numpy as np

__all__ = ["auc_loss", "population_auc_loss"]

_CELLS = 2**16


_CACHE: dict = {}


def _tables(law):
    key = json.dumps(law.spec(), sort_keys=True, default=str)
    if key not in _CACHE:
        if len(_CACHE) > 64:
            _CACHE.clear()
        _CACHE[key] = _build_tables(law)
    return _CACHE[key]


def _build_tables(law):
    if law.scores.atoms:
        raise ValueError(f"law {law.name!r} has atoms: the exact AUC loss needs a continuous score")
    u = (np.arange(_CELLS) + 0.5) / _CELLS
    c = np.asarray(law.conditional_mean(law.scores.ppf(u)), dtype=float)
    c1 = np.concatenate([[0.0], np.cumsum(c)]) / _CELLS
    c0 = np.arange(_CELLS + 1) / _CELLS - c1
    inner = c0[:-1] + (1.0 - c) / (2 * _CELLS)  # C_0 at the cell midpoints
    g = np.concatenate([[0.0], np.cumsum(c * inner)]) / _CELLS
    return c0, c1, g


def _interp(table, u):
    x = np.clip(u, 0.0, 1.0) * _CELLS
    i = np.minimum(x.astype(np.int64), _CELLS - 1)
    return table[i] + (x - i) * (table[i + 1] - table[i])


def auc_loss(law, lower, upper, values):
    """Exact ``(loss, loss1, loss2)`` of R binning maps, rows of score bins ``[lower, upper)``.

    Parameters
    ----------
    law : BinaryLaw
        Continuous score law (no atoms).
    lower, upper : ndarray, shape (R, B)
        Bin edges in score space, bins in increasing order.
    values : ndarray, shape (R, B)
        The map's output on each bin (``thetahat``).

    Returns
    -------
    loss, loss1, loss2 : ndarray, shape (R,)
    """
    c0, c1, g = _tables(law)
    zeros = np.zeros_like(lower, dtype=float)
    eta, moment = law.interval_moments(lower, zeros, upper, zeros)
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = np.where(eta > 0, moment / eta, 0.0)
    a = law.scores.cdf(np.asarray(lower, dtype=float))
    b = law.scores.cdf(np.asarray(upper, dtype=float))
    d = _interp(g, b) - _interp(g, a) - _interp(c0, a) * (_interp(c1, b) - _interp(c1, a))
    mass_all, pi1 = law.interval_moments(0.0, 0.0, 1.0, 1.0)
    pi1 = float(pi1 / mass_all)
    norm = pi1 * (1.0 - pi1)
    v = np.asarray(values, dtype=float)
    # pairs K > L (K the positive's bin): misordered or tied by thetahat
    above = np.tril(np.ones((v.shape[1], v.shape[1]), dtype=bool), k=-1)  # [K, L], K > L
    vk, vl = v[:, :, None], v[:, None, :]
    weight = (vl > vk) + 0.5 * (vl == vk)
    pair = eta[:, :, None] * eta[:, None, :] * (theta[:, :, None] - theta[:, None, :])
    loss1 = np.sum(np.where(above, pair * weight, 0.0), axis=(1, 2)) / norm
    loss2 = np.sum(d - 0.5 * eta**2 * theta * (1 - theta), axis=1) / norm
    return loss1 + loss2, loss1, loss2


def population_auc_loss(law, n_bins):
    """``(loss, loss1, loss2)`` in the limit n -> inf: quantile bins, thetahat = theta.

    The limit of equal-frequency histogram binning (nch14 Theorem 3.4's regime): the bins
    are the population B-quantile bins (eta_K = 1/B) and every bin outputs its true rate.
    """
    q = law.scores.ppf(np.linspace(0.0, 1.0, n_bins + 1))
    lower, upper = q[None, :-1], q[None, 1:]
    zeros = np.zeros_like(lower)
    eta, moment = law.interval_moments(lower, zeros, upper, zeros)
    loss, loss1, loss2 = auc_loss(law, lower, upper, moment / eta)
    return float(loss[0]), float(loss1[0]), float(loss2[0])
