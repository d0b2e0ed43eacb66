"""gpr20 (Gupta, Podkopaev & Ramdas 2020): bounds, calibrators, laws and experiments.

Reference values come from catalog gpr20 §5 ("computed by me from the paper's formulas"),
given there to 3-6 decimals; tolerances are the rounding of the quoted value.
"""

import math

import numpy as np
import pytest
from scipy import optimize

from bounds import gpr20, registry
from simulations.engine import load_cell, run_cells
from simulations.experiments import (
    BinBernoulliExperiment,
    CIWidthExperiment,
    ImpossibilityExperiment,
    ShiftExperiment,
    StreamExperiment,
)
from simulations.laws import LAWS, ConditionalMean
from simulations.scaling import BetaCalibration, PlattScaling, TemperatureScaling
from simulations.shift import SHIFT_LAWS, ULSIF, LinearShiftLaw, WeightedHistogramBinning
from simulations.store import ResultStore


# ------------------------------------------------------------------ reference values
@pytest.mark.parametrize(("n", "v", "b", "a", "want"), [
    (100, 0.25, 10, 0.1, 0.339989), (100, 0.0, 10, 0.1, 0.171113),
    (1000, 0.21, 15, 0.05, 0.073858)])
def test_thm4_catalog_values(n, v, b, a, want):
    assert gpr20.thm4_halfwidth(n, v, b, a) == pytest.approx(want, abs=5e-7)


def test_thm4_and_hoeffding_series():
    """Catalog §5: V^ = 1/4, B = 10, alpha = 0.1, N = 50 ... 5000 (3 decimals)."""
    n = np.array([50, 200, 500, 1000, 5000])
    np.testing.assert_allclose(gpr20.thm4_halfwidth(n, 0.25, 10, 0.1),
                               [0.581, 0.205, 0.110, 0.071, 0.027], atol=5e-4)
    np.testing.assert_allclose(gpr20.hoeffding_bin_halfwidth(n, 10, 0.1),
                               [0.230, 0.115, 0.073, 0.051, 0.023], atol=5e-4)


def test_thm4_hand_computed():
    log_term = math.log(30 / 0.1)
    want = math.sqrt(2 * 0.16 * log_term / 400) + 3 * log_term / 400
    assert gpr20.thm4_halfwidth(400, 0.16, 10, 0.1) == pytest.approx(want, rel=1e-14)


def test_thm6_catalog_values():
    np.testing.assert_allclose(
        gpr20.thm6_halfwidth(np.array([100, 1000, 5000]), np.array([25, 250, 1250]), 10, 0.1),
        [0.762, 0.186, 0.078], atol=5e-4)
    assert gpr20.thm6_halfwidth(100, 25, 10, 0.1) == pytest.approx(0.7616, abs=5e-5)
    assert gpr20.thm6_halfwidth_intermediate(100, 25, 10, 0.1) == pytest.approx(0.5305, abs=1e-4)
    assert gpr20.thm6_halfwidth(10**4, 2500, 10, 0.1) == pytest.approx(0.0551, abs=5e-5)
    assert gpr20.thm6_halfwidth_intermediate(10**4, 2500, 10, 0.1) == pytest.approx(0.0261,
                                                                                     abs=5e-5)


def test_thm6_constants():
    c = gpr20.thm6_constants()
    assert c["zeta_s"] == pytest.approx(3.105547, abs=5e-7)
    assert c["k1"] == pytest.approx(1.458638, abs=5e-7)
    assert c["k2"] == pytest.approx(1.872929, abs=5e-7)
    assert c["k1_sqrt_s"] == pytest.approx(1.725884, abs=5e-7)
    # The rounded constants of the proof are upper bounds of the exact ones.
    assert c["two_zeta_s"] <= 6.3 and c["k1"] <= 1.46 and 2 * c["k2"] <= 3.76
    assert 1.4 * 3.76 <= 5.27 and 1.46 * math.sqrt(1.4) + 5.27 <= 7.0


def test_thm6_stated_dominates_intermediate_except_for_tiny_alpha():
    """Catalog §9 A1: the stated form dominates unless ln(6.3B/alpha) >~ 57."""
    n = np.arange(1, 20001)
    for alpha in (0.2, 0.1, 0.01, 1e-6, 1e-12):
        for frac in (0.0, 0.05, 0.25):
            v = np.maximum(frac * n, 1.0)
            assert np.all(gpr20.thm6_halfwidth(n, v, 10, alpha)
                          >= gpr20.thm6_halfwidth_intermediate(n, v, 10, alpha))
    # The dropped 1.46 sqrt(V ln(6.3B/alpha)) term wins for ln(6.3B/alpha) ~ 80.
    v = np.logspace(0, 8, 400)
    gap = (gpr20.thm6_halfwidth_intermediate(10**9, v, 10, 1e-33)
           - gpr20.thm6_halfwidth(10**9, v, 10, 1e-33))
    assert gap.max() > 0


def test_thm5_catalog_values():
    n2 = np.array([1000, 2000, 5000, 10**4, 10**5])
    np.testing.assert_allclose(gpr20.thm5_min_count(n2, 10, 0.1),
                               [-1.5, 27.2, 134.9, 337.2, 4485.3], atol=0.05)
    np.testing.assert_allclose([gpr20.thm5_positive_from(b, 0.1) for b in (10, 5, 20)],
                               [1059.66, 230.26, 4793.17], atol=0.01)
    assert gpr20.thm5_min_count(1059, 10, 0.1) < 0 < gpr20.thm5_min_count(1060, 10, 0.1)
    assert gpr20.thm5_cal1_size(10, 0.1, c=2.0) == pytest.approx(20 * math.log(200))


def test_thm7_explicit_and_condition():
    """Catalog §4.12: N_b = 500, U = 2, L = 1/2, B = 10, alpha = 0.1: 3 (U/L)^2 form 3.84
    (vacuous); the bound needs N_b > 2 U^2 ln(6B/alpha) / L^2 = 204.7."""
    log_term = math.log(600)
    three_form = 3 * 16 * math.sqrt(log_term / 1000)
    assert three_form == pytest.approx(3.84, abs=5e-3)
    got = gpr20.thm7_explicit_halfwidth(500, 10, 0.1, 2.0, 0.5)
    assert got == pytest.approx((2 * 4 * 4 + 2 * 2) * math.sqrt(log_term / 1000))
    assert got <= three_form
    r = gpr20.thm7_explicit_halfwidth(np.array([204, 205]), 10, 0.1, 2.0, 0.5)
    assert np.isinf(r[0]) and np.isfinite(r[1])
    assert gpr20.thm7_halfwidth(10000, 10, 0.1, 1.5, 0.5) == pytest.approx(
        9 * math.sqrt(10 * log_term / 20000))
    assert gpr20.thm7_min_n(10, 0.1, 1.5, 0.5) == pytest.approx(9 * 10 * log_term**2)


def test_lower_bounds_and_cor3():
    assert gpr20.thm3_eps_lower_bound(0.1) == pytest.approx(0.2)
    assert gpr20.thm3_eps_lower_bound(0.05) == pytest.approx(0.225)
    assert gpr20.cor1_width_lower_bound(0.1) == pytest.approx(0.4)
    assert gpr20.cor1_width_probability(0.1) == pytest.approx(0.8)
    counts, var = np.array([[10, 20]]), np.array([[0.0, 0.25]])
    stated = gpr20.cor3_eps_stated(counts, var, 0.1)
    valid = gpr20.cor3_eps_max_halfwidth(counts, var, 0.1)
    assert stated == pytest.approx(gpr20.thm4_halfwidth(10, 0.0, 2, 0.1))
    assert valid == pytest.approx(max(stated, gpr20.thm4_halfwidth(20, 0.25, 2, 0.1)))
    # The counterexample configuration: the fewest points, zero variance, smaller radius.
    counts, var = np.array([1000, 2000]), np.array([0.0, 0.25])
    assert gpr20.cor3_eps_stated(counts, var, 0.1) < gpr20.cor3_eps_max_halfwidth(counts, var,
                                                                                  0.1)


def test_prop3_identity_exact():
    law = SHIFT_LAWS["shift_sine"]
    lo, hi = np.array([0.0, 0.13, 0.5]), np.array([0.13, 0.5, 1.0])
    p, q = law.source_mass(lo, hi), law.target_mass(lo, hi)
    got = gpr20.prop3_target_bin_mean(p, q, law.source_weighted_moment(lo, hi) / p)
    np.testing.assert_allclose(got, law.target_bin_mean(lo, hi), atol=1e-13)
    # companion identity (41): E_P[w | X_b] = 1 / m_b
    # w is linear: its mean over a bin is w at the bin's midpoint.
    np.testing.assert_allclose(law.weight((lo + hi) / 2), q / p, rtol=1e-12)


# ------------------------------------------------------------------------ validation
@pytest.mark.parametrize(("call", "word"), [
    (lambda: gpr20.thm4_halfwidth(100, 0.25, 10, 1.2), "alpha"),
    (lambda: gpr20.thm4_halfwidth(-1, 0.25, 10, 0.1), "n_bin"),
    (lambda: gpr20.thm4_halfwidth(10, -0.1, 10, 0.1), "variance"),
    (lambda: gpr20.thm6_halfwidth(10, 3, 0, 0.1), "n_bins"),
    (lambda: gpr20.thm7_halfwidth(100, 10, 0.1, 0.5, 0.5), "upper"),
    (lambda: gpr20.thm7_halfwidth(100, 10, 0.1, 2.0, 1.5), "lower"),
    (lambda: gpr20.thm7_halfwidth(100, 10, 0.1, 2.0, 0.5, c=0), "c"),
    (lambda: gpr20.thm3_eps_lower_bound(0.5), "alpha"),
    (lambda: gpr20.cor3_eps_stated([1, 2], [0.1], 0.1), "variances"),
    (lambda: gpr20.thm10_halfwidth(10, 0.1, -1.0, 2.0, 10, 0.1), "m_b"),
])
def test_bad_arguments_name_the_argument(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_empty_bin_is_infinite_not_nan():
    assert math.isinf(gpr20.thm4_halfwidth(0, 0.0, 10, 0.1))
    assert math.isinf(gpr20.thm6_halfwidth(0, 0.0, 10, 0.1))
    assert math.isinf(gpr20.cor3_eps_max_halfwidth([0, 5], [0.0, 0.1], 0.1))


# ------------------------------------------------------------------------ properties
def test_monotonicity():
    n = np.arange(1, 2000)
    hw = gpr20.thm4_halfwidth(n, 0.2, 10, 0.1)
    assert np.all(np.diff(hw) < 0)
    v = np.linspace(0, 0.25, 50)
    assert np.all(np.diff(gpr20.thm4_halfwidth(100, v, 10, 0.1)) > 0)
    assert np.all(np.diff(gpr20.thm4_halfwidth(100, 0.2, np.arange(1, 50), 0.1)) > 0)
    a = np.linspace(0.01, 0.5, 30)
    assert np.all(np.diff(gpr20.thm6_halfwidth(500, 120, 10, a)) < 0)
    # Theorem 10 with m_b U = 1 is Theorem 4.
    assert gpr20.thm10_halfwidth(300, 0.2, 0.5, 2.0, 10, 0.1) == pytest.approx(
        gpr20.thm4_halfwidth(300, 0.2, 10, 0.1))


def test_registry_lists_gpr20():
    ids = {g.id for g in registry.all_guarantees() if g.paper == "gpr20"}
    assert ids == {
        "gpr20.thm4", "gpr20.thm4.hoeffding", "gpr20.cor3", "gpr20.cor3.max_halfwidth",
        "gpr20.thm5", "gpr20.thm6", "gpr20.thm6.intermediate", "gpr20.thm7",
        "gpr20.thm7.explicit", "gpr20.thm10", "gpr20.prop3", "gpr20.thm3", "gpr20.cor1"}
    assert registry.get("gpr20.thm6").quantifier == "time_uniform"
    assert registry.get("gpr20.cor3.max_halfwidth").variant_of == "gpr20.cor3"
    for g in registry.all_guarantees():
        assert g.function.__doc__ and "Notes" in g.function.__doc__, g.id


# ------------------------------------------------------------------ scaling methods
def _scaling_data(rng, n=2000):
    s = rng.beta(2, 3, n)
    y = (rng.random(n) < s**1.5).astype(float)
    return s, y


@pytest.mark.parametrize("cls", [PlattScaling, TemperatureScaling])
def test_newton_fit_matches_scipy(cls):
    s, y = _scaling_data(np.random.default_rng(3))
    model = cls().fit(s, y)
    z = np.log(s) - np.log1p(-s)

    def nll(theta):
        t = theta[0] * z + (theta[1] if theta.size > 1 else 0.0)
        return np.sum(np.logaddexp(0, t) - y * t)

    x0 = np.zeros(2 if cls is PlattScaling else 1)
    ref = optimize.minimize(nll, x0, method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(model.coef_, ref, atol=1e-5)
    h = model.predict_proba(s)
    assert h.shape == (s.size, 2) and np.allclose(h.sum(axis=1), 1)
    assert model.is_injective_


def test_beta_calibration_constraints():
    rng = np.random.default_rng(4)
    s, y = _scaling_data(rng)
    coef = BetaCalibration().fit(s, y).coef_
    assert coef[0] >= 0 and coef[1] >= 0
    # Labels that decrease in s force a = 0 (and here b = 0 as well: a constant map).
    s2 = rng.random(3000)
    y2 = (rng.random(3000) < 1 - s2).astype(float)
    fitted = BetaCalibration().fit(s2, y2)
    assert fitted.coef_[0] == 0 and fitted.coef_[1] >= 0
    with pytest.raises(ValueError, match="scores"):
        BetaCalibration().fit(s2 + 1, y2)
    with pytest.raises(ValueError, match="not fitted"):
        PlattScaling().predict(s2)


# ------------------------------------------------------------------- shift tooling
def test_weighted_binning_hand_computed():
    s = np.array([0.1, 0.2, 0.6, 0.7, 0.9])
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    w = np.array([3.0, 1.0, 1.0, 1.0, 2.0])
    m = WeightedHistogramBinning(2, partition="fixed_width").fit(s, y, sample_weight=w)
    np.testing.assert_allclose(m.values_, [3 / 4, 2 / 4])
    np.testing.assert_allclose(m.counts_, [2, 3])
    assert m.predict(np.array([0.05, 0.95])).tolist() == [0.75, 0.5]
    plain = WeightedHistogramBinning(2, partition="fixed_width").fit(s, y)
    np.testing.assert_allclose(plain.values_, [0.5, 2 / 3])
    with pytest.raises(ValueError, match="split"):
        WeightedHistogramBinning(10, split=0.5).fit(s, y)


def test_ulsif_recovers_linear_ratio():
    law = LinearShiftLaw(0.5, ConditionalMean("power"))
    rng = np.random.default_rng(5)
    model = ULSIF(rng=6).fit(law.sample_source(2000, rng), law.sample_target(2000, rng))
    x = np.linspace(0.02, 0.98, 49)
    err = np.mean((model.predict(x) - law.weight(x)) ** 2)
    # Seeds 0-3 give 2-9 % of the squared error of the constant ratio 1 (no correction).
    assert err < 0.2 * np.mean((1.0 - law.weight(x)) ** 2)


def test_target_sampler_matches_target_cdf():
    law = SHIFT_LAWS["shift_identity"]
    x = law.sample_target(200000, np.random.default_rng(7))
    for t in (0.1, 0.5, 0.9):
        assert np.mean(x <= t) == pytest.approx(law.target_cdf(t), abs=4e-3)


# --------------------------------------------------------------------- experiments
def test_stream_experiment_matches_a_direct_loop():
    exp = StreamExperiment((0.3,), (50,), (0.1,), "thm6_intermediate", "one")
    out = exp.simulate(np.random.default_rng(11), 3)
    rng = np.random.default_rng(11)
    y = (rng.random((3, 50)) < 0.3).astype(float)
    for r in range(3):
        ybar_prev, v, worst = 0.5, 0.0, 0.0
        for t in range(1, 51):
            v += (y[r, t - 1] - ybar_prev) ** 2
            ybar = y[r, :t].mean()
            hw = gpr20.thm6_halfwidth_intermediate(t, v, 1, 0.1)
            worst = max(worst, abs(ybar - 0.3) / hw)
            ybar_prev = ybar
        assert out["ratio"][r, 0] == pytest.approx(worst, rel=1e-12)


def test_bin_bernoulli_degenerate_probabilities_always_covered():
    exp = BinBernoulliExperiment((5, 50), (0.0, 1.0), (0.1,))
    out = exp.simulate(np.random.default_rng(0), 200)
    assert out["success"].all() and (out["ratio"] == 0).all()


def test_adversary_truths():
    out = ImpossibilityExperiment("platt", 500, (0.1,)).simulate(np.random.default_rng(1), 200)
    # Injective map, truth Y: the error is |Y - h| with h near 1/2, far above 0.2.
    assert out["success"].mean() > 0.95
    out = ImpossibilityExperiment("fixed_width", 500, (0.1,)).simulate(
        np.random.default_rng(1), 200)
    assert out["success"].mean() < 0.05


def test_ci_width_experiment_on_atoms():
    exp = CIWidthExperiment("atomwise_eb", LAWS["two_atoms"], 400, (0.1,), "coverage")
    out = exp.simulate(np.random.default_rng(2), 300)
    assert out["bound"].max() < 1.0  # atoms are seen: informative intervals
    assert out["success"].mean() > 0.9


def test_experiment_results_identical_for_any_jobs(tmp_path):
    exps = [ShiftExperiment(SHIFT_LAWS["shift_sine"], 500, 5, (0.1,), partition="uniform_mass",
                            n_edge=100),
            StreamExperiment((0.5, 0.2), (100, 100), (0.1,))]
    arrays = []
    for jobs in (1, 2):
        store = ResultStore(tmp_path / f"s{jobs}.sqlite")
        run_cells(exps, 300, 9, store, n_jobs=jobs, blocks_per_task=1)
        arrays.append([load_cell(store, e, 300, 9) for e in exps])
    for a, b in zip(*arrays, strict=True):
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])


def test_experiment_validation():
    with pytest.raises(ValueError, match="radius"):
        BinBernoulliExperiment((5,), (0.5,), (0.1,), radius="nope")
    with pytest.raises(ValueError, match="alpha"):
        ImpossibilityExperiment("platt", 100, (0.6,))
    with pytest.raises(ValueError, match="c0"):
        LinearShiftLaw(1.0)
    with pytest.raises(ValueError, match="n_edge"):
        ShiftExperiment(SHIFT_LAWS["shift_sine"], 100, 10, partition="uniform_mass")


# ------------------------------------------------------------------ D.4 figure
def test_fixed_width_plugin_ece_by_hand():
    from simulations.metrics import fixed_width_reliability, plugin_ece_fixed_width

    p = np.array([0.05, 0.05, 0.95, 1.0])
    y = np.array([0.0, 1.0, 1.0, 1.0])
    mass, mp, fp = fixed_width_reliability(p, y, 2)
    np.testing.assert_allclose(mass, [0.5, 0.5])
    np.testing.assert_allclose(mp, [0.05, 0.975])
    np.testing.assert_allclose(fp, [0.5, 1.0])
    assert plugin_ece_fixed_width(p, y, 2) == pytest.approx(0.5 * 0.45 + 0.5 * 0.025)


def test_covariate_shift_figure_small():
    pytest.importorskip("sklearn")
    from figures.gpr20 import _shift, fig2a, fig2b, fig3

    small = {"train": 1500, "ratio": 300, "edges": 200, "estimates": 800, "test": 3000,
             "alt_source": 500, "alt_target": 500}
    data = _shift.compute_shift(None, reps=2, seed=1, sizes=small, n_trees=10)
    again = _shift.compute_shift(None, reps=2, seed=1, sizes=small, n_trees=10)
    for m in _shift.METHODS:
        assert data[f"{m}/ece"].shape == (2,) and data[f"{m}/mp"].shape == (2, 10)
        assert np.all((data[f"{m}/ece"] >= 0) & (data[f"{m}/ece"] <= 1))
        np.testing.assert_array_equal(data[f"{m}/ece"], again[f"{m}/ece"])
    for mod, k in ((fig2a, 1), (fig2b, 2), (fig3, 1)):
        assert mod.draw(data) is not None
        assert len(mod.findings(data)) == k


def test_cor3_study_file_on_a_user_law(tmp_path):
    from theory_checks.study import load_study

    path = tmp_path / "s.toml"
    path.write_text('guarantee = "gpr20.cor3.max_halfwidth"\nreps = 200\n'
                    '[law]\nname = "beta22"\nscores = { kind = "beta", a = 2.0, b = 2.0 }\n'
                    '[grid]\nn = [500]\nn_bins = [5]\n')
    check, options = load_study(path)
    assert options == {"reps": 200}
    assert [e.law_name for e in check.experiments] == ["beta22"]
    path.write_text('guarantee = "gpr20.thm6"\n[law]\nname = "x"\n[grid]\nn = [5]\n')
    with pytest.raises(ValueError, match="guarantee must be one of"):
        load_study(path)
