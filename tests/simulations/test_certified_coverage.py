"""The certified coverage of uniform-mass binning: a lower bound over every law.

Hand cases, agreement with the exact supremum of a binomial tail, equality with the infimum
of the exact coverage over constant eta where every bin has the same size, and the bound
below the Monte Carlo coverage of every binary law in the catalog.
"""

import numpy as np
import pytest

from calcheck import define_guarantee, verify
from calcheck.bounds import gr21
from calcheck.simulations.binomial_sup import sup_binomial_tail
from calcheck.simulations.certified_coverage import (
    bin_infimum,
    certified_bins,
    certified_coverage,
    certified_layout,
    smallest_certified_eps,
)
from calcheck.simulations.exact_coverage import exact_coverage
from calcheck.simulations.laws import BINARY_LAWS
from calcheck.theory_checks.checks.exact_evidence import constant_eta
from calcheck.theory_checks.results.verdicts import clopper_pearson


def test_hand_cases():
    # m = 1, eps = 0.6: K = 0 is within for p <= 0.6, K = 1 for p >= 0.4; below 0.4 only
    # K = 0 (probability 1 - p, down to 0.6 as p -> 0.4)
    one = bin_infimum(1, 0.6)
    assert one.value == pytest.approx(0.6, abs=1e-12)
    assert min(one.p, 1 - one.p) == pytest.approx(0.4)  # by symmetry, 0.4 or 0.6
    # m = 2, eps = 0.3: on (0.3, 0.7) only K = 1 is within: 2 p (1 - p), 0.42 at the ends
    two = bin_infimum(2, 0.3)
    assert two.value == pytest.approx(0.42, abs=1e-12)
    assert min(two.p, 1 - two.p) == pytest.approx(0.3)
    # a radius below 1/(2m) leaves gaps between the counts' intervals: nothing is certain
    assert bin_infimum(5, 0.09).value == 0.0


@pytest.mark.parametrize("m", [3, 19, 20, 99, 300])
@pytest.mark.parametrize("eps", [0.05, 0.1, 0.1636, 0.33])
def test_a_fixed_radius_is_one_minus_the_exact_supremum_of_the_tail(m, eps):
    sup, _ = sup_binomial_tail(m, eps)
    assert bin_infimum(m, eps).value == pytest.approx(1.0 - sup, abs=1e-12)


@pytest.mark.parametrize("event", ["conditional", "marginal"])
def test_equal_bins_give_the_infimum_of_the_exact_coverage_over_constant_eta(event):
    n, b = 199, 10  # (n + 1) / B = 20: every UMD bin averages 19 labels
    assert {m for m, _ in certified_bins(n, b)} == {19}
    eps = 0.2
    # distinct outputs (randomized UMD, delta -> 0): the marginal bound is min over bins
    cert = certified_coverage(n, b, eps, event=event, pooled=False)
    etas = np.linspace(0.001, 0.999, 2001)
    exact = np.array([exact_coverage(n, b, e, eps, event=event) for e in etas])
    assert np.all(exact >= cert.value - 1e-12)
    # the infimum is a one-sided limit at the worst p: approached from one side
    p = cert.worst.p
    near = [exact_coverage(n, b, p + s, eps, event=event) for s in (-1e-9, 1e-9)]
    assert min(near) == pytest.approx(cert.value, abs=1e-6)


def test_gr21_thm3_at_n200_b10_is_certified_between_the_claim_and_every_constant_eta():
    eps = float(gr21.thm3_conditional_eps(200, 10, 0.05))
    cert = certified_coverage(200, 10, eps)
    etas = np.linspace(0.001, 0.999, 4001)
    exact = min(exact_coverage(200, 10, e, eps) for e in etas)
    assert 0.95 <= cert.value <= exact
    assert exact == pytest.approx(0.99527, abs=1e-5)  # at eta = 0.392, not 1/2 (0.99891)
    assert cert.value == pytest.approx(0.99508, abs=1e-5)


def test_zadrozny_elkans_edge_point_is_taken_at_its_worst_mean():
    bins = certified_bins(200, 10, "zadrozny_elkan")
    assert bins[0] == (21, True)
    assert bins[-1][1] is False  # the last bin has no upper edge point
    eps = 0.3
    cert = certified_coverage(200, 10, eps, scheme="zadrozny_elkan")
    assert cert.worst.q in (0, 1)
    for eta in np.linspace(0.01, 0.99, 99):
        assert exact_coverage(200, 10, eta, eps, scheme="zadrozny_elkan") >= cert.value - 1e-12
    # the edge point of unknown mean costs something over the inner points alone
    assert cert.value <= certified_coverage(200, 10, eps).value + 1e-12


def test_a_data_radius_that_is_constant_is_the_fixed_radius():
    fixed = certified_coverage(1000, 10, 0.12)
    data = certified_coverage(1000, 10, lambda k, m: np.full(k.shape, 0.12))
    assert data.value == pytest.approx(fixed.value, abs=1e-12)


def test_near_the_threshold_interval_arithmetic_decides():
    eps = float(gr21.thm3_conditional_eps(200, 10, 0.05))
    plain = certified_coverage(200, 10, eps)
    assert not plain.rigorous
    close = certified_coverage(200, 10, eps, threshold=plain.value)
    assert close.rigorous
    assert plain.value - 1e-11 <= close.value <= plain.value


def test_merged_outputs_are_the_default_and_bound_the_marginal_by_the_conditional():
    conditional = certified_coverage(1000, 10, 0.1).value
    assert certified_coverage(1000, 10, 0.1, event="marginal").value == conditional
    assert certified_coverage(1000, 10, 0.1, event="marginal", pooled=False).value > conditional
    with pytest.raises(ValueError, match="pooled"):
        certified_coverage(1000, 10, 0.1, pooled="no")


def test_pooled_marginal_falls_back_to_the_conditional_bound():
    bins = certified_bins(1000, 10)
    conditional = certified_layout(bins, 0.1, event="conditional")
    pooled = certified_layout(bins, 0.1, event="marginal", pooled=True)
    per_bin = certified_layout(bins, 0.1, event="marginal")
    assert pooled.value == conditional.value
    assert per_bin.value >= conditional.value


def test_smallest_certified_eps_reaches_the_claim_and_exceeds_the_exact_one():
    eps = smallest_certified_eps(1000, 10, 0.1)
    assert certified_coverage(1000, 10, eps).value >= 0.9
    assert certified_coverage(1000, 10, eps - 1e-6).value < 0.9
    theorem = float(gr21.thm3_conditional_eps(1000, 10, 0.1))
    assert eps <= theorem


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n": 10, "n_bins": 10}, "n"),
        ({"radius": -0.1}, "radius"),
        ({"radius": float("nan")}, "radius"),
        ({"radius": lambda k, m: np.zeros(3)}, "radius"),
        ({"event": "joint"}, "event"),
        ({"scheme": "platt"}, "scheme"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(kwargs, name):
    args = {"n": 200, "n_bins": 10, "radius": 0.2, **kwargs}
    with pytest.raises(ValueError, match=name):
        certified_coverage(args.pop("n"), args.pop("n_bins"), args.pop("radius"), **args)


def test_the_certificate_lies_below_the_monte_carlo_coverage_of_every_binary_law():
    # a radius 0.7 times Theorem 3's, so that coverage is not 1 on every law
    g = define_guarantee(
        "cert.shrunk",
        lambda n, n_bins, alpha: 0.7 * gr21.thm3_conditional_eps(n, n_bins, alpha),
        method="umd",
        event="conditional",
    )
    eps = 0.7 * float(gr21.thm3_conditional_eps(200, 10, 0.1))
    cert = certified_coverage(200, 10, eps).value
    laws = [law for law in BINARY_LAWS.values() if law.labels == "binary"]
    assert len(laws) >= 10
    for law in laws:
        result = verify(g, law, n=200, n_bins=10, reps=1000, rng=0)
        cell = result.cells[0]
        assert cell.certified_coverage == pytest.approx(cert, abs=1e-12), law.name
        v = cell.verdict
        _, high = clopper_pearson(v.successes, v.trials, 0.999)
        assert cert <= high, (law.name, cert, v.successes)
        if constant_eta(law) is not None:
            assert cert <= cell.exact_coverage + 1e-12


def test_the_fixed_radius_path_equals_the_general_one():
    # one radius: only the ends where a count leaves the window matter (O(m)); the general
    # path (any r(k, m), every interval end) must agree, lattice-aligned radii included
    from calcheck.simulations.certified_bin import _candidates, _fixed_candidates, radii

    rng = np.random.default_rng(7)
    for _ in range(150):
        m = int(rng.integers(2, 120))
        eps = float(rng.uniform(0, 0.6)) if rng.random() < 0.5 else int(rng.integers(1, 8)) / m / 2
        for shift in (None, 0, 1):
            general, _ = _candidates(m, radii(eps, m), shift)
            fast, _ = _fixed_candidates(m, eps, shift)
            assert fast.min() == pytest.approx(general.min(), abs=1e-12), (m, eps, shift)


def test_a_radius_a_rounding_below_a_lattice_value_is_not_taken_for_it():
    # m = 4, eps just below 1/4: consecutive intervals [k/4 - eps, k/4 + eps] leave gaps of
    # 2e-12, so at p = 1/2 only K = 2 is within: P = 6/16. A slack that closed the gaps would
    # certify 0.625, above this law's coverage (a false certificate)
    below = bin_infimum(4, 0.25 - 1e-12)
    assert below.value == pytest.approx(0.375, abs=1e-9)
    # UMD with n = 4, B = 1 averages 4 labels; at eta = 1/2 its exact coverage is 6/16 too
    assert below.value <= exact_coverage(4, 1, 0.5, 0.25 - 1e-12) + 1e-12
    # and the touching intervals of m = 5, eps = 0.1 (k/5 +- 0.1 meet exactly) leave no gap
    assert bin_infimum(5, 0.1).value == pytest.approx(1.0 - sup_binomial_tail(5, 0.1)[0])


def test_the_rigorous_value_is_below_the_float_one_by_rounding_only():
    for m, eps in ((19, 0.2), (20, 0.3), (3, 1 / 3 - 1e-12)):
        plain = bin_infimum(m, eps)
        close = bin_infimum(m, eps, threshold=plain.value)
        assert close.rigorous
        assert plain.value - 1e-12 <= close.value <= plain.value
