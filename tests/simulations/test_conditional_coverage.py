"""Coverage given the scores (labels integrated out exactly) and the search's line search."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from calcheck.simulations.conditional_coverage import (
    conditional_coverage,
    poisson_binomial_within,
    supports,
)
from calcheck.simulations.exact_coverage import exact_coverage
from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.laws.families import get_family
from calcheck.simulations.search import coordinate_refine

FAMILY = get_family("beta_piecewise", k=5)


def _experiment(theta, name="umd", n=1000, n_bins=20):
    spec = {"name": name, "delta": 0.0} if name == "randomized_umd" else {"name": name}
    return BinningExperiment(spec, FAMILY.law(theta), n, n_bins)


def test_poisson_binomial_by_hand():
    # K = Bern(0.5) + Bern(0.2): P(K = 0, 1, 2) = 0.4, 0.5, 0.1
    p = np.array([[0.5, 0.2], [0.3, 0.3]])
    counts = np.array([2, 2])
    got = poisson_binomial_within(p, counts, np.array([1, 0]), np.array([1, 1]))
    assert got[0] == pytest.approx(0.5, abs=1e-15)
    assert got[1] == pytest.approx(binom.cdf(1, 2, 0.3), abs=1e-15)
    # only the first counts[i] entries count; an empty range gives 0
    got = poisson_binomial_within(np.array([[0.5, 0.9]]), np.array([1]), [1], [1])
    assert got[0] == pytest.approx(0.5, abs=1e-15)
    assert poisson_binomial_within(p, counts, np.array([2, 2]), np.array([1, 1])).max() == 0
    # real cut-offs interpolate the distribution function linearly between integers
    half = poisson_binomial_within(p[:1], counts[:1], np.array([0.0]), np.array([0.5]))
    assert half[0] == pytest.approx(0.4 + 0.5 * 0.5, abs=1e-15)


def _pmf_rows_by_counts(pm, width):
    # the recursion as first written (rows by counts): the stored outcomes' bits came from it
    pmf = np.zeros((pm.shape[0], width + 1))
    pmf[:, 0] = 1.0
    for j in range(width):
        step = pm[:, j : j + 1]
        pmf[:, 1 : j + 2] = pmf[:, 1 : j + 2] * (1.0 - step) + pmf[:, : j + 1] * step
        pmf[:, 0] *= 1.0 - step[:, 0]
    return pmf


def test_poisson_binomial_gives_the_bits_of_the_row_wise_recursion():
    rng = np.random.default_rng(7)
    rows, m = 400, 60
    counts = rng.integers(2, m - 9, rows)  # below the array's width: the padding is ignored
    p = rng.random((rows, m))  # no two equal: every row takes the recursion
    low = rng.integers(0, 30, rows) + np.where(np.arange(rows) % 2, rng.random(rows), 0.0)
    high = rng.integers(10, m, rows) + np.where(np.arange(rows) % 3, rng.random(rows), 0.0)
    used = np.arange(m)[None, :] < counts[:, None]
    width = int(counts.max())
    pmf = _pmf_rows_by_counts(np.where(used, p, 0.0), width)
    k = np.arange(width + 1)[None, :]
    h, lw = np.floor(high)[:, None], np.floor(low - 1)[:, None]
    weight = (k <= h) + (high[:, None] - h) * (k == h + 1)
    weight = weight - (k <= lw) - ((low - 1)[:, None] - lw) * (k == lw + 1)
    want = np.clip(np.sum(pmf * weight, axis=1), 0.0, 1.0)
    got = poisson_binomial_within(p, counts, low, high)
    assert np.array_equal(got, want)  # the same bits, not merely close
    assert np.array_equal(poisson_binomial_within(p[:1], counts[:1], low[:1], high[:1]), want[:1])


@pytest.mark.parametrize("name", ["umd", "zadrozny_elkan", "randomized_umd"])
@pytest.mark.parametrize("eta", [0.5, 0.3])
def test_constant_eta_equals_exact_coverage(name, eta):
    scheme = "zadrozny_elkan" if name == "zadrozny_elkan" else "umd"
    exp = _experiment((eta,) * 5, name)
    got = conditional_coverage(exp, np.random.default_rng(0), 100, 0.2327)
    want = exact_coverage(1000, 20, eta, 0.2327, scheme=scheme)
    assert np.allclose(got, want, rtol=0, atol=1e-12)  # no Monte Carlo error left at all
    marginal = conditional_coverage(exp, np.random.default_rng(0), 300, 0.2327, event="marginal")
    want = exact_coverage(1000, 20, eta, 0.2327, scheme=scheme, event="marginal")
    assert abs(marginal.mean() - want) < 1e-4  # the masses are random, their mean exact


def test_piecewise_eta_agrees_with_monte_carlo():
    # distinct outputs (randomized UMD, delta = 0): exact given the scores
    exp = _experiment((0.2, 0.45, 0.5, 0.7, 0.9), "randomized_umd", n=300, n_bins=6)
    rb = conditional_coverage(exp, np.random.default_rng(1), 1000, 0.15)
    out = exp.simulate(np.random.default_rng(2), 20000)
    mc = np.mean(np.nanmax(out.error, axis=1) <= 0.15)
    assert 0.05 < 1 - mc < 0.5  # a cell where the comparison has power
    se = np.sqrt(mc * (1 - mc) / 20000) + rb.std() / np.sqrt(rb.size)
    assert abs(rb.mean() - mc) < 4 * se
    # the labels' Monte Carlo error is gone: the spread is the scores' only
    assert rb.std() < 0.05


def test_what_it_supports():
    assert supports(_experiment((0.5,) * 5))
    assert not supports(BinningExperiment({"name": "fixed_width"}, FAMILY.law((0.5,) * 5), 100, 5))
    with pytest.raises(ValueError, match="does not apply"):
        conditional_coverage(
            BinningExperiment({"name": "fixed_width"}, FAMILY.law((0.5,) * 5), 100, 5),
            np.random.default_rng(0),
            100,
            0.1,
        )
    with pytest.raises(ValueError, match="event"):
        conditional_coverage(
            _experiment((0.5,) * 5), np.random.default_rng(0), 100, 0.1, event="joint"
        )


def _peaked(theta):
    """A narrow peak at 0.5 on a broad slope: what the line search must land on."""
    x = np.asarray(theta)
    return float(-np.sum((x - 0.45) ** 2) + np.sum(np.abs(x - 0.5) < 0.004))


def test_coordinate_refine_spends_its_budget_and_is_reproducible():
    fam = get_family("beta_piecewise", k=2)
    a = coordinate_refine(_peaked, fam, (0.1, 0.9), 64, seed=3, points=8)
    b = coordinate_refine(
        _peaked, fam, (0.1, 0.9), 64, seed=3, points=8, n_jobs=2, backend="threading"
    )
    assert a.evaluations == 65  # the start, then 8 line searches of 8 points
    assert np.array_equal(a.values, b.values)
    assert a.theta == b.theta
    assert a.value >= _peaked((0.1, 0.9))
    assert np.all(np.abs(np.asarray(a.theta) - 0.45) < 0.1)
    with pytest.raises(ValueError, match="evaluations"):
        coordinate_refine(_peaked, fam, (0.1, 0.9), 4, seed=3, points=8)
