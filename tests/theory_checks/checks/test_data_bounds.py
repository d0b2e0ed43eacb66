"""Bounds that see the data: counts, means, variances and n_used per replicate (issue 36)."""

from __future__ import annotations

import numpy as np
import pytest

import calcheck
from calcheck.simulations.calibrators.edges import sort_scores
from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.simulations.experiments.binning_data import (
    BinDataOutcome,
    BinningDataExperiment,
    output_groups,
)
from calcheck.simulations.laws import LAWS
from calcheck.theory_checks.catalog.method_table import method_table
from calcheck.theory_checks.checks.events import Marginal, Within
from calcheck.theory_checks.checks.methods import DATA_KEYWORDS

UMD = {"name": "umd", "tie_breaking": "lexicographic"}


def eb_radius(counts, variances, n_bins, alpha):
    """Maurer & Pontil (2009) Thm 4, two-sided, union over the B bins (inf below 2 points)."""
    big = counts >= 2
    n = np.where(big, counts, 2.0)
    log = np.log(4 * n_bins / alpha)
    unbiased = variances * n / (n - 1)
    return np.where(big, np.sqrt(2 * unbiased * log / n) + 7 * log / (3 * (n - 1)), np.inf)


def test_umd_data_equal_a_direct_recomputation_from_the_same_draws():
    law, n, n_bins, reps = LAWS["uniform_half"], 8, 2, 3
    out = BinningDataExperiment(UMD, law, n, n_bins).simulate(np.random.default_rng(5), reps)
    rng = np.random.default_rng(5)  # the same draws, in the experiment's order
    s, _u = sort_scores(law.sample_scores((reps, n), rng), rng, tie_breaking="lexicographic")
    y = law.sample_labels(s, rng)
    # A_b = ceil(b (n + 1) / B) = 0, 5, 9: bin 1 averages ranks 1..4, bin 2 ranks 6..8
    inside = [y[:, 0:4], y[:, 5:8]]
    assert out.counts.tolist() == [[4, 3]] * reps
    assert out.n_used.tolist() == [7] * reps
    np.testing.assert_allclose(out.means, np.stack([b.mean(axis=1) for b in inside], 1))
    np.testing.assert_allclose(out.variances, np.stack([b.var(axis=1) for b in inside], 1))


def test_fractional_labels_get_their_variance_from_the_labels_squared():
    law, n, n_bins, reps = LAWS["beta_labels"], 40, 4, 2
    exp = BinningDataExperiment({"name": "fixed_width"}, law, n, n_bins)
    out = exp.simulate(np.random.default_rng(1), reps)
    rng = np.random.default_rng(1)
    s = law.sample_scores((reps, n), rng)
    y = law.sample_labels(s, rng)
    bins = np.minimum((s * n_bins).astype(int), n_bins - 1)
    for r in range(reps):
        for b in range(n_bins):
            yb = y[r, bins[r] == b]
            assert out.counts[r, b] == yb.size
            if yb.size:
                assert out.means[r, b] == pytest.approx(yb.mean(), abs=1e-12)
                assert out.variances[r, b] == pytest.approx(yb.var(), abs=1e-12)
            else:
                assert out.variances[r, b] == 0.0
    assert out.variances.max() < 0.25  # beta labels: not the binary m(1 - m)


@pytest.mark.parametrize("spec", [UMD, {"name": "ums"}, {"name": "randomized_umd", "delta": 0.3}])
def test_the_data_variant_has_the_plain_draws_and_its_own_key(spec):
    law = LAWS["beta_labels"]
    plain = BinningExperiment(spec, law, 60, 4)
    data = BinningDataExperiment(spec, law, 60, 4)
    a = plain.simulate(np.random.default_rng(2), 4)
    b = data.simulate(np.random.default_rng(2), 4)
    for name in ("error", "mass", "test_u", "n_empty"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert data.key != plain.key
    assert data.label() == plain.label() + "/data"
    assert np.all((b.variances >= 0) & (b.variances <= 0.25))
    assert np.all(b.n_used == b.counts.sum(axis=1))
    if spec["name"] == "ums":
        assert b.n_used.tolist() == [30] * 4  # the second half of the split


def test_a_bound_without_data_keeps_the_stored_keys():
    law = LAWS["uniform_half"]
    old = BinningExperiment(UMD, law, 1000, 10)
    assert old.key == "4462255c26b510d17f0c77bd"  # the key before data keywords existed
    plain = calcheck.define_guarantee(
        "mine.nodata", lambda n, n_bins, alpha: 0.2, method="umd", event="conditional"
    )
    exp = plain.adapter().build(law, n=1000, n_bins=10)
    assert type(exp) is BinningExperiment
    assert exp.key == old.key
    assert exp.label() == "umd/uniform_half/n=1000/B=10"
    data = calcheck.define_guarantee("mine.data", eb_radius, method="umd", event="conditional")
    assert type(data.adapter().build(law, n=1000, n_bins=10)) is BinningDataExperiment
    # a radius of each bin's data r(k, m) keeps the exact route (calcheck.exact_coverage),
    # but the search's reference, which evaluates one radius per size, leaves it out
    assert data.method.exact_scheme == "umd"
    from calcheck.theory_checks.running.exact import exact_worst_case

    assert exact_worst_case(data.id) is None


def test_a_per_bin_radius_holds_on_a_law_and_a_small_one_is_caught():
    eb = calcheck.define_guarantee("mine.eb", eb_radius, method="umd", event="conditional")
    res = calcheck.verify(eb, "uniform_half", n=1000, n_bins=10, reps=500, rng=0)
    assert res.verdict == "consistent"
    small = calcheck.define_guarantee(
        "mine.eb.small",
        lambda counts, variances, n_bins, alpha: 0.3 * eb_radius(counts, variances, n_bins, alpha),
        method="umd",
        event="conditional",
    )
    assert calcheck.verify(small, "uniform_half", n=1000, n_bins=10, reps=500, rng=0).verdict == (
        "violated"
    )
    marginal = calcheck.define_guarantee("mine.ebm", eb_radius, method="ums", event="marginal")
    assert calcheck.verify(marginal, "two_atoms", n=1000, n_bins=10, reps=300, rng=0).verdict == (
        "consistent"
    )


class _Reads:
    """An experiment whose statistics are the outcome's attributes."""

    def statistic(self, outcome, name, alpha=None):
        return getattr(outcome, name)


def _outcome(error, mass, groups):
    error, mass = np.asarray(error, float), np.asarray(mass, float)
    zeros = np.zeros(error.shape)
    return BinDataOutcome(
        error,
        mass,
        np.full((error.shape[0], 2), 0.99),
        np.zeros(error.shape[0], int),
        zeros.astype(int),
        zeros,
        zeros,
        np.zeros(error.shape[0], int),
        np.asarray(groups),
    )


def test_merged_outputs_take_their_largest_radius_and_zero_mass_columns_do_not_count():
    assert output_groups([[0.2, 0.5, 0.2, 0.7]]).tolist() == [[0, 1, 0, 3]]
    # bins 0 and 2 share an output (error 0.2 each); bin 3 has zero mass (NaN error)
    out = _outcome([[0.2, 0.05, 0.2, np.nan]], [[0.5, 0.3, 0.2, 0.0]], [[0, 1, 0, 3]])
    radius = np.array([[0.1, 0.1, 0.3, 0.0]])  # bin 0 alone would fail; the output is 0.3
    values = Within("max_error").evaluate(_Reads(), out, radius, 0.1)
    assert values.success.tolist() == [True]
    assert values.vacuous.tolist() == [False]
    assert values.ratio[0] == pytest.approx(0.2 / 0.3)
    failing = Within("max_error").evaluate(_Reads(), out, np.array([[0.1, 0.1, 0.1, 0.0]]), 0.1)
    assert failing.success.tolist() == [False]
    vacuous = Within("max_error").evaluate(_Reads(), out, np.array([[1.0, np.inf, 0.0, 0.0]]), 0.1)
    assert vacuous.vacuous.tolist() == [True]  # every output of positive mass reaches 1
    # the test point (u = 0.99) falls in bin 2, whose output's radius is 0.3
    marginal = Marginal().evaluate(_Reads(), out, radius, 0.1)
    assert marginal.success.tolist() == [True]
    assert marginal.estimate == pytest.approx(1.0)


def test_wrong_keywords_and_shapes_are_refused_in_one_line():
    with pytest.raises(ValueError, match=r"available: \[.*\] and the data keywords \['counts'"):
        calcheck.define_guarantee(
            "mine.bad", lambda counts, sd, alpha: 1.0, method="umd", event="conditional"
        )
    with pytest.raises(ValueError, match=r"records no data keywords \(\['counts', 'means'"):
        calcheck.define_guarantee(
            "mine.bad2", lambda counts, alpha: 1.0, method="tl_hb", event="conditional"
        )
    ece = calcheck.define_guarantee("mine.ece", eb_radius, method="umd", event="ece")
    with pytest.raises(ValueError, match=r"shape \(100, 5\).*per bin is for the conditional"):
        calcheck.verify(ece, "uniform_half", n=200, n_bins=5, reps=100, rng=0)
    nan = calcheck.define_guarantee(
        "mine.nan0",
        lambda counts: np.where(counts > 0, 1.0 / np.maximum(counts, 1), np.nan),
        method="fixed_width",
        event="conditional",
    )
    with pytest.raises(ValueError, match=r"NaN or negative.*inf where it says nothing"):
        calcheck.verify(nan, "uniform_half", n=20, n_bins=10, reps=100, rng=0)  # empty bins


def test_the_method_table_lists_the_data_keywords():
    rows = {(r["method"], r["event"]): r for r in method_table()}
    for method in ("umd", "ums", "fixed_width", "zadrozny_elkan", "randomized_umd"):
        assert rows[method, "conditional"]["data"] == sorted(DATA_KEYWORDS)
        assert rows[method, "conditional"]["per_bin"]
        assert not rows[method, "ece"]["per_bin"]
    assert rows["tl_hb", "conditional"]["data"] == []


def test_a_calibrator_of_your_own_gives_its_level_sets_data():
    class ThreeSteps:
        def fit(self, scores, labels):
            return self

        def predict(self, scores):
            return np.digitize(scores, [0.3, 0.6]) / 4 + 0.25

    eb = calcheck.define_guarantee("mine.own", eb_radius, method=ThreeSteps(), event="conditional")
    res = calcheck.verify(eb, "uniform_half", n=300, n_bins=3, reps=100, rng=0)
    # the fixed outputs 0.25, 0.5, 0.75 are not the bins' label means: EB does not cover them
    assert res.verdict == "violated"


def test_one_radius_per_replicate_from_the_data_serves_the_ece_event():
    ece = calcheck.define_guarantee(
        "mine.ece_n",
        lambda n_used, alpha: np.sqrt(np.log(1 / alpha) / n_used) + 0.1,
        method="ums",
        event="ece",
    )
    assert calcheck.verify(ece, "uniform_half", n=400, n_bins=5, reps=200, rng=0).verdict == (
        "consistent"
    )


def test_empty_bins_with_an_infinite_radius_neither_fail_nor_make_the_replicate_vacuous():
    law = LAWS["skewed_beta"]
    exp = BinningDataExperiment({"name": "fixed_width"}, law, 60, 20)
    out = exp.simulate(np.random.default_rng(0), 50)
    assert (out.counts == 0).any()  # some bins are empty
    radius = eb_radius(out.counts, out.variances, 20, 0.1)
    values = Within("max_error").evaluate(exp, out, radius, 0.1)
    live, merged = out.mass > 0, out.output_radius(radius)  # equal outputs: their largest
    finite_live = np.any(live & (merged < 1), axis=1)
    assert values.vacuous.tolist() == (~finite_live).tolist()
    assert np.all(np.isfinite(values.ratio))
    within = ~live | (np.nan_to_num(out.error) <= merged)
    assert values.success.tolist() == within.all(axis=1).tolist()
