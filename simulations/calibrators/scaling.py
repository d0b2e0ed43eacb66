"""Parametric (injective) post-hoc calibrators: Platt, temperature and beta scaling.

gpr20 Theorem 3 says no post-hoc method whose map ``m_n`` is injective can be
distribution-free calibrated: these are the methods it covers (Gupta, Podkopaev & Ramdas
2020, Sec. 3). They are fitted by maximum likelihood (logistic loss) with a batched Newton
method that fits R calibration sets at once (``fit_batch``), which the Monte Carlo
experiments call; the scikit-learn-style classes wrap the same code with R = 1 and cross-
check it against ``scipy.optimize.minimize`` in the tests.

Scores are probabilities in [0, 1]; they enter through ``logit(s)`` (Platt, temperature) or
``(ln s, -ln(1 - s))`` (beta), with s clipped to ``[1e-12, 1 - 1e-12]`` so that the
features are finite.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..laws.recalibration import sigmoid

__all__ = [
    "SCALERS",
    "BetaCalibration",
    "PlattScaling",
    "TemperatureScaling",
    "logistic_newton_batch",
]

_CLIP = 1e-12
_NLL_RADIUS = 1e-9  # relative error bound of the approximate objective (see _platt_nll)


def _logit(s):
    s = np.clip(s, _CLIP, 1.0 - _CLIP)
    return np.log(s) - np.log1p(-s)


def logistic_newton_batch(features, labels, *, max_iter=50, tol=1e-10, ridge=1e-10):
    """Maximum-likelihood logistic regression for R data sets at once (Newton's method).

    Parameters
    ----------
    features : ndarray, shape (R, n, p)
        Design matrices (include a column of ones for an intercept).
    labels : ndarray, shape (R, n)
        Labels in [0, 1].
    max_iter : int
    tol : float
        Stop when every coordinate of every Newton step is below ``tol``.
    ridge : float
        Tiny ridge on the Hessian so that separable or degenerate sets stay finite.

    Returns
    -------
    coef : ndarray, shape (R, p)
    """
    x = np.asarray(features, dtype=float)
    y = np.asarray(labels, dtype=float)
    r, _n, p = x.shape
    coef = np.zeros((r, p))
    eye = np.eye(p)
    for _ in range(max_iter):
        prob = sigmoid(np.einsum("rnp,rp->rn", x, coef))
        grad = np.einsum("rnp,rn->rp", x, prob - y)
        w = prob * (1.0 - prob)
        hess = np.einsum("rnp,rn,rnq->rpq", x, w, x) + ridge * eye
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        coef -= step
        if np.max(np.abs(step)) < tol:
            break
    return coef


def _platt_nll(x, y, rows, a, b, penalty, work, *, exact):
    """Penalised negative log-likelihood of ``sigma(a x + b)`` on ``rows`` of ``(x, y)``.

    ``a``, ``b``: one per row of ``rows``; ``work``: four work arrays ``(k, n)``, the rows
    are taken k at a time (a row's sum is the same whatever the block: bit for bit the
    whole-array sums). ``exact=True``: ``sum(logaddexp(0, t) - y t) + penalty (a^2 + b^2)
    / 2`` with ``t = a x + b``, bit for bit. ``exact=False``: ``(value, radius)`` with the
    softplus as ``max(t, 0) + log1p(exp(-|t|))`` (numpy's vectorised exp and log1p, ~4x
    faster than logaddexp's scalar libm calls) and ``|value - exact| <= radius``: both
    softplus are within a few ulps of the true one, and the radius allows 10^6 times the
    rounding of the terms and of their pairwise sums (``2 sum softplus + sum |term|``
    bounds the terms' and the products' magnitudes). Non-finite terms give a NaN radius.
    """
    m, n = rows.size, x.shape[1]
    block = work[0].shape[0]
    out, radius = np.empty(m), np.empty(m)
    whole = m == x.shape[0] and np.array_equal(rows, np.arange(m))
    for i in range(0, m, block):
        k = min(block, m - i)
        if whole:
            xb, yb = x[i : i + k], y[i : i + k]
        else:
            xb = np.take(x, rows[i : i + k], axis=0, out=work[2][:k])
            yb = np.take(y, rows[i : i + k], axis=0, out=work[3][:k])
        t = np.multiply(a[i : i + k, None], xb, out=work[0][:k])
        t += b[i : i + k, None]
        terms = work[1][:k]
        if exact:
            np.logaddexp(0.0, t, out=terms)
            terms -= np.multiply(t, yb, out=t)  # y t, as the whole-array code
            out[i : i + k] = np.sum(terms, axis=1)
            continue
        np.abs(t, out=terms)
        np.negative(terms, out=terms)
        np.exp(terms, out=terms)
        np.log1p(terms, out=terms)
        terms += np.maximum(t, 0.0, out=work[2][:k])  # xb is spent
        softplus = np.sum(terms, axis=1)
        terms -= np.multiply(t, yb, out=t)
        out[i : i + k] = np.sum(terms, axis=1)
        radius[i : i + k] = 2.0 * softplus + np.sum(np.abs(terms, out=terms), axis=1)
    pen = 0.5 * penalty * (a**2 + b**2)
    if exact:
        return out + pen
    with np.errstate(invalid="ignore"):
        # subnormal exp values may differ between the two (1e-290: far below any slack)
        radius = _NLL_RADIUS * (radius + np.abs(pen)) + 1e-290 * n
    return out + pen, radius


class LogLossData(NamedTuple):
    """What the penalised log-loss of a batch of Platt fits reads: the data and work arrays."""

    x: np.ndarray
    y: np.ndarray
    penalty: float
    work: tuple


def _halved_steps(data: LogLossData, rows, a, b, da, db, *, halvings=60):
    """Step sizes of the halving line search of the log-loss Newton fit, for ``rows``.

    Each row's step ``s`` (1, 1/2, ...) is halved until the objective at ``(a + s da,
    b + s db)`` is ``<= current + 1e-12 (1 + |current|)`` (at most ``halvings`` times).
    Bit for bit the decisions of comparing exact objectives: each is first made on the
    bounded approximation of :func:`_platt_nll`, and only when the two sides are within
    the bounds (or not finite) on the exact objectives of the rows in doubt.
    """
    x, y, penalty, work = data
    ar, br, dar, dbr = a[rows], b[rows], da[rows], db[rows]
    cur, cur_radius = _platt_nll(x, y, rows, ar, br, penalty, work, exact=False)
    cur_exact, known = np.empty(rows.size), np.zeros(rows.size, dtype=bool)

    def not_worse(idx, a_, b_):
        new, new_radius = _platt_nll(x, y, rows[idx], a_, b_, penalty, work, exact=False)
        c, tol = cur[idx], new_radius + cur_radius[idx]
        slack = 1e-12 * (1.0 + np.abs(c) + cur_radius[idx])  # >= the exact slack
        with np.errstate(invalid="ignore"):
            d = new - c
            ok = d < -tol  # exact new < exact current, so <= current + slack
            doubt = ~(ok | (d > tol + 2.0 * slack))  # NaN is in doubt
        if doubt.any():
            j = np.flatnonzero(doubt)
            todo = idx[j][~known[idx[j]]]
            if todo.size:
                cur_exact[todo] = _platt_nll(
                    x, y, rows[todo], ar[todo], br[todo], penalty, work, exact=True
                )
                known[todo] = True
            exact_new = _platt_nll(x, y, rows[idx[j]], a_[j], b_[j], penalty, work, exact=True)
            c = cur_exact[idx[j]]
            ok[j] = exact_new <= c + 1e-12 * (1.0 + np.abs(c))
        return ok

    step = np.ones(rows.size)
    ok = not_worse(np.arange(rows.size), ar + dar, br + dbr)
    for _ in range(halvings):
        worse = ~ok
        if not worse.any():
            break
        step = np.where(worse, step / 2, step)
        idx = np.flatnonzero(worse)
        ok[idx] = not_worse(idx, ar[idx] + step[idx] * dar[idx], br[idx] + step[idx] * dbr[idx])
    return step


def _check_scores(scores, name="scores"):
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array, got shape {s.shape}")
    if not np.all((s >= 0) & (s <= 1)):
        raise ValueError(f"{name} must lie in [0, 1], got values in [{s.min()}, {s.max()}]")
    return s


class _Scaler:
    """Shared scikit-learn-style wrapper around ``fit_batch`` / ``transform_batch``."""

    name = ""

    def fit(self, scores, labels):
        """Fit on calibration scores in [0, 1] and labels in {0, 1} (or [0, 1])."""
        s = _check_scores(scores)
        y = np.asarray(labels, dtype=float)
        if y.shape != s.shape:
            raise ValueError(f"labels must have the shape of scores {s.shape}, got {y.shape}")
        if not np.all((y >= 0) & (y <= 1)):
            raise ValueError("labels must lie in [0, 1]")
        self.coef_ = self.fit_batch(s[None], y[None])[0]
        return self

    def predict(self, scores):
        """Calibrated probability of class 1."""
        if not hasattr(self, "coef_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first")
        return self.transform_batch(self.coef_[None], _check_scores(scores)[None])[0]

    def predict_proba(self, scores):
        """Class probabilities, shape ``(n, 2)``."""
        h = self.predict(scores)
        return np.column_stack([1.0 - h, h])

    @property
    def is_injective_(self) -> bool:
        """Whether the fitted map is injective (the hypothesis of gpr20 Theorem 3)."""
        return bool(self.injective_batch(self.coef_[None])[0])


class PlattScaling(_Scaler):
    """Platt scaling: ``h(s) = sigmoid(a logit(s) + b)``, plain maximum likelihood.

    Platt's parametrisation ``1/(1 + exp(A f + B))`` with ``f = logit(s)``, ``A = -a``; the
    map is injective unless ``a = 0`` (gpr20 footnote 1). Platt's target smoothing is not
    applied. Fitted attribute ``coef_ = (a, b)``.
    """

    name = "platt"

    @staticmethod
    def fit_batch(scores, labels):
        """Fit R calibration sets at once (rows of ``scores`` and ``labels``)."""
        z = _logit(scores)
        x = np.stack([z, np.ones_like(z)], axis=-1)
        return logistic_newton_batch(x, labels)

    @staticmethod
    def transform_batch(coef, scores):
        """Calibrated probabilities of ``scores`` under fitted coefficients."""
        return sigmoid(coef[:, :1] * _logit(scores) + coef[:, 1:2])

    @staticmethod
    def injective_batch(coef):
        """Whether each fitted map is injective (Theorem 3 applies to it)."""
        return coef[:, 0] != 0


class TemperatureScaling(_Scaler):
    """Temperature scaling of a binary score: ``h(s) = sigmoid(logit(s) / T)``.

    Fitted as ``sigmoid(beta logit(s))`` with ``T = 1 / beta`` (``temperature_``); injective
    unless beta = 0. A negative beta (possible on data without signal) reverses the map but
    keeps it injective. Fitted attribute ``coef_ = (beta,)``.
    """

    name = "temperature"

    @staticmethod
    def fit_batch(scores, labels):
        """Fit R calibration sets at once (rows of ``scores`` and ``labels``)."""
        return logistic_newton_batch(_logit(scores)[..., None], labels)

    @staticmethod
    def transform_batch(coef, scores):
        """Calibrated probabilities of ``scores`` under fitted coefficients."""
        return sigmoid(coef[:, :1] * _logit(scores))

    @staticmethod
    def injective_batch(coef):
        """Whether each fitted map is injective (Theorem 3 applies to it)."""
        return coef[:, 0] != 0

    @property
    def temperature_(self) -> float:
        """Fitted temperature."""
        return float(np.inf if self.coef_[0] == 0 else 1.0 / self.coef_[0])


class BetaCalibration(_Scaler):
    """Beta calibration (Kull et al. 2017): ``sigmoid(a ln s - b ln(1 - s) + c)``, a, b >= 0.

    As in Kull et al.'s procedure: fit the unconstrained logistic model; if ``a < 0`` refit
    without the ``ln s`` feature (a = 0), else if ``b < 0`` refit without ``-ln(1 - s)``
    (b = 0); a coefficient still negative after the refit is set to 0 with the intercept
    refitted. The map is injective iff a or b is nonzero; with a = b = 0 it is the constant
    mean label (a one-bin binning map, not covered by gpr20 Theorem 3).
    Fitted attribute ``coef_ = (a, b, c)``.
    """

    name = "beta"

    @staticmethod
    def fit_batch(scores, labels):
        """Fit R calibration sets at once (rows of ``scores`` and ``labels``)."""
        s = np.clip(scores, _CLIP, 1.0 - _CLIP)
        f1, f2 = np.log(s), -np.log1p(-s)
        one = np.ones_like(s)
        full = logistic_newton_batch(np.stack([f1, f2, one], axis=-1), labels)
        only_b = logistic_newton_batch(np.stack([f2, one], axis=-1), labels)
        only_a = logistic_newton_batch(np.stack([f1, one], axis=-1), labels)
        const = logistic_newton_batch(one[..., None], labels)
        zero = np.zeros(s.shape[0])
        coef = full.copy()
        drop_a = full[:, 0] < 0
        drop_b = ~drop_a & (full[:, 1] < 0)
        coef[drop_a] = np.column_stack([zero, only_b[:, 0], only_b[:, 1]])[drop_a]
        coef[drop_b] = np.column_stack([only_a[:, 0], zero, only_a[:, 1]])[drop_b]
        still = (coef[:, 0] < 0) | (coef[:, 1] < 0)
        coef[still] = np.column_stack([zero, zero, const[:, 0]])[still]
        return coef

    @staticmethod
    def transform_batch(coef, scores):
        """Calibrated probabilities of ``scores`` under fitted coefficients."""
        s = np.clip(scores, _CLIP, 1.0 - _CLIP)
        return sigmoid(coef[:, :1] * np.log(s) - coef[:, 1:2] * np.log1p(-s) + coef[:, 2:3])

    @staticmethod
    def injective_batch(coef):
        """Whether each fitted map is injective (Theorem 3 applies to it)."""
        return (coef[:, 0] != 0) | (coef[:, 1] != 0)


SCALERS = {cls.name: cls for cls in (PlattScaling, TemperatureScaling, BetaCalibration)}
