"""gr22 Proposition 1 (App. G / H.3, catalog G17): canonical => class-wise calibration,
and the converse fails (an exact counterexample).

Finite laws are represented exactly: every point x carries K copies whose labels follow
P(Y | x) exactly (K P(Y = l | x) copies of label l), so that the plug-in class-wise ECE of
calcheck's metric, grouped by the predictor's values, *is* the population CW-ECE (up to
float rounding, 1e-12).
"""

from __future__ import annotations

import numpy as np
import pytest

from calcheck.simulations.metrics.multiclass import plugin_classwise_ece

K = 20  # copies per point: every probability below is a multiple of 1/K


def _exact_sample(h, p):
    """Rows of predictions and labels whose empirical law is the finite law exactly."""
    probs, labels = [], []
    for hx, px in zip(h, p, strict=True):
        counts = np.rint(np.asarray(px) * K).astype(int)
        assert counts.sum() == K
        assert np.allclose(counts / K, px)
        labels += [lab for lab, c in enumerate(counts) for _ in range(c)]
        probs += [hx] * K
    return np.asarray(probs, dtype=float), np.asarray(labels)


def _cw_ece(h, p):
    probs, labels = _exact_sample(h, p)
    groups = np.rint(probs * 10**9).astype(np.int64)  # one group per distinct output
    return plugin_classwise_ece(probs, labels, groups=groups)


def _canonical_error(h, p):
    """E || E[Y | h(X)] - h(X) ||_1 over equiprobable points (grouped by the whole vector)."""
    h, p = np.asarray(h, dtype=float), np.asarray(p, dtype=float)
    _, inv = np.unique(np.rint(h * 10**9), axis=0, return_inverse=True)
    inv = inv.ravel()
    err = 0.0
    for g in np.unique(inv):
        rows = inv == g
        err += rows.sum() * np.abs(p[rows].mean(axis=0) - h[rows][0]).sum()
    return err / len(h)


def test_canonical_calibration_implies_classwise():
    rng = np.random.default_rng(17)
    # 12 equiprobable points, P(Y | x) on a 1/K grid; h = E[Y | Z(x)] for a coarsening Z
    p = rng.multinomial(K, [0.5, 0.3, 0.2], size=12) / K
    z = np.repeat(np.arange(4), 3)
    h = np.vstack([p[z == g].mean(axis=0) for g in z])
    assert _canonical_error(h, p) == pytest.approx(0.0, abs=1e-12)
    assert _cw_ece(h, p) == pytest.approx(0.0, abs=1e-12)
    # negative control: the same predictor shifted is neither
    shifted = np.clip(h + np.array([0.05, -0.05, 0.0]), 0, 1)
    assert _cw_ece(shifted, p) > 0.03


def test_classwise_calibration_does_not_imply_canonical():
    # four equiprobable points; class 1's level sets {1, 2}, {3, 4}, class 2's {1, 3},
    # {2, 4}, class 3's {1}, {2, 3}, {4}: each averages P(Y = l | x) to h_l, but the four
    # vectors h(x) are distinct and differ from P(Y | x)
    h = [(0.4, 0.3, 0.3), (0.4, 0.1, 0.5), (0.2, 0.3, 0.5), (0.2, 0.1, 0.7)]
    p = [(0.5, 0.2, 0.3), (0.3, 0.1, 0.6), (0.2, 0.4, 0.4), (0.2, 0.1, 0.7)]
    assert _cw_ece(h, p) == pytest.approx(0.0, abs=1e-12)
    assert _canonical_error(h, p) == pytest.approx(0.15, abs=1e-12)
