"""nch14 Table 1: calibrators on the concentric-classes data, linear and quadratic SVMs.

Every cell is judged against the paper's single run (:mod:`._judge`: tolerance
``2 sd sqrt(1 + 1/R) + 0.005``); a cell that differs says why (:data:`REASONS`, or the
evaluation's tie order). Data and base models: :mod:`._circles`.
"""

from __future__ import annotations

import warnings

import numpy as np

from calcheck.simulations.provenance import generator

from ..cache import cached
from ..plotting import new_figure
from ._circles import METHODS, METRICS, base_scores, calibrate, circles, run_metrics
from ._judge import cell_findings, draw_cells, judge

#: Optional packages, import name -> pip name (checked before any work).
REQUIRES = {"sklearn": "scikit-learn"}
ID = "nch14.table1"
CAPTION = (
    "Table 1 on our concentric-classes stand-in (make_circles, factor 0.35, noise 0.125, "
    "chosen by a grid search: the paper gives no parameters): 1,000 points to train and "
    "calibrate, 1,000 to test; linear and quadratic SVMs (sigmoid of the decision value); "
    "Hist (B = 10), Platt, IsoReg, KDE (Nadaraya-Watson), DPM. Each cell: our mean over "
    "`reps` repetitions (at most 10) and the paper's single run in brackets; shading "
    "|ours - paper| / tolerance; * differs but matches when ties are evaluated class by "
    "class, ! differs (reason in the findings)."
)
#: The paper's Table 1 (rows METRICS, columns METHODS).
PAPER = {
    "linear": np.array(
        [
            [0.50, 0.39, 0.50, 0.46, 0.38, 0.39],
            [0.50, 0.84, 0.50, 0.65, 0.85, 0.85],
            [0.48, 0.78, 0.52, 0.64, 0.78, 0.78],
            [0.52, 0.19, 0.54, 0.58, 0.09, 0.16],
            [0.28, 0.07, 0.28, 0.35, 0.03, 0.07],
        ]
    ),
    "quadratic": np.array(
        [
            [0.21, 0.09, 0.19, 0.08, 0.09, 0.08],
            [1.00, 1.00, 1.00, 1.00, 1.00, 1.00],
            [0.99, 0.99, 0.99, 0.99, 0.99, 0.99],
            [0.35, 0.04, 0.32, 0.03, 0.07, 0.03],
            [0.14, 0.01, 0.15, 0.00, 0.01, 0.00],
        ]
    ),
}


#: Why the score map decides the base columns' calibration (Tables 1 and 2).
SCORE_MAP = (
    "the base columns' calibration is set by the map from SVM decision values to [0, 1], "
    "which the paper does not state; ours, sigmoid(decision value), matches the linear "
    "SVM's base column and the quadratic SVM's RMSE, AUC and ACC, not the shape of its "
    "reliability curve. Min-max scaling (the former stand-in) gave the quadratic SVM "
    "MCE 0.36 / ECE 0.18 but the linear SVM MCE 0.93 (paper 0.52, which needs scores near "
    "0.5): no single map we tried fits both"
)
#: Why a cell differs beyond the tolerance, when the class-ordered evaluation does not match.
REASONS = {
    "linear": {(m, "base"): SCORE_MAP for m in ("mce", "ece")},
    "quadratic": {
        **{(m, "base"): SCORE_MAP for m in ("mce", "ece")},
        **{
            (m, "platt"): "the paper's Platt barely moves the quadratic SVM (RMSE 0.21 -> "
            "0.19, MCE 0.35 -> 0.32, ECE 0.14 -> 0.15) although the score ranks perfectly "
            "(AUC 1.00): a maximum-likelihood sigmoid on such a score is steep and "
            "calibrates, as ours does, to the level of the other calibrators (which agree "
            "with the paper); the paper's fit (targets, optimiser, iterations) is not "
            "stated: not reproduced"
            for m in ("rmse", "mce", "ece")
        },
        **{
            (m, "kde"): "probable cause, not verified: the worst evaluation bin of the KDE "
            "output straddles the class boundary, where the boxcar window (Silverman's h of "
            "a bimodal score) mixes the classes; how many test scores lie within h of the "
            "boundary depends on the unstated score map and data"
            for m in ("rmse", "mce", "ece")
        },
    },
}


def compute(cache_dir, *, reps=100, seed=2021, data_root=None, **_):
    """Metrics ``(runs, 5 metrics, 6 methods)`` per base model, and ``<kind>_byclass``."""
    runs = min(reps, 10)

    def run():
        out = {}
        for kind in ("linear", "quadratic"):
            res = np.zeros((runs, 2, len(METRICS), len(METHODS)))
            for r in range(runs):
                rng = generator(seed, "nch14.table1", kind, r)
                x, z = circles(2000, rng)
                score = base_scores(kind, x[:1000], z[:1000], rng)
                s_cal, s_test = score(x[:1000]), score(x[1000:])
                for j, method in enumerate(METHODS):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # DPM's variational convergence
                        predict = calibrate(method, s_cal, z[:1000], rng)
                    res[r, :, :, j] = run_metrics(predict, s_test, z[1000:])
            out[kind], out[f"{kind}_byclass"] = res[:, 0], res[:, 1]
        return out

    return cached("nch14-table1", {"reps": runs, "seed": seed}, run, cache_dir)


def cells(data, kind):
    """The judged cells of one half of the table (:func:`._judge.judge`)."""
    return judge(data[kind], data[f"{kind}_byclass"], PAPER[kind], paper_runs=1)


def findings(data):
    """Every cell judged, and the catalog's "shape to reproduce" statements."""
    lin, quad = data["linear"].mean(axis=0), data["quadratic"].mean(axis=0)
    auc, ece, mce = (METRICS.index(m) for m in ("auc", "ece", "mce"))
    col = {m: j for j, m in enumerate(METHODS)}
    nonmono = [col[m] for m in ("hist", "kde", "dpm")]
    nonplatt = [col[m] for m in METHODS[1:] if m != "platt"]
    found = []
    for kind, half in (("linear", "(a)"), ("quadratic", "(b)")):
        found += cell_findings(
            cells(data, kind), f"Table 1{half} {kind} SVM", METRICS, METHODS, REASONS[kind]
        )
    calibrated = np.concatenate([data[k][:, [mce, ece], 1:] for k in ("linear", "quadratic")])
    return [
        *found,
        {
            "claim": "no degenerate column: every calibrated MCE and ECE is positive in every run",
            "value": round(float(calibrated.min()), 4),
            "holds": bool(calibrated.min() > 0),
        },
        {
            "claim": "linear SVM: Hist, KDE and DPM raise the AUC from about 0.5 to about 0.85",
            "value": [round(float(lin[auc, j]), 3) for j in [0, *nonmono]],
            "holds": bool(lin[auc, 0] < 0.6 and np.all(np.abs(lin[auc, nonmono] - 0.85) < 0.05)),
        },
        {
            "claim": "linear SVM: Hist, KDE and DPM cut the ECE 4-9x",
            "value": [round(float(lin[ece, 0] / lin[ece, j]), 1) for j in nonmono],
            "holds": bool(np.all(lin[ece, 0] / lin[ece, nonmono] >= 3)),
        },
        {
            "claim": "linear SVM: Platt (monotone) leaves the AUC unchanged",
            "value": [round(float(lin[auc, 0]), 3), round(float(lin[auc, col["platt"]]), 3)],
            "holds": bool(abs(lin[auc, 0] - lin[auc, col["platt"]]) < 0.01),
        },
        {
            "claim": "linear SVM: IsoReg is poor (AUC about 0.65)",
            "value": round(float(lin[auc, col["isoreg"]]), 3),
            "holds": bool(lin[auc, col["isoreg"]] < 0.75),
        },
        {
            "claim": "quadratic SVM: every method keeps AUC 1.00 (>= 0.995)",
            "value": [round(float(v), 3) for v in quad[auc]],
            "holds": bool(np.all(quad[auc] >= 0.995)),
        },
        {
            "claim": "quadratic SVM: Hist, IsoReg, KDE and DPM reach ECE <= 0.01",
            "value": [round(float(v), 4) for v in quad[ece, nonplatt]],
            "holds": bool(np.all(quad[ece, nonplatt] <= 0.015)),
        },
        {
            "claim": "quadratic SVM: Platt does not (paper ECE 0.15)",
            "value": round(float(quad[ece, col["platt"]]), 4),
            "holds": bool(quad[ece, col["platt"]] > 0.05),
            "explanation": REASONS["quadratic"][("ece", "platt")],
        },
    ]


def draw(data):
    """Both halves as judged heat maps: ours (paper) per cell."""
    fig, axes = new_figure(2, width=4.8, height=3.4)
    for ax, kind, half in zip(axes[0], ("linear", "quadratic"), ("(a)", "(b)"), strict=True):
        title = f"Table 1{half} {kind} SVM: ours (paper); red = |diff| / tol"
        draw_cells(ax, cells(data, kind), [m.upper() for m in METRICS], list(METHODS), title)
    return fig
