"""Scaling calibrators (batched Newton vs scipy), weighted binning, uLSIF, shift laws."""

import numpy as np
import pytest
from scipy import optimize

from calcheck.simulations.calibrators.scaling import (
    BetaCalibration,
    PlattScaling,
    TemperatureScaling,
)
from calcheck.simulations.calibrators.weighted import ULSIF, WeightedHistogramBinning
from calcheck.simulations.laws import ConditionalMean
from calcheck.simulations.laws.shift import SHIFT_LAWS, LinearShiftLaw

# ------------------------------------------------------------------ reference values


def _scaling_data(rng, n=2000):
    s = rng.beta(2, 3, n)
    y = (rng.random(n) < s**1.5).astype(float)
    return s, y


@pytest.mark.parametrize("cls", [PlattScaling, TemperatureScaling])
def test_newton_fit_matches_scipy(cls):
    s, y = _scaling_data(np.random.default_rng(3))
    model = cls().fit(s, y)
    z = np.log(s) - np.log1p(-s)

    def nll(theta):
        t = theta[0] * z + (theta[1] if theta.size > 1 else 0.0)
        return np.sum(np.logaddexp(0, t) - y * t)

    x0 = np.zeros(2 if cls is PlattScaling else 1)
    ref = optimize.minimize(nll, x0, method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(model.coef_, ref, atol=1e-5)
    h = model.predict_proba(s)
    assert h.shape == (s.size, 2)
    assert np.allclose(h.sum(axis=1), 1)
    assert model.is_injective_


def test_beta_calibration_constraints():
    rng = np.random.default_rng(4)
    s, y = _scaling_data(rng)
    coef = BetaCalibration().fit(s, y).coef_
    assert coef[0] >= 0
    assert coef[1] >= 0
    # Labels that decrease in s force a = 0 (and here b = 0 as well: a constant map).
    s2 = rng.random(3000)
    y2 = (rng.random(3000) < 1 - s2).astype(float)
    fitted = BetaCalibration().fit(s2, y2)
    assert fitted.coef_[0] == 0
    assert fitted.coef_[1] >= 0
    with pytest.raises(ValueError, match="scores"):
        BetaCalibration().fit(s2 + 1, y2)
    with pytest.raises(ValueError, match="not fitted"):
        PlattScaling().predict(s2)


def test_weighted_binning_hand_computed():
    s = np.array([0.1, 0.2, 0.6, 0.7, 0.9])
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    w = np.array([3.0, 1.0, 1.0, 1.0, 2.0])
    m = WeightedHistogramBinning(2, partition="fixed_width").fit(s, y, sample_weight=w)
    np.testing.assert_allclose(m.values_, [3 / 4, 2 / 4])
    np.testing.assert_allclose(m.counts_, [2, 3])
    assert m.predict(np.array([0.05, 0.95])).tolist() == [0.75, 0.5]
    plain = WeightedHistogramBinning(2, partition="fixed_width").fit(s, y)
    np.testing.assert_allclose(plain.values_, [0.5, 2 / 3])
    with pytest.raises(ValueError, match="split"):
        WeightedHistogramBinning(10, split=0.5).fit(s, y)


def test_ulsif_recovers_linear_ratio():
    law = LinearShiftLaw(0.5, ConditionalMean("power"))
    rng = np.random.default_rng(5)
    model = ULSIF(rng=6).fit(law.sample_source(2000, rng), law.sample_target(2000, rng))
    x = np.linspace(0.02, 0.98, 49)
    err = np.mean((model.predict(x) - law.weight(x)) ** 2)
    # Seeds 0-3 give 2-9 % of the squared error of the constant ratio 1 (no correction).
    assert err < 0.2 * np.mean((1.0 - law.weight(x)) ** 2)


def test_target_sampler_matches_target_cdf():
    law = SHIFT_LAWS["shift_identity"]
    x = law.sample_target(200000, np.random.default_rng(7))
    for t in (0.1, 0.5, 0.9):
        assert np.mean(x <= t) == pytest.approx(law.target_cdf(t), abs=4e-3)


def test_fixed_width_plugin_ece_by_hand():
    from calcheck.simulations.metrics import fixed_width_reliability, plugin_ece_fixed_width

    p = np.array([0.05, 0.05, 0.95, 1.0])
    y = np.array([0.0, 1.0, 1.0, 1.0])
    mass, mp, fp = fixed_width_reliability(p, y, 2)
    np.testing.assert_allclose(mass, [0.5, 0.5])
    np.testing.assert_allclose(mp, [0.05, 0.975])
    np.testing.assert_allclose(fp, [0.5, 1.0])
    assert plugin_ece_fixed_width(p, y, 2) == pytest.approx(0.5 * 0.45 + 0.5 * 0.025)
