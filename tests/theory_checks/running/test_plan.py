"""The replicate planner: exact binomial power of the suite's test, against simulation."""

import json

import numpy as np
import pytest
from scipy import stats

from calcheck.simulations.exact_coverage import exact_coverage as coverage_at
from calcheck.theory_checks.cli.main import main
from calcheck.theory_checks.results.verdicts import (
    coverage_verdict,
    critical_count,
    detectable_shortfall,
)
from calcheck.theory_checks.running.exact import exact_coverage
from calcheck.theory_checks.running.plan import (
    ReplicatePlan,
    critical_counts,
    plan,
    rejection_power,
)


def test_hand_checked_small_case_with_its_sawtooth():
    # claimed 1/2, level 0.05, true coverage 0.1 (flag when few successes), power 1/2:
    # R <= 4: even k = 0 has P(Bin(R, 1/2) = 0) >= 1/16 > 0.05, nothing is flagged;
    # R = 5, 6: k = 0 is flagged (1/32, 1/64), power 0.9^5 = 0.590, 0.9^6 = 0.531;
    # R = 7: P(k <= 1) = 8/128 > 0.05, still only k = 0: power 0.9^7 = 0.478 < 1/2;
    # R = 8: P(k <= 1) = 9/256 < 0.05, k <= 1: power 0.9^8 + 8 (0.1) 0.9^7 = 0.813
    p = plan(alpha=0.5, true_coverage=0.1, power=0.5, false_alarm=0.05)
    assert (p.first_reps, p.reps, p.critical_count) == (5, 8, 1)
    assert p.achieved_power == pytest.approx(0.9**8 + 0.8 * 0.9**7, rel=1e-12)
    powers = [rejection_power(r, 0.5, 0.1, false_alarm=0.05) for r in range(1, 10)]
    expected = [0, 0, 0, 0, 0.9**5, 0.9**6, 0.9**7, 0.9**8 + 0.8 * 0.9**7]
    np.testing.assert_allclose(powers[:8], expected, rtol=1e-12)
    assert p.block_reps == 100
    assert p.horizon >= 2 * p.first_reps


def test_vectorised_critical_counts_are_the_verdicts():
    for claimed, level in ((0.9, 1e-3), (0.5, 0.05), (0.99, 1e-4), (0.95, 0.02 / 3)):
        reps = np.arange(1, 2500, 11)
        got = critical_counts(reps, claimed, level)
        assert got.tolist() == [critical_count(int(r), claimed, level) for r in reps]


def _simulated_power(reps, claimed, true_coverage, level, draws, seed):
    """Empirical rate at which the suite's verdict flags Bin(reps, true_coverage) draws."""
    k = np.random.default_rng(seed).binomial(reps, true_coverage, size=draws)
    values = np.unique(k)
    # the verdict's p-value grows with k: bisect for the largest flagged count drawn
    lo, hi = -1, values.size  # values[:lo + 1] flagged, values[hi:] not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if coverage_verdict(int(values[mid]), reps, claimed, level=level).violated:
            lo = mid
        else:
            hi = mid
    return int(np.sum(k <= values[lo])) if lo >= 0 else 0


@pytest.mark.parametrize(
    ("alpha", "shortfall", "power", "false_alarm", "cells"),
    [(0.1, 0.05, 0.9, 1e-3, 1), (0.05, 0.03, 0.8, 1e-3, 4), (0.2, 0.1, 0.95, 0.01, 1)],
)
def test_planned_power_agrees_with_simulation(alpha, shortfall, power, false_alarm, cells):
    p = plan(alpha=alpha, shortfall=shortfall, power=power, false_alarm=false_alarm, cells=cells)
    draws = 20_000
    for reps in (p.reps, p.first_reps, p.block_reps):
        hits = _simulated_power(reps, p.claimed, p.true_coverage, p.level, draws, seed=reps)
        exact = rejection_power(
            reps, p.claimed, p.true_coverage, false_alarm=false_alarm, cells=cells
        )
        ci = stats.binomtest(hits, draws).proportion_ci(0.999, method="exact")
        assert ci.low <= exact <= ci.high, (reps, hits / draws, exact)
    assert p.achieved_power == rejection_power(
        p.reps, p.claimed, p.true_coverage, false_alarm=false_alarm, cells=cells
    )
    # the plan's promise: power >= target at every count from reps to the horizon ...
    r = np.arange(p.reps, p.horizon + 1)
    c = critical_counts(r, p.claimed, p.level)
    assert np.all(stats.binom.cdf(c, r, p.true_coverage) >= power)
    # ... and one fewer falls short: the same test's detectable shortfall (shortfall_90)
    assert (
        rejection_power(
            p.reps - 1, p.claimed, p.true_coverage, false_alarm=false_alarm, cells=cells
        )
        < power
    )
    assert detectable_shortfall(p.reps, p.claimed, p.level, power) <= shortfall + 1e-12
    assert detectable_shortfall(p.reps - 1, p.claimed, p.level, power) > shortfall


def test_a_bound_factor_plans_on_the_exact_coverage_of_the_wrong_bound():
    p = plan(alpha=0.1, bound_factor=0.6, guarantee="gr21.thm3", n=1000, n_bins=10)
    eps = exact_coverage("gr21.thm3", n=1000, n_bins=10, alpha=0.1).eps
    assert p.true_coverage == float(coverage_at(1000, 10, 0.5, 0.6 * eps))
    assert (p.reps, p.guarantee, p.n, p.n_bins, p.eta) == (42, "gr21.thm3", 1000, 10, 0.5)
    with pytest.raises(ValueError, match=r"times 0.8 still holds .* exact coverage 0.918789"):
        plan(alpha=0.1, bound_factor=0.8, guarantee="gr21.thm3", n=1000, n_bins=10)
    with pytest.raises(ValueError, match="bound_factor needs guarantee, n and n_bins"):
        plan(bound_factor=0.5, guarantee="gr21.thm3")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give exactly one of shortfall, true_coverage or bound_factor, got none"),
        ({"shortfall": 0.1, "true_coverage": 0.8}, r"got \['shortfall', 'true_coverage'\]"),
        ({"shortfall": 0.95}, r"shortfall must be a number in \(0, 0.9\], got 0.95"),
        ({"shortfall": 0.05, "power": 1.5}, r"power must be a number in \(0, 1\), got 1.5"),
        ({"shortfall": 0.05, "alpha": "0.1"}, "alpha must be a number in .*, got '0.1'"),
        ({"shortfall": 0.05, "cells": 0}, "cells must be a positive integer, got 0"),
        ({"true_coverage": float("nan")}, "true_coverage must be a number .*, got nan"),
        ({"shortfall": 0.001, "max_reps": 1000}, "needs more than max_reps = 1000 replicates"),
        ({"shortfall": 0.05, "n": 1000}, r"\['n'\] go with bound_factor .* got \{'n': 1000\}"),
    ],
)
def test_bad_arguments_are_refused_in_one_line(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plan(**kwargs)


def test_rejection_power_refuses_bad_arguments():
    with pytest.raises(ValueError, match="reps must be a positive integer, got 0"):
        rejection_power(0, 0.9, 0.8)
    with pytest.raises(ValueError, match=r"true_coverage must be a number in \[0, 1\]"):
        rejection_power(100, 0.9, 1.2)


def test_cli_plan_prints_the_plan_and_its_json(capsys):
    assert main(["plan", "--shortfall", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "838 replicates (power 0.9006" in out
    assert "810 is the smallest count with that power" in out
    assert main(["plan", "--true-coverage", "0.85", "--json"]) == 0
    again = ReplicatePlan.from_json(capsys.readouterr().out)
    assert again == plan(true_coverage=0.85)
    assert json.loads(again.to_json())["reps"] == 838
    assert main(["plan", "--shortfall", "0.95"]) == 2
    assert capsys.readouterr().err.strip() == (
        "calcheck: error: shortfall must be a number in (0, 0.9], got 0.95"
    )
