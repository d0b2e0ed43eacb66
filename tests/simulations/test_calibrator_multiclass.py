"""A multiclass calibrator of your own: top-label and class-wise truth, claims, refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from calcheck.simulations.experiments.calibrator import allow_unresolved
from calcheck.simulations.experiments.calibrator_multiclass import MulticlassCalibratorExperiment
from calcheck.simulations.laws import LAWS
from calcheck.theory_checks.user.calibrators import (
    is_multiclass_calibrator,
    multiclass_calibrator_method,
)


def _top(s):
    c = np.argmax(s, axis=1)
    return c, s[np.arange(len(s)), c]


class FixedTopLabel:
    """Data-free: the predicted class's entry is 0.3 below top score ``cut``, 0.9 above."""

    n_classes = 5

    def __init__(self, cut=0.75):
        self.cut = cut

    def fit(self, scores, labels):
        return self

    def predict_proba(self, scores):
        c, top = _top(scores)
        out = np.zeros_like(scores)
        out[np.arange(len(scores)), c] = np.where(top < self.cut, 0.3, 0.9)
        return out


class TopLabelBins:
    """Top-label fixed-width binning: per predicted class, n_bins bins of the top score."""

    n_classes = 5

    def __init__(self, n_bins=4):
        self.n_bins = n_bins

    def _cells(self, scores):
        c, top = _top(scores)
        b = np.clip(((top - 0.5) * 2 * self.n_bins).astype(int), 0, self.n_bins - 1)
        return c, c * self.n_bins + b

    def fit(self, scores, labels):
        c, idx = self._cells(scores)
        size = scores.shape[1] * self.n_bins
        count = np.bincount(idx, minlength=size)
        self.values_ = np.where(
            count > 0, np.bincount(idx, labels == c, minlength=size) / np.maximum(count, 1), 0.5
        )
        return self

    def predict_proba(self, scores):
        c, idx = self._cells(scores)
        out = np.zeros_like(scores)
        out[np.arange(len(scores)), c] = self.values_[idx]
        return out


@pytest.mark.parametrize(("cut", "low_mass"), [(0.75, 0.5), (0.7, 0.4)])
def test_a_fixed_map_on_eta_one_half_by_hand(cut, low_mass):
    # tl_balanced_half: 5 classes of probability 0.2, U uniform, P(Y = C | C, U) = 1/2,
    # s = (1 + U) / 2, so {s < cut} has probability low_mass within each class
    law = LAWS["tl_balanced_half"]
    exp = MulticlassCalibratorExperiment(FixedTopLabel(cut), law, 200, 5)
    out = exp.simulate(np.random.default_rng(0), 2)
    ece = low_mass * 0.2 + (1 - low_mass) * 0.4  # errors |1/2 - 0.3| and |1/2 - 0.9|
    np.testing.assert_allclose(out.max_error, 0.4)
    np.testing.assert_allclose(out.l1_ece, ece, atol=1e-6)  # the cut at U = 0.4 is located
    # class l: outputs 0.3 / 0.9 where C = l (mass 0.2), 0 elsewhere (truth 1/2 / 4 = 0.125)
    cw = 0.2 * ece + 0.8 * 0.125
    np.testing.assert_allclose(out.cw_ece, cw, atol=1e-6)
    np.testing.assert_allclose(out.class_ece, cw, atol=1e-6)
    np.testing.assert_allclose(out.class_max_error, 0.4)
    assert list(out.n_levels) == [10, 10]
    assert out.unresolved_mass.max() <= 5 * 0.2 * 2.0**-16 / 256 * 1.01
    # calibration data per level set (columns: class 0 low, class 0 high, class 1 low, ...)
    rng = np.random.default_rng(0)
    scores, labels = law.sample(200, rng)  # the first replicate's draws
    c, top = _top(scores)
    for col in range(10):
        members = (c == col // 2) & ((top >= cut) == bool(col % 2))
        hits = labels[members] == col // 2
        assert out.counts[0, col] == members.sum()
        assert out.means[0, col] == pytest.approx(hits.mean())
        assert out.variances[0, col] == pytest.approx(hits.var())
    assert list(out.n_used) == [200, 200]
    assert set(exp.symbols(out)) == {
        "n",
        "n_bins",
        "n_classes",
        "counts",
        "means",
        "variances",
        "n_used",
    }


def test_the_identity_on_prototypes_by_hand():
    class Identity:
        n_classes = 3

        def fit(self, scores, labels):
            return self

        def predict_proba(self, scores):
            return scores

    law = LAWS["cw_prototype_atoms"]
    out = MulticlassCalibratorExperiment(Identity(), law, 50, 5).simulate(
        np.random.default_rng(1), 1
    )
    g, w = np.asarray(law.prototypes), np.full(5, 0.2)
    truth = law.shrink * g + (1 - law.shrink) / 3  # P(Y = l | g)
    c = np.argmax(g, axis=1)
    tl = {}
    for j in range(5):
        key = (c[j], g[j, c[j]])
        m, mo = tl.get(key, (0.0, 0.0))
        tl[key] = (m + w[j], mo + w[j] * truth[j, c[j]])
    errors = {k: abs(mo / m - k[1]) for k, (m, mo) in tl.items()}
    assert out.max_error[0] == pytest.approx(max(errors.values()))
    assert out.l1_ece[0] == pytest.approx(sum(tl[k][0] * e for k, e in errors.items()))
    # the truth is affine in g_l: each class-wise level set's error is |truth - g_l|
    class_ece = [np.sum(w * np.abs(truth[:, lab] - g[:, lab])) for lab in range(3)]
    np.testing.assert_allclose(out.class_ece[0], class_ece)
    assert out.cw_ece[0] == pytest.approx(np.mean(class_ece))


def _successes(spec, event, exp, out, radius):
    values = spec.events[event].event.evaluate(exp, out, radius, 0.1)
    return int(values.success.sum())


def test_a_correct_claim_is_consistent_and_a_wrong_one_caught():
    # Hoeffding in each of the L B = 20 (class, bin) cells of n / 20 = 50 points on average,
    # with a union bound, at half the average count: it holds unless some cell holds fewer
    # than 25 points (probability < 1e-4 at n = 1000, Binomial(1000, 1/20))
    spec = multiclass_calibrator_method(TopLabelBins(4), grid=32)
    law = LAWS["tl_balanced_half"]
    exp = spec.build(law, n=1000, n_bins=4)
    reps = 300
    out = exp.simulate(np.random.default_rng(0), reps)
    alpha, cells = 0.1, 5 * 4
    radius = np.sqrt(np.log(2 * cells / alpha) / (2 * 25))
    k = _successes(spec, "conditional", exp, out, radius)
    # exact binomial test of coverage >= 1 - alpha: not rejected
    assert stats.binomtest(k, reps, 1 - alpha, alternative="less").pvalue > 1e-3
    k = _successes(spec, "conditional", exp, out, 0.3 * radius)
    assert stats.binomtest(k, reps, 1 - alpha, alternative="less").pvalue < 1e-6
    # the class-wise and ECE events read the same outcome (loose radii: every replicate)
    for event, rad in (("cw_conditional", np.full(5, 0.6)), ("ece", 0.2), ("cw_ece", 0.2)):
        assert _successes(spec, event, exp, out, rad) == reps


def test_refusals_name_the_problem():
    law = LAWS["tl_balanced_half"]
    with pytest.raises(ValueError, match=r"continuous Dirichlet law.*cw_prototype_atoms"):
        MulticlassCalibratorExperiment(FixedTopLabel(), LAWS["cw_dirichlet_balanced"], 50, 5)
    with pytest.raises(ValueError, match=r"declares n_classes=5, but law 'tl_atoms' has 3"):
        MulticlassCalibratorExperiment(FixedTopLabel(), LAWS["tl_atoms"], 50, 5)
    with pytest.raises(ValueError, match=r"runs on laws of family top_label or dirichlet"):
        MulticlassCalibratorExperiment(FixedTopLabel(), LAWS["uniform_half"], 50, 5)

    class FitOnly:
        def fit(self, s, y):
            return self

    with pytest.raises(ValueError, match=r"predict_proba\(scores\) -> \(m, L\); FitOnly has no"):
        multiclass_calibrator_method(FitOnly())

    class Wide(FixedTopLabel):
        def predict_proba(self, scores):
            return np.zeros((len(scores), 2))

    class Over(FixedTopLabel):
        def predict_proba(self, scores):
            return 1.5 * super().predict_proba(scores)

    for bad, match in (
        (Wide(), r"\(m, L\) matrix.*got shape \(\d+, 2\)"),
        (Over(), r"in \[0, 1\], got 1.35 for class \d"),
    ):
        with pytest.raises(ValueError, match=match):
            MulticlassCalibratorExperiment(bad, law, 50, 5).simulate(np.random.default_rng(0), 1)


def test_a_continuous_map_is_refused_unless_allowed():
    class Temperature(FixedTopLabel):
        def predict_proba(self, scores):
            z = np.exp(2 * scores)
            return z / z.sum(axis=1, keepdims=True)

    law = LAWS["tl_balanced_half"]
    exp = MulticlassCalibratorExperiment(Temperature(), law, 50, 5, grid=32)
    with pytest.raises(ValueError, match=r"continuously on probability 1 .*allow_unresolved"):
        exp.simulate(np.random.default_rng(0), 1)
    spec = multiclass_calibrator_method(allow_unresolved(Temperature()), grid=32)
    out = spec.build(law, n=50, n_bins=5).simulate(np.random.default_rng(0), 1)
    assert out.unresolved_mass[0] == pytest.approx(1.0)
    assert out.n_levels[0] == 5 * 32


def test_which_calibrators_are_multiclass():
    assert is_multiclass_calibrator(FixedTopLabel())
    assert is_multiclass_calibrator(allow_unresolved(FixedTopLabel()))

    class Sklearn:
        classes_ = np.arange(4)

        def fit(self, s, y):
            return self

        def predict_proba(self, s):
            return s

    class Binary(Sklearn):
        classes_ = np.arange(2)

    assert is_multiclass_calibrator(Sklearn())
    assert not is_multiclass_calibrator(Binary())
    assert not is_multiclass_calibrator(object())
    spec = multiclass_calibrator_method(FixedTopLabel())
    assert spec.supplied("ece_mean", data=False) == ("n", "n_bins", "n_classes")
    assert spec.supplied("cw_conditional", data=False) == ("alpha", "n", "n_bins", "n_classes")
    assert set(spec.data) == {"counts", "means", "variances", "n_used"}


def _routed():
    from calcheck.theory_checks.user.guarantees import calibrator_method

    try:
        return "top_label" in calibrator_method(TopLabelBins(4)).families
    except ValueError:
        return False


@pytest.mark.skipif(not _routed(), reason="define_guarantee does not route multiclass yet")
def test_define_guarantee_and_verify_with_a_multiclass_calibrator():
    import calcheck

    def radius(n, n_bins, n_classes, alpha):  # as above: Hoeffding, half the average count
        cells = n_classes * n_bins
        return np.sqrt(np.log(2 * cells / alpha) / (2 * (n / cells / 2)))

    def wrong(n, n_bins, n_classes, alpha):
        return 0.3 * radius(n, n_bins, n_classes, alpha)

    args = {"n": 1000, "n_bins": 4, "reps": 300, "rng": 0}
    ok = calcheck.define_guarantee("mine.tl", radius, method=TopLabelBins(4), event="conditional")
    assert calcheck.verify(ok, "tl_balanced_half", **args).verdict == "consistent"
    bad = calcheck.define_guarantee("mine.x03", wrong, method=TopLabelBins(4), event="conditional")
    res = calcheck.verify(bad, "tl_balanced_half", **args, expect="violated")
    assert res.verdict == "violated"

    # a data-dependent radius: Hoeffding in each top-label level set with its own count
    def per_level_set(counts, n_bins, n_classes, alpha):
        with np.errstate(divide="ignore"):
            return np.sqrt(np.log(2 * n_classes * n_bins / alpha) / (2 * counts))

    data = calcheck.define_guarantee(
        "mine.tl.data", per_level_set, method=TopLabelBins(4), event="conditional"
    )
    assert calcheck.verify(data, "tl_balanced_half", **args).verdict == "consistent"
