"""Multiclass scaling baselines of Gupta & Ramdas (2022), Tables 2-5.

Temperature scaling (Guo et al. 2017), vector scaling and Dirichlet scaling (Kull et al.
2019), fitted by L-BFGS (scipy.optimize) on ``log p`` of an ``(n, L)`` probability matrix.

Cost of a fit: (L-BFGS function evaluations) x (one objective + gradient evaluation). One
evaluation of the Dirichlet objective is two ``(n, L) x (L, L)`` matrix products plus an
``(n, L)`` exponential; the fit runs with single-threaded BLAS (``threadpoolctl``, a core
dependency), because for these shapes OpenBLAS threads gain little on an idle machine and lose
20x on a loaded one (the ``(L, n) x (n, L)`` product of the gradient: 240 ms threaded vs 10 ms
single-threaded, n = 5000, L = 100, measured with other jobs on both cores).
:func:`calcheck.simulations.calibrators.multiclass_scaling.benchmark_dirichlet_fit` times both
factors.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special
from threadpoolctl import threadpool_limits

from ..validation import check_positive_int
from .edges import fixed_width_bin_index
from .multiclass_binning import check_probability_matrix, top_label

__all__ = [
    "DirichletFitBenchmark",
    "DirichletScaling",
    "MulticlassTemperatureScaling",
    "VectorScaling",
    "benchmark_dirichlet_fit",
    "single_threaded_blas",
]

logger = logging.getLogger(__name__)


def _confidence_ece(confidence, hit, n_bins):
    """Plug-in confidence ECE with equal-width bins (the grid rule's objective)."""
    key = fixed_width_bin_index(confidence, n_bins)
    count = np.bincount(key, minlength=n_bins)
    gap = np.abs(np.bincount(key, hit, n_bins) - np.bincount(key, confidence, n_bins))
    return float(gap.sum() / max(count.sum(), 1))


def single_threaded_blas():
    """Context limiting BLAS to one thread (also makes a fit independent of the count)."""
    return threadpool_limits(limits=1, user_api="blas")


def _nll_and_residual(z, y):
    """Mean NLL of ``softmax(z)`` at labels ``y`` and its gradient ``(softmax(z) - onehot) / n``.

    The log-sum-exp is the max-shifted one (not scipy's slower, more careful variant).
    """
    n = z.shape[0]
    rows = np.arange(n)
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    s = e.sum(axis=1, keepdims=True)
    loss = float(np.mean(np.log(s[:, 0]) + m[:, 0] - z[rows, y]))
    e /= s * n
    e[rows, y] -= 1.0 / n
    return loss, e


# ------------------------------------------------------------------------- scaling
class _LogProbabilityScaling:
    """``softmax(W log p + b)`` fitted by minimising the mean negative log-likelihood."""

    def __init__(self, *, clip=1e-12, max_iter=2000):
        self.clip = clip
        self.max_iter = max_iter

    def get_params(self) -> dict:
        return {"clip": self.clip, "max_iter": self.max_iter}

    def _log_p(self, scores):
        if not (0 < self.clip < 1):
            raise ValueError(f"clip must lie in (0, 1), got {self.clip!r}")
        return np.log(np.clip(scores, self.clip, 1.0))

    # subclasses: _unpack(theta, L) -> (W or w, b), _init(L), _logits(x, theta), _grad
    def fit(self, scores, labels):
        """Fit on an (n, L) probability matrix and 0-based labels. Returns self."""
        p, y = check_probability_matrix(scores, labels)
        check_positive_int(self.max_iter, "max_iter")
        x = self._log_p(p)
        n_cls = x.shape[1]
        objective = self._objective(x, y)
        with single_threaded_blas():
            res = optimize.minimize(
                objective,
                self._init(n_cls),
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": self.max_iter},
            )
            self.n_newton_iter_ = 0
            if res.success and self._linear:
                res = self._polish(x, y, res)
        if not res.success:
            logger.warning("%s: L-BFGS-B stopped: %s", type(self).__name__, res.message)
        self.n_classes_ = n_cls
        self.coef_ = res.x
        self.n_iter_ = int(res.nit)
        self.n_evaluations_ = int(res.nfev)
        self.loss_ = float(res.fun)
        return self

    #: logits linear in theta (VS, DS): the exact Hessian-vector product of ``_polish``
    _linear = False
    #: gradient norm at which the Newton polish stops
    _newton_gtol = 1e-10

    def _polish(self, x, y, res):
        """Newton (trust-region CG, exact Hessian-vector products) from L-BFGS's optimum.

        L-BFGS-B stops at a relative decrease per step of 2.2e-9, which leaves the objective
        up to ~1e-6 (relative) above the optimum on gr22's CIFAR-10 DS fits; a few Newton
        steps reach a gradient 2-norm of 1e-10, so the optimum, not the stopping rule or
        rounding, decides the fit (``_hessp``). Kept only if it does not raise the
        objective.
        """
        new = optimize.minimize(
            self._objective(x, y),
            res.x,
            jac=True,
            hessp=self._hessp(x),
            method="trust-ncg",
            options={"gtol": self._newton_gtol, "maxiter": 100},
        )
        self.n_newton_iter_ = int(new.nit)
        if not new.fun <= res.fun:
            return res
        new.nit = res.nit
        new.nfev = res.nfev + new.nfev
        new.success = True
        return new

    def _hessp(self, x):
        """``(theta, v) -> H(theta) v``, the objective's exact Hessian-vector product.

        For logits linear in theta only: ``J^T (diag q - q q^T) J v / n`` plus the penalty's
        (a quadratic form, so its gradient at ``v``).
        """
        n, n_cls = x.shape
        state = {}

        def hessp(theta, v):
            if state.get("theta") is None or not np.array_equal(state["theta"], theta):
                state["theta"] = theta.copy()
                state["q"] = special.softmax(self._logits(x, theta), axis=1)
            q = state["q"]
            qd = q * self._logits(x, v)
            r = (qd - q * qd.sum(axis=1, keepdims=True)) / n
            return self._backprop(x, r, v) + self._penalty(v, n_cls)[1]

        return hessp

    def _objective(self, x, y):
        """``theta -> (objective, gradient)``: the mean NLL (plus the penalty) on ``(x, y)``."""
        n_cls = x.shape[1]

        def objective(theta):
            loss, dz = _nll_and_residual(self._logits(x, theta), y)
            reg, reg_grad = self._penalty(theta, n_cls)
            return loss + reg, self._backprop(x, dz, theta) + reg_grad

        return objective

    def _penalty(self, theta, n_cls):
        return 0.0, np.zeros_like(theta)

    def predict_proba(self, scores):
        """Calibrated (n, L) probabilities."""
        if not hasattr(self, "coef_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first")
        p = check_probability_matrix(scores)
        if p.shape[1] != self.n_classes_:
            raise ValueError(
                f"scores have {p.shape[1]} classes; this {type(self).__name__} was fitted "
                f"with {self.n_classes_}"
            )
        return special.softmax(self._logits(self._log_p(p), self.coef_), axis=1)

    def predict(self, scores):
        return np.argmax(self.predict_proba(scores), axis=1)


class MulticlassTemperatureScaling(_LogProbabilityScaling):
    """Temperature scaling (Guo et al. 2017): ``softmax(log p / T)``, one parameter.

    Equals scaling the logits, since log p differs from them by a per-row constant.

    Parameters
    ----------
    objective : {"nll", "ece_grid"}, default "nll"
        ``"nll"``: minimise the negative log-likelihood (L-BFGS). ``"ece_grid"``: the rule of
        the focal_calibration code that gr22 used for its TS column -- T on the grid
        0.1, 0.2, ..., 10.0, keeping the first T with the smallest plug-in confidence ECE
        (15 equal-width bins) on the calibration data.
    clip, max_iter : as the other scalers.

    Attributes
    ----------
    temperature_ : float
    """

    def __init__(self, *, objective="nll", clip=1e-12, max_iter=2000):
        super().__init__(clip=clip, max_iter=max_iter)
        self.objective = objective

    def get_params(self) -> dict:
        """Tuning parameters (scikit-learn convention)."""
        return {**super().get_params(), "objective": self.objective}

    def fit(self, scores, labels):
        """Fit on an (n, L) probability matrix and 0-based labels. Returns self."""
        if self.objective == "nll":
            return super().fit(scores, labels)
        if self.objective != "ece_grid":
            raise ValueError(f"objective must be 'nll' or 'ece_grid', got {self.objective!r}")
        p, y = check_probability_matrix(scores, labels)
        x = self._log_p(p)
        best_t, best = 1.0, np.inf
        for t in np.round(np.arange(1, 101) * 0.1, 10):
            c, h = top_label(special.softmax(x / t, axis=1))
            ece = _confidence_ece(h, (c == y).astype(float), 15)
            if ece < best:
                best_t, best = float(t), ece
        self.n_classes_ = p.shape[1]
        self.coef_ = np.array([-np.log(best_t)])
        self.n_iter_ = self.n_evaluations_ = 100
        self.loss_ = float(best)
        return self

    def _init(self, n_cls):
        return np.zeros(1)  # log(1 / T)

    def _logits(self, x, theta):
        return x * np.exp(theta[0])

    def _backprop(self, x, dz, theta):
        return np.array([(dz * x).sum() * np.exp(theta[0])])

    @property
    def temperature_(self):
        """Fitted temperature."""
        return float(np.exp(-self.coef_[0]))


class VectorScaling(_LogProbabilityScaling):
    """Vector scaling (Guo et al. 2017; dirichletcal's ``vectorscaling``): ``w * log p + b``."""

    _linear = True

    def _init(self, n_cls):
        return np.concatenate([np.ones(n_cls), np.zeros(n_cls)])

    def _logits(self, x, theta):
        n_cls = x.shape[1]
        return x * theta[:n_cls] + theta[n_cls:]

    def _backprop(self, x, dz, theta):
        return np.concatenate([(dz * x).sum(axis=0), dz.sum(axis=0)])


class DirichletScaling(_LogProbabilityScaling):
    """Dirichlet calibration (Kull et al. 2019, full matrix): ``softmax(W log p + b)``.

    Parameters
    ----------
    reg_lambda : float, default 0
        ODIR penalty ``reg_lambda / (L (L - 1)) * sum_{i != j} W_ij^2`` on the off-diagonal.
    reg_mu : float, default 0
        Penalty ``reg_mu / L * sum_j b_j^2`` on the intercept.
    clip, max_iter : as the other scalers.

    Notes
    -----
    The defaults (no regularisation, identity initialisation) are those of dirichletcal's
    ``FullDirichletCalibrator``, which gr22 ran "with default settings"; with L = 100 and
    n = 5000 this has 10,100 free parameters and overfits, as Table 2's DS column shows.
    """

    def __init__(self, *, reg_lambda=0.0, reg_mu=0.0, clip=1e-12, max_iter=2000):
        super().__init__(clip=clip, max_iter=max_iter)
        self.reg_lambda = reg_lambda
        self.reg_mu = reg_mu

    def get_params(self) -> dict:
        """Tuning parameters (scikit-learn convention)."""
        return {**super().get_params(), "reg_lambda": self.reg_lambda, "reg_mu": self.reg_mu}

    _linear = True

    def _init(self, n_cls):
        return np.concatenate([np.eye(n_cls).ravel(), np.zeros(n_cls)])

    def _split(self, theta, n_cls):
        return theta[: n_cls * n_cls].reshape(n_cls, n_cls), theta[n_cls * n_cls :]

    def _logits(self, x, theta):
        w, b = self._split(theta, x.shape[1])
        return x @ w.T + b

    def _backprop(self, x, dz, theta):
        return np.concatenate([(dz.T @ x).ravel(), dz.sum(axis=0)])

    def _penalty(self, theta, n_cls):
        for name in ("reg_lambda", "reg_mu"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be finite and >= 0, got {v!r}")
        w, b = self._split(theta, n_cls)
        off = w * (1.0 - np.eye(n_cls))
        lam = self.reg_lambda / (n_cls * (n_cls - 1))
        mu = self.reg_mu / n_cls
        value = lam * (off**2).sum() + mu * (b**2).sum()
        grad = np.concatenate([(2 * lam * off).ravel(), 2 * mu * b])
        return value, grad


# ----------------------------------------------------------------------- benchmark
@dataclass(frozen=True)
class DirichletFitBenchmark:
    """Cost of one :class:`DirichletScaling` fit, split as evaluations x cost per evaluation.

    Attributes
    ----------
    n, n_classes, n_parameters : int
        Problem size (``n_parameters = L (L + 1)``).
    seconds_per_evaluation : float
        Median wall time of one objective + gradient evaluation.
    n_iterations, n_evaluations : int
        L-BFGS iterations and objective evaluations of the fit.
    fit_seconds : float
        Wall time of the fit.
    predicted_seconds : float
        ``n_evaluations * seconds_per_evaluation``; the rest of ``fit_seconds`` is L-BFGS's
        own work.
    loss : float
        Final mean NLL on the fitting data.
    """

    n: int
    n_classes: int
    n_parameters: int
    seconds_per_evaluation: float
    n_iterations: int
    n_evaluations: int
    fit_seconds: float
    predicted_seconds: float
    loss: float


def benchmark_dirichlet_fit(*, n=5000, n_classes=100, max_iter=300, repeats=20, seed=0):
    """Time one Dirichlet-scaling evaluation and one fit on a Table-2-sized synthetic problem.

    The problem has the shape of gr22 Table 2's CIFAR-100 fits (n = 5000 calibration points,
    L = 100 classes, 10,100 parameters; Gupta & Ramdas 2022, App. E.2): logits
    ``N(0, 2^2)`` with 4 added to the true class on 3/4 of the rows, labels uniform.
    Table 2 fits with ``max_iter = 2000``; the fit's time is linear in the evaluations, so a
    shorter ``max_iter`` gives the same cost per evaluation.

    Parameters
    ----------
    n, n_classes : int
        Problem size (n >= 2, n_classes >= 2).
    max_iter : int
        L-BFGS iterations of the timed fit.
    repeats : int
        Evaluations timed (the median is reported).
    seed : int
        Seed of the synthetic problem.

    Returns
    -------
    DirichletFitBenchmark
    """
    check_positive_int(n, "n", minimum=2)
    check_positive_int(n_classes, "n_classes", minimum=2)
    check_positive_int(max_iter, "max_iter")
    check_positive_int(repeats, "repeats")
    rng = np.random.default_rng(seed)
    labels = rng.integers(n_classes, size=n)
    logits = 2.0 * rng.normal(size=(n, n_classes))
    hit = rng.random(n) < 0.75
    logits[np.flatnonzero(hit), labels[hit]] += 4.0
    scores = special.softmax(logits, axis=1)
    cal = DirichletScaling(max_iter=max_iter)
    objective = cal._objective(cal._log_p(scores), labels)
    theta = cal._init(n_classes)
    times = []
    with single_threaded_blas():
        for _ in range(repeats):
            t0 = time.perf_counter()
            objective(theta)
            times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    cal.fit(scores, labels)
    fit_seconds = time.perf_counter() - t0
    per = float(np.median(times))
    return DirichletFitBenchmark(
        n=n,
        n_classes=n_classes,
        n_parameters=n_classes * (n_classes + 1),
        seconds_per_evaluation=per,
        n_iterations=cal.n_iter_,
        n_evaluations=cal.n_evaluations_,
        fit_seconds=fit_seconds,
        predicted_seconds=per * cal.n_evaluations_,
        loss=cal.loss_,
    )
