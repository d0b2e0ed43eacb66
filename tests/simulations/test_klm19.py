"""klm19 simulation pieces: estimators (hand-computed), binned models, bin balance."""

import numpy as np
import pytest

from calcheck.simulations.calibrators.edges import uniform_mass_edge_ranks
from calcheck.simulations.experiments.klm19 import BinBalanceExperiment, EstimatorRateExperiment
from calcheck.simulations.laws.binned import BinnedModelLaw, binned_model
from calcheck.simulations.metrics.binned import conditional_sq_ce, debiased_sq_ce, plugin_sq_ce
from calcheck.theory_checks.series.rates import threshold


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


def test_prop33_identity_binned_ce_by_hand():
    """klm19.prop33 is an identity (Jensen on one measure): binned_ce and the CE, by hand.

    Four atoms of mass 1/4: z = (0.1, 0.2, 0.6, 0.9), q = (0.3, 0.1, 0.4, 1.0). CE_1(f) =
    mean |z - q| = 0.15, CE_2(f) = sqrt(0.025). Bins split at 0.5: means (0.15, 0.2) and
    (0.75, 0.7), gaps 0.05 each: CE_1(f_B) = CE_2(f_B) = 0.05. The nested refinement split
    also at 0.15: gaps 0.2, 0.1, 0.05 with masses 1/4, 1/4, 1/2: CE_1 = 0.1, in between.
    """
    from calcheck.simulations.experiments.klm19_population import (
        Prop33Experiment,
        _ce,
        binned_ce,
    )

    z, q, w = np.array([0.1, 0.2, 0.6, 0.9]), np.array([0.3, 0.1, 0.4, 1.0]), np.full(4, 0.25)
    assert _ce(z, q, w, 1) == pytest.approx(0.15)
    assert _ce(z, q, w, 2) == pytest.approx(np.sqrt(0.025))
    assert binned_ce(z, q, w, [0.5], 1) == pytest.approx(0.05)
    assert binned_ce(z, q, w, [0.5], 2) == pytest.approx(0.05)
    assert binned_ce(z, q, w, [0.15, 0.5], 1) == pytest.approx(0.1)
    # a point on an edge goes below it: {0.1, 0.2} and {0.6, 0.9} again (above: 0.1)
    assert binned_ce(z, q, w, [0.2], 1) == pytest.approx(0.05)
    out = Prop33Experiment(10).simulate(np.random.default_rng(0), 30)
    for p in (1, 2, 3):
        assert np.all(getattr(out, f"binned_l{p}") <= getattr(out, f"ce_l{p}") + 1e-12)
    assert np.all(out.binned_l2 <= out.nested_l2 + 1e-12)
    assert np.all(out.nested_l2 <= out.ce_l2 + 1e-12)
    # nesting matters: a finer non-nested scheme lowers the binned CE in some replicates
    assert np.any(out.finer_l2 < out.binned_l2 - 1e-6)


def test_ex32_identity_construction_by_hand():
    """klm19.ex32 is an identity: the constructed law sits in one bin, by hand.

    Scheme B = 2 (edge 1/2): no edge above 1/2, so e = 1, c = 0.505, w = 0.004,
    Z ~ U[0.501, 0.509], q = 1 above c and 2c - 1 = 0.01 below: |z - q| is uniform on
    [0.491, 0.495] on both halves, CE_1(f) = 0.493 and CE_2(f)^2 = 0.493^2 + 0.004^2 / 12;
    the one bin [1/2, 1] has mean score and mean label 0.505: CE(f_B) = 0.
    """
    from calcheck.simulations.experiments.klm19_population import (
        Ex32Experiment,
        _ce,
        _nodes,
        binned_ce,
    )

    c, w = 0.505, 0.004
    u, wt = _nodes(np.array([0.0, 0.5, 1.0]))
    z = c - w + 2 * w * u
    q = np.where(z > c, 1.0, 2 * c - 1)
    assert _ce(z, q, wt, 1) == pytest.approx(0.493, abs=1e-12)
    assert _ce(z, q, wt, 2) ** 2 == pytest.approx(0.493**2 + w**2 / 12, abs=1e-12)
    assert binned_ce(z, q, wt, [0.5], 1) == pytest.approx(0.0, abs=1e-12)
    out = Ex32Experiment().simulate(np.random.default_rng(1), 50)
    assert np.all(out.binned_max <= 1e-12)
    assert np.all(out.ce_min >= 0.49)
