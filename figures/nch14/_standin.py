"""How the nch14 stand-in's noise and inner radius were chosen (a seeded grid search).

The paper gives no parameters for its Fig. 2 data. The stand-in is
``make_circles(factor, noise)``; its two free parameters set what Table 1 measures: the
inner radius ``factor`` sets how far the linear SVM's (uninformative) score sits from the
classes' rates in the tails (its base ECE, and the AUC a non-monotone calibrator recovers
from a linear projection), and ``noise`` sets the classes' overlap (the quadratic SVM's
accuracy 0.99 and the calibrated RMSE 0.08-0.09 need about 1% Bayes error, which a
separable stand-in cannot give: every calibrated ECE is then 0).

Criterion: the mean absolute difference from the paper over 24 terms: the 20 Table 1
cells that the data and the paper's own method decide, the base SVM and Hist columns of
both halves (Platt, IsoReg, KDE and DPM are left out: their implementations are
unspecified, and they are judged afterwards), each our mean over ``reps`` runs of the
paper's protocol; and two population summaries of the data that the paper's tables
reveal, the radial Bayes accuracy (target 0.99, the quadratic SVM's accuracy) and the
linear-projection Bayes AUC (target 0.85, where Hist/KDE/DPM on the linear SVM saturate in
Tables 1-2), from :func:`._circles.population`, counted three times, once for each Table 2
cell it stands for (N = 10^4, 10^5, 10^6: 0.85; the limit Hist reaches as N grows): 24
terms in all. (Counted once, the minimum was factor 0.40, noise 0.125, criterion 0.0150,
whose projection AUC 0.831 put all five Table 2 AUC cells of the linear SVM 0.02 low.)

Result (:func:`search` with its defaults: 7 x 5 grid, 20 runs per point, seed 2021,
evaluation ties at random): the minimum is at factor 0.35, noise 0.125 (criterion 0.0149;
next 0.40 / 0.125 at 0.0153 and 0.40 / 0.100 at 0.0158; the former stand-in, factor 0.45,
noise 0.05, scores 0.0164 with the same base models). The differences between the best
few points are of the order of their Monte Carlo error: any of them is on the paper's
scale; the argmin is taken as the rule. ``sorted(search().items(),
key=lambda kv: kv[1])`` reproduces the ranking (about a minute and a half).
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.provenance import generator

from ._circles import METRICS, base_scores, calibrate, circles, population, run_metrics
from .table1 import PAPER

__all__ = ["FACTORS", "NOISES", "criterion", "search"]

FACTORS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
NOISES = (0.05, 0.075, 0.1, 0.125, 0.15)
_COLUMNS = (0, 1)  # base, hist in METHODS order


def criterion(factor, noise, *, reps=20, seed=2021):
    """Mean |ours - paper| over the 24 terms (see the module docstring), and our means."""
    means = {}
    for kind in ("linear", "quadratic"):
        res = np.zeros((reps, len(METRICS), len(_COLUMNS)))
        for r in range(reps):
            rng = generator(seed, "nch14.standin", kind, r)
            x, z = circles(2000, rng, factor=factor, noise=noise)
            score = base_scores(kind, x[:1000], z[:1000], rng)
            s_cal, s_test = score(x[:1000]), score(x[1000:])
            for j, method in enumerate(("base", "hist")):
                predict = calibrate(method, s_cal, z[:1000], rng)
                res[r, :, j] = run_metrics(predict, s_test, z[1000:])[0]
        means[kind] = res.mean(axis=0)
    gaps = [np.abs(means[k] - PAPER[k][:, list(_COLUMNS)]).ravel() for k in means]
    acc, auc = population(factor, noise, rng=generator(seed, "nch14.standin.population"))
    gaps.append([abs(acc - 0.99)] + [abs(auc - 0.85)] * 3)  # 3 Table 2 cells
    return float(np.mean(np.concatenate(gaps))), means


def search(factors=FACTORS, noises=NOISES, *, reps=20, seed=2021):
    """``{(factor, noise): criterion}`` over the grid; the chosen point is its argmin."""
    return {(f, s): criterion(f, s, reps=reps, seed=seed)[0] for f in factors for s in noises}
