"""Bounds of gr21: reference values (paper and catalog), validation, properties."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from calcheck.bounds import all_guarantees, get, gr21, inverse

# Catalog gr21 §5 golden table (natural log, alpha = 0.1, B = 10), given to 4 decimals:
# tolerance 5e-5 is the rounding of the table.
GOLDEN = {
    # n: (Thm3 eq. 8, Cor1 eq. 10, Thm4 eps1, Thm4 eps2, sqrt(B/2n))
    150: (0.4350, 0.5017, 0.3271, 0.4350, 0.1826),
    500: (0.2325, 0.2525, 0.1748, 0.2325, 0.1000),
    1000: (0.1636, 0.1736, 0.1230, 0.1636, 0.0707),
    1500: (0.1333, 0.1400, 0.10026, 0.1333, 0.0577),
    1510: (0.1329, 0.1395, 0.0999, 0.1329, 0.0575),
    2660: (0.1000, 0.1037, 0.0752, 0.1000, 0.0434),
    2860: (0.0964, 0.0999, 0.0725, 0.0964, 0.0418),
    2900: (0.0957, 0.0992, 0.0720, 0.0957, 0.0415),
    3000: (0.0941, 0.0975, 0.0708, 0.0941, 0.0408),
    5000: (0.0729, 0.0749, 0.0548, 0.0729, 0.0316),
    7000: (0.0616, 0.0630, 0.0463, 0.0616, 0.0267),
    10000: (0.0515, 0.0525, 0.0387, 0.0515, 0.0224),
}


@pytest.mark.parametrize("n", sorted(GOLDEN))
def test_catalog_golden_table(n):
    values = (
        gr21.thm3_conditional_eps(n, 10, 0.1),
        gr21.cor1_conditional_eps(n, 10, 0.1),
        gr21.thm4_marginal_eps(n, 10, 0.1),
        gr21.thm4_conditional_eps(n, 10, 0.1),
        gr21.thm4_ece_mean_bound(n, 10),
    )
    for got, want in zip(values, GOLDEN[n], strict=True):
        assert got == pytest.approx(want, abs=5e-5)


def test_hand_computed_thm3():
    # n = 3000, B = 10: floor(n/B) - 1 = 299, log(2B/alpha) = log(200).
    assert gr21.thm3_conditional_eps(3000, 10, 0.1) == math.sqrt(math.log(200) / 598)


@pytest.mark.parametrize(
    ("n", "b", "paper", "exact"),
    [(1000, 5, 0.12, 0.1076), (5000, 10, 0.08, 0.0729), (20000, 22, 0.06, 0.0579)],
)
def test_figure2_caption_points(n, b, paper, exact):
    """Fig. 2 caption: eps <= 0.12 / 0.08 / 0.06; eq. (8) gives 0.1076 / 0.0729 / 0.0579."""
    eps = gr21.thm3_conditional_eps(n, b, 0.1)
    assert eps <= paper
    assert eps == pytest.approx(exact, abs=5e-5)


def test_stated_sample_sizes():
    # §2.2 / §3.2: (2900, 0.1, 10) gives eq. (10) < 0.1; minimum n: 2660 / 2860 / 1510.
    assert gr21.cor1_conditional_eps(2900, 10, 0.1) == pytest.approx(0.09919, abs=1e-5)
    assert inverse.min_n_for_eps(gr21.thm3_conditional_eps, 0.1, 10, 0.1) == 2660
    assert inverse.min_n_for_eps(gr21.cor1_conditional_eps, 0.1, 10, 0.1) == 2860
    assert inverse.min_n_for_eps(gr21.thm4_marginal_eps, 0.1, 10, 0.1) == 1510
    # Catalog §9 item 1: the paper's "n = 1500 suffices" is rounded; eps1(1500) = 0.10026.
    assert gr21.thm4_marginal_eps(1500, 10, 0.1) > 0.1


def test_single_bin_example():
    # §3: n = 150, alpha = 0.1 gives about 0.1 (0.0999 with natural logs).
    assert gr21.single_bin_hoeffding_eps(150, 0.1) == pytest.approx(0.0999, abs=1e-4)


def test_extra_term_of_cor1():
    # §3.2: with n/B >= 151 the extra term 1/floor(n/B) of eq. (10) is <= 0.007.
    assert gr21.zadrozny_elkan_shift_bound(1510, 10) == pytest.approx(1 / 151)
    assert gr21.zadrozny_elkan_shift_bound(1510, 10) <= 0.007


def test_ums_recipe_appendix_b():
    # App. B: N_b* >= 300, split 1 >= 8000 (exact 8294.3), n' about 9500 (9579 exact), total
    # "17500" (catalog: about 17873 with exact arithmetic).
    r = gr21.ums_required_n(0.1, 0.1, 10)
    assert r.min_bin_count == 300
    assert r.n_quantile == math.ceil(100 * 10 * math.log(4000))
    assert 9500 <= r.n_count <= 9600
    assert 17500 <= r.n_total <= 17900
    # The count step holds at n_count and fails one below.
    coef = math.log(2 * 10 / 0.025) / 2
    assert r.n_count / 20 - math.sqrt(r.n_count * coef) >= 300
    assert (r.n_count - 1) / 20 - math.sqrt((r.n_count - 1) * coef) < 300
    assert gr21.ums_required_n(0.1, 0.1, 10, c=2000).n_total > r.n_total


def test_theorem4_theory_curve_catalog_values():
    curve = gr21.thm4_validity_curve
    assert curve(0.05, 3000, 10) == pytest.approx(0.552, abs=1e-3)
    assert curve(0.06, 3000, 10) == pytest.approx(0.768, abs=1e-3)
    assert curve(0.08, 3000, 10) == pytest.approx(0.956, abs=1e-3)
    assert curve(0.0339, 3000, 10) == 0.0
    assert curve(0.05, 7000, 10) == pytest.approx(0.939, abs=1e-3)
    assert curve(0.08, 3000, 10, conditional=True) == pytest.approx(0.565, abs=1e-3)
    assert curve(0.10, 3000, 10, conditional=True) == pytest.approx(0.949, abs=1e-3)
    assert curve(0.12, 1000, 10, conditional=True) == 0.0
    # Inverse of eq. (11): at eps1(alpha) the curve is 1 - alpha.
    e = gr21.thm4_marginal_eps(3000, 10, 0.1)
    assert curve(e, 3000, 10) == pytest.approx(0.9)


def test_max_bins_for_eps_matches_figure2_heuristic():
    # Fig. 2 caption: n = 5K -> B = 10 gives eps <= 0.08; the largest B for 0.08 is >= 10.
    b = inverse.max_bins_for_eps(gr21.thm3_conditional_eps, 0.08, 5000, 0.1)
    assert b >= 10
    assert (
        gr21.thm3_conditional_eps(5000, b, 0.1)
        <= 0.08
        < gr21.thm3_conditional_eps(5000, b + 1, 0.1)
    )
    assert inverse.max_bins_for_eps(gr21.thm3_conditional_eps, 1e-4, 5000, 0.1) is None


def test_proof_valid_expectation_bound_gap():
    """Catalog §9 item 4: floor(n/B) - 1 >= n/(2B) fails for 2B < n < 3B only."""
    for b in (2, 5, 10):
        for n in range(2 * b, 8 * b):
            stated = gr21.thm4_ece_mean_bound(n, b)
            proved = gr21.thm4_ece_mean_bound_proof_valid(n, b)
            if n == 2 * b or n >= 3 * b:
                assert proved <= stated + 1e-15
    assert gr21.thm4_ece_mean_bound_proof_valid(29, 10) > gr21.thm4_ece_mean_bound(29, 10)


def test_vectorised_broadcasting():
    n = np.array([1000, 3000, 10000])
    out = gr21.thm3_conditional_eps(n, 10, np.array([[0.1], [0.05]]))
    assert out.shape == (2, 3)
    assert out[0, 1] == gr21.thm3_conditional_eps(3000, 10, 0.1)


def test_vacuous_values_are_returned_raw():
    v = gr21.thm3_conditional_eps(20, 10, 0.1)  # n = 2B: sqrt(log(200)/2) > 1
    assert v > 1
    assert not inverse.is_informative(v)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n": 100, "n_bins": 10, "alpha": 0.0}, "alpha"),
        ({"n": 100, "n_bins": 10, "alpha": 1.0}, "alpha"),
        ({"n": 100, "n_bins": 10, "alpha": 10}, "alpha"),
        ({"n": 19, "n_bins": 10, "alpha": 0.1}, "n must be >= 2 \\* n_bins"),
        ({"n": 100, "n_bins": 0, "alpha": 0.1}, "n_bins"),
        ({"n": 100.5, "n_bins": 10, "alpha": 0.1}, "n must be an integer"),
        ({"n": True, "n_bins": 10, "alpha": 0.1}, "n must be an integer"),
        ({"n": np.array([100, 10]), "n_bins": 10, "alpha": 0.1}, "n must be >= 2"),
    ],
)
def test_validation_names_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        gr21.thm3_conditional_eps(**kwargs)


def test_validation_of_delta_and_helpers():
    with pytest.raises(ValueError, match="delta"):
        gr21.thm4_marginal_eps(100, 10, 0.1, delta=-1e-3)
    with pytest.raises(ValueError, match="eps"):
        gr21.ums_required_n(1.5, 0.1, 10)
    with pytest.raises(ValueError, match="c must"):
        gr21.ums_required_n(0.1, 0.1, 10, c=0)
    with pytest.raises(ValueError, match="eps"):
        inverse.min_n_for_eps(gr21.thm3_conditional_eps, -1, 10, 0.1)


_n = st.integers(min_value=20, max_value=200_000)
_alpha = st.floats(min_value=1e-6, max_value=0.999)


@given(_n, _alpha)
def test_property_monotone_in_n(n, alpha):
    for f in (gr21.thm3_conditional_eps, gr21.cor1_conditional_eps, gr21.thm4_marginal_eps):
        assert f(n + 10, 10, alpha) <= f(n, 10, alpha)


@given(_n, _alpha, st.floats(min_value=1e-6, max_value=0.999))
def test_property_monotone_in_alpha(n, a1, a2):
    lo, hi = sorted((a1, a2))
    for f in (gr21.thm3_conditional_eps, gr21.thm4_marginal_eps):
        assert f(n, 10, hi) <= f(n, 10, lo)


@given(_n, _alpha, st.floats(min_value=0, max_value=0.1))
def test_property_nesting(n, alpha, delta):
    eps1 = gr21.thm4_marginal_eps(n, 10, alpha, delta=delta)
    eps2 = gr21.thm4_conditional_eps(n, 10, alpha, delta=delta)
    assert eps1 <= eps2  # marginal needs no union bound
    assert gr21.thm3_conditional_eps(n, 10, alpha) <= gr21.cor1_conditional_eps(n, 10, alpha)
    assert eps2 == pytest.approx(gr21.thm3_conditional_eps(n, 10, alpha) + delta)


@given(st.floats(min_value=0.02, max_value=0.5), st.integers(2, 40), _alpha)
def test_property_min_n_is_minimal(eps, b, alpha):
    n = inverse.min_n_for_eps(gr21.thm3_conditional_eps, eps, b, alpha)
    assert gr21.thm3_conditional_eps(n, b, alpha) <= eps
    if n > 2 * b:
        assert gr21.thm3_conditional_eps(n - 1, b, alpha) > eps


def test_registry_metadata():
    ids = {g.id for g in all_guarantees()}
    assert {
        "gr21.thm3",
        "gr21.cor1",
        "gr21.thm4.marginal",
        "gr21.thm4.conditional",
        "gr21.thm4.ece_hp",
        "gr21.thm4.ece_mean",
        "gr21.thm4.ece_mean.proof_valid",
    } <= ids
    for g in all_guarantees():
        assert g.paper
        assert g.label
        assert g.hypotheses
        assert g.statement
        assert g.function.__doc__
        assert "Notes" in g.function.__doc__
    assert get("gr21.thm4.ece_mean.proof_valid").variant_of == "gr21.thm4.ece_mean"
    value = get("gr21.thm3")(n=3000, n_bins=10, alpha=0.1)
    assert value == pytest.approx(0.0941, abs=1e-4)
    # A keyword the bound does not take is refused, never silently dropped.
    with pytest.raises(ValueError, match=r"takes no parameter\(s\) \['detla'\]"):
        get("gr21.thm4.marginal")(n=3000, n_bins=10, alpha=0.1, detla=0.5)
    with pytest.raises(ValueError, match=r"needs \['alpha'\]"):
        get("gr21.thm3").select({"n": 3000, "n_bins": 10})
    assert get("gr21.thm3").select({"n": 1, "n_bins": 2, "alpha": 0.1, "other": 3}) == {
        "n": 1,
        "n_bins": 2,
        "alpha": 0.1,
    }
    with pytest.raises(ValueError, match="unknown guarantee id"):
        get("gr21.nope")


def test_a9_squared_ece_bound_by_hand():
    from calcheck.bounds.gr21 import a9_squared_ece_mean_bound

    # n = 2B: one interior point per bin, 1/(4 * 1); n = 1000, B = 10: 1/(4 * 99)
    assert a9_squared_ece_mean_bound(20, 10) == pytest.approx(0.25)
    assert a9_squared_ece_mean_bound(1000, 10) == pytest.approx(1 / 396)
    assert a9_squared_ece_mean_bound(1000, 10, delta=0.01) == pytest.approx(1 / 396 + 1e-4)
    # the square of Theorem 4(b)'s proof-valid bound at delta = 0 (Jensen)
    from calcheck.bounds.gr21 import thm4_ece_mean_bound_proof_valid

    assert a9_squared_ece_mean_bound(300, 10) == pytest.approx(
        thm4_ece_mean_bound_proof_valid(300, 10) ** 2
    )
    with pytest.raises(ValueError, match="n_bins"):
        a9_squared_ece_mean_bound(10, 10)
