"""nch14 Table 2: histogram binning against the calibration-set size (10^2 .. 10^6).

Every cell is judged against the paper's mean of 10 runs (:mod:`._judge`: tolerance
``2 sd sqrt(1/10 + 1/R) + 0.005``); a cell that differs says why. Data and base models:
:mod:`._circles`.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.calibrators import ZadroznyElkanBinning
from calcheck.simulations.provenance import generator

from ..cache import cached
from ..plotting import new_figure
from ._circles import base_scores, calibrate, circles, run_metrics
from ._judge import cell_findings, draw_cells, judge
from .table1 import SCORE_MAP

#: Optional packages, import name -> pip name (checked before any work).
REQUIRES = {"sklearn": "scikit-learn"}
ID = "nch14.table2"
CAPTION = (
    "Table 2 on our concentric-classes stand-in (factor 0.35, noise 0.125): train 1,000, "
    "calibrate on N = 10^2..10^6 (separate), test 10,000; Hist with B = round(N^(1/3)); "
    "AUC, MCE and ECE, mean over `reps` repetitions (at most 10, as the paper). Top: each "
    "cell ours (paper), shading |ours - paper| / tolerance, * matches when ties are "
    "evaluated class by class, ! differs; bottom: MCE and ECE against N, ours with ties "
    "at random (solid) and class by class (dashed), the paper's (crosses; 0.00 drawn at "
    "1e-3)."
)
COLUMNS = ("1e2", "1e3", "1e4", "1e5", "1e6", "base")
ROWS = ("auc", "mce", "ece")
N_VALUES = (100, 1000, 10_000, 100_000, 1_000_000)
#: The paper's Table 2: rows AUC, MCE, ECE; columns N_VALUES then the base SVM.
PAPER = {
    "linear": np.array(
        [
            [0.82, 0.84, 0.85, 0.85, 0.85, 0.49],
            [0.40, 0.15, 0.07, 0.05, 0.03, 0.52],
            [0.14, 0.05, 0.03, 0.02, 0.01, 0.28],
        ]
    ),
    "quadratic": np.array(
        [
            [0.99, 1.00, 1.00, 1.00, 1.00, 1.00],
            [0.14, 0.09, 0.03, 0.01, 0.01, 0.36],
            [0.03, 0.01, 0.00, 0.00, 0.00, 0.15],
        ]
    ),
}
_ROWS = (1, 3, 4)  # auc, mce, ece in the order of _circles.METRICS


#: Why the linear SVM's base ECE depends on the stand-in's inner radius.
BASE_ECE = (
    "the linear SVM's score sits near 0.5, so its ECE is the mean over the evaluation bins "
    "of |o_i - 0.5|, set by how the classes spread along a line, i.e. by the inner radius: "
    "across the search's noise grid, factor 0.30 gives 0.32-0.37 and 0.50 gives 0.23-0.26; "
    "the search traded this cell against the others (Table 1's single-run tolerance "
    "accepts it)"
)


def reasons(data, kind):
    """Why each cell that the class-ordered evaluation does not explain differs."""
    b10 = data[f"{kind}_b10"].mean(axis=0)
    small_n = (
        "B at N = 100 is not stated; ours is round(100^(1/3)) = 5 bins, too coarse for the "
        f"non-monotone P(z | s); with B = 10 ours is AUC {b10[0]:.3f}, MCE {b10[1]:.3f}, "
        f"ECE {b10[2]:.3f}"
    )
    out = {(r, "1e2"): small_n for r in ROWS}
    out.update({(m, "base"): SCORE_MAP for m in ("mce", "ece")})
    if kind == "linear":
        out[("ece", "base")] = BASE_ECE
    return out


def compute(cache_dir, *, reps=100, seed=2021, data_root=None, **_):
    """``(runs, 3 metrics, len(N_VALUES) + 1)`` per base model (last column: base SVM).

    ``<kind>_byclass``: the same with the test set listed class by class (:mod:`._circles`).
    """
    runs = min(reps, 10)

    def run():
        out = {}
        for kind in ("linear", "quadratic"):
            res = np.zeros((runs, 2, 3, len(N_VALUES) + 1))
            b10 = np.zeros((runs, 3))
            for r in range(runs):
                rng = generator(seed, "nch14.table2", kind, r)
                x, z = circles(1000, rng)
                score = base_scores(kind, x, z, rng)
                x_test, z_test = circles(10_000, rng)
                s_test = score(x_test)
                res[r, :, :, -1] = run_metrics(lambda s: s, s_test, z_test)[:, list(_ROWS)]
                for j, n in enumerate(N_VALUES):
                    xc, zc = circles(n, rng)
                    predict = calibrate("hist", score(xc), zc, rng)
                    res[r, :, :, j] = run_metrics(predict, s_test, z_test)[:, list(_ROWS)]
                    if n == 100:  # B = 10 instead of 5: the paper's B is not stated
                        fit10 = ZadroznyElkanBinning(10, rng=rng).fit(score(xc), zc)
                        b10[r] = run_metrics(
                            lambda s, f=fit10: f.predict_proba(s)[:, 1], s_test, z_test
                        )[0, list(_ROWS)]
            out[kind], out[f"{kind}_byclass"] = res[:, 0], res[:, 1]
            out[f"{kind}_b10"] = b10
        return out

    return cached("nch14-table2", {"reps": runs, "seed": seed}, run, cache_dir)


def cells(data, kind):
    """The judged cells of one half of the table (:func:`._judge.judge`)."""
    return judge(data[kind], data[f"{kind}_byclass"], PAPER[kind], paper_runs=10)


def findings(data):
    """Every cell judged, and the shapes: errors fall with N, AUC saturates."""
    found = []
    for kind, half in (("linear", "(a)"), ("quadratic", "(b)")):
        title = f"Table 2{half} {kind} SVM"
        found += cell_findings(cells(data, kind), title, ROWS, COLUMNS, reasons(data, kind))
    lin = data["linear"].mean(axis=0)
    found += [
        {
            "claim": "linear SVM: MCE and ECE fall with N, then flatten at the test-noise floor",
            "value": {
                "mce": [round(float(v), 3) for v in lin[1, :-1]],
                "ece": [round(float(v), 3) for v in lin[2, :-1]],
            },
            "holds": bool(
                np.all(np.diff(lin[1, :-1]) < 0.005)
                and np.all(np.diff(lin[2, :-1]) < 0.005)
                and lin[1, 0] > 2 * lin[1, -2]
            ),
            "explanation": "'flatten': no rise above 0.005 (10 evaluation bins of 1,000 test "
            "points have a plug-in noise floor near 0.016 per bin)",
        },
        {
            "claim": "linear SVM: the AUC saturates near 0.85 from N = 10^4",
            "value": [round(float(v), 3) for v in lin[0, :-1]],
            "holds": bool(np.all(np.abs(lin[0, 2:-1] - lin[0, -2]) < 0.01)),
        },
    ]
    return found


def draw(data):
    """Judged heat maps of both halves; MCE and ECE against N (log-log)."""
    fig, axes = new_figure(2, 2, width=4.8, height=3.2)
    for ax, kind, half in zip(axes[0], ("linear", "quadratic"), ("(a)", "(b)"), strict=True):
        title = f"Table 2{half} {kind} SVM: ours (paper); red = |diff| / tol"
        draw_cells(ax, cells(data, kind), [r.upper() for r in ROWS], list(COLUMNS), title)
    n = np.array(N_VALUES)
    for ax, (i, name) in zip(axes[1], ((1, "MCE"), (2, "ECE")), strict=True):
        for kind, color in (("linear", "tab:blue"), ("quadratic", "tab:red")):
            for key, style, label in (
                (kind, "o-", "ties at random"),
                (f"{kind}_byclass", "s--", "ties by class"),
            ):
                v = data[key][:, i, :-1]
                ax.errorbar(
                    n,
                    v.mean(axis=0),
                    yerr=v.std(axis=0, ddof=1) / np.sqrt(v.shape[0]) if v.shape[0] > 1 else None,
                    fmt=style,
                    color=color,
                    alpha=1.0 if key == kind else 0.6,
                    label=f"{kind} SVM, ours ({label})",
                )
            ax.plot(
                n,
                np.maximum(PAPER[kind][i, :-1], 1e-3),
                "x:",
                color=color,
                ms=8,
                label=f"{kind} SVM (paper)",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("calibration points N")
        ax.set_ylabel(f"test-set {name} (10 bins)")
        ax.set_ylim(bottom=ax.get_ylim()[0] / 8)  # room for the legend below the curves
        ax.legend(fontsize=6, loc="lower left")
    return fig
