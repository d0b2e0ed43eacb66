"""gr21 Figure 2: eps of eq. (8) against B for alpha = 0.1 and several n."""

from __future__ import annotations

import numpy as np

from calcheck.bounds import gr21

from ..plotting import eps_vs_bins, new_figure

ID = "gr21.fig2"
CAPTION = (
    "eps of Theorem 3, eq. (8), against the number of bins B for alpha = 0.1 and "
    "n in {1K, 2K, 5K, 10K, 20K} (Fig. 2). Marked: the caption's choices (1K, B = 5), "
    "(5K, 10), (20K, 22) with eps <= 0.12, 0.08, 0.06."
)
N_VALUES = (1000, 2000, 5000, 10_000, 20_000)
CAPTION_POINTS = ((1000, 5, 0.12), (5000, 10, 0.08), (20_000, 22, 0.06))


def compute(cache_dir=None, **_):
    """Compute (or read from the cache) the figure's data."""
    bins = np.arange(1, 51)
    out = {"bins": bins, "n_values": np.array(N_VALUES)}
    for n in N_VALUES:
        out[f"eps/{n}"] = gr21.thm3_conditional_eps(n, bins, 0.1)
    out["caption_points"] = np.array(
        [gr21.thm3_conditional_eps(n, b, 0.1) for n, b, _ in CAPTION_POINTS]
    )
    return out


def findings(data):
    """The paper's stated findings with the numbers found and whether they hold."""
    return [
        {
            "claim": f"n = {n}, B = {b}: eps <= {bound} (computed {v:.4f})",
            "value": float(v),
            "holds": bool(v <= bound),
        }
        for (n, b, bound), v in zip(CAPTION_POINTS, data["caption_points"], strict=True)
    ]


def draw(data):
    """Draw the figure from computed data; returns a matplotlib Figure."""
    fig, axes = new_figure(width=5.2)
    ax = axes[0, 0]
    eps_vs_bins(
        ax,
        [int(n) for n in data["n_values"]],
        data["bins"],
        bound=gr21.thm3_conditional_eps,
        alpha=0.1,
        highlight=[(n, b) for n, b, _ in CAPTION_POINTS],
        ylabel=r"$\varepsilon$ of eq. (8)",
    )
    ax.set_ylim(0, 0.3)
    ax.legend()
    return fig
