"""Tightness as a result: exact coverage of a data radius, the critical factor, its assertion.

A radius read off each bin's data (an empirical-Bernstein one) has an exact coverage at
constant eta that a Monte Carlo run of the same radius reproduces, and a critical factor f*
that moves when a constant shrinks even while the smaller radius is still valid: the
regression test calcheck's other assertions cannot make.
"""

import numpy as np
import pytest

from calcheck import define_guarantee, exact_coverage, law_from_spec, verify
from calcheck.testing import assert_tightness
from calcheck.theory_checks.results.verdicts import clopper_pearson
from calcheck.theory_checks.running.tightness import critical_factor


def _bernstein(constant, scale):
    """An empirical-Bernstein radius (Maurer & Pontil 2009, Theorem 4 form), per bin."""

    def radius(counts, variances, alpha):
        log = np.log(4 * counts.shape[-1] / alpha)
        m = np.where(counts >= 2, counts, 2.0)
        unbiased = variances * m / (m - 1)
        r = np.sqrt(2 * unbiased * log / m) + constant * log / m
        return np.where(counts >= 2, scale * r, np.inf)

    return radius


@pytest.fixture(scope="module")
def bernstein():
    return define_guarantee("tight.eb", _bernstein(3.0, 0.25), method="umd", event="conditional")


def test_a_data_radius_has_an_exact_coverage_that_the_monte_carlo_reproduces(bernstein):
    laws = {
        0.5: "uniform_half",
        0.3: law_from_spec(
            {"scores": {"kind": "uniform"}, "eta": {"kind": "constant", "value": 0.3}},
            name="uniform_030",
        ),
    }
    for eta, law in laws.items():
        exact = exact_coverage(bernstein, n=200, n_bins=10, alpha=0.1, eta=eta)
        assert exact.radius == "data"
        assert exact.eps is None
        assert 0.2 < exact.coverage < 0.99  # informative: neither 0 nor 1
        assert exact.certified <= exact.coverage
        v = verify(bernstein, law, n=200, n_bins=10, reps=4000, rng=1).cells[0].verdict
        low, high = clopper_pearson(v.successes, v.trials, 0.999)
        assert low <= exact.coverage <= high, (eta, exact.coverage, v.successes)


def test_the_critical_factor_moves_when_a_constant_shrinks_though_still_valid():
    three = define_guarantee("tight.eb3", _bernstein(3.0, 1.0), method="umd", event="conditional")
    one = define_guarantee("tight.eb1", _bernstein(1.0, 1.0), method="umd", event="conditional")
    golden = critical_factor(three, n=200, n_bins=10, alpha=0.1).factor
    assert golden < 1  # valid, and loose
    # the radius with constant 1 is still valid on every law: no coverage assertion fails
    shrunk = exact_coverage(one, n=200, n_bins=10, alpha=0.1)
    assert shrunk.certified_holds
    assert_tightness(three, golden, n=200, n_bins=10, alpha=0.1)
    with pytest.raises(AssertionError, match=r"tight\.eb1: critical factor .*a smaller bound"):
        assert_tightness(one, golden, n=200, n_bins=10, alpha=0.1)


def test_critical_factor_of_theorem_3_certified_and_exact():
    cert = critical_factor("gr21.thm3", n=1000, n_bins=10, alpha=0.1)
    exact = critical_factor("gr21.thm3", n=1000, n_bins=10, alpha=0.1, eta=0.5)
    assert cert.route == "certified"
    assert exact.route == "exact"
    # the worst law needs more radius than eta = 1/2 alone
    assert exact.factor < cert.factor < 1
    assert cert.factor == pytest.approx(0.80273, abs=2e-5)
    with pytest.raises(AssertionError, match="a larger bound"):
        assert_tightness("gr21.thm3", 0.9, n=1000, n_bins=10, alpha=0.1)


def test_exact_coverage_carries_the_certificate_of_theorem_3():
    res = exact_coverage("gr21.thm3", n=200, n_bins=10, alpha=0.05, eta=0.392216)
    assert res.coverage == pytest.approx(0.99527, abs=1e-5)
    assert 0.95 <= res.certified <= res.coverage
    assert res.certified_holds


def test_a_radius_that_reads_another_bins_data_is_refused():
    def odd(counts, alpha):  # the radius of bin b depends on its index
        return 0.1 + 0.01 * np.arange(counts.shape[-1]) + 0 * counts

    g = define_guarantee("tight.odd", odd, method="umd", event="conditional")
    with pytest.raises(ValueError, match="r\\(k, m\\)"):
        exact_coverage(g, n=200, n_bins=10, alpha=0.1)


def test_plans_factor_mode_takes_a_data_radius():
    from calcheck import plan

    g = define_guarantee("tight.eb_plan", _bernstein(3.0, 1.0), method="umd", event="conditional")
    p = plan(alpha=0.1, bound_factor=0.3, guarantee=g, n=1000, n_bins=10, eta=0.5)
    # the true coverage is the exact coverage of 0.3 times the data radius
    shrunk = define_guarantee(
        "tight.eb_plan03", _bernstein(3.0, 0.3), method="umd", event="conditional"
    )
    exact = exact_coverage(shrunk, n=1000, n_bins=10, alpha=0.1, eta=0.5).coverage
    assert p.true_coverage == pytest.approx(exact, abs=1e-12)
    assert p.reps > 0
