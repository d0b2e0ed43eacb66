"""Regression tests for the bugs the input fuzz test (tests/test_fuzz_inputs.py) found."""

from __future__ import annotations

import time

import numpy as np
import pytest

from calcheck.bounds import gpr20, gr21, gr22, inverse, klm19, nch14_auc


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0.1, 0.1, 10**12), "2\\*\\*53"),  # used to hang
        ((1e-300, 0.1, 10), "eps=1e-300"),  # used to raise OverflowError
        ((0.1, 5e-324, 10), "alpha=5e-324"),
        ((0.1, 0.1, 10**30), "n_bins is too large"),
        ((np.array([0.1, 0.2]), 0.1, 10), "eps must be a single number"),
    ],
)
def test_ums_required_n_refuses_out_of_range(args, match):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        gr21.ums_required_n(*args)
    assert time.perf_counter() - start < 1.0


def test_ums_required_n_unchanged_and_minimal():
    r = gr21.ums_required_n(0.1, 0.1, 10)
    assert (r.min_bin_count, r.n_quantile, r.n_count, r.n_total) == (300, 8295, 9579, 17874)
    big = gr21.ums_required_n(1e-5, 0.1, 1000)
    b, log_term = 1000, np.log(2 * 1000 / (0.1 / 4))

    def enough(n2):
        return n2 / (2 * b) - np.sqrt(n2 * log_term / 2) >= big.min_bin_count

    assert enough(big.n_count)
    assert not enough(big.n_count - 1)


def test_max_bins_for_eps_is_a_bounded_search():
    start = time.perf_counter()
    b = inverse.max_bins_for_eps(gr21.thm3_conditional_eps, 0.01, 10**10, 0.1)
    assert time.perf_counter() - start < 1.0  # was a 37 GiB array of candidate bins
    assert gr21.thm3_conditional_eps(10**10, b, 0.1) <= 0.01
    assert gr21.thm3_conditional_eps(10**10, b + 1, 0.1) > 0.01


def test_max_bins_for_eps_matches_exhaustive_scan():
    n, eps = 5000, 0.08
    bins = np.arange(1, n // 2 + 1)
    good = np.flatnonzero(gr21.thm3_conditional_eps(n, bins, 0.1) <= eps)
    assert inverse.max_bins_for_eps(gr21.thm3_conditional_eps, eps, n, 0.1) == bins[good[-1]]


@pytest.mark.parametrize("n", [10**30, -(10**30), 2**64, 1e30, [10, 10**30]])
def test_integers_beyond_range_are_too_large(n):
    with pytest.raises(ValueError, match=r"n is too large.*got"):
        gr21.thm3_conditional_eps(n, 10, 0.1)


def test_discrete_top_label_errors_scalars():
    with pytest.raises(ValueError, match="prob must be an array"):
        gr22.discrete_top_label_errors(1.0, 0, 0.5, 0.5)


@pytest.mark.parametrize(
    ("fn", "args", "match"),
    [
        (gr22.thm2_ece_mean_bound, (np.array([], dtype=int),), "points_per_bin must not be empty"),
        (gpr20.cor3_eps_stated, (np.zeros((2, 0)), np.zeros((2, 0)), 0.1), "counts"),
    ],
)
def test_empty_arrays_name_the_argument(fn, args, match):
    with pytest.raises(ValueError, match=match):
        fn(*args)


def test_broadcast_errors_name_the_arguments():
    with pytest.raises(ValueError, match=r"n_bin of shape \(3,\), variance of shape \(5,\)"):
        gpr20.thm4_halfwidth([1, 2, 3], [0.1] * 5, 10, 0.1)


def test_overflow_is_an_error_naming_the_values():
    with pytest.raises(ValueError, match="delta=5e-324"):
        klm19.thm53_sample_size(104, 1e-6, 5e-324, c=80.0)


def test_nan_rates_are_refused():
    with pytest.raises(ValueError, match="bin_rates"):
        nch14_auc.thm34_auc_loss_bound_unequal([0.5, 0.5], [0.2, np.nan])


def test_bools_and_strings_are_refused():
    with pytest.raises(ValueError, match="alpha must be a number"):
        gr21.thm3_conditional_eps(100, 10, True)
    with pytest.raises(ValueError, match="alpha must be a number"):
        gr21.thm3_conditional_eps(100, 10, "0.1")
    with pytest.raises(ValueError, match="value must not be NaN"):
        inverse.is_informative(np.nan)
