"""gr22 experiments: reproducible, typed outcomes, sane statistics (Gupta & Ramdas 2022)."""

import numpy as np
import pytest

from calcheck.bounds import gr22
from calcheck.simulations.experiments.gr22 import (
    AccuracyExperiment,
    ClassWiseBinningExperiment,
    Prop4Experiment,
    TopLabelBinningExperiment,
)
from calcheck.simulations.laws.multiclass import MULTICLASS_LAWS
from calcheck.theory_checks.checks.events import MeanAtMost, Ordered, Within, stated


def test_top_label_outcome_reproducible_and_radius_from_symbols():
    law = MULTICLASS_LAWS["tl_balanced_half"]
    e = TopLabelBinningExperiment(law, 1000, 10)
    a = e.simulate(np.random.default_rng(8), 50)
    b = e.simulate(np.random.default_rng(8), 50)
    np.testing.assert_array_equal(a.error, b.error)
    assert a.mass.sum(axis=1) == pytest.approx(1.0)
    assert a.error.shape == (50, e.bins)
    radius = stated().radius("gr22.thm1.conditional", e.symbols(a), 0.1)
    assert radius == pytest.approx(gr22.thm1_conditional_eps(1000, 10, 0.1))


def test_k2_ece_is_nearly_the_bound():
    # k = 2 with eta = 1/2: every bin but the last has one interior point, so the exact
    # TL-ECE is close to sqrt(1/4) = the bound sqrt(1/(2k)) (Theorem 1 is nearly tight).
    e = TopLabelBinningExperiment(MULTICLASS_LAWS["tl_balanced_half"], 200, 2)
    out = e.simulate(np.random.default_rng(9), 50)
    bound = stated().radius("gr22.thm1.ece_mean", e.symbols(out), None)
    values = MeanAtMost("l1_ece").evaluate(e, out, bound, None)
    assert np.mean(values.ratio) > 0.9


def test_class_wise_prop4_and_accuracy_outcomes():
    cw = ClassWiseBinningExperiment(MULTICLASS_LAWS["cw_prototype_atoms"], 300, 10)
    out = cw.simulate(np.random.default_rng(10), 20)
    radius = stated().radius("gr22.thm2.ece_hp", cw.symbols(out), 0.1)
    assert Within("cw_ece").evaluate(cw, out, radius, 0.1).success.all()
    p4 = Prop4Experiment()
    pairs = (("conf_ece", "tl_ece"), ("conf_mce", "tl_mce"))
    values = Ordered(pairs=pairs).evaluate(
        p4, p4.simulate(np.random.default_rng(11), 100), None, None
    )
    assert values.success.all()
    acc = AccuracyExperiment(MULTICLASS_LAWS["tl_atoms"], 300, 100, "tlhb", 20)
    assert (acc.simulate(np.random.default_rng(12), 3).changed == 0).all()


def test_experiments_refuse_laws_of_another_family():
    with pytest.raises(ValueError, match="top_label"):
        TopLabelBinningExperiment(MULTICLASS_LAWS["cw_dirichlet_balanced"], 1000, 10)
    with pytest.raises(ValueError, match="dirichlet_affine"):
        ClassWiseBinningExperiment(MULTICLASS_LAWS["tl_atoms"], 1000, 10)


def test_class_wise_joint_statistics():
    """G15: the outcome's per-class statistics agree with the one-class BinOutcome, and the
    joint test point is placed like the exact (Rao-Blackwellised) marginal says."""
    cw = ClassWiseBinningExperiment(MULTICLASS_LAWS["cw_prototype_atoms"], 300, 10)
    out = cw.simulate(np.random.default_rng(13), 400)
    assert out.class_max_error.shape == out.class_test_error.shape == (400, 3)
    np.testing.assert_array_equal(out.class_max_error[:, -1], out.max_error)
    assert np.all(out.class_test_error <= out.class_max_error + 1e-15)
    eps = 0.5 * gr22.thm2_marginal_eps(10, 0.1)
    drawn = np.mean(out.class_test_error[:, -1] <= eps)
    exact = np.mean(out.marginal_probability(eps))
    assert abs(drawn - exact) < 4 * np.sqrt(exact * (1 - exact) / 400) + 1e-3
    # the joint events are the max over classes
    r14 = stated().radius("gr22.eq14", cw.symbols(out), 0.1)
    v = Within("class_max_error").evaluate(cw, out, r14, 0.1)
    np.testing.assert_array_equal(v.success, out.class_max_error.max(axis=1) <= r14)


def test_top_k_labels_experiment():
    """Algorithms 6-7 keep the top-K labels; re-ranking them by h (the control) does not."""
    from calcheck.simulations.experiments.gr22_m2b import TopKLabelsExperiment

    atoms = MULTICLASS_LAWS["cw_prototype_atoms"]
    for cal, k in (("top_k_label", 2), ("top_k_confidence", 3), ("confidence", 1)):
        out = TopKLabelsExperiment(atoms, 150, 30, cal, k, 5).simulate(np.random.default_rng(14), 5)
        assert (out.changed == 0).all()
    law = MULTICLASS_LAWS["cw_dirichlet_balanced"]
    ctl = TopKLabelsExperiment(law, 60, 30, "top_k_confidence_resorted", 2)
    assert ctl.simulate(np.random.default_rng(15), 5).changed.max() > 0
    with pytest.raises(ValueError, match="top_k"):
        TopKLabelsExperiment(atoms, 100, 30, "confidence", 2)
    with pytest.raises(ValueError, match="calibrator"):
        TopKLabelsExperiment(atoms, 100, 30, "canonical", 2)


def test_prop4_identity_by_hand():
    """gr22.prop4 is an identity: the four exact errors of one predictor, by hand.

    P(X = x) = (1/2, 1/4, 1/4), c = (0, 1, 0), h = (0.6, 0.6, 0.8), P(Y = c | x) =
    (0.9, 0.3, 0.8). Level sets of h: {1, 2} (mass 3/4, mean 0.7: gap 0.1) and {3} (gap 0):
    conf-ECE 0.075, conf-MCE 0.1. Level sets of (c, h): {1} (gap 0.3), {2} (gap 0.3),
    {3} (gap 0): TL-ECE 0.225, TL-MCE 0.3.
    """
    conf, tl, conf_mce, tl_mce = gr22.discrete_top_label_errors(
        np.array([[0.5, 0.25, 0.25]]),
        np.array([[0, 1, 0]]),
        np.array([[0.6, 0.6, 0.8]]),
        np.array([[0.9, 0.3, 0.8]]),
    )
    np.testing.assert_allclose([conf[0], tl[0], conf_mce[0], tl_mce[0]], [0.075, 0.225, 0.1, 0.3])


def test_accuracy_identity_tl_hb_predicts_the_argmax_by_hand():
    """gr22.accuracy(.top_k) are identities: the labels returned are g's, by hand (ties too)."""
    from calcheck.simulations.calibrators import TopLabelHistogramBinning
    from calcheck.simulations.calibrators.m2b import TopKConfidenceCalibrator, TopKLabelCalibrator

    law = MULTICLASS_LAWS["tl_atoms"]
    scores, labels = law.sample(300, np.random.default_rng(0))
    test = np.array([[0.2, 0.5, 0.3], [0.4, 0.4, 0.2], [1 / 3, 1 / 3, 1 / 3], [0.1, 0.3, 0.6]])
    tl = TopLabelHistogramBinning(20, rng=1).fit(scores, labels)
    np.testing.assert_array_equal(tl.predict(test), [1, 0, 0, 2])  # lowest index on ties
    top2 = [[1, 2], [0, 1], [0, 1], [2, 1]]
    for cal in (
        TopKLabelCalibrator(2, points_per_bin=20, rng=2),
        TopKConfidenceCalibrator(2, points_per_bin=20, rng=2),
    ):
        np.testing.assert_array_equal(cal.fit(scores, labels).predict(test), top2)
    # the statistic is not blind: CW-HB and N-HB (Algorithms 9, 4) do change the argmax
    for other in ("cwhb", "nhb"):
        acc = AccuracyExperiment(MULTICLASS_LAWS["tl_opposite"], 600, 400, other, 20)
        assert acc.simulate(np.random.default_rng(3), 2).changed.min() > 0
