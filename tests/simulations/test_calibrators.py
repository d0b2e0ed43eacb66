"""Calibrators: hand-computed fits, edge conventions, validation, properties."""

import numpy as np
import pytest

from calcheck.simulations.calibrators import (
    CALIBRATORS,
    FixedWidthBinning,
    RandomizedUniformMassBinning,
    UniformMassBinning,
    UniformMassSampleSplitting,
    ZadroznyElkanBinning,
    calibrator_from_spec,
)
from calcheck.simulations.calibrators.edges import (
    sort_lexicographic,
    sort_scores,
    uniform_mass_edge_ranks,
)

# n = 9, B = 3: A = [0, ceil(10/3), ceil(20/3), 10] = [0, 4, 7, 10].
SCORES = np.array([0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85])
LABELS = np.array([0, 1, 1, 1, 0, 1, 0, 1, 1], dtype=float)
PERM = np.array([4, 0, 8, 2, 6, 1, 3, 7, 5])


def test_edge_ranks_integer_arithmetic():
    assert uniform_mass_edge_ranks(9, 3).tolist() == [0, 4, 7, 10]
    # float64 ceil(b * ((n+1)/B)) gives 26 here, and A_B = n + 2 for (24, 11).
    assert uniform_mass_edge_ranks(49, 22)[11] == 25
    assert uniform_mass_edge_ranks(24, 11)[-1] == 25
    for n in range(2, 300):
        for b in range(1, n // 2 + 1):
            a = uniform_mass_edge_ranks(n, b)
            assert a[0] == 0
            assert a[-1] == n + 1
            assert np.array_equal(a, [-(-k * (n + 1) // b) for k in range(b + 1)])


def test_umd_hand_computed():
    h = UniformMassBinning(3).fit(SCORES[PERM], LABELS[PERM])
    # Bin 1: ranks 1-3, bin 2: ranks 5-6, bin 3: ranks 8-9; ranks 4 and 7 only form edges.
    assert h.bin_values_ == pytest.approx([2 / 3, 1 / 2, 1.0])
    assert h.bin_counts_.tolist() == [3, 2, 2]
    assert h.bin_lower_[:, 0].tolist() == [0.0, 0.35, 0.65]
    # Half-open bins: a boundary score goes to the upper bin; 1 is in the last (closed) bin.
    assert h.predict([0.0, 0.349, 0.35, 0.65, 1.0]).tolist() == pytest.approx(
        [2 / 3, 2 / 3, 0.5, 1.0, 1.0]
    )
    proba = h.predict_proba([0.5])
    assert proba.shape == (1, 2)
    assert proba.sum() == pytest.approx(1)


def test_zadrozny_elkan_hand_computed():
    h = ZadroznyElkanBinning(3).fit(SCORES[PERM], LABELS[PERM])
    assert h.bin_values_ == pytest.approx([3 / 4, 1 / 3, 1.0])  # ranks 1-4, 5-7, 8-9
    assert h.bin_counts_.tolist() == [4, 3, 2]


def test_randomized_umd_distinct_outputs_and_delta():
    h = RandomizedUniformMassBinning(3).fit(SCORES, LABELS)
    assert h.batch_.output_keys[0].tolist() == [0, 1, 2]
    assert h.bin_values_ == pytest.approx([2 / 3, 1 / 2, 1.0])
    d = 1e-3
    hd = RandomizedUniformMassBinning(3, delta=d, rng=0).fit(SCORES, LABELS)
    assert np.all(np.abs(hd.bin_values_ - h.bin_values_) <= d)
    assert np.all(hd.bin_values_ != h.bin_values_)


def test_ties_lexicographic_split_an_atom():
    scores = np.array([0.5] * 10)
    labels = np.array([0, 1] * 5, dtype=float)
    h = UniformMassBinning(2, rng=0).fit(scores, labels)
    # Both bins live inside the atom: the edge is (0.5, U) with U strictly inside (0, 1).
    assert h.bin_lower_[1, 0] == 0.5
    assert 0 < h.bin_lower_[1, 1] < 1
    rng = np.random.default_rng(1)
    bins = h.predict_bin(np.full(20000, 0.5), rng=rng)
    assert abs((bins == 0).mean() - h.bin_lower_[1, 1]) < 0.02  # fraction below = edge U
    none = UniformMassBinning(2, tie_breaking="none").fit(scores, labels)
    assert set(none.predict_bin(np.full(5, 0.5)).tolist()) == {1}  # whole atom to one bin


def test_sort_helpers_agree_on_sorted_scores():
    rng = np.random.default_rng(0)
    s = rng.choice([0.1, 0.4, 0.9], size=(5, 50))
    _, s1, u1 = sort_lexicographic(s, np.random.default_rng(1), tie_breaking="lexicographic")
    s2, u2 = sort_scores(s, np.random.default_rng(1), tie_breaking="lexicographic")
    assert np.array_equal(s1, np.sort(s, axis=1))
    assert np.array_equal(s2, s1)
    for u in (u1, u2):  # within each run of equal scores, U increases
        same = s1[:, 1:] == s1[:, :-1]
        assert np.all(u[:, 1:][same] >= u[:, :-1][same])
        assert np.all((u >= 0) & (u < 1))


def test_ums_and_fixed_width():
    rng = np.random.default_rng(3)
    s = rng.random(400)
    y = (rng.random(400) < s).astype(float)
    ums = UniformMassSampleSplitting(5, rng=0).fit(s, y)
    assert ums.bin_counts_.sum() == 200  # the second half gives the means
    fw = FixedWidthBinning(4).fit(np.array([0.1, 0.2, 0.6, 1.0]), np.array([0, 1, 1, 0.0]))
    # Bins [0,.25) [.25,.5) [.5,.75) [.75,1]; the empty bin predicts its midpoint.
    assert fw.bin_values_ == pytest.approx([0.5, 0.375, 1.0, 0.0])
    assert fw.n_empty_bins_ == 1
    assert fw.predict([0.25, 0.5, 0.75, 1.0]).tolist() == pytest.approx([0.375, 1.0, 0.0, 0.0])


@pytest.mark.parametrize(
    ("scores", "labels", "match"),
    [
        ([0.1, np.nan, 0.3, 0.4], [0, 1, 0, 1], "NaN"),
        ([0.1, 1.2, 0.3, 0.4], [0, 1, 0, 1], "scores must lie in \\[0, 1\\]"),
        ([0.1, 0.2, 0.3, 0.4], [0, 1, 0], "same length"),
        ([0.1, 0.2, 0.3], [0, 1, 0], "at least 2 \\* n_bins"),
        ([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1.5], "labels must lie in \\[0, 1\\]"),
    ],
)
def test_input_validation(scores, labels, match):
    with pytest.raises(ValueError, match=match):
        UniformMassBinning(2).fit(scores, labels)


def test_parameter_validation_and_unfitted():
    s, y = SCORES, LABELS
    with pytest.raises(ValueError, match="n_bins"):
        UniformMassBinning(0).fit(s, y)
    with pytest.raises(ValueError, match="tie_breaking"):
        UniformMassBinning(3, tie_breaking="jitter").fit(s, y)
    with pytest.raises(ValueError, match="split"):
        UniformMassSampleSplitting(2, split=1.5).fit(s, y)
    with pytest.raises(ValueError, match="delta"):
        RandomizedUniformMassBinning(2, delta=-1.0).fit(s, y)
    with pytest.raises(ValueError, match="not fitted"):
        UniformMassBinning(2).predict([0.5])
    with pytest.raises(ValueError, match="calibrator name"):
        calibrator_from_spec({"name": "isotonic"})
    with pytest.raises(ValueError, match="bad parameters"):
        calibrator_from_spec({"name": "umd", "bogus": 1})
    with pytest.raises(ValueError, match="rng"):
        UniformMassBinning(2, rng="seed").fit(s, y)
    # Fractional labels are allowed (gr21 allows P over X x [0, 1]).
    h = UniformMassBinning(3).fit(s, LABELS * 0.5)
    assert h.bin_values_ == pytest.approx([1 / 3, 1 / 4, 1 / 2])


def test_property_bin_sizes_exhaustive():
    """Catalog A1: min bin size floor((n+1)/B) - 1 >= floor(n/B) - 1; n+1-B points used."""
    rng = np.random.default_rng(0)
    for n in range(2, 120):
        for b in range(1, n // 2 + 1):
            s = rng.random((1, n))
            batch = UniformMassBinning(b).fit_batch(s, np.zeros((1, n)), b, rng)
            counts = batch.counts[0]
            assert counts.min() == (n + 1) // b - 1 >= n // b - 1
            assert counts.sum() == n + 1 - b
            ze = ZadroznyElkanBinning(b).fit_batch(s, np.zeros((1, n)), b, rng)
            assert ze.counts[0].sum() == n


def test_zadrozny_elkan_shift_fact9():
    """Eq. (9): adding the boundary point moves a bin mean by <= 1/floor(n/B)."""
    rng = np.random.default_rng(5)
    for n, b in [(20, 10), (57, 5), (300, 7)]:
        s = rng.random((200, n))
        y = (rng.random((200, n)) < 0.5).astype(float)
        umd = UniformMassBinning(b).fit_batch(s, y, b, rng).values
        ze = ZadroznyElkanBinning(b).fit_batch(s, y, b, rng).values
        assert np.abs(umd - ze).max() <= 1 / (n // b) + 1e-12
    # Exhaustive form of (9) for b <= 200.
    for m in range(1, 201):
        a = np.arange(m + 1)
        assert np.all(
            np.maximum(abs(a / (m + 1) - a / m), abs((a + 1) / (m + 1) - a / m))
            <= 1 / (m + 1) + 1e-15
        )


def test_registry_of_calibrators_roundtrip():
    for name, cls in CALIBRATORS.items():
        cal = calibrator_from_spec({"name": name}, 4)
        assert isinstance(cal, cls)
        assert cal.spec()["name"] == name
        assert "n_bins" in cal.get_params()


@pytest.mark.parametrize("atoms", [False, True])
def test_predict_bin_binary_search_equals_the_lexicographic_comparison(atoms):
    # predict_bin takes a binary search for scores equal to no edge and the (score, U) order
    # for the tied ones; the full lexicographic comparison of every point must agree.
    from calcheck.simulations.calibrators import (
        RandomizedUniformMassBinning,
        UniformMassBinning,
        ZadroznyElkanBinning,
    )
    from calcheck.simulations.calibrators.edges import assign_lexicographic_bins

    rng = np.random.default_rng(3)
    for cls in (UniformMassBinning, ZadroznyElkanBinning, RandomizedUniformMassBinning):
        n = 500
        s = rng.choice([0.2, 0.5, 0.8], n) if atoms else rng.random(n)
        y = (rng.random(n) < s).astype(float)
        m = cls(10, rng=1).fit(s, y)
        test = np.concatenate([rng.random(300), m.batch_.lower_s[0, 1:], [0.0, 1.0]])
        if atoms:
            test = np.concatenate([test, rng.choice([0.2, 0.5, 0.8], 200)])
        fast = m.predict_bin(test, rng=7)
        lower = m.batch_.lower_s
        needs_u = np.isin(test, lower[0, 1:])
        u = np.zeros_like(test)
        u[needs_u] = np.random.default_rng(7).random(int(needs_u.sum()))
        slow = assign_lexicographic_bins(lower, m.batch_.lower_u, test[None, :], u[None, :])[0]
        np.testing.assert_array_equal(fast, slow)
