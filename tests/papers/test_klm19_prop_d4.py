"""klm19: the MSE decomposition and Proposition D.4 in its derived form, exactly.

Both are deterministic statements, checked by quadrature (no Monte Carlo):

- Sec. 2 (catalog, [DERIVED] exact identity): ``MSE(f) = CE(f)^2 + E[Var(Y | f(X))]``.
- Proposition D.4 (appendix missing; the catalog's derived substitute,
  :func:`calcheck.bounds.klm19_scaling.prop_d4_mse_increase_bound_derived`): uniform-mass
  population bins raise the MSE of a monotone g by at most ``1/(4B) + CE(g) sqrt(1/B)``, and
  ``E[(g - g_B)^2] <= 1/(4B)``. The negative control: a near-step g attains ``1/(4B)`` to
  within 3%, so the bound times 0.9 fails there (the constant cannot be lowered).

Law: Z ~ U[0, 1], scores g(z) = sigmoid(a logit z + b) (monotone), labels Y ~ Bern(q(Z)) with
q another sigmoid (so CE(g) > 0). Uniform-mass bins in g are equal-width bins in z.
"""

import numpy as np
import pytest
from scipy import integrate, special

from calcheck.bounds.klm19_scaling import prop_d4_mse_increase_bound_derived


def _sig(a, b):
    return lambda z: special.expit(a * special.logit(min(max(z, 1e-300), 1 - 1e-16)) + b)


def _integral(f, lo, hi):
    return integrate.quad(f, lo, hi, limit=200, epsabs=1e-13, epsrel=1e-11)[0]


def _quantities(g, q, n_bins):
    """E[(g - g_B)^2], MSE(g), MSE(g_B), CE(g), E[(g_B - g)(g - q)] for population bins."""
    var_sum = cross = 0.0
    mse_b = 0.0
    for j in range(n_bins):
        lo, hi = j / n_bins, (j + 1) / n_bins
        mean = _integral(g, lo, hi) * n_bins  # g_B on bin j
        var_sum += _integral(lambda z, m=mean: (g(z) - m) ** 2, lo, hi)
        cross += _integral(lambda z, m=mean: (m - g(z)) * (g(z) - q(z)), lo, hi)
        mse_b += _integral(lambda z, m=mean: m * m - 2 * m * q(z) + q(z), lo, hi)
    mse_g = _integral(lambda z: g(z) ** 2 - 2 * g(z) * q(z) + q(z), 0, 1)
    ce = np.sqrt(_integral(lambda z: (g(z) - q(z)) ** 2, 0, 1))
    return var_sum, mse_g, mse_b, ce, cross


@pytest.mark.parametrize(("a", "b"), [(2.0, 1.0), (0.5, -0.3), (1.0, 0.0)])
def test_mse_is_squared_ce_plus_expected_conditional_variance(a, b):
    g, q = _sig(a, b), _sig(1.3, 0.2)
    mse = _integral(lambda z: g(z) ** 2 - 2 * g(z) * q(z) + q(z), 0, 1)
    ce_sq = _integral(lambda z: (g(z) - q(z)) ** 2, 0, 1)
    # g is injective, so E[Y | g(Z)] = q(Z) and Var(Y | g(Z)) = q (1 - q)
    sharpness = _integral(lambda z: q(z) * (1 - q(z)), 0, 1)
    assert mse == pytest.approx(ce_sq + sharpness, abs=1e-10)


def test_mse_decomposition_on_a_binned_model_by_hand():
    # three outputs v with masses m and label means p: MSE = sum m (p (1-v)^2 + (1-p) v^2)
    v, m, p = np.array([0.2, 0.5, 0.9]), np.array([0.3, 0.5, 0.2]), np.array([0.1, 0.6, 0.8])
    mse = np.sum(m * (p * (1 - v) ** 2 + (1 - p) * v**2))
    assert mse == pytest.approx(np.sum(m * (v - p) ** 2) + np.sum(m * p * (1 - p)), abs=1e-15)
    assert mse == pytest.approx(0.3 * 0.10 + 0.5 * 0.25 + 0.2 * 0.17, abs=1e-15)  # = 0.189
    assert np.sum(m * (v - p) ** 2) == pytest.approx(0.01, abs=1e-15)  # CE^2


@pytest.mark.parametrize("n_bins", [2, 5, 10, 40])
@pytest.mark.parametrize(("a", "b"), [(2.0, 1.0), (0.5, -0.3), (6.0, 0.0)])
def test_prop_d4_derived_bound_holds_exactly(n_bins, a, b):
    g, q = _sig(a, b), _sig(1.3, 0.2)
    var_sum, mse_g, mse_b, ce, cross = _quantities(g, q, n_bins)
    assert var_sum <= prop_d4_mse_increase_bound_derived(n_bins) + 1e-12
    # the decomposition behind the bound, exactly
    assert mse_b - mse_g == pytest.approx(var_sum + 2 * cross, abs=1e-9)
    assert mse_b - mse_g <= prop_d4_mse_increase_bound_derived(n_bins, ce) + 1e-12


@pytest.mark.parametrize("n_bins", [2, 10])
def test_control_a_near_step_g_attains_the_constant(n_bins):
    # g jumps from ~0 to ~1 in the middle of one bin: that bin's variance is ~1/4, so
    # E[(g - g_B)^2] ~ 1/(4B); the bound times 0.9 is violated (the constant is tight)
    step = 1e4
    shift = step * special.logit((n_bins // 2 + 0.5) / n_bins)  # jump at a bin's midpoint
    g = _sig(step, -shift)
    var_sum, *_ = _quantities(g, _sig(1.0, 0.0), n_bins)
    bound = prop_d4_mse_increase_bound_derived(n_bins)
    assert var_sum > 0.97 * bound
    assert var_sum > 0.9 * bound  # the bound x 0.9 fails here


def test_prop_d4_derived_validation():
    with pytest.raises(ValueError, match="ce"):
        prop_d4_mse_increase_bound_derived(10, 1.5)
    with pytest.raises(ValueError, match="alpha"):
        prop_d4_mse_increase_bound_derived(10, alpha=0.5)
    assert prop_d4_mse_increase_bound_derived(10, 0.0, alpha=2.0) == pytest.approx(0.05)
