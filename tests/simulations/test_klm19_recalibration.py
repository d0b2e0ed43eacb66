"""klm19 recalibration: laws with exact truth, scaling-binning, exact CE^2 and the experiment."""

import numpy as np
import pytest
from scipy.optimize import minimize

from calcheck.bounds.klm19_informal import gi3_plugin_bias_exact
from calcheck.simulations.calibrators.edges import bin_index_from_edges, bin_index_rows
from calcheck.simulations.calibrators.scaling import PlattScaling
from calcheck.simulations.calibrators.scaling_binning import (
    MarginalScalingBinning,
    ScalingBinning,
    TopLabelScalingBinning,
    bin_platt_values,
    platt_fit_batch,
    scaling_binning_fit_batch,
)
from calcheck.simulations.experiments.klm19_recalibration import (
    METHODS,
    RecalibrationExperiment,
    smallest_thirds_size,
)
from calcheck.simulations.laws.binned import binned_model
from calcheck.simulations.laws.recalibration import (
    RecalibrationLaw,
    noisy_platt_law,
    platt_law,
    sine_platt_law,
)
from calcheck.simulations.metrics.binned import plugin_sq_ce
from calcheck.simulations.metrics.recalibration import (
    binned_map_truth,
    min_platt_ce_sq,
    platt_truth,
)

LAWS = [platt_law(1.0, 0.0), platt_law(2.0, 1.0), noisy_platt_law(), sine_platt_law()]


def _fine(law, m=2_048_000):
    z = np.linspace(law.lo, law.hi, m + 1)
    mid = 0.5 * (z[1:] + z[:-1])
    return mid, law.q(mid), 1.0 / m


@pytest.mark.parametrize("law", LAWS, ids=lambda x: x.name)
def test_law_integrals_match_a_fine_midpoint_rule(law):
    mid, q, w = _fine(law)
    assert law.mean_q == pytest.approx(np.sum(q) * w, abs=1e-10)
    assert law.mean_q_sq == pytest.approx(np.sum(q**2) * w, abs=1e-9)
    u = np.array([law.lo, 0.4, 0.5])
    v = np.array([0.33, 0.41, law.hi])
    brute = [np.sum(q[(mid >= a) & (mid < b)]) * w for a, b in zip(u, v, strict=True)]
    np.testing.assert_allclose(law.q_integral(u, v), brute, atol=1e-8)
    x, wq = law.q_rule
    assert np.sum(wq * np.cos(3 * x)) == pytest.approx(np.sum(q * np.cos(3 * mid)) * w, abs=1e-9)


def test_law_rejects_bad_parameters():
    with pytest.raises(ValueError, match="kind"):
        RecalibrationLaw(kind="wiggly")
    with pytest.raises(ValueError, match="leaves"):
        RecalibrationLaw(a=2.0, b=1.0, kind="sine", amplitude=0.05, lo=0.25, hi=0.75)
    with pytest.raises(ValueError, match="amplitude must be 0"):
        RecalibrationLaw(amplitude=0.1)
    with pytest.raises(ValueError, match="a must be > 0"):
        RecalibrationLaw(a=0.0)


@pytest.mark.parametrize("law", LAWS, ids=lambda x: x.name)
def test_exact_ce_and_mse_of_fitted_maps_match_brute_force(law):
    rng = np.random.default_rng(5)
    z, y = law.sample(600, 3, rng)
    fit = scaling_binning_fit_batch(z, y, 8)
    z_edges = fit.z_edges()
    ce, mse = binned_map_truth(law, z_edges[:, :-1], z_edges[:, 1:], fit.values)
    mid, q, _ = _fine(law)
    h = fit.predict(np.broadcast_to(mid, (3, mid.size)))
    for r in range(3):
        # E[Y | h(Z)] averages q over each level set of the map
        levels = np.unique(h[r], return_inverse=True)[1]
        cond = np.bincount(levels, q) / np.bincount(levels)
        assert ce[r] == pytest.approx(np.mean((h[r] - cond[levels]) ** 2), rel=1e-4, abs=1e-7)
        # the midpoint rule errs by ~(jump x cell width) at each of the bin edges
        assert mse[r] == pytest.approx(np.mean(h[r] ** 2 - 2 * h[r] * q + q), abs=1e-7)
    g = PlattScaling.transform_batch(fit.coef, np.broadcast_to(mid, (3, mid.size)))
    ce_g, mse_g = platt_truth(law, fit.coef)
    np.testing.assert_allclose(ce_g, np.mean((g - q) ** 2, axis=1), rtol=1e-5, atol=1e-10)
    np.testing.assert_allclose(mse_g, np.mean(g**2 - 2 * g * q + q, axis=1), atol=1e-9)


def test_tied_outputs_are_one_level_set():
    # Two bins with the same output 0.5 on a calibrated law (q = z): merged, their mean q
    # is 1/2 (CE 0); as separate bins each is off by 1/4 with mass 1/2.
    law = platt_law(1.0, 0.0)
    lo, hi, v = np.array([[0.0, 0.5]]), np.array([[0.5, 1.0]]), np.array([[0.5, 0.5]])
    assert binned_map_truth(law, lo, hi, v)[0][0] == pytest.approx(0.0, abs=1e-15)
    assert binned_map_truth(law, lo, hi, v, merge=False)[0][0] == pytest.approx(1 / 16)


def test_min_over_platt_family():
    assert min_platt_ce_sq(platt_law(2.0, 1.0))[0] == 0.0
    # the noise is orthogonal to smooth functions up to ~1e-8: the best sigmoid is q's own
    value, (a, b) = min_platt_ce_sq(noisy_platt_law())
    assert value == pytest.approx(0.02**2, rel=1e-4)
    assert (a, b) == pytest.approx((2.0, 1.0), abs=1e-3)
    assert 1e-3 < min_platt_ce_sq(sine_platt_law())[0] < 0.05**2 / 2


def test_platt_fits_match_reference_optimisers():
    rng = np.random.default_rng(0)
    z, y = platt_law(2.0, 1.0).sample(200, 20, rng)
    log = platt_fit_batch(z, y, loss="log")
    np.testing.assert_allclose(log, PlattScaling.fit_batch(z, y), atol=1e-8)
    sq = platt_fit_batch(z, y, loss="squared")
    x = np.log(z) - np.log1p(-z)
    for r in range(20):

        def loss(t, r=r):
            return np.sum((y[r] - 1 / (1 + np.exp(-(t[0] * x[r] + t[1])))) ** 2)

        ref = minimize(loss, sq[r], method="Nelder-Mead", options={"xatol": 1e-10})
        assert loss(sq[r]) <= ref.fun + 1e-10
    with pytest.raises(ValueError, match="loss"):
        platt_fit_batch(z, y, loss="hinge")


def test_scaling_binning_by_hand():
    # n = 9, thirds: T1 = points 0-2 (fit), T2 = 3-5 (bins), T3 = 6-8 (means of g).
    z = np.array([[0.2, 0.5, 0.8, 0.1, 0.6, 0.9, 0.3, 0.7, 0.95]])
    y = np.array([[0.0, 1.0, 1.0, 0, 0, 0, 0, 0, 0]])
    fit = scaling_binning_fit_batch(z, y, 2, loss="log")
    a, b = fit.coef[0]
    g = 1 / (1 + np.exp(-(a * np.log(z[0] / (1 - z[0])) + b)))
    # 2 uniform-mass bins of 3 T2 values: the edge is the order statistic of rank 2
    assert fit.edges[0] == pytest.approx([0.0, np.sort(g[3:6])[1], 1.0])
    lower = g[6:] < fit.edges[0, 1]
    assert fit.values[0] == pytest.approx([g[6:][lower].mean(), g[6:][~lower].mean()])
    assert fit.counts[0].tolist() == [lower.sum(), (~lower).sum()]
    # empty T3 bins output their midpoints: g = identity, T2 = (0.1, 0.5, 0.9) gives the
    # inner edges 0.5 and 0.9 (ranks 2 and 3 of 3 for B = 3); T3 lies below 0.5
    z = np.array([[0.3, 0.3, 0.3, 0.1, 0.5, 0.9, 0.2, 0.3, 0.4]])
    fit = bin_platt_values(np.array([[1.0, 0.0]]), np.log(z / (1 - z)), 3)
    assert fit.edges[0] == pytest.approx([0.0, 0.5, 0.9, 1.0])
    assert fit.values[0] == pytest.approx([0.3, 0.7, 0.95])
    assert fit.counts[0].tolist() == [3, 0, 0]


def test_scaling_binning_outputs_lie_in_their_bins_and_are_distinct():
    z, y = platt_law(2.0, 1.0).sample(3000, 50, np.random.default_rng(1))
    fit = scaling_binning_fit_batch(z, y, 30)
    assert np.all(fit.values >= fit.edges[:, :-1])
    assert np.all(fit.values < fit.edges[:, 1:])
    assert np.all(np.diff(fit.values, axis=1) > 0)


def test_bin_index_rows_matches_the_broadcast_rule():
    rng = np.random.default_rng(2)
    v = rng.random((7, 50))
    e = np.sort(rng.random((7, 6)), axis=1)
    e[:, 0], e[:, -1] = 0.0, 1.0
    v[0, :3] = e[0, 2]  # on an edge: the upper bin
    np.testing.assert_array_equal(bin_index_rows(v, e), bin_index_from_edges(v, e))


def test_scikit_style_estimators():
    law = platt_law(2.0, 1.0)
    z, y = law.sample(900, 1, np.random.default_rng(3))
    m1 = ScalingBinning(10, rng=4).fit(z[0], y[0])
    m2 = ScalingBinning(10, rng=4).fit(z[0], y[0])
    np.testing.assert_array_equal(m1.values_, m2.values_)
    assert np.unique(m1.predict(z[0])).size <= 10
    assert m1.predict_proba(z[0][:5]).shape == (5, 2)
    with pytest.raises(ValueError, match="not fitted"):
        ScalingBinning().predict(z[0])
    with pytest.raises(ValueError, match="too few points"):
        ScalingBinning(100).fit(z[0][:200], y[0][:200])
    with pytest.raises(ValueError, match="split"):
        ScalingBinning(split="halves").fit(z[0], y[0])
    rng = np.random.default_rng(6)
    probs = rng.dirichlet(np.ones(4), size=600)
    labels = np.array([rng.choice(4, p=p) for p in probs])
    marginal = MarginalScalingBinning(5, rng=1).fit(probs, labels).predict_proba(probs)
    assert marginal.shape == (600, 4)
    assert not np.allclose(marginal.sum(axis=1), 1.0)  # not renormalised, as the paper
    cls, conf = TopLabelScalingBinning(5, split="none").fit(probs, labels).predict(probs)
    np.testing.assert_array_equal(cls, probs.argmax(axis=1))
    assert np.unique(conf).size <= 5


def test_smallest_thirds_size_leaves_b_points_to_t2():
    for b in (1, 2, 7, 10, 99, 200):
        n = smallest_thirds_size(b)
        assert (n - n // 3) // 2 >= b
        assert n == 6 or (n - 1 - (n - 1) // 3) // 2 < b
    with pytest.raises(ValueError, match="n_grid"):
        RecalibrationExperiment(platt_law(), 10, (smallest_thirds_size(10) - 1, 100))


def test_experiment_is_reproducible_and_well_specified_scaling_binning_is_flat_in_b():
    law = platt_law(2.0, 1.0)
    e = RecalibrationExperiment(law, 10, (200, 800))
    a = e.simulate(np.random.default_rng(9), 40)
    b = e.simulate(np.random.default_rng(9), 40)
    for m in METHODS:
        np.testing.assert_array_equal(getattr(a, m), getattr(b, m))
    assert e.symbols(a)["min_ce_sq"] == 0.0
    means = {
        bins: RecalibrationExperiment(law, bins, (1500,)).simulate(np.random.default_rng(bins), 300)
        for bins in (5, 50)
    }
    sb = [means[k].sb.mean() for k in (5, 50)]
    hist = [means[k].hist_bins.mean() for k in (5, 50)]
    assert 0.7 < sb[1] / sb[0] < 1.4  # nearly constant in B
    assert hist[1] / hist[0] > 6  # ~ linear in B (x10)
    assert np.all(a.hist <= a.hist_bins + 1e-15)  # merging tied outputs only lowers CE


def test_plugin_bias_exact_matches_simulation():
    law = binned_model("mixed", 20, 0.01)
    counts, sums = law.sample_counts(60, 200_000, np.random.default_rng(11))
    bias = plugin_sq_ce(np.asarray(law.values), counts, sums).mean() - law.ce_sq
    exact = gi3_plugin_bias_exact(law.label_means, law.masses, 60)
    assert bias == pytest.approx(exact, rel=0.03)
    assert exact <= 20 / (4 * 60)


def test_conditional_target_is_the_registered_identity():
    from calcheck.bounds.klm19 import def52_conditional_mean
    from calcheck.simulations.metrics.binned import conditional_sq_ce

    law = binned_model("mixed", 15, 0.005)
    counts, _ = law.sample_counts(40, 30, np.random.default_rng(4))
    np.testing.assert_allclose(
        conditional_sq_ce(law.values, law.label_means, counts),
        def52_conditional_mean(law.values, law.label_means, counts),
        rtol=1e-14,
    )


def test_fast_paths_equal_the_reference_code_bit_for_bit():
    from calcheck.simulations.calibrators.binning import uniform_mass_fit_sorted
    from calcheck.simulations.calibrators.scaling_binning import _row_bins
    from calcheck.simulations.experiments.klm19_recalibration import _hist_fit
    from calcheck.simulations.laws.recalibration import logit
    from calcheck.simulations.metrics.recalibration import binned_map_truth_both

    law = noisy_platt_law()
    z, x, y = law.sample_logits(600, 7, np.random.default_rng(3))
    z0, y0 = law.sample(600, 7, np.random.default_rng(3))
    assert np.array_equal(z, z0)
    assert np.array_equal(y, y0)
    assert np.array_equal(x, logit(z))
    for n_bins in (2, 10, 37):
        order = np.argsort(z, axis=1)
        zs, ys = np.take_along_axis(z, order, axis=1), np.take_along_axis(y, order, axis=1)
        ref = uniform_mass_fit_sorted(zs, np.zeros_like(zs), ys, n_bins, include_upper=True)
        lower, upper, values = _hist_fit(z, y, n_bins)
        assert np.array_equal(lower, ref.lower_s)
        assert np.array_equal(upper, ref.upper_s)
        assert np.array_equal(values, ref.values)
        both = binned_map_truth_both(law, lower, upper, values)
        merged = binned_map_truth(law, lower, upper, values)
        per_bin = binned_map_truth(law, lower, upper, values, merge=False)
        assert all(np.array_equal(u, v) for u, v in zip(both, (*merged[:1], *per_bin), strict=True))
    # edge counting (few edges) against searchsorted, with ties and infinities
    rng = np.random.default_rng(4)
    for n_edges in (3, 60):
        inner = np.sort(rng.integers(-5, 5, (4, n_edges)).astype(float), axis=1)
        edges = np.hstack([np.full((4, 1), -np.inf), inner, np.full((4, 1), np.inf)])
        v = np.hstack([rng.integers(-6, 6, (4, 50)).astype(float), np.full((4, 2), np.inf)])
        ref = np.stack(
            [np.searchsorted(e[1:-1], r, side="right") for e, r in zip(edges, v, strict=True)]
        )
        assert np.array_equal(_row_bins(v, edges), ref)


def _halved_steps_reference(x, y, rows, a, b, da, db, penalty):
    """The line search as first written: exact objectives of every row at every trial."""

    def objective(a_, b_):
        t = a_[:, None] * x[rows] + b_[:, None]
        nll = np.sum(np.logaddexp(0.0, t) - y[rows] * t, axis=1)
        return nll + 0.5 * penalty * (a_**2 + b_**2)

    current = objective(a[rows], b[rows])
    slack = 1e-12 * (1.0 + np.abs(current))
    step = np.ones(rows.size)
    new = objective(a[rows] + da[rows], b[rows] + db[rows])
    for _ in range(60):
        worse = ~(new <= current + slack)
        if not worse.any():
            break
        step = np.where(worse, step / 2, step)
        new = np.where(worse, objective(a[rows] + step * da[rows], b[rows] + step * db[rows]), new)
    return step


@pytest.mark.parametrize("separable", [False, True])
def test_halved_steps_equal_the_exact_line_search(separable):
    from calcheck.simulations.calibrators.scaling import LogLossData, _halved_steps, _platt_nll

    rng = np.random.default_rng(3)
    r, n = 40, 300
    x = rng.normal(size=(r, n)) * 3.0
    y = (x > 0).astype(float) if separable else (rng.random((r, n)) < 0.6).astype(float)
    a, b = rng.normal(size=r) * 5.0, rng.normal(size=r)
    da, db = rng.normal(size=r) * 20.0, rng.normal(size=r) * 5.0
    da[:5], db[:5] = 1e-9, 1e-9  # sides within the bounds: decided on exact objectives
    rows = np.flatnonzero(rng.random(r) < 0.8)
    work = tuple(np.empty((7, n)) for _ in range(4))
    ref = _halved_steps_reference(x, y, rows, a, b, da, db, 1e-10)
    steps = _halved_steps(LogLossData(x, y, 1e-10, work), rows, a, b, da, db)
    assert np.array_equal(steps, ref)
    value, radius = _platt_nll(x, y, rows, a[rows], b[rows], 1e-10, work, exact=False)
    exact = _platt_nll(x, y, rows, a[rows], b[rows], 1e-10, work, exact=True)
    t = a[rows, None] * x[rows] + b[rows, None]
    assert np.array_equal(
        exact,
        np.sum(np.logaddexp(0.0, t) - y[rows] * t, axis=1)
        + 0.5e-10 * (a[rows] ** 2 + b[rows] ** 2),
    )
    assert np.all(np.abs(value - exact) <= 1e-6 * radius)
