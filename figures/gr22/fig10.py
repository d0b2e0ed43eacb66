"""gr22 Figure 10 (App. G.1): Sierpinski binning of Delta^2 at depths q = 1, 2, 3.

Drawn from :func:`calcheck.simulations.simplex_bins.sierpinski_bin_vertices`; the findings compare
the bin counts with the paper's (printed 4, 14, 40: 14 is a typo for 13) and the exact
areas with the frequencies of Dirichlet(1) draws (uniform on the triangle) binned by
:func:`~calcheck.simulations.simplex_bins.sierpinski_bin`.
"""

from __future__ import annotations

import numpy as np

from calcheck.bounds import gr22_canonical
from calcheck.simulations.simplex_bins import (
    sierpinski_bin,
    sierpinski_bin_vertices,
    sierpinski_bin_volumes,
)

from ..plotting import new_figure
from ._simplex import CORNERS, area_frequency_finding, bin_fractions, draw_bins

ID = "gr22.fig10"
CAPTION = (
    "Figure 10: Sierpinski binning for L = 3. Leftmost: the simplex Delta^2; then depths "
    "q = 1, 2, 3 (4, 13, 40 bins): only the corner bins {s_l > 1/2} are split again, the "
    "middle bin never (10 colours, cycled)."
)
DEPTHS = (1, 2, 3)
_DRAWS = 20_000


def compute(cache_dir=None, *, reps=100, seed=2021, data_root=None, **_):
    """Bin vertices, exact areas and Dirichlet(1) frequencies at each depth (no cache: ms)."""
    s = np.random.default_rng(seed).dirichlet(np.ones(3), size=_DRAWS)
    data = {"draws": np.array(_DRAWS)}
    for q in DEPTHS:
        data[f"q{q}/vertices"] = np.array(sierpinski_bin_vertices(3, q))
        data[f"q{q}/area"] = np.array([float(v) for v in sierpinski_bin_volumes(3, q)])
        data[f"q{q}/frequency"] = bin_fractions(sierpinski_bin(s, q), len(data[f"q{q}/area"]))
    return data


def findings(data):
    """The stated counts and areas against the regenerated bins."""
    counts = {q: len(data[f"q{q}/area"]) for q in DEPTHS}
    out = [
        {
            "claim": f"q = {q}: B = {gr22_canonical.sierpinski_n_bins_as_printed(q)} bins (as "
            "printed in App. G.1)",
            "value": counts[q],
            "holds": counts[q] == gr22_canonical.sierpinski_n_bins_as_printed(q),
        }
        for q in DEPTHS
    ]
    out[1]["explanation"] = (
        "a typo: the paper's own formula (3^(q+1) - 1)/2 and direct counting (3 * 4 + 1, "
        "the figure's q = 2 panel) give 13 at q = 2; bounds.gr22_canonical keeps both "
        "(sierpinski_n_bins, sierpinski_n_bins_as_printed)"
    )
    out.append(
        {
            "claim": "q = 1: each of the 4 bins has 1/4 of the area of Delta^2 (eq. 18)",
            "value": data["q1/area"].tolist(),
            "holds": bool(np.all(data["q1/area"] == 0.25)),
        }
    )
    out.append(area_frequency_finding(data, [f"q{q}" for q in DEPTHS], "q = 1, 2, 3"))
    return out


def draw(data):
    """The simplex and the three depths, side by side."""
    fig, axes = new_figure(4, width=2.6, height=2.5)
    draw_bins(axes[0, 0], [np.eye(3)], title=r"$\Delta^2$", fill=False)
    for ax, q in zip(axes[0, 1:], DEPTHS, strict=True):
        tris = data[f"q{q}/vertices"]
        draw_bins(ax, tris, title=f"q = {q} (B = {len(tris)})")
    axes[0, 0].plot(*CORNERS[[0, 1, 2, 0]].T, "k-", linewidth=0.6)
    return fig
