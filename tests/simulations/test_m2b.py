"""M2B calibrators, gr22 Algorithms 5-7: hand-computed outputs, reductions, labels kept."""

import logging

import numpy as np
import pytest

from calcheck.simulations.calibrators import (
    ClassWiseHistogramBinning,
    PlattScaling,
    RandomizedUniformMassBinning,
    TopLabelHistogramBinning,
)
from calcheck.simulations.calibrators.m2b import (
    M2BCalibrator,
    TopKConfidenceCalibrator,
    TopKLabelCalibrator,
    top_k_labels,
)
from calcheck.simulations.laws.multiclass import MULTICLASS_LAWS

# Eight points, L = 3. c^(1) = (0,0,0,1,1,1,2,2), c^(2) = (1,2,2,0,2,0,1,1); distinct g^(1)
# and g^(2) values.
P = np.array(
    [
        [0.60, 0.30, 0.10],
        [0.52, 0.11, 0.37],
        [0.72, 0.10, 0.18],
        [0.33, 0.55, 0.12],
        [0.08, 0.65, 0.27],
        [0.36, 0.44, 0.20],
        [0.21, 0.29, 0.50],
        [0.14, 0.39, 0.47],
    ]
)
Y = np.array([0, 2, 1, 1, 2, 0, 2, 1])
ONE_BIN = RandomizedUniformMassBinning(1)  # one bin: h = the mean of Z over the group


def test_top_k_labels_order_and_ties():
    c, g = top_k_labels(P, 2)
    np.testing.assert_array_equal(c[:, 0], [0, 0, 0, 1, 1, 1, 2, 2])
    np.testing.assert_array_equal(c[:, 1], [1, 2, 2, 0, 2, 0, 1, 1])
    np.testing.assert_allclose(g[:, 1], [0.30, 0.37, 0.18, 0.33, 0.27, 0.36, 0.29, 0.39])
    # ties go to the lower index, as np.argmax
    c, _ = top_k_labels([[0.2, 0.4, 0.4], [0.5, 0.25, 0.25]])
    np.testing.assert_array_equal(c, [[1, 2, 0], [0, 1, 2]])


def test_top_k_label_by_hand():
    """Algorithm 6 with one bin per (k, l): h^(k,l) = #{Y = l, c^(k) = l} / #{c^(k) = l}.

    k = 1: l = 0 {x1, x2, x3}: Y = 0 once -> 1/3; l = 1 {x4, x5, x6}: 1/3; l = 2 {x7, x8}: 1/2.
    k = 2: l = 0 {x4, x6}: Y = 0 at x6 -> 1/2; l = 1 {x1, x7, x8}: at x8 -> 1/3;
    l = 2 {x2, x3, x5}: at x2, x5 -> 2/3.
    """
    cal = TopKLabelCalibrator(2, binary=ONE_BIN).fit(P, Y)
    c, h = cal.predict_claims(P)
    np.testing.assert_array_equal(c, top_k_labels(P, 2)[0])
    third, half, two3 = 1 / 3, 1 / 2, 2 / 3
    expected = [
        [third, third],
        [third, two3],
        [third, two3],
        [third, half],
        [third, two3],
        [third, half],
        [half, third],
        [half, third],
    ]
    np.testing.assert_allclose(h, expected)
    np.testing.assert_array_equal(cal.group_sizes_, [[3, 3, 2], [2, 3, 3]])
    # K = 1 is the top-label calibrator (Algorithm 2)
    tl = M2BCalibrator("top_label", binary=ONE_BIN).fit(P, Y)
    np.testing.assert_allclose(tl.predict_proba(P)[:, 0], h[:, 0])


def test_top_k_confidence_and_class_wise_by_hand():
    """Algorithm 7 (corrected line 3) and Algorithms 1, 3 with one bin.

    Z^(1) = 1{Y = c^(1)} = (1,0,0,1,0,0,1,0) -> 3/8; Z^(2) = (0,1,0,0,1,1,0,1) -> 1/2.
    Class-wise: Y = l for 2, 3, 3 of the 8 points -> (1/4, 3/8, 3/8).
    """
    h = TopKConfidenceCalibrator(2, binary=ONE_BIN).fit(P, Y).predict_proba(P)
    np.testing.assert_allclose(h, np.tile([3 / 8, 1 / 2], (8, 1)))
    conf = M2BCalibrator("confidence", binary=ONE_BIN).fit(P, Y)
    np.testing.assert_allclose(conf.predict_proba(P), np.full((8, 1), 3 / 8))
    cw = M2BCalibrator("class_wise", binary=ONE_BIN).fit(P, Y)
    np.testing.assert_allclose(cw.predict_proba(P), np.tile([1 / 4, 3 / 8, 3 / 8], (8, 1)))
    np.testing.assert_array_equal(cw.predict(P), np.tile([0, 1, 2], (8, 1)))


def test_top_k_confidence_two_bins_by_hand():
    """Histogram binning, k = 4: floor(8/4) = 2 bins; ranks 1-4 averaged, rank 5 is the
    boundary (excluded), ranks 6-8 averaged (gr21 Algorithm 2).

    g^(1) sorted: .44 .47 .50 .52 | .55 | .60 .65 .72 with Z^(1) 0 0 1 0 | 1 | 1 0 0:
    bins 1/4 and 1/3, edge .55. g^(2) sorted: .18 .27 .29 .30 | .33 | .36 .37 .39 with
    Z^(2) 0 1 0 0 | 0 | 1 1 1: bins 1/4 and 1, edge .33.
    """
    cal = TopKConfidenceCalibrator(2, points_per_bin=4, rng=0).fit(P, Y)
    test = np.array([[0.70, 0.20, 0.10], [0.45, 0.40, 0.15], [0.10, 0.35, 0.55]])
    c, h = cal.predict_claims(test)
    np.testing.assert_array_equal(c, [[0, 1], [0, 1], [2, 1]])
    np.testing.assert_allclose(h, [[1 / 3, 1 / 4], [1 / 4, 1.0], [1 / 3, 1.0]])
    # h^(2) > h^(1) at the second point: the calibrated values need not keep the order,
    # the labels do (re-sorting them by h would change the top label)


def test_reductions_equal_tl_hb_and_cw_hb():
    scores, labels = MULTICLASS_LAWS["tl_opposite"].sample(600, np.random.default_rng(1))
    test, _ = MULTICLASS_LAWS["tl_opposite"].sample(200, np.random.default_rng(2))
    tl = TopLabelHistogramBinning(30, rng=3).fit(scores, labels)
    for m2b in (
        M2BCalibrator("top_label", points_per_bin=30, rng=3),
        TopKLabelCalibrator(1, points_per_bin=30, rng=3),
    ):
        h = m2b.fit(scores, labels).predict_proba(test)[:, 0]
        np.testing.assert_array_equal(h, tl.predict_confidence(test))
    law = MULTICLASS_LAWS["cw_prototype_atoms"]
    scores, labels = law.sample(400, np.random.default_rng(4))
    test = np.random.default_rng(5).dirichlet([1, 1, 1], 100)  # no ties with the edges
    cw = ClassWiseHistogramBinning(20, rng=6).fit(scores, labels)
    m2b = M2BCalibrator("class_wise", points_per_bin=20, rng=6).fit(scores, labels)
    np.testing.assert_array_equal(m2b.predict_proba(test), cw.predict_proba(test))


def test_labels_kept_for_every_notion_and_any_binary_calibrator():
    """Sec. 3.2 / App. A.1: the label predictors c~ are never changed (catalog G4)."""
    law = MULTICLASS_LAWS["cw_dirichlet_imbalanced"]
    scores, labels = law.sample(500, np.random.default_rng(7))
    test, _ = law.sample(300, np.random.default_rng(8))
    c3 = top_k_labels(test, 3)[0]
    for cal in (
        TopKLabelCalibrator(3, points_per_bin=10, rng=9),
        TopKConfidenceCalibrator(3, points_per_bin=10, rng=9),
        TopKConfidenceCalibrator(3, binary=PlattScaling()),
    ):
        np.testing.assert_array_equal(cal.fit(scores, labels).predict(test), c3)
        h = cal.predict_proba(test)
        assert h.shape == (300, 3)
        assert np.all((h >= 0) & (h <= 1))


def test_small_groups_left_uncalibrated(caplog):
    with caplog.at_level(logging.WARNING):
        cal = TopKLabelCalibrator(2, points_per_bin=3).fit(P, Y)
    assert "left uncalibrated" in caplog.text
    # group {x4, x6} of claim 2, label 0 has 2 < 2k points: h = g^(2) there
    _c, h = cal.predict_claims(P[[3, 5]])
    np.testing.assert_allclose(h[:, 1], [0.33, 0.36])


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: M2BCalibrator("canonical").fit(P, Y), "notion"),
        (lambda: TopKLabelCalibrator(4).fit(P, Y), "top_k"),
        (lambda: M2BCalibrator(binary="hb").fit(P, Y), "binary"),
        (lambda: M2BCalibrator(points_per_bin=1).fit(P, Y), "points_per_bin"),
        (lambda: M2BCalibrator().predict(P), "not fitted"),
        (lambda: M2BCalibrator(binary=ONE_BIN).fit(P, Y).predict(P[:, :2]), "columns"),
        (lambda: top_k_labels(P, 0), "top_k"),
    ],
)
def test_validation(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_tl_hb_logs_reduced_bins_once_per_fit(caplog):
    # classes of 3, 3 and 2 points: the analysed variant (2 points per bin) allows 1 bin each
    with caplog.at_level(logging.WARNING):
        cal = TopLabelHistogramBinning(n_bins=2, variant="analysed", rng=0).fit(P, Y)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "TopLabelHistogramBinning: 3 of 3 classes have too few points for 2 bins (analysed "
        "variant): they get fewer (the fewest points: 2, 1 bins)"
    ]
    np.testing.assert_array_equal(cal.bins_per_class_, [1, 1, 1])
