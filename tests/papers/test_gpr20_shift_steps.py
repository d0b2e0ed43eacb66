"""gpr20's covariate-shift proof steps G3 (App. D.1 step 2, eq. 44) and G4 (step 4), exactly.

Both are Hoeffding statements given the bin memberships, per bin at level alpha/(3B):

* G3: the mean weight ``r^_b = mean of w(X_i)`` of the N_b points of a bin is within
  ``sqrt(U^2 ln(6B/alpha)/(2N_b))`` of ``r_b = E_P[w(X) | X_b] = 1/m_b``;
* G4: the oracle-m_b estimator ``pi^_b^(w) = mean of m_b w(X_i) Y_i`` (eq. 40) is within the
  same radius of ``E_target[Y | X_b]`` -- as printed; its summands lie in ``[0, m_b U]``,
  so the corrected radius has scale ``m_b U``.

Given the bin, the w(X_i) are iid from the law of w(X) on the bin. A *step* likelihood
ratio (source U[0, 1], target density L on [0, t) and U on [t, 1]) makes that law two-point,
``{L, U}`` with P(U) = p (the bin's source fraction above t), and with eta = eta_L, eta_U on
either side the summands of G4 take three values: the failure probabilities are exact
binomial / trinomial sums (scipy), over a grid of N_b, B, alpha, (L, U), p and eta. This is
the extremal case of Hoeffding's inequality (all mass at two points), as in G1/G2
(``test_gpr20_count_bounds.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from calcheck.bounds import gpr20_steps

P_GRID = np.linspace(0.005, 0.995, 199)


def _mean_fails(n, values, probs, radius, slack):
    """P(|mean of n iid draws - mu| > radius) for laws on <= 3 values, exactly.

    ``values = (0, a, c)`` with ``probs = (q0, q1, q2)`` (arrays broadcast: one law per
    entry); ``slack`` > 0 counts deviations within a relative 1e-9 of the radius as
    failures (conservative for "holds"), < 0 does not.
    """
    _, a, c = (np.asarray(v, dtype=float)[..., None] for v in values)
    _, q1, q2 = (np.asarray(q, dtype=float)[..., None] for q in probs)
    mu = a * q1 + c * q2
    r = np.asarray(radius, dtype=float)[..., None] * (1.0 - 1e-9 * slack)
    k2 = np.arange(n + 1)
    w2 = binom.pmf(k2, n, q2)
    rest = n - k2
    p1 = np.where(q2 >= 1, 0.0, q1 / np.where(q2 >= 1, 1.0, 1.0 - q2))
    # fail iff a K1 + c K2 < n (mu - r) or > n (mu + r)
    lo = (n * (mu - r) - c * k2) / a
    hi = (n * (mu + r) - c * k2) / a
    below = binom.cdf(np.ceil(lo) - 1, rest, p1)
    above = binom.sf(np.floor(hi), rest, p1)
    return np.sum(w2 * (below + above), axis=-1)


def _g3_fails(n, low, up, p, radius, slack=1.0):
    """Failure of G3 for w two-point on {low, up} (P(up) = p): r^_b is a binomial mean."""
    p = np.asarray(p, dtype=float)
    return _mean_fails(n, (0.0, low + 0 * p, up + 0 * p), (0.0, 1.0 - p, p), radius, slack)


def _g4_fails(n, low, up, p, eta_low, eta_up, radius, slack=1.0):
    """Failure of G4: summands m_b w Y in {0, m_b L, m_b U}, exactly (trinomial)."""
    p = np.asarray(p, dtype=float)
    m = 1.0 / (low * (1.0 - p) + up * p)
    q1, q2 = (1.0 - p) * eta_low, p * eta_up
    return _mean_fails(n, (0.0, m * low, m * up), (1.0 - q1 - q2, q1, q2), radius, slack)


@pytest.mark.parametrize("n", [10, 50, 200, 1000])
@pytest.mark.parametrize("n_bins", [1, 10])
@pytest.mark.parametrize("alpha", [0.01, 0.1])
@pytest.mark.parametrize(("low", "up"), [(0.0, 1.5), (0.2, 1.8), (0.5, 4.0)])
def test_g3_per_bin_failure_is_at_most_alpha_over_3b(n, n_bins, alpha, low, up):
    radius = gpr20_steps.g3_weight_mean_radius(n, n_bins, alpha, up)
    worst = float(np.max(_g3_fails(n, max(low, 1e-300), up, P_GRID, radius)))
    assert worst <= alpha / (3 * n_bins)
    # every bin at its worst mass at once: P(some bin fails) <= alpha / 3 (eq. 44)
    assert 1.0 - (1.0 - worst) ** n_bins <= alpha / 3


def test_g3_half_the_radius_fails():
    # negative control: w on {0, U} with p = 1/2 (the Hoeffding-extremal law), n = 1000
    n, n_bins, alpha, up = 1000, 1, 0.1, 2.0
    half = gpr20_steps.g3_weight_mean_radius(n, n_bins, alpha, up) / 2
    assert _g3_fails(n, 1e-300, up, 0.5, half, slack=-1.0) > 4 * alpha / (3 * n_bins)


def test_g4_as_printed_fails_where_the_target_underweights_the_bin():
    # w = 0.1 below the step, 1.9 above; a bin with 5% of its source mass above the step has
    # E[w | bin] = 0.19, m_b = 5.26; eta = 0 below, 1 above: the summands m_b w Y are 0 or
    # m_b U = 10 > U = 1.9, so the printed scale U is far too small
    low, up, p = 0.1, 1.9, 0.05
    for n, n_bins, alpha, fails in ((200, 1, 0.1, 0.25), (1000, 10, 0.1, 0.12)):
        radius = gpr20_steps.g4_oracle_hoeffding_radius(n, n_bins, alpha, up)
        failure = _g4_fails(n, low, up, p, 0.0, 1.0, radius, slack=-1.0)
        assert failure == pytest.approx(fails, abs=0.01)
        assert failure > 30 * alpha / (3 * n_bins) or n_bins == 1
        assert failure > 7 * alpha / (3 * n_bins)
    # the corrected scale m_b U holds at the same bin
    m_b = 1.0 / (low * (1 - p) + up * p)
    radius = gpr20_steps.g4_oracle_hoeffding_radius_corrected(200, 1, 0.1, up, m_b)
    assert _g4_fails(200, low, up, p, 0.0, 1.0, radius) <= 0.1 / 3


@pytest.mark.parametrize("n", [10, 50, 300])
@pytest.mark.parametrize("n_bins", [1, 10])
@pytest.mark.parametrize(("low", "up"), [(0.1, 1.9), (0.5, 1.5), (0.25, 4.0)])
def test_g4_corrected_and_final_forms_hold(n, n_bins, low, up):
    alpha = 0.1
    final = (up / low) ** 2 * np.sqrt(np.log(6 * n_bins / alpha) / (2 * n))  # (U/L)^2 form
    m_b = 1.0 / (low * (1 - P_GRID) + up * P_GRID)
    radius = gpr20_steps.g4_oracle_hoeffding_radius_corrected(n, n_bins, alpha, up, m_b)
    assert np.all(radius <= final * (1 + 1e-12))  # m_b U <= U/L <= (U/L)^2
    worst = max(
        float(np.max(_g4_fails(n, low, up, P_GRID, eta_low, eta_up, radius)))
        for eta_low in (0.0, 0.5, 1.0)
        for eta_up in (0.0, 0.5, 1.0)
    )
    assert worst <= alpha / (3 * n_bins)


def test_g4_corrected_half_radius_fails():
    # negative control: L + U = 2, p = 1/2 (m_b = 1), eta = 1{w = U}: m_b w Y is U x Bern(1/2)
    n, n_bins, alpha, low, up = 1000, 1, 0.1, 0.5, 1.5
    half = gpr20_steps.g4_oracle_hoeffding_radius_corrected(n, n_bins, alpha, up, 1.0) / 2
    assert _g4_fails(n, low, up, 0.5, 0.0, 1.0, half, slack=-1.0) > 3 * alpha / (3 * n_bins)


def test_step_radii_by_hand():
    # sqrt(U^2 ln(6B/alpha)/(2N)) at U = 2, B = 10, alpha = 0.1, N = 500: 2 sqrt(ln 600/1000)
    assert gpr20_steps.g3_weight_mean_radius(500, 10, 0.1, 2.0) == pytest.approx(
        2 * np.sqrt(np.log(600) / 1000)
    )
    assert gpr20_steps.g4_oracle_hoeffding_radius(500, 10, 0.1, 2.0) == pytest.approx(
        0.159962, 1e-5
    )
    assert gpr20_steps.g4_oracle_hoeffding_radius_corrected(500, 10, 0.1, 2.0, 1.5) == (
        pytest.approx(1.5 * gpr20_steps.g3_weight_mean_radius(500, 10, 0.1, 2.0))
    )
    assert gpr20_steps.g3_weight_mean_radius(0, 10, 0.1, 2.0) == np.inf


def test_step_ratio_law_closed_forms_and_the_g3_estimator():
    from calcheck.simulations.experiments.gpr20_shift import ShiftExperiment
    from calcheck.simulations.laws.shift import StepShiftLaw

    law = StepShiftLaw(0.1, 0.595, 0.0, 1.0)
    up = (1 - 0.1 * 0.595) / 0.405
    assert law.upper == pytest.approx(up)
    assert law.target_mass(0.0, 1.0) == pytest.approx(1.0)
    # the bin [0.5, 0.6): 0.095 below the step, 0.005 above
    assert law.target_mass(0.5, 0.6) == pytest.approx(0.1 * 0.095 + up * 0.005)
    assert law.target_bin_mean(0.5, 0.6) == pytest.approx(up * 0.005 / (0.0095 + up * 0.005))
    m_b = 0.1 / law.target_mass(0.5, 0.6)
    assert m_b == pytest.approx(4.7368, abs=1e-4)
    exp = ShiftExperiment(law, 300, 10, "weight_mean", "fixed_width")
    out = exp.simulate(np.random.default_rng(0), 50)
    assert np.allclose(out.m_b[:, 5], m_b)
    # bins without the step have constant weights: r^_b = r_b exactly
    assert np.all(out.error[:, [0, 1, 2, 3, 4, 6, 7, 8, 9]] < 1e-12)
    assert np.all(out.error[:, 5] <= up - 0.1)
