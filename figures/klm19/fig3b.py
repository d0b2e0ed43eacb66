"""klm19 Figure 3(b): MSE against squared marginal CE as B varies (Pareto points)."""

from __future__ import annotations

import numpy as np

from ..plotting import new_figure
from .fig3a import LABELS, METHODS
from .fig3a import compute as compute

ID = "klm19.fig3b"
CAPTION = (
    "Trade-off between calibration and MSE on CIFAR-10 (VGG16): mean MSE (half the "
    "multiclass Brier score, as the authors' code) against mean squared marginal CE for "
    "B = 10..100; Pareto-optimal points joined (Fig. 3(b))."
)


def _pareto(ce, mse):
    order = np.argsort(ce)
    keep, best = [], np.inf
    for i in order:
        if mse[i] < best:
            keep.append(i)
            best = mse[i]
    return np.array(keep)


def _best_mse(data, method, ce_sq_max):
    ce, mse = data[f"ce/{method}"].mean(axis=0), data[f"mse/{method}"].mean(axis=0)
    ok = ce <= ce_sq_max
    return float(mse[ok].min()) if ok.any() else float("nan")


def findings(data):
    """Sec. 4.3: at CE <= 0.02 (CE^2 <= 4e-4), scaling-binning has 9% lower MSE."""
    hist, sb = (_best_mse(data, m, 4e-4) for m in ("hist", "sb"))
    gain = 1 - sb / hist if np.isfinite(hist) else float("nan")
    return [
        {
            "claim": "9% lower MSE than histogram binning at CE <= 0.02 (Sec. 4.3)",
            "value": {"hist": round(hist, 5), "sb": round(sb, 5), "gain": round(gain, 3)},
            "holds": None if not np.isfinite(gain) else bool(abs(gain - 0.09) <= 0.05),
            "explanation": "best mean MSE among B whose mean squared CE is <= 4e-4; "
            "'holds' means within 5 points of 9%"
            + ("" if np.isfinite(hist) else "; no histogram-binning B reaches CE^2 <= 4e-4"),
        }
    ]


def draw(data):
    """MSE against squared CE, every B, Pareto front joined."""
    fig, axes = new_figure(1)
    ax = axes[0, 0]
    for m, color in zip(METHODS, ("tab:blue", "tab:red"), strict=True):
        ce, mse = data[f"ce/{m}"].mean(axis=0), data[f"mse/{m}"].mean(axis=0)
        ax.scatter(ce, mse, s=10, color=color, alpha=0.5)
        front = _pareto(ce, mse)
        ax.plot(ce[front], mse[front], "o-", ms=4, color=color, label=LABELS[m])
    ax.axvline(4e-4, color="gray", lw=0.8, ls=":", label="CE = 0.02")
    ax.set_xlabel("squared marginal CE")
    ax.set_ylabel("MSE")
    ax.legend(fontsize=8)
    return fig
