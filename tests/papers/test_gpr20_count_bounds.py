"""gpr20's bin-count steps G1 (App. C.2) and G2 (App. C.3, eq. 39), exactly.

G1: N_b >= n tau - sqrt(n ln(B/alpha)/2) w.p. >= 1 - alpha/B per bin (tau = min mass);
G2: N_j >= n p_j - sqrt(n ln(2B/alpha)/2) w.p. >= 1 - alpha/(2B). Both are one-sided
Hoeffding for N ~ Binomial(n, p); the failure probabilities are computed exactly from the
binomial law (scipy) over a grid of n, B, alpha and every mass p on a fine grid, so the
steps are checked for every law, not sampled. A radius half as large fails (control).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

MASSES = np.linspace(0.001, 0.999, 999)


def _worst_failure(n, radius):
    """max over p of P(Binomial(n, p) < n p - radius), exactly."""
    # N < n p - r  <=>  N <= ceil(n p - r) - 1
    k = np.ceil(n * MASSES - radius) - 1
    return float(np.max(np.where(k >= 0, binom.cdf(k, n, MASSES), 0.0)))


@pytest.mark.parametrize("n", [10, 50, 200, 1000, 10000])
@pytest.mark.parametrize("n_bins", [2, 10, 50])
@pytest.mark.parametrize("alpha", [0.01, 0.1])
def test_g1_and_g2_per_bin_failure_is_at_most_stated(n, n_bins, alpha):
    g1 = np.sqrt(n * np.log(n_bins / alpha) / 2)
    g2 = np.sqrt(n * np.log(2 * n_bins / alpha) / 2)
    # tau <= p_b: the bound at the bin's own mass implies the one at the minimum mass
    assert _worst_failure(n, g1) <= alpha / n_bins
    assert _worst_failure(n, g2) <= alpha / (2 * n_bins)


@pytest.mark.parametrize("alpha", [0.01, 0.1])
def test_a_radius_half_as_large_fails(alpha):
    # negative control: Hoeffding's radius halved is violated for some mass at large n
    n, n_bins = 10000, 10
    half = np.sqrt(n * np.log(n_bins / alpha) / 2) / 2
    assert _worst_failure(n, half) > alpha / n_bins
