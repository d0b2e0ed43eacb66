"""gr21 Lemma 1 (exact KS level of the transformed in-between points) and A4 (two bins)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest, kstwo

from calcheck.bounds import gr21, gr21_lemmas
from calcheck.simulations.calibrators.edges import uniform_mass_edge_ranks
from calcheck.simulations.experiments.gr21_lemma1 import (
    OrderStatisticPITExperiment,
    ks_statistic,
)
from calcheck.simulations.laws import LAWS


def test_a4_by_hand_and_against_theorem3():
    # n = 201: m = 100 points below and above the median; sqrt(log(40) / 200)
    assert gr21_lemmas.a4_two_bin_eps(201, 0.1) == pytest.approx(np.sqrt(np.log(40) / 200))
    assert gr21_lemmas.a4_two_bin_eps(201, 0.1) == pytest.approx(0.135810, abs=1e-6)
    # Theorem 3 at B = 2 counts floor(n/2) - 1 = m - 1 points: A4 is slightly sharper
    for n in (5, 21, 201, 2001):
        assert gr21_lemmas.a4_two_bin_eps(n, 0.1) < gr21.thm3_conditional_eps(n, 2, 0.1)
        m = (n - 1) // 2
        ranks = uniform_mass_edge_ranks(n, 2)  # Algorithm 1's A_0, A_1, A_2
        assert list(ranks) == [0, m + 1, n + 1]  # the median S_(m+1) is the only edge
        assert np.diff(ranks).tolist() == [m + 1, m + 1]  # m interior points in each bin
    with pytest.raises(ValueError, match="n must be odd"):
        gr21_lemmas.a4_two_bin_eps(200, 0.1)


def test_lemma1_critical_values_by_hand():
    # k = 1: D = max(U, 1 - U), P(D > c) = 2 (1 - c) on [1/2, 1]
    assert gr21_lemmas.lemma1_ks_critical_value(1, 0.1) == pytest.approx(0.95)
    # large k: the Kolmogorov limit sqrt(log(2/alpha)/2)/sqrt(k) (Dvoretzky-Kiefer-Wolfowitz)
    c = gr21_lemmas.lemma1_ks_critical_value(10000, 0.05)
    assert c * 100 == pytest.approx(1.358, abs=0.01)
    assert c <= np.sqrt(np.log(2 / 0.05) / 2) / 100
    assert gr21_lemmas.lemma1_pairs_ks_critical_value(7, 0.1) == kstwo.isf(0.1, 7)


def test_pair_transform_is_uniform_for_independent_uniforms():
    # |U - U'| has density 2(1 - t): P(V <= (1 - t)^2) = P(|U - U'| >= t) = (1 - t)^2
    rng = np.random.default_rng(0)
    u = rng.random((2, 200000))
    pairs = (1 - np.abs(u[0] - u[1])) ** 2
    assert ks_statistic(pairs[None])[0] < kstwo.isf(1e-3, pairs.size)


@pytest.mark.parametrize(
    ("law", "n", "lower", "upper"),
    [("uniform_half", 50, 10, 31), ("skewed_beta", 50, 40, 51), ("mixture_atoms", 200, 0, 40)],
)
def test_lemma1_rejection_rate_is_exactly_alpha(law, n, lower, upper):
    exp = OrderStatisticPITExperiment(LAWS[law], n, lower, upper)
    out = exp.simulate(np.random.default_rng(3), 10000)
    for stat, k in ((out.ks, exp.k), (out.ks_pairs, exp.k // 2)):
        rejected = int(np.sum(stat > kstwo.isf(0.1, k)))
        assert binomtest(rejected, stat.size, 0.1).pvalue > 1e-3


def test_lemma1_fails_at_atoms_without_tie_breaking_and_for_sorted_points():
    rng = np.random.default_rng(4)
    atoms = OrderStatisticPITExperiment(LAWS["two_atoms"], 60, 5, 40, tie_breaking="none")
    assert np.mean(atoms.simulate(rng, 500).ks > kstwo.isf(0.1, atoms.k)) > 0.99
    ordered = OrderStatisticPITExperiment(LAWS["uniform_half"], 50, 10, 31, labelling="sorted")
    out = ordered.simulate(rng, 500)
    assert np.mean(out.ks > kstwo.isf(0.1, ordered.k)) < 0.2  # the values are uniform ...
    assert np.mean(out.ks_pairs > kstwo.isf(0.1, ordered.k // 2)) > 0.99  # ... not independent


def test_lemma1_experiment_validates_ranks():
    with pytest.raises(ValueError, match="ranks must satisfy"):
        OrderStatisticPITExperiment(LAWS["uniform_half"], 10, 5, 6)
    with pytest.raises(ValueError, match="ranks must satisfy"):
        OrderStatisticPITExperiment(LAWS["uniform_half"], 10, 0, 12)
    with pytest.raises(ValueError, match="tie_breaking"):
        OrderStatisticPITExperiment(LAWS["uniform_half"], 10, 0, 11, tie_breaking="jitter")
