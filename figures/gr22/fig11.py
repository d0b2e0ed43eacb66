"""gr22 Figure 11 (App. G.2): grid-style binning of Delta^2, (K = 4, tau = 0.25), (K = 5, 0.2).

Drawn from the index set (20) and the bins (21) of :mod:`calcheck.simulations.simplex_bins`; the
findings check the K^2 equal-area bins against exact areas and Dirichlet(1) frequencies
(points binned by :func:`~calcheck.simulations.simplex_bins.grid_bin`), and that the areas are not
equal for L = 4.
"""

from __future__ import annotations

import numpy as np

from calcheck.bounds import gr22_canonical
from calcheck.simulations.simplex_bins import grid_bin, grid_bin_volumes

from ..plotting import new_figure
from ._simplex import CORNERS, area_frequency_finding, bin_fractions, draw_bins, grid_triangles

ID = "gr22.fig11"
CAPTION = (
    "Figure 11: grid-style binning for L = 3 with K = 4 (tau = 0.25, 16 bins) and K = 5 "
    "(tau = 0.2, 25 bins): every bin has area 1/K^2 (10 colours, cycled; s_2 along the "
    "bottom edge, ticks at multiples of tau)."
)
GRIDS = (4, 5)
_DRAWS = 20_000


def compute(cache_dir=None, *, reps=100, seed=2021, data_root=None, **_):
    """Bin vertices, exact areas and Dirichlet(1) frequencies per K; L = 4 areas at K = 4."""
    s = np.random.default_rng(seed).dirichlet(np.ones(3), size=_DRAWS)
    data = {"draws": np.array(_DRAWS)}
    for K in GRIDS:
        data[f"K{K}/vertices"] = grid_triangles(K)
        data[f"K{K}/area"] = np.array([float(v) for v in grid_bin_volumes(3, K)])
        data[f"K{K}/frequency"] = bin_fractions(grid_bin(s, K), K * K)
    data["L4K4/volume"] = np.array([float(v) for v in grid_bin_volumes(4, 4)])
    return data


def findings(data):
    """Equal areas for L = 3 (and K^2 bins), unequal volumes for L = 4."""
    out = []
    for K in GRIDS:
        area = data[f"K{K}/area"]
        out.append(
            {
                "claim": f"K = {K}: {gr22_canonical.grid_n_bins_l3(K)} bins of equal area "
                f"1/{K * K} (Fig. 11)",
                "value": [len(area), float(area.min()), float(area.max())],
                "holds": len(area) == gr22_canonical.grid_n_bins_l3(K)
                and bool(np.allclose(area, 1 / (K * K), rtol=0, atol=1e-15)),
            }
        )
    out.append(area_frequency_finding(data, [f"K{K}" for K in GRIDS], "K = 4, 5"))
    vol = data["L4K4/volume"]
    out.append(
        {
            "claim": "equal volumes are not true for L > 3 (L = 4, K = 4: 34 bins, smallest "
            "and largest volume over vol(Delta^3))",
            "value": [len(vol), float(vol.min()), float(vol.max())],
            "holds": bool(vol.max() > vol.min()),
        }
    )
    return out


def draw(data):
    """The two grids side by side."""
    fig, axes = new_figure(2, width=3.4, height=3.2)
    for ax, K in zip(axes[0], GRIDS, strict=True):
        draw_bins(ax, data[f"K{K}/vertices"], title=f"K = {K}, tau = {1 / K:g}")
        for i in range(1, K):  # ticks of s_2 along the bottom edge (e_1 -> e_2)
            x, y = (1 - i / K) * CORNERS[0] + (i / K) * CORNERS[1]
            ax.annotate(
                f"{i / K:g}",
                (x, y),
                xytext=(0, -9),
                textcoords="offset points",
                ha="center",
                fontsize=6,
            )
        ax.annotate("class 2", (0.5, -0.08), ha="center", fontsize=7, annotation_clip=False)
    return fig
