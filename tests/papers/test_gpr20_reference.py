"""gpr20 reference values (Gupta, Podkopaev & Ramdas 2020).

Values come from the catalog gpr20 §5 ("computed by me from the paper's formulas"),
given there to 3-6 decimals; tolerances are the rounding of the quoted value.
"""

import math

import numpy as np
import pytest

from calcheck.bounds import gpr20, gpr20_shift

# ------------------------------------------------------------------ reference values


@pytest.mark.parametrize(
    ("n", "v", "b", "a", "want"),
    [
        (100, 0.25, 10, 0.1, 0.339989),
        (100, 0.0, 10, 0.1, 0.171113),
        (1000, 0.21, 15, 0.05, 0.073858),
    ],
)
def test_thm4_catalog_values(n, v, b, a, want):
    assert gpr20.thm4_halfwidth(n, v, b, a) == pytest.approx(want, abs=5e-7)


def test_thm4_and_hoeffding_series():
    """Catalog §5: V^ = 1/4, B = 10, alpha = 0.1, N = 50 ... 5000 (3 decimals)."""
    n = np.array([50, 200, 500, 1000, 5000])
    np.testing.assert_allclose(
        gpr20.thm4_halfwidth(n, 0.25, 10, 0.1), [0.581, 0.205, 0.110, 0.071, 0.027], atol=5e-4
    )
    np.testing.assert_allclose(
        gpr20.hoeffding_bin_halfwidth(n, 10, 0.1), [0.230, 0.115, 0.073, 0.051, 0.023], atol=5e-4
    )


def test_thm6_catalog_values():
    np.testing.assert_allclose(
        gpr20.thm6_halfwidth(np.array([100, 1000, 5000]), np.array([25, 250, 1250]), 10, 0.1),
        [0.762, 0.186, 0.078],
        atol=5e-4,
    )
    assert gpr20.thm6_halfwidth(100, 25, 10, 0.1) == pytest.approx(0.7616, abs=5e-5)
    assert gpr20.thm6_halfwidth_intermediate(100, 25, 10, 0.1) == pytest.approx(0.5305, abs=1e-4)
    assert gpr20.thm6_halfwidth(10**4, 2500, 10, 0.1) == pytest.approx(0.0551, abs=5e-5)
    assert gpr20.thm6_halfwidth_intermediate(10**4, 2500, 10, 0.1) == pytest.approx(
        0.0261, abs=5e-5
    )


def test_thm6_constants():
    c = gpr20.thm6_constants()
    assert c["zeta_s"] == pytest.approx(3.105547, abs=5e-7)
    assert c["k1"] == pytest.approx(1.458638, abs=5e-7)
    assert c["k2"] == pytest.approx(1.872929, abs=5e-7)
    assert c["k1_sqrt_s"] == pytest.approx(1.725884, abs=5e-7)
    # The rounded constants of the proof are upper bounds of the exact ones.
    assert c["two_zeta_s"] <= 6.3
    assert c["k1"] <= 1.46
    assert 2 * c["k2"] <= 3.76
    assert 1.4 * 3.76 <= 5.27
    assert 1.46 * math.sqrt(1.4) + 5.27 <= 7.0


def test_thm5_catalog_values():
    n2 = np.array([1000, 2000, 5000, 10**4, 10**5])
    np.testing.assert_allclose(
        gpr20.thm5_min_count(n2, 10, 0.1), [-1.5, 27.2, 134.9, 337.2, 4485.3], atol=0.05
    )
    np.testing.assert_allclose(
        [gpr20.thm5_positive_from(b, 0.1) for b in (10, 5, 20)],
        [1059.66, 230.26, 4793.17],
        atol=0.01,
    )
    assert gpr20.thm5_min_count(1059, 10, 0.1) < 0 < gpr20.thm5_min_count(1060, 10, 0.1)
    assert gpr20.thm5_cal1_size(10, 0.1, c=2.0) == pytest.approx(20 * math.log(200))


def test_thm7_explicit_and_condition():
    """Catalog §4.12: N_b = 500, U = 2, L = 1/2, B = 10, alpha = 0.1: 3 (U/L)^2 form 3.84
    (vacuous); the bound needs N_b > 2 U^2 ln(6B/alpha) / L^2 = 204.7."""
    log_term = math.log(600)
    three_form = 3 * 16 * math.sqrt(log_term / 1000)
    assert three_form == pytest.approx(3.84, abs=5e-3)
    got = gpr20_shift.thm7_explicit_halfwidth(500, 10, 0.1, 2.0, 0.5)
    assert got == pytest.approx((2 * 4 * 4 + 2 * 2) * math.sqrt(log_term / 1000))
    assert got <= three_form
    r = gpr20_shift.thm7_explicit_halfwidth(np.array([204, 205]), 10, 0.1, 2.0, 0.5)
    assert np.isinf(r[0])
    assert np.isfinite(r[1])
    assert gpr20_shift.thm7_halfwidth(10000, 10, 0.1, 1.5, 0.5) == pytest.approx(
        9 * math.sqrt(10 * log_term / 20000)
    )
    assert gpr20_shift.thm7_min_n(10, 0.1, 1.5, 0.5) == pytest.approx(9 * 10 * log_term**2)
