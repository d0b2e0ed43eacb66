"""Multiclass calibrators, scalers, plug-in metrics and multiclass laws (gr22)."""

import numpy as np
import pytest
from scipy import optimize

from calcheck.simulations.calibrators import (
    ClassWiseHistogramBinning,
    DirichletScaling,
    MulticlassTemperatureScaling,
    NormalizedHistogramBinning,
    TopLabelHistogramBinning,
    VectorScaling,
    softmax,
    top_label,
)
from calcheck.simulations.calibrators.edges import fixed_width_bin_index
from calcheck.simulations.calibrators.multiclass_binning import _normalize_rows
from calcheck.simulations.experiments.gr22 import (
    TopLabelBinningExperiment,
)
from calcheck.simulations.laws.multiclass import MULTICLASS_LAWS, DirichletAffineLaw
from calcheck.simulations.metrics import (
    plugin_classwise_ece,
    plugin_reliability_mce,
    plugin_top_label_errors,
    top_label_reliability,
)


def _data(n=3000, seed=3):
    law = MULTICLASS_LAWS["tl_opposite"]
    return law.sample(n, np.random.default_rng(seed))


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
    assert rel["acc"][0] == pytest.approx(2 / 3)
    assert rel["fraction"][0] == 1.0
    # CW-ECE: L = 2 classes, one bin each.
    probs = np.array([[0.8, 0.2], [0.8, 0.2], [0.3, 0.7]])
    labels = np.array([0, 1, 1])
    want = 0.5 * (
        2 / 3 * abs(0.5 - 0.8)
        + 1 / 3 * abs(0 - 0.3)
        + 2 / 3 * abs(0.5 - 0.2)
        + 1 / 3 * abs(1 - 0.7)
    )
    assert plugin_classwise_ece(probs, labels, n_bins=2) == pytest.approx(want)
    assert fixed_width_bin_index([0.0, 0.999, 1.0, 1 / 15], 15).tolist() == [0, 14, 14, 1]


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
    assert tl.bins_per_class_[3] == 0
    assert tl.calibrators_[3] is None
    c, h, g = tl.predict_groups(s4[:1])
    assert c[0] == 3
    assert h[0] == pytest.approx(0.85)
    assert g[0] == -1


def test_cwhb_and_nhb():
    scores, labels = _data()
    cw = ClassWiseHistogramBinning(100, rng=0).fit(scores, labels)
    assert np.all(cw.bins_per_class_ == 30)
    h = cw.predict_proba(scores[:500])
    assert h.shape == (500, 3)
    nh = NormalizedHistogramBinning(100, rng=0).fit(scores, labels)
    np.testing.assert_allclose(nh.predict_proba(scores[:500]).sum(axis=1), 1.0)
    np.testing.assert_allclose(
        _normalize_rows(np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 2.0]])),
        [[1 / 3] * 3, [0.25, 0.25, 0.5]],
    )


def test_code_variant_edges_and_lower_bin_rule():
    """Authors' code: np.array_split upper edges, an edge score goes to the lower bin."""
    from calcheck.simulations.calibrators.multiclass_binning import _CodeVariantBinning

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

    t_ref = optimize.minimize_scalar(
        nll, bounds=(0.05, 20), method="bounded", options={"xatol": 1e-8}
    ).x
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
            (moment - (1 - law.shrink) / law.n_classes) / law.shrink, abs=5e-3
        )


def test_law_validation():
    with pytest.raises(ValueError, match="shrink"):
        DirichletAffineLaw(shrink=0.0)
    with pytest.raises(ValueError, match="n_l >= k"):
        TopLabelBinningExperiment(MULTICLASS_LAWS["tl_imbalanced"], 1000, 20)


def test_group_inverse_equals_numpy_unique():
    """The counting path groups exactly as np.unique (sorted order); large ranges fall back."""
    from calcheck.simulations.metrics.multiclass import _group_inverse

    rng = np.random.default_rng(11)
    for shape, hi in [((1000,), 15), ((1000, 2), 50), ((500, 2), 10**6), ((300,), 10**9)]:
        keys = rng.integers(-hi // 3, hi, size=shape)
        ref = np.unique(keys, axis=0, return_inverse=True)[1].ravel()
        np.testing.assert_array_equal(_group_inverse(keys), ref)
    # by hand: rows (1, 5), (0, 7), (1, 5), (0, 2) -> sorted groups (0,2), (0,7), (1,5)
    np.testing.assert_array_equal(
        _group_inverse(np.array([[1, 5], [0, 7], [1, 5], [0, 2]])), [2, 1, 2, 0]
    )
    np.testing.assert_array_equal(_group_inverse(np.array([0.5, 0.25, 0.5])), [1, 0, 1])
