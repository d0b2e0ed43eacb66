"""klm19 simulation pieces: estimators (hand-computed), binned models, bin balance."""

import numpy as np
import pytest

from calcheck.simulations.calibrators.edges import uniform_mass_edge_ranks
from calcheck.simulations.experiments.klm19 import BinBalanceExperiment, EstimatorRateExperiment
from calcheck.simulations.laws.binned import BinnedModelLaw, binned_model
from calcheck.simulations.metrics.binned import conditional_sq_ce, debiased_sq_ce, plugin_sq_ce
from calcheck.theory_checks.rates import threshold


def test_estimators_hand_computed():
    s, counts, sums = [0.2, 0.7], [[3, 2]], [[1, 2]]
    # plug-in: 3/5 (0.2 - 1/3)^2 + 2/5 (0.7 - 1)^2
    assert plugin_sq_ce(s, counts, sums)[0] == pytest.approx(0.6 * (0.2 - 1 / 3) ** 2 + 0.036)
    # debiased: minus yhat(1 - yhat)/(n_s - 1) in each bin: 0.6 (0.01778 - 0.11111) + 0.036
    assert debiased_sq_ce(s, counts, sums)[0] == pytest.approx(-0.02)
    # a bin with one point: dropped (the authors' code) or kept without correction
    s3, c3, y3 = [0.2, 0.7, 0.9], [[3, 2, 1]], [[1, 2, 1]]
    assert debiased_sq_ce(s3, c3, y3)[0] == pytest.approx(-0.1 / 6)
    assert debiased_sq_ce(s3, c3, y3, small_bins="keep")[0] == pytest.approx(-0.09 / 6)
    with pytest.raises(ValueError, match="small_bins"):
        debiased_sq_ce(s3, c3, y3, small_bins="zero")
    with pytest.raises(ValueError, match="label sums"):
        plugin_sq_ce(s, [[3, 2]], [[4, 0]])


def test_debiased_is_conditionally_unbiased_and_plugin_is_not(seed):
    # Fixed counts, labels redrawn: E[debiased | counts] = sum (n_s/n)(s - y_s)^2 exactly
    # (klm19 Definition 5.2); the plug-in is biased up by (1/n) sum y_s (1 - y_s).
    rng = np.random.default_rng(seed)
    law = binned_model("half", 50, 0.004)
    counts = rng.multinomial(400, law.masses)
    reps = 40000
    sums = rng.binomial(np.broadcast_to(counts, (reps, 50)), law.label_means)
    db = debiased_sq_ce(law.values, np.broadcast_to(counts, sums.shape), sums)
    pl = plugin_sq_ce(law.values, np.broadcast_to(counts, sums.shape), sums)
    target = conditional_sq_ce(law.values, law.label_means, counts)
    se = db.std() / np.sqrt(reps)
    assert abs(db.mean() - target) < 4.5 * se
    bias = np.sum((counts >= 1) * 0.25) / 400
    target1 = conditional_sq_ce(law.values, law.label_means, counts, min_count=1)
    assert abs(pl.mean() - target1 - bias) < 4.5 * pl.std() / np.sqrt(reps)
    assert pl.mean() - target1 > 50 * se  # the control: the plug-in's bias is resolved


def test_binned_models_exact_truth():
    for kind in ("half", "mixed", "min_mass"):
        law = binned_model(kind, 20, 0.01)
        assert law.ce_sq == pytest.approx(0.01, rel=1e-6)
        assert law.min_mass_ratio >= 0.5 - 1e-12
    assert binned_model("min_mass", 20, 0.01).min_mass_ratio == pytest.approx(0.5)
    assert binned_model("one_bin", 20, 1e-3).ce_sq == pytest.approx(1e-3)
    with pytest.raises(ValueError, match="one_bin"):
        binned_model("one_bin", 20, 0.1)
    with pytest.raises(ValueError, match="masses"):
        BinnedModelLaw((0.1, 0.2), (0.5, 0.6), (0.1, 0.2))
    with pytest.raises(ValueError, match="distinct"):
        BinnedModelLaw((0.1, 0.1), (0.5, 0.5), (0.1, 0.2))
    with pytest.raises(ValueError, match="n_grid"):
        EstimatorRateExperiment(binned_model("half", 4, 0.01), (100, 50))


def test_bin_balance_matches_sorted_uniform_scores(seed):
    # The Gamma-spacings shortcut equals sorting uniforms and cutting at the project's ranks.
    rng = np.random.default_rng(seed)
    n, b, reps = 60, 6, 20000
    exp = BinBalanceExperiment(b, (n,))
    out = exp.simulate(rng, reps)
    u = np.sort(rng.random((reps, n)), axis=1)
    padded = np.concatenate([np.zeros((reps, 1)), u, np.ones((reps, 1))], axis=1)
    mass = np.diff(padded[:, uniform_mass_edge_ranks(n, b)], axis=1)
    for ours, direct in (
        (out.min_ratio[:, 0], b * mass.min(1)),
        (out.max_ratio[:, 0], b * mass.max(1)),
    ):
        assert abs(ours.mean() - direct.mean()) < 5 * np.hypot(ours.std(), direct.std()) / np.sqrt(
            reps
        )


def test_threshold_interpolates_last_crossing():
    grid = (10, 20, 40, 80)
    assert threshold([0.5, 0.8, 0.95, 0.99], grid, 0.9) == pytest.approx(20 * 2 ** (2 / 3))
    assert threshold([0.95, 0.8, 0.95, 0.99], grid, 0.9) == pytest.approx(20 * 2 ** (2 / 3))
    assert threshold([0.95, 0.96, 0.97, 0.99], grid, 0.9) == 10
    assert threshold([0.5, 0.8, 0.95, 0.85], grid, 0.9) == np.inf


@pytest.mark.parametrize("n", [60, 6000])  # many small bins; every bin >= 2 (fast path)
def test_fused_estimates_equal_the_metric_functions_bit_for_bit(n):
    from calcheck.simulations.experiments.klm19 import _estimates

    law = binned_model("mixed", 30, 0.01)
    s, y = np.asarray(law.values), np.asarray(law.label_means)
    counts, sums = law.sample_counts(n, 50, np.random.default_rng(5))
    assert (counts >= 2).all() == (n == 6000)
    ref = (
        plugin_sq_ce(s, counts, sums),
        debiased_sq_ce(s, counts, sums, small_bins="drop"),
        debiased_sq_ce(s, counts, sums, small_bins="keep"),
        np.sum(counts < 2, axis=1),
        conditional_sq_ce(s, y, counts),
        conditional_sq_ce(s, y, counts, min_count=1),
    )
    assert all(
        np.array_equal(u, v) for u, v in zip(_estimates(s, y, counts, sums), ref, strict=True)
    )
