"""gpr20 bounds: hand-computed values, validation, monotonicity, registry entries."""

import math

import numpy as np
import pytest

from calcheck.bounds import gpr20, gpr20_shift, registry
from calcheck.simulations.laws.shift import SHIFT_LAWS

# ------------------------------------------------------------------ reference values


def test_thm4_hand_computed():
    log_term = math.log(30 / 0.1)
    want = math.sqrt(2 * 0.16 * log_term / 400) + 3 * log_term / 400
    assert gpr20.thm4_halfwidth(400, 0.16, 10, 0.1) == pytest.approx(want, rel=1e-14)


def test_thm6_stated_dominates_intermediate_except_for_tiny_alpha():
    """Catalog §9 A1: the stated form dominates unless ln(6.3B/alpha) >~ 57."""
    n = np.arange(1, 20001)
    for alpha in (0.2, 0.1, 0.01, 1e-6, 1e-12):
        for frac in (0.0, 0.05, 0.25):
            v = np.maximum(frac * n, 1.0)
            assert np.all(
                gpr20.thm6_halfwidth(n, v, 10, alpha)
                >= gpr20.thm6_halfwidth_intermediate(n, v, 10, alpha)
            )
    # The dropped 1.46 sqrt(V ln(6.3B/alpha)) term wins for ln(6.3B/alpha) ~ 80.
    v = np.logspace(0, 8, 400)
    gap = gpr20.thm6_halfwidth_intermediate(10**9, v, 10, 1e-33) - gpr20.thm6_halfwidth(
        10**9, v, 10, 1e-33
    )
    assert gap.max() > 0


def test_lower_bounds_and_cor3():
    assert gpr20.thm3_eps_lower_bound(0.1) == pytest.approx(0.2)
    assert gpr20.thm3_eps_lower_bound(0.05) == pytest.approx(0.225)
    assert gpr20.cor1_width_lower_bound(0.1) == pytest.approx(0.4)
    assert gpr20.cor1_width_probability(0.1) == pytest.approx(0.8)
    counts, var = np.array([[10, 20]]), np.array([[0.0, 0.25]])
    stated = gpr20.cor3_eps_stated(counts, var, 0.1)
    valid = gpr20.cor3_eps_max_halfwidth(counts, var, 0.1)
    assert stated == pytest.approx(gpr20.thm4_halfwidth(10, 0.0, 2, 0.1))
    assert valid == pytest.approx(max(stated, gpr20.thm4_halfwidth(20, 0.25, 2, 0.1)))
    # The counterexample configuration: the fewest points, zero variance, smaller radius.
    counts, var = np.array([1000, 2000]), np.array([0.0, 0.25])
    assert gpr20.cor3_eps_stated(counts, var, 0.1) < gpr20.cor3_eps_max_halfwidth(counts, var, 0.1)


def test_prop3_identity_exact():
    law = SHIFT_LAWS["shift_sine"]
    lo, hi = np.array([0.0, 0.13, 0.5]), np.array([0.13, 0.5, 1.0])
    p, q = law.source_mass(lo, hi), law.target_mass(lo, hi)
    got = gpr20_shift.prop3_target_bin_mean(p, q, law.source_weighted_moment(lo, hi) / p)
    np.testing.assert_allclose(got, law.target_bin_mean(lo, hi), atol=1e-13)
    # companion identity (41): E_P[w | X_b] = 1 / m_b
    # w is linear: its mean over a bin is w at the bin's midpoint.
    np.testing.assert_allclose(law.weight((lo + hi) / 2), q / p, rtol=1e-12)


@pytest.mark.parametrize(
    ("call", "word"),
    [
        (lambda: gpr20.thm4_halfwidth(100, 0.25, 10, 1.2), "alpha"),
        (lambda: gpr20.thm4_halfwidth(-1, 0.25, 10, 0.1), "n_bin"),
        (lambda: gpr20.thm4_halfwidth(10, -0.1, 10, 0.1), "variance"),
        (lambda: gpr20.thm6_halfwidth(10, 3, 0, 0.1), "n_bins"),
        (lambda: gpr20_shift.thm7_halfwidth(100, 10, 0.1, 0.5, 0.5), "upper"),
        (lambda: gpr20_shift.thm7_halfwidth(100, 10, 0.1, 2.0, 1.5), "lower"),
        (lambda: gpr20_shift.thm7_halfwidth(100, 10, 0.1, 2.0, 0.5, c=0), "c"),
        (lambda: gpr20.thm3_eps_lower_bound(0.5), "alpha"),
        (lambda: gpr20.cor3_eps_stated([1, 2], [0.1], 0.1), "variances"),
        (lambda: gpr20_shift.thm10_halfwidth(10, 0.1, -1.0, 2.0, 10, 0.1), "m_b"),
    ],
)
def test_bad_arguments_name_the_argument(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_empty_bin_is_infinite_not_nan():
    assert math.isinf(gpr20.thm4_halfwidth(0, 0.0, 10, 0.1))
    assert math.isinf(gpr20.thm6_halfwidth(0, 0.0, 10, 0.1))
    assert math.isinf(gpr20.cor3_eps_max_halfwidth([0, 5], [0.0, 0.1], 0.1))


def test_monotonicity():
    n = np.arange(1, 2000)
    hw = gpr20.thm4_halfwidth(n, 0.2, 10, 0.1)
    assert np.all(np.diff(hw) < 0)
    v = np.linspace(0, 0.25, 50)
    assert np.all(np.diff(gpr20.thm4_halfwidth(100, v, 10, 0.1)) > 0)
    assert np.all(np.diff(gpr20.thm4_halfwidth(100, 0.2, np.arange(1, 50), 0.1)) > 0)
    a = np.linspace(0.01, 0.5, 30)
    assert np.all(np.diff(gpr20.thm6_halfwidth(500, 120, 10, a)) < 0)
    # Theorem 10 with m_b U = 1 is Theorem 4.
    assert gpr20_shift.thm10_halfwidth(300, 0.2, 0.5, 2.0, 10, 0.1) == pytest.approx(
        gpr20.thm4_halfwidth(300, 0.2, 10, 0.1)
    )


def test_registry_lists_gpr20():
    ids = {g.id for g in registry.all_guarantees() if g.paper == "gpr20"}
    assert ids == {
        "gpr20.thm4",
        "gpr20.thm4.hoeffding",
        "gpr20.cor3",
        "gpr20.cor3.max_halfwidth",
        "gpr20.thm5",
        "gpr20.thm6",
        "gpr20.thm6.intermediate",
        "gpr20.thm7",
        "gpr20.thm7.explicit",
        "gpr20.thm10",
        "gpr20.prop2",
        "gpr20.prop3",
        "gpr20.g3",
        "gpr20.g4",
        "gpr20.g4.corrected",
        "gpr20.thm3",
        "gpr20.cor1",
    }
    assert registry.get("gpr20.thm6").quantifier == "time_uniform"
    assert registry.get("gpr20.cor3.max_halfwidth").variant_of == "gpr20.cor3"
    for g in registry.all_guarantees():
        assert g.function.__doc__, g.id
        assert "Notes" in g.function.__doc__, g.id
