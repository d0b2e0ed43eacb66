"""Regression tests for the simulation-layer input bugs found by tests/test_fuzz_inputs.py."""

from __future__ import annotations

import numpy as np
import pytest

from calcheck.simulations import calibrators, metrics


@pytest.mark.parametrize("n_bins", [10**9, 10**30])
def test_huge_n_bins_refused_before_allocating(n_bins):
    cal = calibrators.FixedWidthBinning(n_bins)
    with pytest.raises(ValueError, match=rf"n_bins is too large.*got {n_bins}"):
        cal.fit(np.array([0.1, 0.5]), np.array([0, 1]))


def test_empty_scores_named():
    with pytest.raises(ValueError, match="scores must not be empty"):
        calibrators.FixedWidthBinning(10).fit(np.array([]), np.array([]))


def test_softmax_and_top_label_refuse_nan():
    with pytest.raises(ValueError, match="logits must be finite"):
        calibrators.softmax(np.array([[np.inf, 0.0]]))
    with pytest.raises(ValueError, match="scores must not contain NaN"):
        calibrators.top_label(np.array([[np.nan, 0.5]]))
    with pytest.raises(ValueError, match="scores must have shape"):
        calibrators.top_label(0.5)


def test_missing_labels_named():
    p = calibrators.softmax(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="labels must have shape"):
        calibrators.TopLabelHistogramBinning(2).fit(p, None)


def test_exact_metrics_validate():
    error = np.array([[0.1, np.nan]])
    mass = np.array([[1.0, 0.0]])
    assert metrics.marginal_validity(error, mass, 0.2)[0] == 1.0
    with pytest.raises(ValueError, match="all NaN"):
        metrics.conditional_max_error(np.array([[np.nan, np.nan]]))
    with pytest.raises(ValueError, match="mass must be finite"):
        metrics.lp_ece(error, np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="eps must be"):
        metrics.marginal_validity(error, mass, np.zeros((2, 2)))
    with pytest.raises(TypeError, match="batch must be a BinningBatch"):
        metrics.exact_bin_errors(0, 0)


def test_top_label_metrics_refuse_empty():
    empty = np.array([], dtype=int)
    with pytest.raises(ValueError, match="non-zero length"):
        metrics.plugin_reliability_mce(empty, np.array([]), empty)
