"""gpr20 Proposition 2: the plug-in term of its proof, deterministically (App. D.3).

With ``w_hat = w + d``, ``|d| <= Delta``, estimator (22) satisfies the identity
``pi_check^(w_hat) - pi_check^(w) = sum d (Y - pi_check^(w)) / sum w_hat`` in every bin, hence
``|gap| <= Delta / (L - Delta)`` (derived) ``<=`` the proof's step (3) (factor n^2). The rate
in Delta is the identity ``gpr20.prop2`` (a fitted exponent that is 1 by algebra: the last
test replays its experiment).
"""

from __future__ import annotations

import numpy as np
import pytest

from calcheck.bounds import gpr20_steps


def _weighted(w, y):
    return np.sum(w * y, axis=-1) / np.sum(w, axis=-1)


@pytest.mark.parametrize(("low", "up"), [(0.1, 1.9), (0.5, 1.5), (0.9, 1.1)])
def test_gap_identity_and_both_bounds_on_random_bins(low, up):
    rng = np.random.default_rng(11)
    n = 40
    for delta in (1e-3, 0.01, 0.5 * low, 0.9 * low):
        w = rng.uniform(low, up, (5000, n))
        y = (rng.random((5000, n)) < rng.random((5000, 1))).astype(float)
        d = delta * rng.uniform(-1, 1, (5000, n))
        d[:100] = delta * np.sign(y[:100] - _weighted(w[:100], y[:100])[:, None])  # adversarial
        gap = np.abs(_weighted(w + d, y) - _weighted(w, y))
        identity = np.abs(np.sum(d * (y - _weighted(w, y)[:, None]), axis=1)) / np.sum(w + d, 1)
        assert np.allclose(gap, identity, rtol=1e-9, atol=1e-15)
        sharp = gpr20_steps.prop2_plugin_gap_bound(delta, low)
        assert np.all(gap <= sharp * (1 + 1e-12))
        assert sharp <= gpr20_steps.prop2_plugin_gap_bound_stated(delta, low, up, n)


def test_a_quarter_of_the_sharp_bound_fails():
    # control: w = L everywhere, labels half 0 half 1, d = Delta sign(Y - 1/2): the gap is
    # Delta / (2L), above Delta / (4L) (and within a factor 2 of Delta / (L - Delta))
    low, delta, n = 0.5, 0.01, 20
    w = np.full(n, low)
    y = np.repeat([0.0, 1.0], n // 2)
    gap = abs(_weighted(w + delta * np.sign(y - 0.5), y) - _weighted(w, y))
    assert gap == pytest.approx(delta / (2 * low))
    assert gap > delta / (4 * low)
    assert gap >= gpr20_steps.prop2_plugin_gap_bound(delta, low) / 2 * (1 - delta / low)


def test_prop2_bounds_by_hand():
    assert gpr20_steps.prop2_plugin_gap_bound(0.1, 0.5) == pytest.approx(0.25)
    # (n/L) D + n D (U + D) n / ((L - D) L) = 20 + 100 * 0.1 * 1.6 * 100 / 0.2 = 8020
    assert gpr20_steps.prop2_plugin_gap_bound_stated(0.1, 0.5, 1.5, 100) == pytest.approx(8020)
    assert gpr20_steps.prop2_plugin_gap_bound(0.5, 0.5) == np.inf  # the proof needs D < L
    assert gpr20_steps.prop2_gap_rate(0.02, c=3.0) == pytest.approx(0.06)
    with pytest.raises(ValueError, match="c must be given"):
        gpr20_steps.prop2_gap_rate(0.02, c=None)


def test_prop2_experiment_gap_is_linear_in_delta_by_algebra():
    """gpr20.prop2 is an identity: PlugInRatioExperiment's gap, from the definitions.

    Replaying the experiment's draws, every bin's gap is
    ``Delta |sum s(x) (Y - pi_check^(w))| / sum (w + Delta s(x))`` (the identity above with
    d = Delta s), so gap / Delta changes with Delta only through the denominator: the
    exponent of E[gap] in Delta is 1 by algebra, whatever the data.
    """
    from calcheck.simulations.calibrators.edges import fixed_width_edges
    from calcheck.simulations.experiments.gpr20_shift import _SHAPES, PlugInRatioExperiment
    from calcheck.simulations.laws import LAWS

    law, n, b, reps = LAWS["shift_sine"], 200, 10, 20
    for delta in (0.004, 0.1):
        for shape in ("tilt", "wiggle"):
            exp = PlugInRatioExperiment(law, n, b, delta, shape)
            out = exp.simulate(np.random.default_rng(4), reps)
            rng = np.random.default_rng(4)
            x = law.sample_source((reps, n), rng)
            y = law.sample_labels(x, rng)
            edges = fixed_width_edges(b)
            gaps = np.zeros(reps)
            ratio = np.zeros(reps)
            for r in range(reps):
                for j in range(b):
                    inside = (x[r] >= edges[j]) & (
                        (x[r] < edges[j + 1]) if j < b - 1 else (x[r] <= edges[j + 1])
                    )
                    if not inside.any():
                        continue
                    w, s, yy = law.weight(x[r][inside]), _SHAPES[shape](x[r][inside]), y[r][inside]
                    oracle = np.sum(w * yy) / np.sum(w)
                    gap = delta * abs(np.sum(s * (yy - oracle))) / np.sum(w + delta * s)
                    gaps[r] = max(gaps[r], gap)
                    ratio[r] = max(ratio[r], abs(np.sum(s * (yy - oracle))) / np.sum(w))
            np.testing.assert_allclose(out.gap, gaps, rtol=1e-9, atol=1e-15)
            # gap / Delta = the Delta-free ratio up to the denominator's 1 + O(Delta / L)
            assert np.all(np.abs(out.gap / delta - ratio) <= ratio * delta / (law.lower - delta))
