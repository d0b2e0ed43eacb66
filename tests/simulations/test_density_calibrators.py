"""nch14's KDE and DPM calibrators and the Sec. 2.1 test-set metrics."""

import numpy as np
import pytest

from calcheck.simulations.calibrators.density import (
    DirichletMixtureCalibrator,
    KernelCalibrator,
    silverman_bandwidth,
)
from calcheck.simulations.laws import LAWS
from calcheck.simulations.metrics.plugin import evaluation_metrics


def test_nadaraya_watson_by_hand():
    s = np.array([0.1, 0.2, 0.3, 0.7, 0.8])
    z = np.array([0, 1, 0, 1, 1])
    k = KernelCalibrator(bandwidth=0.15).fit(s, z)
    # window [0.05, 0.35] holds 0.1, 0.2, 0.3 -> 1/3; [0.6, 0.9] holds 0.7, 0.8 -> 1
    assert k.predict(np.array([0.2, 0.75])) == pytest.approx([1 / 3, 1.0])
    assert k.predict(np.array([0.5]))[0] == pytest.approx(0.6)  # empty: base rate 3/5
    assert k.n_fallback_ == 1
    # eq. (5) as printed with h0 = h1: n h S1 / (n h S1 + m h S0) at 0.2: S1 = 1, S0 = 2
    printed = KernelCalibrator("printed", bandwidth=0.15).fit(s, z).predict(np.array([0.2]))
    assert printed[0] == pytest.approx(2 * 1 / (2 * 1 + 3 * 2))
    assert silverman_bandwidth(s) == pytest.approx(1.06 * s.std(ddof=1) * 5**-0.2)
    with pytest.raises(ValueError, match="form"):
        KernelCalibrator("gauss").fit(s, z)
    with pytest.raises(ValueError, match="not fitted"):
        KernelCalibrator().predict(s)


def test_density_calibrators_on_a_smooth_law():
    pytest.importorskip("sklearn")
    law = LAWS["uniform_logistic"]
    rng = np.random.default_rng(0)
    s = law.sample_scores(2000, rng)
    z = law.sample_labels(s, rng)
    t = law.sample_scores(4000, rng)
    truth = law.conditional_mean(t)
    for model in (KernelCalibrator(), DirichletMixtureCalibrator(rng=1)):
        with np.errstate(all="ignore"):
            p = model.fit(s, z).predict(t)
        assert np.sqrt(np.mean((p - truth) ** 2)) < 0.05


def test_evaluation_metrics_by_hand():
    p = np.array([0.1, 0.4, 0.4, 0.9])
    y = np.array([0, 0, 1, 1])
    m = evaluation_metrics(p, y, n_bins=2)
    # AUC with the tie counted 1/2: pairs (pos, neg): (0.4, 0.1) 1, (0.4, 0.4) 1/2, (0.9, .) 1, 1
    assert m["auc"] == pytest.approx(3.5 / 4)
    assert m["acc"] == pytest.approx(0.75)
    # equal-frequency bins {0.1, 0.4} and {0.4, 0.9}: gaps |0 - 0.25| and |1 - 0.65|
    assert m["mce"] == pytest.approx(0.35)
    assert m["ece"] == pytest.approx(0.5 * 0.25 + 0.5 * 0.35)
    assert m["rmse"] == pytest.approx(np.sqrt((0.01 + 0.16 + 0.36 + 0.01) / 4))
    with pytest.raises(ValueError, match="both classes"):
        evaluation_metrics(p, np.ones(4))


def test_auc_with_ties_matches_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(5)
    p = np.round(rng.random(500), 1)  # many ties
    y = (rng.random(500) < p).astype(int)
    assert evaluation_metrics(p, y)["auc"] == pytest.approx(metrics.roc_auc_score(y, p), abs=1e-12)
