"""nch14 bounds: hand-computed values, the factor between the two Theorem 3.1 forms, validation."""

import numpy as np
import pytest

from calcheck.bounds import nch14, nch14_auc, registry


def test_theorem31_values_and_the_factor_two():
    # catalog G4: N = 1000, B = 10, delta = 0.1 -> 0.326 (printed) and 0.163 (Hoeffding)
    printed = nch14.thm31_mce_bound(1000, 10, 0.1)
    assert printed == pytest.approx(np.sqrt(20 * np.log(200) / 1000))
    assert printed == pytest.approx(0.3255, abs=1e-4)
    assert nch14.thm31_mce_bound_hoeffding(1000, 10, 0.1) == pytest.approx(printed / 2)
    # vacuous at N = 100, B = 10 (catalog: 1.03)
    assert nch14.thm31_mce_bound(100, 10, 0.1) == pytest.approx(1.029, abs=1e-3)
    grid = nch14.thm31_mce_bound(np.array([100, 400]), 10, 0.05)
    assert grid[0] / grid[1] == pytest.approx(2.0)


def test_per_bin_radius_and_rates():
    assert nch14.eq1_bin_rate_radius(1000, 10, 0.1) == pytest.approx(
        np.sqrt(10 * np.log(20) / 2000)
    )
    assert nch14.cor32_mce_rate(1000, 10, c=2.0) == pytest.approx(
        2 * np.sqrt(10 * np.log(10) / 1000)
    )
    with pytest.raises(ValueError, match="c must be given"):
        nch14.cor32_mce_rate(1000, 10, c=None)
    with pytest.raises(ValueError, match="n_bins must be >= 2"):
        nch14.cor32_mce_rate(1000, 1, c=1.0)
    r = np.sqrt(10 / 1000)
    assert nch14.thm33_ece_bound(1000, 10) == pytest.approx(np.sqrt(2 * np.pi) * r)
    assert nch14.thm33_ece_bound_hoeffding(1000, 10) == pytest.approx(1.2533 * r, abs=1e-5)
    assert nch14.thm33_ece_bound_variance(1000, 10) == pytest.approx(0.5 * r)


def test_auc_bounds_and_chebyshev():
    assert nch14_auc.thm34_auc_loss_bound(10) == pytest.approx(0.05)
    # equal masses: (1/2) sum theta (1 - theta) / (B^2 pi1 pi0) <= 1/(2B), equality iff equal
    theta = np.array([0.5, 0.5, 0.5, 0.5])
    eta = np.full(4, 0.25)
    assert nch14_auc.thm34_auc_loss_bound_unequal(eta, theta) == pytest.approx(1 / 8)
    spread = np.array([0.1, 0.4, 0.6, 0.9])
    assert nch14_auc.thm34_auc_loss_bound_unequal(eta, spread) < 1 / 8
    # one bin holding almost all the mass: the same-bin bound nears 1/2
    assert nch14_auc.thm34_auc_loss_bound_unequal([0.97, 0.01, 0.01, 0.01], theta) > 0.45
    with pytest.raises(ValueError, match="sum to 1"):
        nch14_auc.thm34_auc_loss_bound_unequal([0.5, 0.4], [0.5, 0.5])
    assert nch14_auc.chebyshev_sum_gap([1, 2, 3], [3, 2, 1]) == pytest.approx(10 / 3 - 4)
    assert nch14_auc.chebyshev_sum_gap([1, 2, 3], [3, 2, 1]) <= 0
    rng = np.random.default_rng(0)
    for _ in range(100):
        a = np.sort(rng.random(7))
        assert nch14_auc.chebyshev_sum_gap(a, 1 - a) <= 1e-15


def test_validation_and_registry():
    with pytest.raises(ValueError, match="alpha"):
        nch14.thm31_mce_bound(1000, 10, 0.0)
    with pytest.raises(ValueError, match="n_bins"):
        nch14.thm31_mce_bound(1000, 0, 0.1)
    ids = {g.id for g in registry.guarantees_of("nch14")}
    assert {"nch14.thm31", "nch14.thm31.hoeffding", "nch14.cor32", "nch14.thm33"} <= ids
    assert registry.get("nch14.thm31.hoeffding").variant_of == "nch14.thm31"


def test_per_bin_mass_radius_and_eq2():
    assert nch14.eq8_bin_mass_radius(1000, 0.05) == pytest.approx(np.sqrt(np.log(40) / 2000))
    assert nch14.eq2_output_bin_bound(0.3) == 0.3
    with pytest.raises(ValueError, match="max_bin_error"):
        nch14.eq2_output_bin_bound(1.5)


def test_loss_part_bounds():
    assert nch14_auc.loss1_bound() == 0.0
    assert nch14_auc.loss2_bound(10) == pytest.approx(0.05)
    assert registry.get("nch14.loss2").quantifier == "asymptotic"


def test_eq3_output_bin_radius_is_twice_eq1_with_one_input_bin():
    from calcheck.bounds.nch14 import eq1_bin_rate_radius, eq3_output_bin_radius

    # eq. (3)'s exponent n eps^2 / (2B) is 4 times eq. (1)'s: the radius doubles (k = 1)
    assert eq3_output_bin_radius(1000, 10, 0.1) == pytest.approx(
        2 * eq1_bin_rate_radius(1000, 10, 0.1)
    )
    # by hand: sqrt(2 * 10 * log(2 * 3 / 0.1) / 1000) with k = 3 input bins
    assert eq3_output_bin_radius(1000, 10, 0.1, k=3) == pytest.approx(
        np.sqrt(20 * np.log(60) / 1000)
    )
    with pytest.raises(ValueError, match="k"):
        eq3_output_bin_radius(1000, 10, 0.1, k=0)
