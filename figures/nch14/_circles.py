"""nch14 Tables 1-2 on two-dimensional concentric classes (the paper's Fig. 2 data).

The paper gives no parameters for its "non-linear separable simulated data". calcheck uses
the catalog's look-alike, scikit-learn's ``make_circles(factor=0.45, noise=0.05)``
(balanced classes; a linear projection's Bayes AUC is 0.85, a radial threshold separates
them): **ours, not the paper's**. Base models: a linear SVM (``LinearSVC``) and a quadratic
kernel SVM (``SVC(kernel="poly", degree=2, coef0=1)``); the paper does not say how SVM
decision values become probabilities, so they are min-max scaled on the training set and
clipped to [0, 1]. Hist is equal-frequency histogram binning (Zadrozny-Elkan) with
B = round(N^(1/3)) bins (the paper's suggested schedule; it does not state B). Needs
scikit-learn (the ``repro`` extra).
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.calibrators import IsotonicBinning, PlattScaling, ZadroznyElkanBinning
from calcheck.simulations.calibrators.density import DirichletMixtureCalibrator, KernelCalibrator
from calcheck.simulations.metrics.plugin import evaluation_metrics

__all__ = ["METHODS", "METRICS", "base_scores", "calibrate", "circles"]

METHODS = ("base", "hist", "platt", "isoreg", "kde", "dpm")
METRICS = ("rmse", "auc", "acc", "mce", "ece")


def circles(n, rng):
    """``(X, z)``: n points of the concentric-classes look-alike."""
    from sklearn.datasets import make_circles

    return make_circles(n, factor=0.45, noise=0.05, random_state=int(rng.integers(2**31 - 1)))


def base_scores(kind, x_train, z_train, rng):
    """A fitted base SVM as a function from features to scores in [0, 1]."""
    from sklearn.svm import SVC, LinearSVC

    seed = int(rng.integers(2**31 - 1))
    if kind == "linear":
        model = LinearSVC(C=1.0, random_state=seed).fit(x_train, z_train)
    else:
        model = SVC(kernel="poly", degree=2, coef0=1.0, C=1.0, random_state=seed)
        model.fit(x_train, z_train)
    d = model.decision_function(x_train)
    lo, hi = float(d.min()), float(d.max())

    def score(x):
        return np.clip((model.decision_function(x) - lo) / (hi - lo), 0.0, 1.0)

    return score


def calibrate(method, s_cal, z_cal, rng):
    """A fitted calibrator's prediction function (``"base"``: the identity)."""
    if method == "base":
        return lambda s: s
    b = max(2, round(s_cal.size ** (1 / 3)))
    if method == "hist":
        fit = ZadroznyElkanBinning(b, rng=rng).fit(s_cal, z_cal)
        return lambda s: fit.predict_proba(s)[:, 1]
    if method == "platt":
        return PlattScaling().fit(s_cal, z_cal).predict
    if method == "isoreg":
        fit = IsotonicBinning(rng=rng).fit(s_cal, z_cal)
        return lambda s: fit.predict_proba(s)[:, 1]
    if method == "kde":
        return KernelCalibrator("nw").fit(s_cal, z_cal).predict
    return DirichletMixtureCalibrator(rng=rng).fit(s_cal, z_cal).predict


def run_metrics(predict, s_test, z_test):
    """The five Sec. 2.1 metrics as an array in :data:`METRICS` order."""
    m = evaluation_metrics(np.clip(predict(s_test), 0.0, 1.0), z_test)
    return np.array([m[k] for k in METRICS])
