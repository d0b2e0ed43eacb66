"""gr21 Figure 1(a): an illustrative validity plot from ten per-bin errors."""

from __future__ import annotations

import numpy as np

from calcheck.simulations.metrics import lp_ece, marginal_validity

from ..plotting import new_figure, validity_plot

ID = "gr21.fig1a"
CAPTION = (
    "Validity plot of one UMD run with B = 10 (Fig. 1(a)), rebuilt from the ten per-bin "
    "errors the paper reads off it (1e-3 x 1.5, 2, 8, 16, 17, 19, 22, 29, 39, 71), each "
    "bin holding a tenth of the test points: (0.04, 0.1)- and (0.03, 0.2)-marginal "
    "calibration, l1-ECE = 1 - AUC about 0.023."
)
PER_BIN_ERRORS = 1e-3 * np.array([1.5, 2, 8, 16, 17, 19, 22, 29, 39, 71])


def compute(cache_dir=None, **_):
    """Compute (or read from the cache) the figure's data."""
    eps = np.round(np.arange(0, 0.1 + 1e-9, 0.0005), 4)
    err, mass = PER_BIN_ERRORS[None], np.full((1, 10), 0.1)
    grid = np.linspace(0, 1, 100_001)
    auc = np.trapezoid(marginal_validity(err, mass, grid)[0], grid)
    return {
        "eps": eps,
        "validity": marginal_validity(err, mass, eps)[0],
        "l1_ece": lp_ece(err, mass, 1),
        "one_minus_auc": np.array([1 - auc]),
    }


def findings(data):
    """The paper's stated findings with the numbers found and whether they hold."""
    v = dict(zip(np.round(data["eps"], 4), data["validity"], strict=True))
    # the curve is rebuilt from the paper's own numbers: these agree by construction
    return [
        {
            "claim": f"V({e}) is about {want}",
            "value": float(v[e]),
            "holds": abs(v[e] - want) < 1e-9,
            "status": "by construction",
        }
        for e, want in ((0.04, 0.9), (0.03, 0.8))
    ] + [
        {
            "claim": "l1-ECE = 1 - AUC is about 0.023",
            "value": float(data["one_minus_auc"][0]),
            "holds": abs(data["one_minus_auc"][0] - 0.023) < 0.001,
            "status": "by construction",
        },
    ]


def draw(data):
    """Draw the figure from computed data; returns a matplotlib Figure."""
    fig, axes = new_figure()
    ax = axes[0, 0]
    validity_plot(ax, data["eps"], data["validity"], label="UMD, B = 10")
    for e, v in ((0.04, 0.9), (0.03, 0.8)):
        ax.plot([e], [v], marker="o", color="black")
        ax.annotate(f"({e}, {1 - v:.1f})", (e, v), textcoords="offset points", xytext=(6, -12))
    ax.set_title(f"l1-ECE = 1 - AUC = {data['one_minus_auc'][0]:.4f}")
    ax.legend(loc="lower right")
    return fig
