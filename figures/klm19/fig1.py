"""klm19 Figure 1: Platt scaling, histogram binning and scaling-binning on 1-d toy data.

The paper's Fig. 1 is a schematic without a numeric setup; this draws the catalog's
reproduction: Z ~ U(0, 1), Y ~ Bernoulli(sigma(2 logit z + 1)), 60 points, B = 5
uniform-mass bins. Scaling-binning uses all points for every step here (the authors' code,
``split="none"``), so that the three panels show the same data.
"""

from __future__ import annotations

import numpy as np

from calcheck.simulations.calibrators.binning import ZadroznyElkanBinning
from calcheck.simulations.calibrators.scaling import PlattScaling
from calcheck.simulations.calibrators.scaling_binning import ScalingBinning
from calcheck.simulations.laws.recalibration import platt_law
from calcheck.simulations.provenance import generator

from ..plotting import new_figure

ID = "klm19.fig1"
CAPTION = (
    "Toy recalibration data (60 points, Z ~ U(0, 1), P(Y = 1 | z) = sigma(2 logit z + 1)): "
    "(a) Platt scaling, (b) histogram binning, (c) scaling-binning with B = 5 uniform-mass "
    "bins, whose outputs average the fitted values (gray circles) rather than the labels "
    "(Fig. 1)."
)
N, B = 60, 5


def compute(cache_dir, *, reps=100, seed=2021, data_root=None, **_):
    """The toy sample (cheap: not cached)."""
    z, y = platt_law(2.0, 1.0).sample(N, 1, generator(seed, "klm19.fig1"))
    return {"z": z[0], "y": y[0]}


def _fits(data):
    z, y = data["z"], data["y"]
    return (
        PlattScaling().fit(z, y),
        ZadroznyElkanBinning(B).fit(z, y),
        ScalingBinning(B, split="none", loss="log").fit(z, y),
    )


def findings(data):
    """The schematic's point: within a bin, fitted values vary less than labels."""
    _, _, sb = _fits(data)
    z, y = data["z"], data["y"]
    g = PlattScaling.transform_batch(sb.coef_[None], z[None])[0]
    bins = sb._batch.bins(z[None])[0]
    sd_g = np.mean([g[bins == j].std() for j in np.unique(bins)])
    sd_y = np.mean([y[bins == j].std() for j in np.unique(bins)])
    return [
        {
            "claim": "within a bin the fitted values g(z) have a narrower range than the labels",
            "value": {
                "mean within-bin sd of g(z)": round(float(sd_g), 3),
                "of labels": round(float(sd_y), 3),
            },
            "holds": bool(sd_g < sd_y),
        }
    ]


def draw(data):
    """Three panels on the same data."""
    platt, hist, sb = _fits(data)
    z, y = data["z"], data["y"]
    grid = np.linspace(0.001, 0.999, 800)
    fig, axes = new_figure(3, width=3.6, height=3.2)
    titles = ("(a) Platt scaling", "(b) histogram binning", "(c) scaling-binning")
    for ax, title in zip(axes[0], titles, strict=True):
        ax.plot(z, y, "kx", ms=4)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("score z")
    axes[0, 0].set_ylabel("label / calibrated probability")
    axes[0, 0].plot(grid, platt.predict(grid), "r-")
    axes[0, 1].plot(grid, hist.predict_proba(grid)[:, 1], "r-")
    g = PlattScaling.transform_batch(sb.coef_[None], z[None])[0]
    axes[0, 2].plot(
        grid, PlattScaling.transform_batch(sb.coef_[None], grid[None])[0], color="0.7", lw=1
    )
    axes[0, 2].plot(z, g, "o", color="0.5", mfc="none", ms=4)
    axes[0, 2].plot(grid, sb.predict(grid), "r-")
    return fig
