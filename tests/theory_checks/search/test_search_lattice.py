"""The exact stage's lattice lines: the etas where a binomial cut-off crosses an integer."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from calcheck.simulations.conditional_coverage import (
    LATTICE_OFFSET,
    bin_sizes,
    lattice_etas,
    worst_constant_eta,
)
from calcheck.simulations.exact_coverage import exact_coverage
from calcheck.simulations.laws.families import get_family
from calcheck.simulations.search import coordinate_refine
from calcheck.theory_checks.search.driver import CheckCriterion, resolve_target
from calcheck.theory_checks.search.refine import LatticeLines, eta_groups


def test_lattice_etas_by_hand():
    # m = 4, eps = 0.3: k / 4 + 0.3 and k / 4 - 0.3 inside [0, 1]
    got = lattice_etas([4], 0.3, offset=0.0)
    assert np.allclose(got, [0.2, 0.3, 0.45, 0.55, 0.7, 0.8], rtol=0, atol=1e-15)
    got = lattice_etas([4, 4], 0.3, offset=0.01)  # sizes are a set; the offset points outwards
    assert np.allclose(got, [0.19, 0.31, 0.44, 0.56, 0.69, 0.81], rtol=0, atol=1e-15)
    # just past the crossing 4 (eta - eps) = 1 the exact coverage of a 4-point bin drops by
    # P(K = 1) = 4 eta (1 - eta)^3 = 0.2005 (the count 1 leaves the window)
    on, past = 0.55, 0.55 + LATTICE_OFFSET
    drop = exact_coverage(4, 1, on, 0.3) - exact_coverage(4, 1, past, 0.3)
    assert drop == pytest.approx(binom.pmf(1, 4, 0.55), abs=1e-5)


def test_the_lattice_holds_the_worst_constant_eta():
    """The best lattice eta beats the 0.0005 grid; worst_constant_eta scans both."""
    gid, bound = resolve_target("gr21.thm3.times_0.8")
    eps = float(bound.radius(gid, {"n": 1000, "n_bins": 20, "delta": 0.0}, 0.01))
    etas = lattice_etas((49, 50), eps)
    etas = etas[np.abs(etas - 0.5) < 0.05]
    fails = [1 - exact_coverage(1000, 20, e, eps) for e in etas]
    grid = max(1 - exact_coverage(1000, 20, e, eps) for e in np.arange(0.45, 0.55, 5e-4))
    assert max(fails) > grid + 4e-5  # 0.027338 against 0.027293
    eta, worst = worst_constant_eta(1000, 20, eps)
    assert worst == pytest.approx(max(fails), abs=1e-12)
    assert eta == pytest.approx(etas[int(np.argmax(fails))], abs=1e-12)


def test_eta_groups_by_name():
    assert eta_groups(("eta_1", "eta_2")) == {0: ((0,), None), 1: ((1,), None)}
    top = get_family("top_label", n_classes=3).names  # w_1..3, lo_1, hi_1, ...
    assert eta_groups(top) == {3: ((3, 4), 0), 5: ((5, 6), 1), 7: ((7, 8), 2)}
    assert eta_groups(("slope", "intercept", "pos_1")) == {}


def _criterion(target, family, grid, alpha, **opts):
    gid, bound = resolve_target(target)
    fam = get_family(family, **opts)
    return CheckCriterion(
        target, gid, bound, fam, tuple(sorted(grid.items())), alpha, "mean_ratio", 200, 0
    )


def test_lattice_lines_are_the_nearest_lattice_points():
    crit = _criterion("gr21.thm3.times_0.8", "beta_piecewise", {"n": 1000, "n_bins": 20}, 0.01)
    lines = LatticeLines(crit, 16)
    best = np.array([0.5, 0.3, 0.5, 0.5, 0.5])
    rows = lines(0, 1, best)
    assert rows.shape == (16, 5)
    assert np.array_equal(rows[:, [0, 2, 3, 4]], np.repeat(best[None, [0, 2, 3, 4]], 16, 0))
    eps = float(crit.bound.radius(crit.guarantee, {"n": 1000, "n_bins": 20, "delta": 0}, 0.01))
    lattice = lattice_etas((49, 50), eps)
    assert bin_sizes(crit.check(best).experiments[0]) == ((49, 50),)
    want = np.sort(lattice[np.argsort(np.abs(lattice - 0.3))[:16]])
    assert np.array_equal(rows[:, 1], want)
    # top-label: lo_j and hi_j move together (class j constant), on class j's bin sizes
    top = _criterion(
        "gr22.thm1.conditional.times_0.8",
        "top_label",
        {"n": 2000, "points_per_bin": 50},
        0.01,
        n_classes=3,
    )
    theta = np.array([1.0, 0.5, 0.3, 0.4, 0.6, 0.5, 0.5, 0.5, 0.5])
    rows = LatticeLines(top, 16)(0, 5, theta)
    assert np.array_equal(rows[:, 5], rows[:, 6])
    assert np.all(np.abs(rows[:, 5] - 0.5) < 0.1)
    assert LatticeLines(top, 16)(0, 0, theta) is None  # a weight: the stratified grid


def test_coordinate_refine_takes_the_lines_given():
    fam = get_family("beta_piecewise", k=2)

    def peak(theta):  # a peak 1e-4 wide that a stratified grid of 8 points steps over
        return float(np.sum(np.abs(np.asarray(theta) - 0.4321) < 5e-5))

    def lines(rnd, i, best):
        rows = np.repeat(best[None, :], 8, axis=0)
        rows[:, i] = 0.4321 + 0.01 * np.arange(8)
        return rows if rnd == 0 else None

    got = coordinate_refine(peak, fam, (0.1, 0.9), 32, seed=3, points=8, lines=lines)
    assert got.value == 2.0
    assert got.theta == pytest.approx((0.4321, 0.4321), abs=1e-12)
    plain = coordinate_refine(peak, fam, (0.1, 0.9), 32, seed=3, points=8)
    assert plain.value == 0.0


def test_refinement_with_lattice_lines_is_bit_identical_for_any_jobs():
    from calcheck.simulations.search import SearchBudget
    from calcheck.theory_checks.search.refine import refine_incumbent

    crit = _criterion("gr21.thm3.times_0.8", "beta_piecewise", {"n": 200, "n_bins": 4}, 0.05, k=2)
    budget = SearchBudget("lattice", 5, 1, 100, 100, refine=48)
    kw = {"seed": 7}
    one = refine_incumbent(crit, crit.family, (0.3, 0.6), budget, n_jobs=1, **kw)
    two = refine_incumbent(
        crit, crit.family, (0.3, 0.6), budget, n_jobs=2, backend="threading", **kw
    )
    assert one == two
    stages = one[1]["stages"]
    assert [s["evaluations"] for s in stages] == [33, 65]  # 16 and 32 per parameter, + start
    assert stages[1]["value"] >= stages[1]["start_value"]
    # the law found sits on the lattice: each eta just past a crossing (50 points a bin)
    eps = float(crit.bound.radius(crit.guarantee, {"n": 200, "n_bins": 4, "delta": 0}, 0.05))
    lattice = lattice_etas(sum(bin_sizes(crit.check(one[0]).experiments[0]), ()), eps)
    assert all(np.min(np.abs(lattice - x)) < 1e-12 for x in one[0])
