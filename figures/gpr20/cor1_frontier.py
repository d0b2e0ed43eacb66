"""gpr20 Corollary 1 as a frontier: width on the eta = 1/2 law against coverage under Q.

Not a paper figure: the picture of the trade-off the check ``gpr20.cor1`` decides. Each
point is one k-nearest-neighbour empirical-Bernstein interval (k = 1 ... 2048 neighbours of
n = 5000 calibration scores, alpha = 0.1): across, its median width on the law with
E[Y | X] = 1/2; up, its coverage of E_Q[Y | f(X)] under the adversary Q (the check uses
P(width >= 1/2) >= 1 - 2 alpha; here each interval is wide or narrow in every draw). The
corollary forbids the upper-left corner (narrow and valid); the grey points of the negative
control (coverage measured on the eta = 1/2 law instead) enter it.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.engine import simulate_block
from calcheck.simulations.experiments.gpr20_adversary import CIWidthExperiment
from calcheck.simulations.laws import LAWS

from ..cache import cached
from ..plotting import new_figure

ID = "gpr20.cor1_frontier"
CAPTION = (
    "Corollary 1 (not a paper figure): k-nearest-neighbour empirical-Bernstein intervals, "
    "k = 1 to 2048 of n = 5000, alpha = 0.1. Across: median width when E[Y | X] = 1/2; "
    "up: coverage under the adversary Q. Every interval is wide (width >= 1/2) or "
    "invalid (below 1 - alpha); measuring coverage on the benign law instead (grey) puts "
    "narrow intervals in the forbidden corner."
)
__all__ = ["CAPTION", "ID", "compute", "draw", "findings"]

KNOBS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
ALPHA = 0.1
N = 5000


def _point(k, law, reps, seed):
    exp = CIWidthExperiment("knn_eb", LAWS[law], N, neighbors=k)
    blocks = max(1, reps // 100)
    outs = [
        exp.outcome_type.from_arrays(simulate_block(exp, seed, b).arrays()) for b in range(blocks)
    ]
    width = np.concatenate([exp.statistic(o, "width", ALPHA) for o in outs])
    miss = np.concatenate([exp.statistic(o, "miss_ratio", ALPHA) for o in outs])
    return float(np.mean(width >= 0.5)), float(np.mean(miss <= 1)), float(np.median(width))


def compute(cache_dir=None, *, reps=100, seed=2020, **_):
    """Compute (or read from the cache) the figure's data (reps rounded up to 100s)."""
    reps = max(reps, 1000)  # each point is a probability: 1000 replicates at least

    def run():
        wide, cover_q, cover_half, median = [], [], [], []
        for k in KNOBS:
            p_wide, cov_half, med = _point(k, "uniform_half", reps, seed)
            _, cov_q, _ = _point(k, "adversary_q", reps, seed)
            wide.append(p_wide)
            cover_q.append(cov_q)
            cover_half.append(cov_half)
            median.append(med)
        return {
            "k": np.array(KNOBS),
            "p_wide": np.array(wide),
            "coverage_q": np.array(cover_q),
            "coverage_half": np.array(cover_half),
            "median_width": np.array(median),
        }

    return cached("gpr20-cor1-frontier", {"reps": reps, "seed": seed}, run, cache_dir)


def draw(data):
    """Draw the figure from computed data; returns a matplotlib Figure."""
    fig, axes = new_figure()
    ax = axes[0, 0]
    ax.fill_between([0, 0.5], 1 - ALPHA, 1.03, color="tab:red", alpha=0.12)
    ax.text(0.02, 0.86, "forbidden: narrow and valid", fontsize=7, color="tab:red")
    ax.axvline(0.5, color="black", lw=0.8, ls="--")
    ax.axhline(1 - ALPHA, color="black", lw=0.8, ls=":")
    w = data["median_width"]
    ax.plot(w, data["coverage_q"], "o-", color="tab:blue", label="coverage under Q")
    ax.plot(w, data["coverage_half"], "x:", color="0.5", label="control: coverage on eta = 1/2")
    for i, (k, x, y) in enumerate(zip(data["k"], w, data["coverage_q"], strict=True)):
        ax.annotate(
            f"k={k}",
            (x, y),
            textcoords="offset points",
            xytext=(4, 6 if i % 2 else -10),
            fontsize=6,
        )
    ax.set_xlim(0, 1.02)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("median width on the eta = 1/2 law (wide: >= 1/2)")
    ax.set_ylabel("coverage of E[Y | f(X)] (valid: >= 1 - alpha)")
    ax.set_title("each interval is wide or invalid under Q", fontsize=9)
    ax.legend(loc="center right", fontsize=7)
    return fig


def findings(data):
    """Each interval is wide or invalid (the corollary), and the control enters the corner."""
    wide = data["p_wide"] >= 1 - 2 * ALPHA
    valid_q = data["coverage_q"] >= 1 - ALPHA
    valid_half = data["coverage_half"] >= 1 - ALPHA
    return [
        {
            "claim": "every interval is wide or invalid under Q (no narrow valid one)",
            "value": int(np.sum(~wide & valid_q)),
            "holds": bool(np.all(wide | ~valid_q)),
        },
        {
            "claim": "judged on the benign law only, narrow intervals look valid (control)",
            "value": int(np.sum(~wide & valid_half)),
            "holds": bool(np.any(~wide & valid_half)),
        },
    ]
