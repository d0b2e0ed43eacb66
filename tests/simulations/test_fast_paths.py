"""The vectorised fast paths of the gpr20 and gr22 experiments equal the generic code."""

import numpy as np
import pytest

from calcheck.simulations.calibrators.binning import (
    RandomizedUniformMassBinning,
    UniformMassBinning,
    ZadroznyElkanBinning,
)
from calcheck.simulations.calibrators.edges import (
    _sort_binary_labels,
    bin_index_from_edges,
    sort_lexicographic,
    uniform_mass_edges,
)
from calcheck.simulations.experiments.gpr20_shift import _flat_bin_index
from calcheck.simulations.laws import ScoreLaw
from calcheck.simulations.laws.binary import BINARY_LAWS, BinaryLaw, ConditionalMean, staircase_law
from calcheck.simulations.laws.multiclass import (
    MULTICLASS_LAWS,
    DirichletAffineLaw,
    TopLabelLaw,
    class_columns,
)


def test_flat_bin_index_matches_bin_index_from_edges():
    rng = np.random.default_rng(0)
    x = rng.random((7, 300))
    edges = uniform_mass_edges(np.sort(rng.random((7, 40)), axis=1), 5)
    x[:, :4] = edges[:, 1:-1]  # values on an edge go to the upper bin
    expected = bin_index_from_edges(x, edges) + 5 * np.arange(7)[:, None]
    np.testing.assert_array_equal(_flat_bin_index(x, edges), expected)


class _RepeatingU:
    """A generator whose uniforms repeat within rows (ties on (score, U) for lexsort)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def random(self, size):
        u = self.rng.random(size)
        u[:, 1::2] = u[:, ::2][:, : u[:, 1::2].shape[1]]
        return u


def _scores(kind, rng, shape):
    if kind == "continuous":
        return rng.random(shape)
    if kind == "few_ties":  # many distinct values, some tied: lexsort path
        s = rng.random(shape)
        s[:, 1] = s[:, 0]
        return s
    if kind == "mixed":  # atomic rows among continuous ones
        s = rng.random(shape)
        s[::2] = rng.choice([0.1, 0.6], s[::2].shape)
        return s
    values = {"atoms": [0.0, 0.2, 0.7, 1.0], "many_atoms": np.linspace(0, 1, 20)}[kind]
    return rng.choice(values, shape)


@pytest.mark.parametrize("kind", ["continuous", "few_ties", "atoms", "many_atoms", "mixed"])
@pytest.mark.parametrize("repeat_u", [False, True])
def test_sort_binary_labels_matches_fit_batch(kind, repeat_u):
    rng = np.random.default_rng(1)
    s = _scores(kind, rng, (6, 80))
    y = (rng.random(s.shape) < 0.4).astype(float)
    y[:, 1::2] = 1.0 - y[:, ::2]  # equal (score, U) with different labels when U repeats
    make = _RepeatingU if repeat_u else np.random.default_rng
    cal = RandomizedUniformMassBinning(4)
    a = _generic_fit_batch(cal, s, y, 4, make(2))
    b = cal.fit_sorted_batch(*_sort_binary_labels(s, y, make(2)), 4, None)
    for name in ("lower_s", "lower_u", "upper_s", "upper_u", "values", "counts"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    order, s_sorted, u_sorted = sort_lexicographic(s, make(2), tie_breaking="lexicographic")
    for labels in (y, y.astype(bool)):  # float 0/1 and boolean labels
        fast = _sort_binary_labels(s, labels, make(2))
        assert fast[0].tobytes() == s_sorted.tobytes()
        assert fast[1].tobytes() == u_sorted.tobytes()
        np.testing.assert_array_equal(fast[2], np.take_along_axis(y, order, axis=1))


def _generic_fit_batch(cal, scores, labels, n_bins, rng):
    """``fit_batch`` without the binary-label fast path: argsort, gathers, fit."""
    order, s_sorted, u_sorted = sort_lexicographic(scores, rng, tie_breaking="lexicographic")
    y_sorted = np.take_along_axis(labels, order, axis=1)
    return cal.fit_sorted_batch(s_sorted, u_sorted, y_sorted, n_bins, rng)


@pytest.mark.parametrize("kind", ["continuous", "few_ties", "atoms", "mixed"])
@pytest.mark.parametrize("cls", [UniformMassBinning, ZadroznyElkanBinning])
def test_fit_batch_fast_path_equals_generic_fit(kind, cls):
    rng = np.random.default_rng(3)
    s = _scores(kind, rng, (5, 90))
    y = (rng.random(s.shape) < 0.3).astype(float)
    cal = cls(6)
    for labels in (y, y.astype(bool), y.astype(np.int8)):
        fast = cal.fit_batch(s, labels, 6, np.random.default_rng(4))
        ref = _generic_fit_batch(cal, s, y, 6, np.random.default_rng(4))
        for name in ("lower_s", "lower_u", "upper_s", "upper_u", "values", "counts"):
            assert getattr(fast, name).tobytes() == getattr(ref, name).tobytes(), name
    # fractional labels take the generic path, as do tie_breaking="none" fits
    frac = y * 0.5
    fast = cal.fit_batch(s, frac, 6, np.random.default_rng(4))
    ref = _generic_fit_batch(cal, s, frac, 6, np.random.default_rng(4))
    assert fast.values.tobytes() == ref.values.tobytes()


@pytest.mark.parametrize("n_bins", [2, 10, 33, 34, 60])  # 32 inner edges: the counting path
def test_predict_bin_matches_searchsorted(n_bins):
    rng = np.random.default_rng(5)
    s = rng.random(400)
    y = (rng.random(400) < s).astype(float)
    cal = UniformMassBinning(n_bins, rng=0).fit(s, y)
    inner = cal.bin_lower_[1:, 0]
    test = np.concatenate([rng.random(300), inner, [0.0, 1.0], inner[:3]])
    bins = cal.predict_bin(test, rng=7)
    untied = ~np.isin(test, inner)
    np.testing.assert_array_equal(bins[untied], np.searchsorted(inner, test[untied], side="left"))
    assert bins.dtype == np.intp
    # a score tied with edge k lands in bin k or k + 1 (U decides), as the (score, U) order
    tied = np.flatnonzero(~untied)
    k = np.searchsorted(inner, test[tied], side="left")
    assert np.all((bins[tied] == k) | (bins[tied] == k + 1))
    again = cal.predict_bin(test, rng=7)
    np.testing.assert_array_equal(bins, again)


def test_sort_binary_labels_refuses_other_scores():
    y = np.zeros((1, 4))
    for bad in (-1.0, -0.0, 2.0, np.nan):
        s = np.array([[0.1, 0.5, bad, 0.3]])
        assert _sort_binary_labels(s, y, np.random.default_rng(0)) is None


def _reference_score_sample(law, size, rng):
    """ScoreLaw.sample as first written (searchsorted over the cumulative atom masses)."""
    if law.continuous_weight > 0:
        cont = rng.random(size) if law.is_uniform else rng.beta(law.a, law.b, size)
    else:
        cont = np.zeros(size)
    cum = np.cumsum(np.asarray(law.atom_probs))
    if law.continuous_weight == 0:
        cum[-1] = np.inf
    idx = np.searchsorted(cum, rng.random(size), side="right")
    return np.where(idx < len(law.atoms), np.asarray((*law.atoms, 0.0))[idx], cont)


@pytest.mark.parametrize(
    "law",
    [
        ScoreLaw(2.0, 2.0, (0.0, 0.5, 1.0), (0.1, 0.2, 0.1)),
        ScoreLaw(atoms=(0.1, 0.4, 0.7, 0.95), atom_probs=(0.25,) * 4),
        ScoreLaw(atoms=(0.9, 0.2), atom_probs=(0.3, 0.7)),
        ScoreLaw(atoms=tuple((k + 0.5) / 30 for k in range(30)), atom_probs=(1 / 30,) * 30),
    ],
)
def test_score_sample_matches_searchsorted(law):
    got = law.sample((40, 500), np.random.default_rng(3))
    ref = _reference_score_sample(law, (40, 500), np.random.default_rng(3))
    np.testing.assert_array_equal(got, ref)


def _all_binary_laws():
    laws = [*BINARY_LAWS.values(), staircase_law(4)]
    laws.append(
        BinaryLaw(
            ScoreLaw(0.5, 2.0),
            ConditionalMean("piecewise_linear", {"knots": (0, 0.3, 1), "values": (0, 1, 0.2)}),
        )
    )
    laws.append(BinaryLaw(ScoreLaw(2.0, 3.0), ConditionalMean("sine")))
    for law in MULTICLASS_LAWS.values():
        if isinstance(law, TopLabelLaw):
            laws.extend(law.laws)
        else:
            laws.extend(law.class_law(lab) for lab in range(law.n_classes))
    return laws


@pytest.mark.parametrize("law", _all_binary_laws(), ids=lambda law: law.name)
def test_chained_moments_match_interval_moments(law):
    rng = np.random.default_rng(4)
    s = law.sample_scores((5, 60), rng)
    s[0, :3] = [0.0, 1.0, 0.5]  # edges on the outer edges and on atoms
    inner = np.sort(s, axis=1)[:, 5:-5:5]
    zeros, ones = np.zeros((5, 1)), np.ones((5, 1))
    edges = np.hstack([zeros, inner, ones])
    iu = rng.random(inner.shape)
    lo_u, hi_u = np.hstack([zeros, iu]), np.hstack([iu, ones])
    got = law._chained_moments(edges, lo_u, hi_u)
    ref = law.interval_moments(edges[:, :-1], lo_u, edges[:, 1:], hi_u)
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(g, r)
        assert g.tobytes() == r.tobytes()  # also the sign of zeros


@pytest.mark.parametrize(
    "cal", [UniformMassBinning(5), ZadroznyElkanBinning(5), RandomizedUniformMassBinning(5)]
)
@pytest.mark.parametrize("n", [10, 11, 37, 400])
def test_integer_labels_fit_like_float_labels(cal, n):
    rng = np.random.default_rng(5)
    s = np.sort(rng.random((4, n)), axis=1)
    y = rng.random((4, n)) < 0.3
    u = np.zeros_like(s)
    ref = cal.fit_sorted_batch(s, u, y.astype(float), 5, None)
    for labels in (y, y.astype(np.int64)):
        got = cal.fit_sorted_batch(s, u, labels, 5, None)
        assert got.values.tobytes() == ref.values.tobytes()
        np.testing.assert_array_equal(got.counts, ref.counts)


def test_class_columns():
    g = np.random.default_rng(6).random((3, 7, 4))
    cols = class_columns(g)
    for lab in range(4):
        assert cols[lab].flags.c_contiguous
        np.testing.assert_array_equal(cols[lab], g[..., lab])


@pytest.mark.parametrize(
    "law", [law for law in MULTICLASS_LAWS.values() if isinstance(law, DirichletAffineLaw)]
)
def test_sample_columns_match_sample(law):
    g, y = law.sample((6, 50), np.random.default_rng(7))
    cols, y2 = law._sample_columns((6, 50), np.random.default_rng(7))
    np.testing.assert_array_equal(y2, y)
    for lab in range(law.n_classes):
        assert cols[lab].flags.c_contiguous
        assert cols[lab].tobytes() == np.ascontiguousarray(g[..., lab]).tobytes()


def test_logistic_eta_in_place_matches_expression():
    from scipy import special

    eta = ConditionalMean("logistic", {"slope": 0.5, "intercept": 1.5})
    s = np.concatenate([[0.0, 1.0, 0.5], np.random.default_rng(8).random(1001)])
    with np.errstate(divide="ignore"):
        ref = special.expit(0.5 * special.logit(s) + 1.5)
    assert eta(s).tobytes() == ref.tobytes()
    assert eta(s.reshape(2, -1)).tobytes() == ref.tobytes()
    assert float(eta(s[3])) == float(ref[3])  # a scalar score


def test_ppf_into_matches_ppf():
    q = np.random.default_rng(9).random((50, 7))
    for law in (ScoreLaw(1.0, 2.0), ScoreLaw(0.1, 5.0), ScoreLaw()):
        ref = law.ppf(q.copy())
        assert law._ppf_into(q.copy()).tobytes() == ref.tobytes()
