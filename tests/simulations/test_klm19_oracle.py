"""Oracle: klm19 estimators and Platt fit against the authors' package (``compare`` extra).

``uncertainty-calibration`` 0.1.4 (import name ``calibration``) is the code the paper's
experiments ran. Agreement is exact for the plug-in and debiased estimators on identical
binned inputs, with one documented convention: its l2 error is ``sqrt(max(E^2, 0))`` per
class, so its *marginal debiased* squared CE averages classes clipped at 0, where calcheck
averages the unclipped estimates (unbiased). Its scaling-binning uses other bin edges
(midpoints between neighbouring order statistics of ``np.array_split`` chunks; calcheck:
order statistics at ranks ceil(b (n + 1) / B)), so only its Platt step is compared.
"""

import numpy as np
import pytest

cal = pytest.importorskip("calibration", reason="the compare extra is not installed")
cal_utils = pytest.importorskip("calibration.utils")

from calcheck.simulations.calibrators.scaling_binning import platt_fit_batch  # noqa: E402
from calcheck.simulations.metrics.binned import binned_sq_ce, debiased_sq_ce, plugin_sq_ce  # noqa: E402


def _binned_data(rng, n=400, k=6):
    probs = rng.choice(np.linspace(0.05, 0.95, k), size=n)
    labels = (rng.random(n) < np.clip(probs + 0.1, 0, 1)).astype(int)
    return probs, labels


def test_low_level_estimators_agree_on_identical_bins():
    rng = np.random.default_rng(0)
    for _ in range(20):
        probs, labels = _binned_data(rng, n=int(rng.integers(20, 300)))
        values = np.unique(probs)
        binned = [np.column_stack([probs[probs == v], labels[probs == v]]) for v in values]
        counts = np.array([len(b) for b in binned], dtype=float)
        sums = np.array([b[:, 1].sum() for b in binned])
        assert float(plugin_sq_ce(values, counts, sums)) == pytest.approx(
            cal_utils.plugin_ce(binned, power=2) ** 2, rel=1e-12, abs=1e-15
        )
        assert float(debiased_sq_ce(values, counts, sums)) == pytest.approx(
            cal_utils.unbiased_square_ce(binned), rel=1e-12, abs=1e-15
        )


def test_binary_top_label_and_marginal_errors_agree():
    rng = np.random.default_rng(1)
    probs, labels = _binned_data(rng)
    theirs = cal.get_calibration_error(probs, labels, p=2, debias=False)
    assert binned_sq_ce(probs, labels) == pytest.approx(theirs**2, rel=1e-12)
    ours_db = binned_sq_ce(probs, labels, estimator="debiased")
    theirs_db = cal.get_calibration_error(probs, labels, p=2, debias=True)
    assert max(ours_db, 0.0) == pytest.approx(theirs_db**2, rel=1e-12, abs=1e-15)
    # a 3-class model with few distinct probability vectors (a binned model)
    grid = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.5, 0.1, 0.4]])
    p = grid[rng.integers(0, 4, size=600)]
    y = np.array([rng.choice(3, p=row) for row in np.roll(p, 1, axis=1)])
    for mode, their_mode in (("marginal", "marginal"), ("top_label", "top-label")):
        plug = cal.get_calibration_error(p, y, p=2, debias=False, mode=their_mode)
        assert binned_sq_ce(p, y, mode=mode) == pytest.approx(plug**2, rel=1e-12)
    top_db = cal.get_calibration_error(p, y, p=2, debias=True, mode="top-label")
    ours_top = binned_sq_ce(p, y, mode="top_label", estimator="debiased")
    assert max(ours_top, 0.0) == pytest.approx(top_db**2, rel=1e-12, abs=1e-15)
    # marginal debiased: theirs clips every class at 0 before averaging
    per_class = [
        binned_sq_ce(p[:, k], (y == k).astype(int), estimator="debiased") for k in range(3)
    ]
    marg_db = cal.get_calibration_error(p, y, p=2, debias=True, mode="marginal")
    assert np.mean(np.maximum(per_class, 0.0)) == pytest.approx(marg_db**2, rel=1e-12)
    assert binned_sq_ce(p, y, mode="marginal", estimator="debiased") == pytest.approx(
        np.mean(per_class), rel=1e-12
    )


def test_platt_step_agrees_with_the_authors_scikit_learn_fit():
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(2)
    z = rng.uniform(0.01, 0.99, size=(5, 800))
    y = (rng.random(z.shape) < 1 / (1 + np.exp(-(1.5 * np.log(z / (1 - z)) - 0.3)))).astype(int)
    ours = platt_fit_batch(z, y, loss="log")
    grid = np.linspace(0.02, 0.98, 50)
    for r in range(5):
        theirs = cal_utils.get_platt_scaler(z[r], y[r])(grid)
        mine = 1 / (1 + np.exp(-(ours[r, 0] * np.log(grid / (1 - grid)) + ours[r, 1])))
        # scikit-learn's lbfgs stops at tol 1e-4; both maximise the same likelihood
        np.testing.assert_allclose(mine, theirs, atol=1e-4)
