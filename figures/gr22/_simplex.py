"""Drawing bins of the triangle Delta^2 (gr22 Figures 10 and 11): shared helpers."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Polygon
from scipy import stats

from calcheck.simulations.simplex_bins import grid_index_set

#: e_1, e_2, e_3 in the plane: an equilateral triangle, e_1 bottom left, e_2 bottom right.
CORNERS = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])
#: Ten colours, as the paper's recalibration diagrams (a colour may serve several bins).
COLOURS = [f"C{i}" for i in range(10)]


def grid_triangles(n_grid: int) -> np.ndarray:
    """Vertices ``(K^2, 3, 3)`` of the L = 3 grid bins, in :func:`grid_index_set` order.

    ``b_k`` is ``(k - 1 + c)/K`` over the 0/1 vectors c with ``sum c = m = K + 3 - sum k``
    (m = 1: an upright triangle, m = 2: an inverted one).
    """
    out = []
    for k in grid_index_set(3, n_grid):
        m = n_grid + 3 - int(k.sum())
        corners = [c for c in np.ndindex(2, 2, 2) if sum(c) == m]
        out.append([(k - 1 + np.array(c)) / n_grid for c in corners])
    return np.array(out, dtype=float)


def draw_bins(ax, triangles, *, title, fill=True):
    """Draw bins given by barycentric vertices ``(B, 3, 3)`` on the triangle."""
    for b, tri in enumerate(triangles):
        ax.add_patch(
            Polygon(
                tri @ CORNERS,
                closed=True,
                facecolor=COLOURS[b % 10] if fill else "none",
                alpha=0.55 if fill else 1.0,
                edgecolor="k",
                linewidth=0.6,
            )
        )
    for i, (x, y) in enumerate(CORNERS):
        ax.annotate(
            f"$e_{i + 1}$",
            (x, y),
            xytext=(-12 if i == 0 else 4, -10 if i < 2 else 3),
            textcoords="offset points",
            fontsize=8,
        )
    ax.set_xlim(-0.08, 1.08)
    ax.set_ylim(-0.1, 0.95)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title, fontsize=9)
    return ax


def bin_fractions(bins: np.ndarray, n_bins: int) -> np.ndarray:
    """Fraction of points in each bin."""
    return np.bincount(bins, minlength=n_bins) / len(bins)


def area_frequency_finding(data: dict, keys, label: str) -> dict:
    """Finding: the exact bin areas match the bin frequencies of ``data["draws"]`` draws.

    ``keys`` are the data prefixes (``"q1"``, ``"K4"``, ...) holding ``/frequency`` and
    ``/area``; the chi-square p-value of each must exceed 0.001.
    """
    n = int(data["draws"])
    pvalues = [
        float(stats.chisquare(data[f"{k}/frequency"] * n, data[f"{k}/area"] * n).pvalue)
        for k in keys
    ]
    return {
        "claim": f"the exact areas match the bin frequencies of {n} Dirichlet(1) draws "
        f"(chi-square p-values at {label} above 0.001)",
        "value": [round(p, 3) for p in pvalues],
        "holds": min(pvalues) > 1e-3,
    }
