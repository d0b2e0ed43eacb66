"""nch14 Table 1: calibrators on the concentric-classes data, linear and quadratic SVMs."""

from __future__ import annotations

import warnings

import numpy as np

from calcheck.simulations.provenance import generator

from ..cache import cached
from ..plotting import new_figure
from ._circles import METHODS, METRICS, base_scores, calibrate, circles, run_metrics

ID = "nch14.table1"
CAPTION = (
    "Table 1 on our concentric-classes look-alike (make_circles, factor 0.45, noise 0.05: "
    "the paper gives no parameters): 1,000 points to train and calibrate, 1,000 to test; "
    "linear and quadratic SVMs; Hist (B = 10), Platt, IsoReg, KDE (Nadaraya-Watson), DPM; "
    "mean and standard error over `reps` repetitions (at most 20) beside the paper's single "
    "run."
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


def compute(cache_dir, *, reps=100, seed=2021, data_root=None, **_):
    """Metrics ``(reps, 5 metrics, 6 methods)`` per base model."""
    runs = min(reps, 20)

    def run():
        out = {}
        for kind in ("linear", "quadratic"):
            res = np.zeros((runs, len(METRICS), len(METHODS)))
            for r in range(runs):
                rng = generator(seed, "nch14.table1", kind, r)
                x, z = circles(2000, rng)
                score = base_scores(kind, x[:1000], z[:1000], rng)
                s_cal, s_test = score(x[:1000]), score(x[1000:])
                for j, method in enumerate(METHODS):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # DPM's variational convergence
                        predict = calibrate(method, s_cal, z[:1000], rng)
                    res[r, :, j] = run_metrics(predict, s_test, z[1000:])
            out[kind] = res
        return out

    return cached("nch14-table1", {"reps": runs, "seed": seed}, run, cache_dir)


def table(data, kind):
    """Rows ``metric: (mean, se) per method`` with the paper's value."""
    x = data[kind]
    mean, se = x.mean(axis=0), x.std(axis=0, ddof=1) / np.sqrt(x.shape[0])
    return {
        metric: {
            m: (round(float(mean[i, j]), 3), round(float(se[i, j]), 3), float(PAPER[kind][i, j]))
            for j, m in enumerate(METHODS)
        }
        for i, metric in enumerate(METRICS)
    }


def findings(data):
    """The catalog's "shape to reproduce" statements, judged on the means."""
    lin, quad = data["linear"].mean(axis=0), data["quadratic"].mean(axis=0)
    auc, ece = METRICS.index("auc"), METRICS.index("ece")
    col = {m: j for j, m in enumerate(METHODS)}
    nonmono = [col[m] for m in ("hist", "kde", "dpm")]
    return [
        {
            "claim": "Table 1(a) and (b): ours (mean, se, paper)",
            "value": {"linear": table(data, "linear"), "quadratic": table(data, "quadratic")},
            "holds": None,
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
            "claim": "quadratic SVM: every method keeps AUC 1.00; all but Platt reach ECE <= 0.01",
            "value": {
                "auc": [round(float(v), 3) for v in quad[auc]],
                "ece": [round(float(v), 3) for v in quad[ece]],
            },
            "holds": bool(
                np.all(quad[auc] > 0.99)
                and np.all(quad[ece, [col[m] for m in METHODS[1:] if m != "platt"]] <= 0.015)
            ),
        },
    ]


def draw(data):
    """Mean AUC and ECE per method, both SVMs, with the paper's values as crosses."""
    fig, axes = new_figure(2)
    x = np.arange(len(METHODS))
    for ax, metric in zip(axes[0], ("auc", "ece"), strict=True):
        i = METRICS.index(metric)
        for k, (kind, color) in enumerate((("linear", "tab:blue"), ("quadratic", "tab:red"))):
            v = data[kind][:, i, :]
            ax.errorbar(
                x + 0.1 * (k - 0.5),
                v.mean(axis=0),
                yerr=v.std(axis=0, ddof=1) / np.sqrt(v.shape[0]),
                fmt="o",
                color=color,
                label=f"{kind} SVM (ours)",
            )
            ax.plot(
                x + 0.1 * (k - 0.5),
                PAPER[kind][i],
                "x",
                color=color,
                ms=8,
                label=f"{kind} SVM (paper)",
            )
        ax.set_xticks(x, labels=METHODS)
        ax.set_ylabel(metric.upper())
        ax.legend(fontsize=7)
    return fig
