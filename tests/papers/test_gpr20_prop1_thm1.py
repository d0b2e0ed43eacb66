"""gpr20 Proposition 1 and Theorem 1, exactly on finite laws (catalog Secs. 4.1-4.2).

Proposition 1: f is perfectly calibrated iff f(x) = E[Y | g(X) = g(x)] for some g.
Theorem 1 (ii): if C is a (1 - alpha)-CI w.r.t. f, then the midpoint map m_C(f) is
(eps, alpha)-calibrated with eps = sup_z |C(z)| / 2, colliding midpoints included.
Levels with equal outputs are merged by calcheck's ``merge_equal_outputs`` (the conditioning
is on the output, not on the level), so every quantity below is exact (to 1e-12).
"""

from __future__ import annotations

import numpy as np
import pytest

from calcheck.simulations.metrics.exact import merge_equal_outputs


def _output_errors(outputs, mass, eta):
    """|E[Y | f(X) = f(x)] - f(x)| per point of a finite law (outputs merged)."""
    keys = np.rint(np.asarray(outputs) * 10**12)[None]
    m, mo = merge_equal_outputs(keys, np.asarray(mass)[None], (np.asarray(mass) * eta)[None])
    return np.abs(mo[0] / m[0] - np.asarray(outputs))


@pytest.fixture
def finite_law():
    rng = np.random.default_rng(5)
    mass = rng.dirichlet(np.ones(10))
    eta = rng.uniform(0.05, 0.95, 10)
    return mass, eta


def test_prop1_a_coarsening_gives_a_calibrated_map(finite_law):
    mass, eta = finite_law
    for g in (np.array([0, 0, 1, 1, 1, 2, 2, 3, 3, 3]), np.arange(10), np.zeros(10, int)):
        f = np.array(
            [np.sum(mass[g == g[i]] * eta[g == g[i]]) / mass[g == g[i]].sum() for i in range(10)]
        )
        assert np.max(_output_errors(f, mass, eta)) == pytest.approx(0.0, abs=1e-12)
    # the constant g gives E[Y]; the identity the Bayes regressor eta itself
    assert f[0] == pytest.approx(np.sum(mass * eta))
    # counter-check: a monotone transform of a calibrated map is not calibrated
    g = np.array([0, 0, 1, 1, 1, 2, 2, 3, 3, 3])
    f = np.array([np.sum(mass[g == k] * eta[g == k]) / mass[g == k].sum() for k in g])
    assert np.max(_output_errors(f**2, mass, eta)) > 0.05


def test_prop1_merging_levels_with_equal_outputs_keeps_calibration():
    # two g-levels with the same f-value (colliding outputs) pool into one level set
    mass = np.full(4, 0.25)
    eta = np.array([0.2, 0.4, 0.1, 0.5])
    f = np.array([0.3, 0.3, 0.3, 0.3])  # levels {0, 1} and {2, 3}: both average 0.3
    assert np.max(_output_errors(f, mass, eta)) == pytest.approx(0.0, abs=1e-12)


def test_thm1_ii_midpoints_of_a_ci_are_calibrated_with_colliding_midpoints():
    # f has 6 levels z with masses w and means mu = E[Y | f = z]; C(z) misses mu on levels
    # of total mass alpha = 0.1 and has very different widths; levels 0 and 1 share the
    # midpoint 0.5 although their means differ (0.45, 0.58)
    w = np.array([0.2, 0.2, 0.1, 0.25, 0.15, 0.1])
    mu = np.array([0.45, 0.58, 0.9, 0.2, 0.7, 0.3])
    lo = np.array([0.40, 0.30, 0.60, 0.15, 0.69, 0.00])
    hi = np.array([0.60, 0.70, 0.80, 0.25, 0.71, 0.40])  # level 2 (mass 0.1) misses 0.9
    alpha = 0.1
    covered = (lo <= mu) & (mu <= hi)
    assert w[~covered].sum() == pytest.approx(alpha)  # C is a (1 - alpha)-CI w.r.t. f
    midpoint = (lo + hi) / 2
    eps = np.max(hi - lo) / 2
    err = _output_errors(midpoint, w, mu)
    assert np.sum(w * (err <= eps + 1e-12)) >= 1 - alpha - 1e-12
    # the merged level of the colliding midpoints has mean (0.45 + 0.58) / 2 = 0.515
    assert err[0] == pytest.approx(0.015)
    # eps is the sup over z: with the range's smallest half-width the claim fails
    assert np.sum(w * (err <= np.min(hi - lo) / 2)) < 1 - alpha


def test_thm1_ii_is_exactly_tight_when_the_missed_level_sits_at_the_edge():
    w = np.array([0.9, 0.1])
    mu = np.array([0.5, 0.5])
    lo, hi = np.array([0.4, 0.0]), np.array([0.6, 0.2])  # level 1 misses 0.5 by 0.3
    err = _output_errors((lo + hi) / 2, w, mu)
    eps = np.max(hi - lo) / 2
    assert np.sum(w * (err <= eps + 1e-12)) == pytest.approx(0.9)  # exactly 1 - alpha


def test_thm1_i_the_eps_interval_is_a_ci_iff_f_is_eps_alpha_calibrated(finite_law):
    mass, eta = finite_law
    f = np.clip(eta + np.linspace(-0.1, 0.1, 10), 0, 1)
    err = _output_errors(f, mass, eta)  # f is injective here: E[Y | f] = eta
    for eps in (0.02, 0.05, 0.08):
        calibrated = np.sum(mass * (err <= eps))
        covered = np.sum(mass * ((f - eps <= eta) & (eta <= f + eps)))
        assert covered == pytest.approx(calibrated)  # an identity of events
