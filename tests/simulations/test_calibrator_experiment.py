"""CalibratorExperiment: a user's calibrator, events on the level sets of its outputs."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from calcheck.simulations.experiments.calibrator import (
    SPLIT_DEPTH,
    CalibratorExperiment,
    allow_unresolved,
    describe_calibrator,
)
from calcheck.simulations.laws import LAWS
from calcheck.simulations.metrics.exact import merge_equal_outputs


class FixedBins:
    """Fixed-width binning, value = mean label (midpoint when empty): known edges."""

    def __init__(self, n_bins=10, offset=0.0):
        self.n_bins = n_bins
        self.offset = offset  # shifts every output: distinct, known values

    def _bins(self, s):
        return np.clip(np.floor(np.asarray(s) * self.n_bins).astype(int), 0, self.n_bins - 1)

    def fit(self, scores, labels):
        b = self._bins(scores)
        count = np.bincount(b, minlength=self.n_bins)
        total = np.bincount(b, labels, minlength=self.n_bins)
        mid = (np.arange(self.n_bins) + 0.5) / self.n_bins
        self.values_ = np.where(count > 0, total / np.maximum(count, 1), mid)
        self.values_ = np.clip(self.values_ + self.offset * np.arange(self.n_bins), 0, 1)
        return self

    def predict(self, scores):
        return self.values_[self._bins(scores)]


def _one_replicate(law, calibrator, n=500, seed=3):
    exp = CalibratorExperiment(calibrator, law, n, 10)
    out = exp.simulate(np.random.default_rng(seed), 1)
    rng = np.random.default_rng(seed)
    scores = law.sample_scores((1, n), rng)
    labels = law.sample_labels(scores, rng)
    fitted = type(calibrator)(**vars(calibrator)).fit(scores[0], labels[0])
    return out, fitted


@pytest.mark.parametrize("law", ["uniform_logistic", "skewed_beta", "two_atoms", "mixture_atoms"])
def test_level_set_errors_equal_the_direct_exact_computation(law):
    law = LAWS[law]
    out, fitted = _one_replicate(law, FixedBins(10))
    b = fitted.n_bins
    edges = np.arange(b + 1) / b
    hi_u = np.zeros(b)
    hi_u[-1] = 1.0  # the last bin is closed at 1
    mass, moment = law.interval_moments(edges[:-1], np.zeros(b), edges[1:], hi_u)
    # outputs shared by several bins are one level set (e.g. two bins of mean label 1)
    m, mo = merge_equal_outputs(fitted.values_[None], mass[None], moment[None])
    pos = mass > 0
    err = np.abs(mo[0][pos] / m[0][pos] - fitted.values_[pos])
    assert out.n_levels[0] == len(set(fitted.values_[pos]))
    # each jump is located to 2^-16 / grid of probability: the errors agree to ~1e-7
    assert out.max_error[0] == pytest.approx(err.max(), abs=1e-6)
    assert out.l1_ece[0] == pytest.approx(np.sum(mass[pos] * err), abs=1e-7)
    assert out.mass[0].sum() == pytest.approx(1.0, abs=1e-12)
    assert out.unresolved_mass[0] <= b * 2.0**-SPLIT_DEPTH / 1024 * 1.01


def test_equal_outputs_are_one_level_set():
    class TwoValues:
        def fit(self, s, y):
            return self

        def predict(self, s):
            # 0.3 on [0, 0.25) and [0.5, 0.75), 0.6 elsewhere: two level sets
            return np.where((np.asarray(s) % 0.5) < 0.25, 0.3, 0.6)

    law = LAWS["uniform_logistic"]
    out = CalibratorExperiment(TwoValues(), law, 50, 2).simulate(np.random.default_rng(0), 2)
    assert list(out.n_levels) == [2, 2]
    m1, mo1 = law.interval_moments([0.0, 0.5], [0, 0], [0.25, 0.75], [0, 0])
    expected = abs(mo1.sum() / m1.sum() - 0.3)
    row = out.error[0][out.mass[0] > 0]
    assert np.min(np.abs(row - expected)) < 1e-7


def test_a_continuous_stretch_is_reported_unresolved_and_too_many_outputs_refused():
    class Ramp:
        """Isotonic-like: flat, then a linear stretch on [0.4, 0.45], then flat."""

        def fit(self, s, y):
            return self

        def predict(self, s):
            return np.interp(s, [0.4, 0.45], [0.2, 0.8])

    law = LAWS["uniform_logistic"]
    out = CalibratorExperiment(Ramp(), law, 10, 2).simulate(np.random.default_rng(0), 1)
    assert 0.0 < out.unresolved_mass[0] <= 0.05 + 2 / 1024
    assert out.n_levels[0] > 20  # the stretch is pieces of their own outputs

    class Identity:
        def fit(self, s, y):
            return self

        def predict(self, s):
            return np.asarray(s, dtype=float)

    with pytest.raises(
        ValueError, match=r"varies continuously on probability 1 .*allow_unresolved"
    ):
        CalibratorExperiment(Identity(), law, 10, 2, grid=64).simulate(np.random.default_rng(0), 1)
    # accepted explicitly: the events of its discretisation on 64 cells
    out = CalibratorExperiment(Identity(), law, 10, 2, grid=64, max_unresolved=1.0).simulate(
        np.random.default_rng(0), 1
    )
    assert out.n_levels[0] == 64
    assert out.unresolved_mass[0] == pytest.approx(1.0)


class _Bad:
    def __init__(self, value):
        self.value = value

    def fit(self, s, y):
        return self

    def predict(self, s):
        return np.full(np.shape(s), self.value)


@pytest.mark.parametrize(
    ("value", "match"),
    [(np.nan, "out_of_bounds='clip'"), (1.5, r"in \[0, 1\], got 1.5"), (-0.1, "got -0.1")],
)
def test_outputs_that_are_not_probabilities_are_refused(value, match):
    exp = CalibratorExperiment(_Bad(value), LAWS["uniform_half"], 20, 2)
    with pytest.raises(ValueError, match=match):
        exp.simulate(np.random.default_rng(0), 1)


def test_shape_and_protocol_errors_name_the_problem():
    class Matrix(_Bad):
        def predict(self, s):
            return np.zeros((np.size(s), 3))

    with pytest.raises(ValueError, match=r"one probability per score.*\(.*3\)"):
        CalibratorExperiment(Matrix(0), LAWS["uniform_half"], 20, 2).simulate(
            np.random.default_rng(0), 1
        )
    with pytest.raises(ValueError, match="must have fit"):
        CalibratorExperiment(object(), LAWS["uniform_half"], 20, 2)
    with pytest.raises(ValueError, match=r"multi|family"):
        CalibratorExperiment(_Bad(0.5), LAWS["tl_balanced_half"], 20, 2)
    with pytest.raises(ValueError, match="grid"):
        CalibratorExperiment(_Bad(0.5), LAWS["uniform_half"], 20, 2, grid=0)
    with pytest.raises(ValueError, match=r"max_unresolved must be in \[0, 1\], got 2"):
        CalibratorExperiment(_Bad(0.5), LAWS["uniform_half"], 20, 2, max_unresolved=2)


def test_predict_proba_is_used_where_present_and_rng_and_n_bins_are_passed():
    seen = {}

    class Proba:
        def fit(self, s, y, *, rng, n_bins):
            seen["rng"] = rng
            seen["n_bins"] = n_bins
            self.p_ = float(rng.random()) * 0.5
            return self

        def predict(self, s):  # pragma: no cover - predict_proba wins
            raise AssertionError

        def predict_proba(self, s):
            return np.column_stack([np.full(np.size(s), 1 - self.p_), np.full(np.size(s), self.p_)])

    exp = CalibratorExperiment(Proba(), LAWS["uniform_half"], 20, 7)
    a = exp.simulate(np.random.default_rng(5), 3)
    b = exp.simulate(np.random.default_rng(5), 3)
    assert isinstance(seen["rng"], np.random.Generator)
    assert seen["n_bins"] == 7
    np.testing.assert_array_equal(a.error, b.error)  # reproducible through the rng
    assert len(set(np.nanmax(a.error, axis=1))) == 3  # a fresh draw for every replicate


def test_description_is_stable_address_free_and_follows_parameters():
    law = LAWS["uniform_half"]
    one = CalibratorExperiment(FixedBins(10), law, 100, 10)
    two = CalibratorExperiment(FixedBins(10), law, 100, 10)
    other = CalibratorExperiment(FixedBins(5), law, 100, 10)
    assert one.key == two.key != other.key
    desc = describe_calibrator(FixedBins(10))
    assert desc["params"] == {"n_bins": 10, "offset": 0.0}
    assert desc["source"]
    assert "0x" not in repr(one.description())
    # a worker receives the parent's description (the source of a script's class may be
    # unreadable there)
    assert pickle.loads(pickle.dumps(one)).key == one.key
    assert one.symbols() == {"n": 100, "n_bins": 10}


def test_the_template_is_never_fitted():
    template = FixedBins(10)
    CalibratorExperiment(template, LAWS["uniform_half"], 100, 10).simulate(
        np.random.default_rng(0), 2
    )
    assert not hasattr(template, "values_")


@pytest.mark.parametrize("n", [40, 3])  # n = 3: empty level sets (mean = their output)
def test_level_sets_carry_their_calibration_counts_means_and_variances(n):
    law = LAWS["uniform_logistic"]
    exp = CalibratorExperiment(FixedBins(4, offset=0.01), law, n, 4)
    out = exp.simulate(np.random.default_rng(2), 2)
    rng = np.random.default_rng(2)
    scores = law.sample_scores((2, n), rng)
    labels = law.sample_labels(scores, rng)
    for r in range(2):
        fitted = FixedBins(4, offset=0.01).fit(scores[r], labels[r])
        bins = fitted._bins(scores[r])
        order = np.argsort(fitted.values_)  # level sets are columns in increasing output
        for col, b in enumerate(order):
            y = labels[r][bins == b]
            assert out.counts[r, col] == y.size
            assert out.means[r, col] == pytest.approx(y.mean() if y.size else fitted.values_[b])
            assert out.variances[r, col] == pytest.approx(y.var() if y.size else 0.0)
        assert out.n_used[r] == n
    assert out.counts[:, 4:].sum() == 0  # padding
    assert (out.counts[:, :4] == 0).any() == (n == 3)
    sym = exp.symbols(out)
    assert sym["counts"] is out.counts
    assert set(sym) == {"n", "n_bins", "counts", "means", "variances", "n_used"}
    assert exp.symbols() == {"n": n, "n_bins": 4}


class Platt:
    """Platt scaling by hand (a fitted sigmoid of the logit): a continuous map."""

    def fit(self, scores, labels):
        s = np.clip(scores, 1e-6, 1 - 1e-6)
        z = np.log(s / (1 - s))
        self.a_, self.b_ = 1.0, float(np.log(labels.mean() / (1 - labels.mean())) - z.mean())
        return self

    def predict(self, scores):
        s = np.clip(scores, 1e-6, 1 - 1e-6)
        return 1 / (1 + np.exp(-(self.a_ * np.log(s / (1 - s)) + self.b_)))


def test_the_platt_advice_is_a_call_that_works():
    import calcheck

    def ece_claim(n, alpha):
        return 0.25

    plain = calcheck.define_guarantee("mine.platt", ece_claim, method=Platt(), event="ece")
    with pytest.raises(ValueError, match="varies continuously") as info:
        calcheck.verify(plain, "uniform_logistic", n=200, n_bins=5, reps=100, rng=0)
    message = str(info.value)
    advised = "calcheck.allow_unresolved(calibrator)"
    assert f"define_guarantee(..., method={advised})" in message
    # the advised call, as the message spells it
    g = calcheck.define_guarantee(
        "mine.platt.grid", ece_claim, method=calcheck.allow_unresolved(Platt()), event="ece"
    )
    res = calcheck.verify(g, "uniform_logistic", n=200, n_bins=5, reps=100, rng=0)
    assert res.verdict == "consistent"
    # keyed as the experiment given max_unresolved=1.0 directly
    law = LAWS["uniform_logistic"]
    wrapped = CalibratorExperiment(allow_unresolved(Platt()), law, 200, 5)
    direct = CalibratorExperiment(Platt(), law, 200, 5, max_unresolved=1.0)
    assert wrapped.key == direct.key
    assert CalibratorExperiment(Platt(), law, 200, 5).max_unresolved == 0.1
    with pytest.raises(ValueError, match=r"max_unresolved=0.5 contradicts allow_unresolved"):
        CalibratorExperiment(allow_unresolved(Platt()), law, 200, 5, max_unresolved=0.5)
    with pytest.raises(ValueError, match=r"max_unresolved must be in \[0, 1\], got True"):
        allow_unresolved(Platt(), True)


def _unwraps() -> bool:
    from calcheck.theory_checks.user.guarantees import calibrator_method

    return calibrator_method(allow_unresolved(Platt())).name == "Platt"


@pytest.mark.skipif(not _unwraps(), reason="calibrator_method does not unwrap allow_unresolved yet")
def test_a_wrapped_calibrator_is_named_and_hashed_as_the_users_own():
    import calcheck

    g = calcheck.define_guarantee(
        "mine.platt.named", lambda n, alpha: 0.25, method=allow_unresolved(Platt()), event="ece"
    )
    assert g.method.name == "Platt"
    assert any("test_calibrator_experiment" in k for k in g.inputs()["calibrator"])
