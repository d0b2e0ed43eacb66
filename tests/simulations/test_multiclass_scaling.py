"""Scaling baselines of gr22 Tables 2-5: exact gradients, the optimum, the fit benchmark."""

import numpy as np
import pytest
from scipy import optimize, special

from calcheck.simulations.calibrators import (
    DirichletScaling,
    MulticlassTemperatureScaling,
    VectorScaling,
    softmax,
)
from calcheck.simulations.calibrators.multiclass_scaling import (
    DirichletFitBenchmark,
    _nll_and_residual,
    benchmark_dirichlet_fit,
)


def _problem(n=300, n_cls=4, seed=3):
    """Noisy labels: not separable, so the unregularised optimum is finite."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, n_cls)) * 2
    labels = np.argmax(logits + rng.gumbel(size=logits.shape) * 1.5, axis=1)
    return softmax(logits), labels


def _reference_nll(cal, x, y, theta):
    """The mean NLL written independently (scipy's log_softmax) plus the penalty."""
    logq = special.log_softmax(cal._logits(x, theta), axis=1)
    return -logq[np.arange(len(y)), y].mean() + cal._penalty(theta, x.shape[1])[0]


def test_nll_and_residual_by_hand():
    # z = [[0, log 3]], y = 1: softmax = (1/4, 3/4), NLL = log(4/3), residual (1/4, -1/4)
    loss, dz = _nll_and_residual(np.array([[0.0, np.log(3.0)]]), np.array([1]))
    assert loss == pytest.approx(np.log(4 / 3), rel=1e-15)
    np.testing.assert_allclose(dz, [[0.25, -0.25]], rtol=1e-15)
    # stable for huge logits: shifting every row by 1000 changes nothing
    z = np.array([[1000.0, 1000.0 + np.log(3.0)], [-2000.0, -2000.0]])
    loss, dz = _nll_and_residual(z, np.array([1, 0]))
    assert loss == pytest.approx((np.log(4 / 3) + np.log(2)) / 2, rel=1e-12)
    np.testing.assert_allclose(dz, [[0.125, -0.125], [-0.25, 0.25]], rtol=1e-12)


@pytest.mark.parametrize(
    "cal",
    [
        MulticlassTemperatureScaling(),
        VectorScaling(),
        DirichletScaling(),
        DirichletScaling(reg_lambda=0.3, reg_mu=0.2),
    ],
    ids=["ts", "vs", "ds", "ds-odir"],
)
def test_objective_value_and_gradient(cal):
    p, y = _problem()
    x = np.log(p)
    objective = cal._objective(x, y)
    rng = np.random.default_rng(4)
    for scale in (0.1, 3.0):  # near the start and far out (large logits)
        theta = cal._init(4) * (1 + scale) + rng.normal(size=cal._init(4).shape) * scale
        value, grad = objective(theta)
        assert value == pytest.approx(_reference_nll(cal, x, y, theta), rel=1e-12)
        fd = optimize.approx_fprime(theta, lambda t: objective(t)[0], 1e-7)
        np.testing.assert_allclose(grad, fd, atol=2e-6 * max(1.0, np.abs(fd).max()))


@pytest.mark.parametrize(
    "cal", [VectorScaling(), DirichletScaling(), DirichletScaling(reg_lambda=0.3, reg_mu=0.2)]
)
def test_hessian_vector_product_against_finite_differences(cal):
    p, y = _problem(n=120, n_cls=3)
    x = np.log(p)
    objective = cal._objective(x, y)
    rng = np.random.default_rng(8)
    theta = cal._init(3) + rng.normal(size=cal._init(3).shape)
    hessp = cal._hessp(x)
    for _ in range(3):
        v = rng.normal(size=theta.shape)
        h = 1e-6
        fd = (objective(theta + h * v)[1] - objective(theta - h * v)[1]) / (2 * h)
        np.testing.assert_allclose(hessp(theta, v), fd, rtol=1e-6, atol=1e-9)


def test_dirichlet_fit_reaches_the_reference_optimum():
    """The fitted NLL equals an independent BFGS fit's optimum to 1e-12 (relative).

    L-BFGS-B alone stops at a relative decrease per step of 2.2e-9 (here 4e-8 above the
    optimum); the Newton polish takes it to the optimum.
    """
    p, y = _problem()
    x = np.log(p)
    cal = DirichletScaling().fit(p, y)
    ref = optimize.minimize(
        lambda t: _reference_nll(cal, x, y, t),
        cal._init(4),
        jac=lambda t: cal._objective(x, y)(t)[1],
        method="BFGS",
        options={"gtol": 1e-11, "maxiter": 10_000},
    )
    assert cal.n_iter_ < cal.max_iter  # converged, not stopped
    assert cal.n_newton_iter_ >= 1
    assert cal.loss_ <= ref.fun * (1 + 1e-12)
    assert cal.loss_ >= ref.fun * (1 - 1e-12)  # no lower value: both are at the optimum
    # the optimum is unique up to softmax's shift, so the calibrated probabilities agree
    w = cal.coef_.copy()
    cal.coef_ = ref.x
    q_ref = cal.predict_proba(p)
    cal.coef_ = w
    np.testing.assert_allclose(cal.predict_proba(p), q_ref, atol=1e-5)


def test_benchmark_dirichlet_fit():
    b = benchmark_dirichlet_fit(n=200, n_classes=5, max_iter=15, repeats=3, seed=1)
    assert isinstance(b, DirichletFitBenchmark)
    assert (b.n, b.n_classes, b.n_parameters) == (200, 5, 30)
    assert 0 < b.n_iterations <= 15 <= b.n_evaluations + 15
    assert b.n_evaluations >= b.n_iterations
    assert b.predicted_seconds == pytest.approx(b.seconds_per_evaluation * b.n_evaluations)
    assert 0 < b.seconds_per_evaluation < b.fit_seconds
    assert 0 < b.loss < np.inf
    with pytest.raises(ValueError, match="max_iter"):
        benchmark_dirichlet_fit(max_iter=0)
    with pytest.raises(ValueError, match="n_classes"):
        benchmark_dirichlet_fit(n_classes=1)
