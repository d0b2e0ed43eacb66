"""klm19 Figure 3(a): squared marginal CE of histogram binning and scaling-binning against B.

CIFAR-10 VGG16, marginal calibration (one recalibrator per class, B bins per class): each
repetition draws 1,000 recalibration points with replacement from the 10,000 test images
and evaluates on all 10,000 (which overlaps the recalibration sample, as in the paper and
code: catalog Sec. 9 item 9). Mean over classes of the plug-in squared CE over distinct
outputs; mean and 90% interval (1.645 standard errors) over repetitions.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.provenance import generator

from ..cache import cached
from ..plotting import new_figure
from ._common import fit_rows, load, plugin_rows, row_bins

ID = "klm19.fig3a"
CAPTION = (
    "Squared marginal calibration error against the number of bins per class B on CIFAR-10 "
    "(VGG16), recalibrating with 1,000 points drawn with replacement, evaluated on all "
    "10,000; histogram binning vs scaling-binning (log-loss sigmoid, no split, as the "
    "authors' code); mean and 90% CI over `reps` repetitions (paper: 100) (Fig. 3(a))."
)
B_VALUES = (10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
METHODS = ("hist", "sb")
LABELS = {"hist": "histogram binning", "sb": "scaling-binning"}


def compute(cache_dir, *, reps=100, seed=2021, data_root=None, **_):
    """Squared marginal CE and MSE of both methods, ``(reps, len(B_VALUES))`` each."""
    probs, labels = load(data_root)

    def run():
        rng = generator(seed, "klm19.fig3")
        idx = rng.integers(0, labels.size, size=(reps, 1000))
        out = {f"{k}/{m}": np.zeros((reps, len(B_VALUES))) for k in ("ce", "mse") for m in METHODS}
        for j, b in enumerate(B_VALUES):
            for cls in range(probs.shape[1]):
                s, y = probs[idx, cls], (labels[idx] == cls).astype(float)
                y_eval = (labels == cls).astype(float)
                for m in METHODS:
                    fit = fit_rows(m, s, y, b)
                    ce, mse = plugin_rows(fit.values, row_bins(fit, probs[:, cls]), y_eval)
                    out[f"ce/{m}"][:, j] += ce / probs.shape[1]
                    # half the multiclass Brier score, as the authors' code
                    out[f"mse/{m}"][:, j] += mse / 2
        return {"B": np.array(B_VALUES), **out}

    return cached("klm19-fig3", {"reps": reps, "seed": seed}, run, cache_dir)


def _summary(data, key):
    x = data[key]
    return x.mean(axis=0), 1.645 * x.std(axis=0, ddof=1) / np.sqrt(x.shape[0])


def findings(data):
    """The paper's Sec. 4.3 statements with the numbers found."""
    hist, _ = _summary(data, "ce/hist")
    sb, _ = _summary(data, "ce/sb")
    lower_sq = 1 - sb[-1] / hist[-1]
    lower_ce = 1 - np.sqrt(sb[-1] / hist[-1])
    slope = np.polyfit(np.log(data["B"]), np.log(hist), 1)[0]
    gap = hist - sb
    return [
        {
            "claim": "scaling-binning has a lower squared CE than histogram binning at every B",
            "value": [round(float(v), 6) for v in sb - hist],
            "holds": bool(np.all(sb < hist)),
        },
        {
            "claim": "35% lower calibration error at B = 100 (abstract, Sec. 4.3)",
            "value": {"squared CE": round(float(lower_sq), 3), "CE": round(float(lower_ce), 3)},
            "holds": bool(abs(lower_sq - 0.35) <= 0.1 or abs(lower_ce - 0.35) <= 0.1),
            "explanation": "the paper does not say whether 35% is of the CE or of its square; "
            "both are reported, and the claim is judged to hold if either is within 10 points",
        },
        {
            "claim": "the gap between the two grows with B (Fig. 3(a))",
            "value": {"gap at B = 10": float(hist[0] - sb[0]), "at B = 100": float(gap[-1])},
            "holds": bool(gap[-1] > gap[0]),
        },
        {
            "claim": "histogram binning's squared CE against B (log-log exponent)",
            "value": round(float(slope), 2),
            "holds": None,
            "explanation": "below 1: with ~10 points per bin and class at B = 100, bins "
            "with equal label means merge into one output (see klm19.gi5.hist.control.merged)",
        },
    ]


def draw(data):
    """Mean squared CE against B with 90% intervals."""
    fig, axes = new_figure(1)
    ax = axes[0, 0]
    for m, color in zip(METHODS, ("tab:blue", "tab:red"), strict=True):
        mean, half = _summary(data, f"ce/{m}")
        ax.errorbar(
            data["B"], mean, yerr=half, color=color, marker="o", ms=3, capsize=2, label=LABELS[m]
        )
    ax.set_xlabel("bins per class B")
    ax.set_ylabel("squared marginal CE (plug-in)")
    ax.legend(fontsize=8)
    return fig
