"""gpr20 Theorem 2 (CI w.r.t. f => PS for nonatomic f(X)), exactly by enumeration.

The adversary Q of the proof (App. B.2) is the uniform law on a finite support
T = {(A_j, B_j)}, j in [m]. Every sequence of n + 1 support indices is enumerated (all
m^{n+1} of them with replacement: Q; the m!/(m-n-1)! injective ones: R), so every
probability below is an exact rational (float-rounded). ``E_Q[Y | f(X)]`` is computed from T
by grouping equal scores -- not assumed to be Y. Checked, for several interval methods C_n
(none of them a valid distribution-free CI: the identity holds for *any* C_n):

* (26)-(30): with distinct scores, the CI event E1 = {E[Y | f(X)] in C_n(f(X))} and the PS
  event E2 = {Y in C_n(f(X))} coincide draw by draw, so CI coverage = PS coverage under Q;
* control: with an atom (two support points sharing a score, labels 0 and 1) they differ;
* (31): R(E) lies in [tau^{-1}(Q(E) - (1 - tau)), tau^{-1} Q(E)] for E1 and E2, with tau the
  exact fraction of injective sequences (``thm2_no_repeat_probability``);
* control: ignoring repeats (tau = 1, i.e. R = Q) is wrong: R(E) != Q(E).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from calcheck.bounds.gpr20_sampling import thm2_no_repeat_probability, thm2_sampling_interval


def _hoeffding_bins(s_cal, y_cal, s_test, alpha=0.2, n_bins=2):
    """Hoeffding interval of the labels in the test point's fixed-width bin ([0, 1] if empty)."""
    b = np.minimum((np.asarray(s_cal) * n_bins).astype(int), n_bins - 1)
    bt = min(int(s_test * n_bins), n_bins - 1)
    ys = np.asarray(y_cal)[b == bt]
    if ys.size == 0:
        return 0.0, 1.0
    r = np.sqrt(np.log(2 / alpha) / (2 * ys.size))
    return ys.mean() - r, ys.mean() + r


def _atomwise(s_cal, y_cal, s_test):
    """Labels at exactly the test score: their mean +- 0.3 ([0, 1] if the score is unseen)."""
    ys = np.asarray(y_cal)[np.asarray(s_cal) == s_test]
    return (0.0, 1.0) if ys.size == 0 else (ys.mean() - 0.3, ys.mean() + 0.3)


def _narrow(s_cal, y_cal, s_test):
    """The mean of all labels +- 0.1: narrow, a CI only on benign laws."""
    return np.mean(y_cal) - 0.1, np.mean(y_cal) + 0.1


METHODS = (_hoeffding_bins, _atomwise, _narrow)


def _events(scores, labels, n, method, injective):
    """E1 and E2 over every sequence of n + 1 support indices (the last is the test point)."""
    scores, labels = np.asarray(scores), np.asarray(labels, dtype=float)
    m = scores.size
    # E_Q[Y | f(X) = s]: the mean label of the support points with that score
    truth = {s: labels[scores == s].mean() for s in np.unique(scores)}
    seqs = (
        itertools.permutations(range(m), n + 1)
        if injective
        else itertools.product(range(m), repeat=n + 1)
    )
    e1, e2 = [], []
    for seq in seqs:
        cal, test = list(seq[:n]), seq[n]
        lo, hi = method(scores[cal], labels[cal], scores[test])
        e1.append(lo <= truth[scores[test]] <= hi)
        e2.append(lo <= labels[test] <= hi)
    return np.array(e1), np.array(e2)


@pytest.fixture(params=[(6, 3, 0), (5, 4, 1), (7, 3, 2)], ids=lambda p: f"m={p[0]},n={p[1]}")
def support(request):
    m, n, seed = request.param
    rng = np.random.default_rng(seed)
    return rng.random(m), (rng.random(m) < 0.5).astype(float), n


@pytest.mark.parametrize("method", METHODS, ids=lambda f: f.__name__.strip("_"))
def test_ci_and_ps_events_coincide_under_q_with_distinct_scores(support, method):
    scores, labels, n = support
    e1, e2 = _events(scores, labels, n, method, injective=False)
    assert np.array_equal(e1, e2)  # (29): draw by draw, so (30): Q(E1) = Q(E2)


def test_with_an_atom_the_events_differ():
    # control: support points 0 and 1 share the score 0.3 with labels 0 and 1, so
    # E_Q[Y | f(X) = 0.3] = 1/2 is not Y: a narrow interval around 1/2 covers the CI event
    # and misses the PS event
    scores = np.array([0.3, 0.3, 0.7, 0.9, 0.1])
    labels = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    e1, e2 = _events(scores, labels, 3, _atomwise, injective=False)
    assert not np.array_equal(e1, e2)
    assert e1.mean() != pytest.approx(e2.mean(), abs=1e-3)


def test_tau_is_the_fraction_of_injective_sequences():
    for m, n in ((5, 3), (6, 2), (7, 4), (10, 0)):
        injective = sum(1 for _ in itertools.permutations(range(m), n + 1))
        assert thm2_no_repeat_probability(n, m) == pytest.approx(injective / m ** (n + 1))
    assert thm2_no_repeat_probability(1000, 10**12) == pytest.approx(1 - 1001 * 1000 / 2e12)
    with pytest.raises(ValueError, match="support must be >= n"):
        thm2_no_repeat_probability(5, 5)


@pytest.mark.parametrize("method", METHODS, ids=lambda f: f.__name__.strip("_"))
def test_eq31_without_replacement_lies_in_the_interval(support, method):
    scores, labels, n = support
    m = scores.size
    q1, q2 = (e.mean() for e in _events(scores, labels, n, method, injective=False))
    r1, r2 = (e.mean() for e in _events(scores, labels, n, method, injective=True))
    for q, r in ((q1, r1), (q2, r2)):
        low, high = thm2_sampling_interval(q, n, m)
        assert low - 1e-12 <= r <= high + 1e-12
    # eq. (32) pointwise: R(E2) >= tau^{-1}(Q(E1) - (1 - tau)), using Q(E1) = Q(E2)
    assert r2 >= thm2_sampling_interval(q1, n, m)[0] - 1e-12


def test_ignoring_repeats_is_wrong():
    # control: tau = 1 would make R = Q; with m = 6, n = 3 (tau = 0.28) they differ
    rng = np.random.default_rng(0)
    scores, labels = rng.random(6), (rng.random(6) < 0.5).astype(float)
    _, q2 = _events(scores, labels, 3, _hoeffding_bins, injective=False)
    _, r2 = _events(scores, labels, 3, _hoeffding_bins, injective=True)
    assert thm2_no_repeat_probability(3, 6) == pytest.approx(6 * 5 * 4 * 3 / 6**4)
    assert abs(r2.mean() - q2.mean()) > 0.01
