"""gr22 (Gupta & Ramdas 2022): bounds, multiclass calibrators, metrics, laws, experiments,
and the CIFAR reproduction.

Reference values: catalog gr22 §5 ("derived bound values", 4 decimals; tolerance = rounding)
and Example 1; the Base columns of Tables 2-5 (3 decimals; shared/data/README.md confirms
them from the same files).
"""

import numpy as np
import pytest
from scipy import optimize

from bounds import gr22, registry
from figures.data import default_data_dir, load_cifar_logits
from simulations.gr22_experiments import (
    AccuracyExperiment,
    ClassWiseBinningExperiment,
    Prop4Experiment,
    TopLabelBinningExperiment,
)
from simulations.multiclass import (
    ClassWiseHistogramBinning,
    DirichletScaling,
    MulticlassTemperatureScaling,
    NormalizedHistogramBinning,
    TopLabelHistogramBinning,
    VectorScaling,
    _normalize_rows,
    equal_width_bin,
    plugin_classwise_ece,
    plugin_reliability_mce,
    plugin_top_label_errors,
    softmax,
    top_label,
    top_label_reliability,
)
from simulations.multiclass_laws import MULTICLASS_LAWS, DirichletAffineLaw

CIFAR = default_data_dir() / "cifar_logits"
needs_cifar = pytest.mark.skipif(not CIFAR.is_dir(), reason=f"CIFAR logits not at {CIFAR}")


# ------------------------------------------------------------------ reference values
@pytest.mark.parametrize(("k", "half", "e1_10", "e1_05", "e2_5000", "e2_40671"), [
    (2, 0.5000, 1.2239, 1.3581, 2.3259, 2.5412),
    (10, 0.2236, 0.4080, 0.4527, 0.7153, 0.7925),
    (20, 0.1581, 0.2808, 0.3116, 0.4734, 0.5285),
    (50, 0.1000, 0.1748, 0.1940, 0.2785, 0.3146),
    (100, 0.0707, 0.1230, 0.1365, 0.1868, 0.2132),
    (150, 0.0577, 0.1003, 0.1113, 0.1477, 0.1699),
    (313, 0.0400, 0.0693, 0.0769, 0.0961, 0.1123),
    (333, 0.0387, 0.0672, 0.0745, 0.0927, 0.1084),
])
def test_catalog_bound_table(k, half, e1_10, e1_05, e2_5000, e2_40671):
    """Catalog §5 table (delta = 0), 4 decimals; eps > 1 is returned raw, never clipped."""
    tol = 5.1e-5
    assert gr22.thm1_ece_mean_bound(k) == pytest.approx(half, abs=tol)
    assert gr22.thm1_marginal_eps(k, 0.1) == pytest.approx(e1_10, abs=tol)
    assert gr22.thm1_marginal_eps(k, 0.05) == pytest.approx(e1_05, abs=tol)
    assert gr22.thm1_conditional_eps(5000, k, 0.1) == pytest.approx(e2_5000, abs=tol)
    assert gr22.thm1_conditional_eps(40671, k, 0.1) == pytest.approx(e2_40671, abs=tol)


def test_delta_adds_and_thm2_aliases():
    assert gr22.thm1_marginal_eps(50, 0.1, delta=1e-3) == pytest.approx(
        gr22.thm1_marginal_eps(50, 0.1) + 1e-3)
    assert gr22.thm2_marginal_eps(50, 0.1) == gr22.thm1_marginal_eps(50, 0.1)
    # Theorem 2(a) with alpha_l = alpha / L (catalog G13).
    assert gr22.thm2_ece_hp_eps(5000, 50, 0.1, 10) == pytest.approx(
        np.sqrt(np.log(2 * 5000 * 10 / (50 * 0.1)) / (2 * 49)))
    assert gr22.thm2_ece_mean_bound(np.array([50, 20, 100])) == pytest.approx(np.sqrt(1 / 40))


def test_data_dependent_radius_never_exceeds_stated():
    """Catalog G7: eps_2' <= eps_2 (B <= n/k and floor(n_l/B_l) >= k)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(2, 60))
        counts = rng.integers(k, 20 * k, size=int(rng.integers(3, 12)))
        bins = counts // k
        a = float(rng.uniform(0.01, 0.5))
        dd = gr22.thm1_conditional_eps_data_dependent(counts, bins, a)
        assert dd <= gr22.thm1_conditional_eps(int(counts.sum()), k, a) + 1e-12


@pytest.mark.parametrize(("call", "match"), [
    (lambda: gr22.thm1_marginal_eps(1, 0.1), "points_per_bin"),
    (lambda: gr22.thm1_marginal_eps(10, 1.5), "alpha"),
    (lambda: gr22.thm1_conditional_eps(5, 10, 0.1), "n must be >= points_per_bin"),
    (lambda: gr22.thm1_conditional_eps_data_dependent([10, 3], [2, 2], 0.1), "n_l >= 2 B_l"),
    (lambda: gr22.thm1_marginal_eps(10, 0.1, delta=-1), "delta"),
    (lambda: gr22.discrete_top_label_errors([0.5], [0], [1.5], [0.5]), "confidence"),
])
def test_bound_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_registry_has_gr22_guarantees():
    ids = {g.id for g in registry.all_guarantees() if g.paper == "gr22"}
    assert {"gr22.thm1.marginal", "gr22.thm1.conditional", "gr22.thm1.ece_hp",
            "gr22.thm1.ece_mean", "gr22.thm2.marginal", "gr22.thm2.conditional",
            "gr22.thm2.ece_hp", "gr22.thm2.ece_mean", "gr22.prop4", "gr22.accuracy"} <= ids


# ------------------------------------------------------------ Prop 4 and Example 1
def test_example1_exact():
    """Sec. 2 Example 1: conf-ECE = 0, TL-ECE = 0.4 (and TL-MCE 0.4, conf-MCE 0)."""
    conf, tl, conf_mce, tl_mce = gr22.discrete_top_label_errors(
        [0.5, 0.5], [0, 1], [0.6, 0.6], [0.2, 1.0])
    assert conf == pytest.approx(0.0, abs=1e-15)
    assert tl == pytest.approx(0.4)
    assert conf_mce == pytest.approx(0.0, abs=1e-15)
    assert tl_mce == pytest.approx(0.4)


def test_prop4_on_random_instances_and_equality_when_c_is_a_function_of_h():
    rng = np.random.default_rng(1)
    prob = rng.dirichlet(np.ones(20), size=500)
    c = rng.integers(0, 4, size=(500, 20))
    h = rng.choice([0.3, 0.5, 0.7], size=(500, 20))
    p = rng.random((500, 20))
    conf, tl, conf_mce, tl_mce = gr22.discrete_top_label_errors(prob, c, h, p)
    assert np.all(conf <= tl + 1e-12) and np.all(conf_mce <= tl_mce + 1e-12)
    assert np.mean(conf < tl - 1e-9) > 0.5  # strict on most instances
    # catalog G1: equality when c is a function of h
    c_of_h = (h * 10).astype(int) % 4
    conf2, tl2, _, _ = gr22.discrete_top_label_errors(prob, c_of_h, h, p)
    np.testing.assert_allclose(conf2, tl2, atol=1e-12)


def test_plugin_prop4_and_coarsening():
    """Plug-in conf-ECE <= TL-ECE on the same bins; fewer bins never raise the estimate
    when bins nest (catalog G23)."""
    rng = np.random.default_rng(2)
    for _ in range(50):
        n = 300
        c = rng.integers(0, 3, n)
        h = rng.uniform(0.34, 1, n)
        y = np.where(rng.random(n) < h, c, (c + 1) % 3)
        e30 = plugin_top_label_errors(c, h, y, n_bins=30)
        e15 = plugin_top_label_errors(c, h, y, n_bins=15)
        assert e30.conf_ece <= e30.tl_ece + 1e-12
        assert e30.conf_mce <= e30.tl_mce + 1e-12
        assert e15.tl_ece <= e30.tl_ece + 1e-12


# -------------------------------------------------------------------- plug-in, by hand
def test_plugin_by_hand():
    """Two classes in one bin [0.6, 0.667): class 0 (conf .6, .62; hits 1, 0) and class 1
    (conf .61; hit 1). TL-ECE = (2/3)|.5 - .61| + (1/3)|1 - .61| = .2033...;
    conf-ECE = |2/3 - .61| = .0566...; TL-MCE = .39."""
    c = np.array([0, 0, 1])
    h = np.array([0.6, 0.62, 0.61])
    y = np.array([0, 2, 1])
    e = plugin_top_label_errors(c, h, y, n_bins=15)
    assert e.tl_ece == pytest.approx(2 / 3 * 0.11 + 1 / 3 * 0.39)
    assert e.conf_ece == pytest.approx(abs(2 / 3 - 0.61))
    assert e.tl_mce == pytest.approx(0.39)
    rel = top_label_reliability(c, h, y, n_bins=10)
    assert rel["tl_gap"][0] == pytest.approx(e.tl_ece)  # one bin: Delta_b = TL-ECE
    assert plugin_reliability_mce(c, h, y) == pytest.approx(e.tl_ece)
    assert rel["acc"][0] == pytest.approx(2 / 3) and rel["fraction"][0] == 1.0
    # CW-ECE: L = 2 classes, one bin each.
    probs = np.array([[0.8, 0.2], [0.8, 0.2], [0.3, 0.7]])
    labels = np.array([0, 1, 1])
    want = 0.5 * (2 / 3 * abs(0.5 - 0.8) + 1 / 3 * abs(0 - 0.3)
                  + 2 / 3 * abs(0.5 - 0.2) + 1 / 3 * abs(1 - 0.7))
    assert plugin_classwise_ece(probs, labels, n_bins=2) == pytest.approx(want)
    assert equal_width_bin([0.0, 0.999, 1.0, 1 / 15], 15).tolist() == [0, 14, 14, 1]


# ---------------------------------------------------------------------- calibrators
def _data(n=3000, seed=3):
    law = MULTICLASS_LAWS["tl_opposite"]
    return law.sample(n, np.random.default_rng(seed))


def test_tlhb_keeps_argmax_and_bins_per_class():
    scores, labels = _data()
    tl = TopLabelHistogramBinning(50, rng=0).fit(scores, labels)
    np.testing.assert_array_equal(tl.bins_per_class_, tl.class_counts_ // 50)
    test, _ = _data(1000, 4)
    c, h, g = tl.predict_groups(test)
    np.testing.assert_array_equal(c, top_label(test)[0])
    # every output is a bin mean of that class's calibration labels
    assert np.all((h >= 0) & (h <= 1))
    assert len(np.unique(g)) <= tl.bins_per_class_.sum()
    fixed = TopLabelHistogramBinning(n_bins=7, rng=0).fit(scores, labels)
    assert np.all(fixed.bins_per_class_ == 7)


def test_tlhb_rare_class_left_uncalibrated(caplog):
    scores, labels = _data(300)
    # a fourth class predicted once: 0 bins, left uncalibrated (as the authors' code does)
    s4 = np.hstack([scores * 0.9, np.full((300, 1), 0.1)])
    s4[0] = [0.05, 0.05, 0.05, 0.85]
    tl = TopLabelHistogramBinning(50, rng=0).fit(s4, labels)
    assert tl.bins_per_class_[3] == 0 and tl.calibrators_[3] is None
    c, h, g = tl.predict_groups(s4[:1])
    assert c[0] == 3 and h[0] == pytest.approx(0.85) and g[0] == -1


def test_cwhb_and_nhb():
    scores, labels = _data()
    cw = ClassWiseHistogramBinning(100, rng=0).fit(scores, labels)
    assert np.all(cw.bins_per_class_ == 30)
    h = cw.predict_proba(scores[:500])
    assert h.shape == (500, 3)
    nh = NormalizedHistogramBinning(100, rng=0).fit(scores, labels)
    np.testing.assert_allclose(nh.predict_proba(scores[:500]).sum(axis=1), 1.0)
    np.testing.assert_allclose(_normalize_rows(np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 2.0]])),
                               [[1 / 3] * 3, [0.25, 0.25, 0.5]])


def test_code_variant_edges_and_lower_bin_rule():
    """Authors' code: np.array_split upper edges, an edge score goes to the lower bin."""
    from simulations.multiclass import _CodeVariantBinning

    s = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    y = np.array([0, 1, 0, 1, 1, 1], dtype=float)
    cal = _CodeVariantBinning(3).fit(s, y)
    assert cal.edges_[:2].tolist() == [0.2, 0.4]
    np.testing.assert_allclose(cal.bin_values_, [0.5, 0.5, 1.0])
    assert cal.predict_bin([0.2, 0.21, 0.9]).tolist() == [0, 1, 2]


def test_calibrator_validation():
    scores, labels = _data(200)
    with pytest.raises(ValueError, match=r"labels must lie in 0\.\.2"):
        TopLabelHistogramBinning().fit(scores, labels + 1)
    with pytest.raises(ValueError, match="probabilities"):
        TopLabelHistogramBinning().fit(scores * 5, labels)
    with pytest.raises(ValueError, match="variant"):
        TopLabelHistogramBinning(variant="x").fit(scores, labels)
    with pytest.raises(ValueError, match="not fitted"):
        ClassWiseHistogramBinning().predict_proba(scores)
    with pytest.raises(ValueError, match="objective"):
        MulticlassTemperatureScaling(objective="ece").fit(scores, labels)


def test_scalers_gradients_and_temperature_against_scipy():
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(400, 4)) * 2
    labels = np.argmax(logits + rng.gumbel(size=logits.shape) * 1.5, axis=1)
    p = softmax(logits)
    ts = MulticlassTemperatureScaling().fit(p, labels)

    def nll(t):
        q = softmax(np.log(p) / t)
        return -np.mean(np.log(q[np.arange(400), labels]))

    t_ref = optimize.minimize_scalar(nll, bounds=(0.05, 20), method="bounded",
                                     options={"xatol": 1e-8}).x
    assert ts.temperature_ == pytest.approx(t_ref, rel=1e-4)
    grid = MulticlassTemperatureScaling(objective="ece_grid").fit(p, labels)
    assert grid.temperature_ == pytest.approx(round(grid.temperature_, 1))
    for cal in (VectorScaling(), DirichletScaling(reg_lambda=1e-2, reg_mu=1e-2)):
        x = np.log(p)
        onehot = np.eye(4)[labels]

        def f(theta, cal=cal, x=x, onehot=onehot):
            z = cal._logits(x, theta)
            logq = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
            return -(onehot * logq).sum() / 400 + cal._penalty(theta, 4)[0]

        def g(theta, cal=cal, x=x, onehot=onehot):
            z = cal._logits(x, theta)
            q = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
            return cal._backprop(x, (q - onehot) / 400, theta) + cal._penalty(theta, 4)[1]

        theta = cal._init(4) + rng.normal(size=cal._init(4).shape) * 0.1
        assert optimize.check_grad(f, g, theta) < 1e-5
        fitted = cal.fit(p, labels)
        assert fitted.predict_proba(p).shape == (400, 4)
    # nested models: TS is VS with equal weights, VS is unregularised DS with a diagonal W
    vs, ds = VectorScaling().fit(p, labels), DirichletScaling().fit(p, labels)
    assert vs.loss_ <= ts.loss_ + 1e-8
    assert ds.loss_ <= vs.loss_ + 1e-8


# --------------------------------------------------------------------------- laws
def test_top_label_law_sampling_matches_exact_truth():
    law = MULTICLASS_LAWS["tl_opposite"]
    rng = np.random.default_rng(6)
    scores, labels = law.sample(200_000, rng)
    c, s = top_label(scores)
    np.testing.assert_allclose(np.bincount(c) / c.size, law.class_probs, atol=4e-3)
    np.testing.assert_allclose(scores.sum(axis=1), 1.0)
    u = 2 * s - 1
    for lab in range(3):
        m = (c == lab) & (u > 0.3) & (u < 0.6)
        sub = law.laws[lab]
        mass, moment = sub.interval_moments(0.3, 1.0, 0.6, 0.0)
        want = moment / mass
        got = np.mean(labels[m] == lab)
        assert got == pytest.approx(want, abs=4 * np.sqrt(want * (1 - want) / m.sum()))


@pytest.mark.parametrize("name", ["cw_dirichlet_imbalanced", "cw_prototype_atoms"])
def test_dirichlet_affine_law_classwise_truth(name):
    law = MULTICLASS_LAWS[name]
    g, y = law.sample((100_000,), np.random.default_rng(7))
    for lab in range(law.n_classes):
        sub = law.class_law(lab)
        mass, moment = sub.interval_moments(0.0, 0.0, 1.0, 1.0)
        assert mass == pytest.approx(1.0)
        assert np.mean(y == lab) == pytest.approx(moment, abs=5e-3)
        assert np.mean(g[:, lab]) == pytest.approx(
            (moment - (1 - law.shrink) / law.n_classes) / law.shrink, abs=5e-3)


def test_law_validation():
    with pytest.raises(ValueError, match="shrink"):
        DirichletAffineLaw(shrink=0.0)
    with pytest.raises(ValueError, match="n_l >= k"):
        TopLabelBinningExperiment(MULTICLASS_LAWS["tl_imbalanced"], 1000, (0.1,), 20)


# --------------------------------------------------------------------- experiments
def test_experiments_reproducible_and_sane():
    law = MULTICLASS_LAWS["tl_balanced_half"]
    e = TopLabelBinningExperiment(law, 1000, (0.1,), 10, "conditional")
    a = e.simulate(np.random.default_rng(8), 50)
    b = e.simulate(np.random.default_rng(8), 50)
    np.testing.assert_array_equal(a["ratio"], b["ratio"])
    assert a["bound"][0, 0] == pytest.approx(gr22.thm1_conditional_eps(1000, 10, 0.1))
    # k = 2 with eta = 1/2: every bin but the last has one interior point, so the exact
    # TL-ECE is close to sqrt(1/4) (catalog G9, "nearly tight at k = 2")
    e2 = TopLabelBinningExperiment(law, 200, (0.1,), 2, "ece_mean")
    r = e2.simulate(np.random.default_rng(9), 50)
    assert np.mean(r["ratio"]) > 0.9
    cw = ClassWiseBinningExperiment(MULTICLASS_LAWS["cw_prototype_atoms"], 300, (0.1,), 10,
                                    "ece_hp")
    assert cw.simulate(np.random.default_rng(10), 20)["success"].all()
    assert Prop4Experiment().simulate(np.random.default_rng(11), 100)["success"].all()
    acc = AccuracyExperiment(MULTICLASS_LAWS["tl_atoms"], 300, 100, "tlhb", 20)
    assert acc.simulate(np.random.default_rng(12), 3)["success"].all()


# ------------------------------------------------------------------------ CIFAR data
@needs_cifar
def test_cifar_base_columns_match_tables():
    """Base columns of Tables 2-5 to 3 decimals (TL-MCE: the reliability-diagram max)."""
    from figures.gr22._cifar import PAPER

    for (table, metric), rows in PAPER.items():
        for (ds, arch), cols in rows.items():
            d = load_cifar_logits(ds, arch)
            p = softmax(d.test_logits)
            c, h = top_label(p)
            if metric == "tl_ece":
                got = plugin_top_label_errors(c, h, d.test_labels).tl_ece
            elif metric == "tl_mce":
                got = plugin_reliability_mce(c, h, d.test_labels)
            else:
                got = 100 * plugin_classwise_ece(p, d.test_labels)
            assert round(got, 2 if metric == "cw_ece" else 3) == pytest.approx(
                cols["base"]), (table, metric, ds, arch)


@needs_cifar
def test_cifar_ts_column_matches_with_focal_calibration_rule():
    from figures.gr22._cifar import PAPER

    for ds in ("cifar10", "focal_cifar10"):
        table = "table2" if ds == "cifar10" else "table4"
        for arch in ("resnet50", "wide_resnet"):
            d = load_cifar_logits(ds, arch)
            ts = MulticlassTemperatureScaling(objective="ece_grid")
            q = ts.fit(softmax(d.val_logits), d.val_labels).predict_proba(
                softmax(d.test_logits))
            c, h = top_label(q)
            got = plugin_top_label_errors(c, h, d.test_labels).tl_ece
            assert round(got, 3) == pytest.approx(PAPER[(table, "tl_ece")][(ds, arch)]["ts"])


@needs_cifar
def test_fig1_stated_numbers():
    from figures.gr22 import fig1

    found = fig1.findings(fig1.compute())
    assert all(f["holds"] for f in found), found
